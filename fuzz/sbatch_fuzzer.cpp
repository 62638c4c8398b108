// libFuzzer target: the Slurm script writer (sweep/slurm.h: write_sbatch). Input: fields
// separated by byte 0x01: partition, time, an sbatch argument, the base config's path, a grid key,
// then its values (the rest). Property: the script, run by bash with a stub in place of normtool,
// executes nothing but the stub, with exactly each job's arguments. Checked on every input
// without bash, by reading the script as bash and sbatch read it:
//   - no byte below 0x20 but the newline, no 0x7f: nothing can end a line or a directive early
//   - the #SBATCH lines are all in the leading block of comments, and are exactly the directives
//     expected (--requeue and --signal among them)
//   - every other line is a line of the fixed template (the script of a benign grid), or a job's
//     `N) args=(...) ;;` or the normtool=, dir=, cd lines, whose words are single-quoted strings,
//     $'...' strings with only \xNN, \\ and \' escapes, \' and plain [A-Za-z0-9_./=-]
//     characters, that unquote to exactly the expected arguments
// With NORMTOOL_FUZZ_RUN_BASH=1 (the CTest replay), each script is also run by bash, task by
// task, with the stub, and the stub's arguments compared.
// Site options with a control character must be refused (a UsageError), and nothing else is.
#include <unistd.h>

#include <cstddef>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <algorithm>

#include "core/errors.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace {

namespace fs = std::filesystem;

const std::string& workdir() {
  static const std::string* p = [] {
    char name[] = "/tmp/normtool-sbatch-fuzz-XXXXXX";
    if (!mkdtemp(name)) std::abort();
    fs::create_directories(std::string(name) + "/out");
    return new std::string(name);
  }();
  return *p;
}

const std::string kBinary = "/opt/normtool/bin/normtool";

