#!/usr/bin/env bash
# libFuzzer under ASan and UBSan, one target at a time (fuzz/<target>_fuzzer.cpp): config (config
# loading and overrides, the default), checkpoint, idx, fortunes, sbatch, mo, and the run-directory
# readers metrics, summary, sweep, result (fuzz/CMakeLists.txt).
#
#   scripts/fuzz.sh                          config, 1,000,000 executions (about 10 minutes on 2 cores)
#   scripts/fuzz.sh 200000                   that many
#   scripts/fuzz.sh 1000000 checkpoint       another target (its corpus: fuzz/corpus-<target>)
#   scripts/fuzz.sh 1000000 --merge          and add the inputs that found new coverage to the corpus
#
# Installs clang, its sanitizer and fuzzer runtimes and LLVM's OpenMP when missing, builds in
# build-fuzz/, seeds from fuzz/corpus and the configs in configs/ (another target: its corpus),
# and writes any input that fails into fuzz/crashes/ (another target's: fuzz/crashes-<target>/);
# commit it: the tests replay that directory (fuzz.Replay, fuzz.Replay.<target>).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
target=config
merge=""
for a in "${@:2}"; do
  if [ "$a" = "--merge" ]; then merge=1; else target=$a; fi
done
case $target in
  config) corpus=(fuzz/corpus configs configs/smoke configs/parity); extra=(-dict=fuzz/config.dict -max_len=4096) ;;
  checkpoint|idx|fortunes|sbatch|mo) corpus=("fuzz/corpus-$target"); extra=(-max_len=65536) ;;
  metrics|summary|sweep|result) corpus=("fuzz/corpus-$target"); extra=(-dict=fuzz/run_files.dict -max_len=16384) ;;
  *) echo "fuzz.sh: unknown target $target (config, checkpoint, idx, fortunes, sbatch, mo, metrics, summary," \
          "sweep, result)" >&2; exit 2 ;;
esac
crashes=fuzz/crashes/
[ "$target" = config ] || crashes=fuzz/crashes-$target/
packages=(clang libclang-rt-14-dev libomp-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNORMTOOL_FUZZ=ON \
  -DNORMTOOL_SANITIZE=ON -DNORMTOOL_TESTS=OFF -DNORMTOOL_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${target}_fuzzer"
mkdir -p "$crashes"
# the run-directory targets rewrite a file every execution: in memory when the user has not chosen
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
"build-fuzz/fuzz/${target}_fuzzer" -runs="$runs" "${extra[@]}" -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$crashes" -print_final_stats=1 "$work" "${corpus[@]}"
echo "fuzz: $target, $runs executions in $(( $(date +%s) - start )) s, no failure"
if [ -n "$merge" ]; then
  "build-fuzz/fuzz/${target}_fuzzer" -merge=1 "${extra[@]}" "${corpus[0]}" "$work"
fi
