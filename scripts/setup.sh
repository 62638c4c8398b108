#!/usr/bin/env bash
# Idempotent set-up on Debian 12: install the missing Debian packages (only those), then
# configure and build normtool in build/. Safe to run again; a second run only rebuilds.
# Arguments go to CMake's configure (scripts/test.sh passes -DNORMTOOL_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake make                                         # toolchain
  libcli11-dev libeigen3-dev nlohmann-json3-dev libfmt-dev zlib1g-dev   # normtool
  libopenblas-openmp-dev                                 # fast matrix products, on normtool's OpenMP threads
  libgtest-dev libbenchmark-dev                          # tests and benchmarks
  fortunes dataset-fashion-mnist                         # the real data sets of the spec
  # gettext-de: the packages that install data.catalogs' default German catalogs (src/data/gettext.cpp)
  iso-codes coreutils bash grep sed tar findutils diffutils dpkg apt libapt-pkg6.0 make gettext
  libc-l10n git libgtk2.0-common libglib2.0-data xkb-data shared-mime-info wget xz-utils procps
  man-db login
  gnuplot-nox                                            # loss-curve plots (optional at run time)
  chromium                                               # the HTML pages' test (REPORT.html, a run's index.html)
  python3-pandas                                         # python/normtool (runs as DataFrames) and its test
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