[[noreturn]] void fail(const std::string& why, const std::string& script) {
  std::fprintf(stderr, "sbatch_fuzzer: %s\n--- script ---\n%s\n", why.c_str(), script.c_str());
  std::abort();
}

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// bash words of `text` (single-quoted strings, \', plain characters, separated by one blank);
// false when anything else appears (an expansion, a metacharacter).
bool words_of(const std::string& text, std::vector<std::string>& words) {
  words.assign(1, "");
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '\'') {  // $'...': \xNN, \\ and \' only
      std::size_t k = i + 2;
      for (;; ++k) {
        if (k >= text.size()) return false;
        if (text[k] == '\'') break;
        if (text[k] != '\\') {
          words.back() += text[k];
        } else if (k + 1 < text.size() && (text[k + 1] == '\\' || text[k + 1] == '\'')) {
          words.back() += text[++k];
        } else if (k + 3 < text.size() && text[k + 1] == 'x' &&
                   std::isxdigit(static_cast<unsigned char>(text[k + 2])) &&
                   std::isxdigit(static_cast<unsigned char>(text[k + 3]))) {
          words.back() += char(std::stoi(text.substr(k + 2, 2), nullptr, 16));
          k += 3;
        } else {
          return false;
        }
      }
      i = k + 1;
    } else if (c == '\'') {
      const auto end = text.find('\'', i + 1);
      if (end == std::string::npos) return false;
      words.back() += text.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\'') {
      words.back() += '\'';
      i += 2;
    } else if (c == ' ') {
      if (words.back().empty() || i + 1 == text.size() || text[i + 1] == ' ') return false;
      words.emplace_back();
      ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || std::string("_./=-").find(c) != std::string::npos) {
      words.back() += c;
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string write(const nt::SweepSpec& spec, const std::vector<nt::SweepJob>& jobs, const nt::SlurmOptions& o) {
  const std::string path = nt::write_sbatch(spec, jobs, o, kBinary);
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool variable_line(const std::string& l) {
  return l.rfind("normtool=", 0) == 0 || l.rfind("dir=", 0) == 0 || l.rfind("cd -- ", 0) == 0 ||
         l.find(") args=(") != std::string::npos;
}

// The body lines every script shares (from a benign grid).
const std::set<std::string>& template_lines() {
  static const std::set<std::string>* t = [] {
    nt::SweepSpec spec;
    spec.out = workdir() + "/out";
    spec.axes = {{"seed", {"1"}}};
    auto* lines = new std::set<std::string>;
    bool body = false;
    for (const std::string& l : lines_of(write(spec, nt::expand(spec), nt::SlurmOptions{}))) {
      body |= l.empty() || l[0] != '#';
      if (body && !variable_line(l)) lines->insert(l);
    }
    return lines;
  }();
  return *t;
}

// Runs the script with a stub normtool for each job: the stub's arguments must be exactly
// `run <job's arguments> --out <out>/<index>`.
void run_with_stub(const std::string& script, const std::vector<std::vector<std::string>>& args,
                   const std::vector<nt::SweepJob>& jobs, const std::string& out) {
  const std::string dir = workdir();
  std::ofstream(dir + "/stub") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" << dir << "/args'\n";
  fs::permissions(dir + "/stub", fs::perms::owner_all);
  std::string stubbed;
  for (const std::string& l : lines_of(script))
    stubbed += (l.rfind("normtool=", 0) == 0 ? "normtool='" + dir + "/stub'" : l) + "\n";
  std::ofstream(dir + "/stubbed.sbatch") << stubbed;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    fs::remove(dir + "/args");
    const std::string cmd = "cd / && SLURM_ARRAY_TASK_ID=" + std::to_string(jobs[j].index) + " bash '" + dir +
                            "/stubbed.sbatch' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) fail("the script failed with the stub", script);
    std::ifstream in(dir + "/args", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string recorded = ss.str();
    std::vector<std::string> argv;
    for (std::size_t p = 0, q; (q = recorded.find('\0', p)) != std::string::npos; p = q + 1)
      argv.push_back(recorded.substr(p, q - p));
    std::vector<std::string> want = {"run"};
    want.insert(want.end(), args[j].begin(), args[j].end());
    want.insert(want.end(), {"--out", out + "/" + std::to_string(jobs[j].index)});
    if (argv != want) fail("the stub got other arguments for job " + std::to_string(j), script);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> f(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0x01)
      f.emplace_back();
    else
      f.back() += char(data[i]);
  }
  f.resize(std::max<std::size_t>(f.size(), 6));
  nt::SlurmOptions o;
  o.partition = f[0];
  o.time = f[1];
  if (!f[2].empty()) o.extra.push_back(f[2]);
  nt::SweepSpec spec;
  spec.out = workdir() + "/out";
  spec.config = f[3];
  nt::SweepAxis axis{f[4].empty() ? "seed" : f[4], {}};
  for (std::size_t i = 5; i < f.size() && axis.values.size() < 8; ++i) axis.values.push_back(f[i]);
  spec.axes = {axis};
  std::vector<nt::SweepJob> jobs;
  try {
    jobs = nt::expand(spec);
  } catch (const nt::UsageError&) {
    return 0;  // a value given twice
  }
  const bool refusable = has_control(o.partition) || has_control(o.time) || has_control(f[2]);
  std::string script;
  try {
    script = write(spec, jobs, o);
  } catch (const nt::UsageError& e) {
    if (!refusable) fail(std::string("refused: ") + e.what(), "");
    return 0;
  }
  if (refusable) fail("a site option with a control character was accepted", script);
  for (unsigned char c : script)
    if ((c < 0x20 && c != '\n') || c == 0x7f) fail("a control character in the script", script);
  // the expected arguments of each job
  std::vector<std::vector<std::string>> args;
  const std::string config = spec.config.empty() ? "" : fs::absolute(spec.config).lexically_normal().string();
  for (const nt::SweepJob& j : jobs) {
    std::vector<std::string> a;
    if (!config.empty()) a.insert(a.end(), {"--config", config});
    for (const std::string& v : nt::job_fixed(spec)) a.push_back(v);  // positional, then the axes as --set
    for (const std::string& v : nt::job_axes(j)) a.insert(a.end(), {"--set", v});
    args.push_back(a);
  }
  const std::vector<std::string> lines = lines_of(script);
  std::size_t header = 0;
  int directives = 0;
  while (header < lines.size() && !lines[header].empty() && lines[header][0] == '#') {
    directives += lines[header].rfind("#SBATCH ", 0) == 0;
    ++header;
  }
  // job-name, array, cpus-per-task, ntasks, output, open-mode, requeue, signal; chdir when it is one word
  const int expected_directives = 8 + !o.partition.empty() + !o.time.empty() + int(o.extra.size()) +
                                  int(fs::current_path().string().find_first_of(" \t\"'%\\") == std::string::npos);
  if (directives != expected_directives) fail("not the directives expected", script);
  bool requeue = false, signal = false;
  for (std::size_t i = 0; i < header; ++i) {
    requeue |= lines[i] == "#SBATCH --requeue";
    signal |= lines[i].rfind("#SBATCH --signal=B:TERM@", 0) == 0;
  }
  if (!requeue || !signal) fail("--requeue or --signal lost", script);
  std::size_t job_lines = 0;
  for (std::size_t i = header; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("#SBATCH", 0) == 0) fail("a directive in the body", script);
    std::vector<std::string> w;
    if (l.rfind("normtool=", 0) == 0) {
      if (!words_of(l.substr(9), w) || w != std::vector<std::string>{kBinary}) fail("normtool= " + l, script);
    } else if (l.rfind("dir=", 0) == 0) {
      const std::string tail = "/\"$SLURM_ARRAY_TASK_ID\"";
      if (l.size() < 4 + tail.size() || l.compare(l.size() - tail.size(), tail.size(), tail) != 0 ||
          !words_of(l.substr(4, l.size() - 4 - tail.size()), w) ||
          w != std::vector<std::string>{fs::absolute(spec.out).lexically_normal().string()})
        fail("dir= " + l, script);
    } else if (l.rfind("cd -- ", 0) == 0) {
      const std::string tail = " || exit 2";
      if (l.size() < 6 + tail.size() || l.compare(l.size() - tail.size(), tail.size(), tail) != 0 ||
          !words_of(l.substr(6, l.size() - 6 - tail.size()), w) ||
          w != std::vector<std::string>{fs::current_path().string()})
        fail("cd " + l, script);
    } else if (l.find(") args=(") != std::string::npos) {
      if (job_lines >= jobs.size()) fail("more job lines than jobs", script);
      const std::string head = "  " + std::to_string(jobs[job_lines].index) + ") args=(", tail = ") ;;";
      if (l.rfind(head, 0) != 0 || l.size() < head.size() + tail.size() ||
          l.compare(l.size() - tail.size(), tail.size(), tail) != 0 ||
          !words_of(l.substr(head.size(), l.size() - head.size() - tail.size()), w) || w != args[job_lines])
        fail("job line " + l, script);
      ++job_lines;
    } else if (!template_lines().count(l)) {
      fail("a line that is not the template's: " + l, script);
    }
  }
  if (job_lines != jobs.size()) fail("a job line is missing", script);
  if (std::getenv("NORMTOOL_FUZZ_RUN_BASH"))
    run_with_stub(script, args, jobs, fs::absolute(spec.out).lexically_normal().string());
  return 0;
}
