// gettext-de's catalogs: data.catalogs' default (docs/usage.md), with the Debian package that
// installs each <stem>.mo in /usr/share/locale/de/LC_MESSAGES. Here, in config/, because the
// default is the config's (config/validate.cpp fills it in); data/gettext.cpp reads the files.
#pragma once
#include <string>
#include <vector>

namespace nt {

const std::vector<std::string>& default_gettext_catalogs();
// The package that installs <stem>.mo; "" for a stem outside the default list.
std::string gettext_catalog_package(const std::string& stem);

}  // namespace nt
