#!/usr/bin/env bash
# Set up (scripts/setup.sh), start a one-node Slurm cluster for the Slurm tests
# (scripts/slurm-local.sh; if it cannot start, those tests fail and say why), and run the whole
# test suite, built with warnings as errors (a new warning fails CI). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -DNORMTOOL_WERROR=ON
scripts/slurm-local.sh || echo "test: Slurm did not start; the Slurm tests will fail" >&2
ctest --test-dir build --output-on-failure -j "$(nproc)"
