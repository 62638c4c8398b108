// docs/config.md, generated from the field table (config.cpp's fields_of, read through config_keys):
// `normtool config` prints it.
#include <fmt/format.h>

#include <sstream>
#include <string>

#include "config/config.h"

namespace nt {

std::string config_reference() {
  std::string md =
      "# The run config\n\n"
      "<!-- generated from the field table of src/config/config.cpp by `normtool config > docs/config.md`: "
      "edit it there -->\n\n"
      "A run is one JSON object (`configs/*.json`); every key is optional and takes the default below. "
      "Objects nest by the dots of the key (`{\"model\": {\"norm\": {\"type\": \"rmsnorm\"}}}`), and "
      "`key.path=value` on the command line overrides a key (the value is JSON, or else a string). "
      "The config is checked whole before anything runs: an unknown key (with a did-you-mean), a wrong type, a "
      "name outside its choices or a value outside its range is an error naming the key, and exit status 2. "
      "A run directory's `config.json` holds the resolved config, every default filled in; "
      "`normtool run --config FILE --print-config` prints it without running.\n\n"
      "| key | type | range | default | meaning |\n| --- | --- | --- | --- | --- |\n";
  auto cell = [](std::string s) {
    std::string out;
    for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return out;
  };
  for (const ConfigKey& k : config_keys()) {
    std::string range = k.range;
    if (k.type == "one of") {
      range.clear();
      std::stringstream names(k.range);
      for (std::string n; std::getline(names, n, '|');) range += (range.empty() ? "`" : ", `") + n + "`";
    }
    md += fmt::format("| `{}` | {} | {} | `{}` | {} |\n", k.path, k.type, range.empty() ? "-" : cell(range),
                      cell(k.default_value), cell(k.meaning));
  }
  md +=
      "\nCombinations are checked too: a transformer needs a language-modelling dataset and an mlp a "
      "classification one; `model.n_heads` divides `model.d_model`; deepnorm is for transformers and always "
      "post (its alpha and beta are filled in); composite batchnorm is refused (it keeps no running statistics); "
      "batchnorm in an mlp or a language model needs at least 2 values per statistic (2 rows in an mlp). A "
      "key that the config does not read (`train.momentum` beside adam, `model.cell` outside the rnn, "
      "`model.norm.p` without prmsnorm) is refused unless it was set in an earlier layer (a file before the "
      "overrides, the overrides before --set, a sweep's --set before its axes) than the key that decides it: "
      "then the later choice supersedes it.\n";
  return md;
}

}  // namespace nt
