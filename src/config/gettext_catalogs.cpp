#include "config/gettext_catalogs.h"

#include <utility>

namespace nt {

namespace {

// stem -> the Debian 12 package that installs /usr/share/locale/de/LC_MESSAGES/<stem>.mo
// (checked with dpkg -S); scripts/setup.sh installs each of them.
const std::vector<std::pair<std::string, std::string>>& catalog_packages() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"apt", "apt"},
      {"bash", "bash"},
      {"coreutils", "coreutils"},
      {"diffutils", "diffutils"},
      {"dpkg", "dpkg"},
      {"findutils", "findutils"},
      {"gettext-tools", "gettext"},
      {"git", "git"},
      {"glib20", "libglib2.0-data"},
      {"grep", "grep"},
      {"gtk20", "libgtk2.0-common"},
      {"gtk20-properties", "libgtk2.0-common"},
      {"iso_15924", "iso-codes"},
      {"iso_3166-1", "iso-codes"},
      {"iso_4217", "iso-codes"},
      {"iso_639-3", "iso-codes"},
      {"libapt-pkg6.0", "libapt-pkg6.0"},
      {"libc", "libc-l10n"},
      {"make", "make"},
      {"man-db", "man-db"},
      {"procps-ng", "procps"},
      {"sed", "sed"},
      {"shadow", "login"},
      {"shared-mime-info", "shared-mime-info"},
      {"tar", "tar"},
      {"wget", "wget"},
      {"xkeyboard-config", "xkb-data"},
      {"xz", "xz-utils"},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& default_gettext_catalogs() {
  static const std::vector<std::string> stems = [] {
    std::vector<std::string> s;
    for (const auto& [stem, package] : catalog_packages()) s.push_back(stem);
    return s;
  }();
  return stems;
}

std::string gettext_catalog_package(const std::string& stem) {
  for (const auto& [s, package] : catalog_packages())
    if (s == stem) return package;
  return "";
}

}  // namespace nt
