#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer (GCC), in
# build-asan/. Any report fails the run: UBSan does not recover, ASan aborts at its first error.
#   scripts/sanitize.sh              every test
#   scripts/sanitize.sh -E 'Reproduce|QuickReport'  ctest arguments pass through (here: all but the claims' runs)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNORMTOOL_SANITIZE=ON -DNORMTOOL_BENCH=OFF >/dev/null
cmake --build build-asan -j "$(nproc)"
# detect_leaks: the tests' forked runs exit through std::exit with live singletons; leaks are
# checked too, but a leak at exit in a child is reported, not fatal to the parent's test
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd build-asan && ctest -j "$(nproc)" --output-on-failure "$@"
