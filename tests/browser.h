// A page opened in Debian's headless Chromium, as a reader would open it: its screenshot, its DOM
// after loading, and its console messages. Chromium is required (scripts/setup.sh installs it):
// without it the tests that use this fail, saying so.
#pragma once
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.h"

namespace nt::test {

// The chromium on PATH, "" when there is none.
inline std::string chromium_binary() {
  const CommandResult r = run_shell("command -v chromium || command -v chromium-browser");
  return r.exit_code == 0 && !r.output.empty() ? r.output.substr(0, r.output.find('\n')) : "";
}
inline const char* kInstallChromium =
    "chromium is not installed: the HTML pages are tested in it (apt-get install chromium; scripts/setup.sh "
    "installs it)";

struct BrowserView {
  int exit_code = -1;
  std::string dom;  // the document after loading (--dump-dom)
  std::string log;  // Chromium's standard error: its console messages among its own lines
  // The page's console messages: a script error ("Uncaught ...") or console.error/log. A page of
  // normtool's has no script, so any message is a defect.
  std::vector<std::string> console() const {
    std::vector<std::string> out;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);)
      if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) out.push_back(line);
    return out;
  }
};

// Opens file://<page> (an absolute path) at 1200x2000 CSS pixels, scale 1, with a fresh profile
// (root needs --no-sandbox), within two minutes; the screenshot goes to `screenshot`.
inline BrowserView open_in_chromium(const std::string& page, const std::string& screenshot) {
  TempDir profile;
  std::filesystem::create_directories(profile.path);
  const std::string dom = profile / "dom.html", log = profile / "stderr.txt";
  const std::string command = "( timeout 120 '" + chromium_binary() +
                              "' --headless=new --no-sandbox --disable-gpu --hide-scrollbars "
                              "--force-device-scale-factor=1 --window-size=1200,2000 --enable-logging=stderr --v=0 "
                              "--user-data-dir='" +
                              (profile / "profile") + "' --screenshot='" + screenshot + "' --dump-dom 'file://" + page +
                              "' >'" + dom + "' 2>'" + log + "' )";
  BrowserView view;
  view.exit_code = run_shell(command).exit_code;
  view.dom = read_text(dom);
  view.log = read_text(log);
  return view;
}

}  // namespace nt::test
