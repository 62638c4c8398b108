#!/usr/bin/env bash
# The layering of src/ (README, "Layering"): a folder includes only from the folders before it,
#   core ops norms config data model io train   (the engine, library normtool_engine)
#   analysis sweep claims report                 (the lab, normtool_lab)
#   cli                                          (then main.cpp)
# Prints every #include of a later folder, file and line; exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/../src"
order=(core ops norms config data model io train analysis sweep claims report cli)
bad=0
for i in "${!order[@]}"; do
  later=("${order[@]:$((i + 1))}")
  ((${#later[@]})) || continue
  pattern=$(IFS='|'; echo "${later[*]}")
  if grep -rnE "#include \"($pattern)/" "${order[$i]}"; then bad=1; fi
done
exit $bad
