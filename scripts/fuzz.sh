#!/usr/bin/env bash
# libFuzzer on config loading and override parsing (fuzz/config_fuzzer.cpp), under ASan and UBSan.
#
#   scripts/fuzz.sh                 1,000,000 executions (about 10 minutes on 2 cores)
#   scripts/fuzz.sh 200000          that many
#   scripts/fuzz.sh 1000000 --merge  and add the inputs that found new coverage to fuzz/corpus
#
# Installs clang, its sanitizer and fuzzer runtimes and LLVM's OpenMP when missing, builds in
# build-fuzz/, seeds from fuzz/corpus and the configs in configs/, and writes any input that
# fails into fuzz/crashes/ (commit it: the tests replay that directory, fuzz.Replay).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
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
cmake --build build-fuzz -j "$(nproc)" --target config_fuzzer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
build-fuzz/fuzz/config_fuzzer -runs="$runs" -dict=fuzz/config.dict -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix=fuzz/crashes/ -print_final_stats=1 "$work" fuzz/corpus configs configs/smoke configs/parity
echo "fuzz: $runs executions in $(( $(date +%s) - start )) s, no failure"
if [ "${2:-}" = "--merge" ]; then
  build-fuzz/fuzz/config_fuzzer -merge=1 -dict=fuzz/config.dict -max_len=4096 fuzz/corpus "$work"
fi
