#!/bin/sh
# docs/usage.md names every subcommand the binary has (`normtool <sub>`) and every file a run
# writes into its directory (`<file>`): run by CTest (docs.UsageNamesEverySubcommandAndRunFile).
#   scripts/check_usage_doc.sh build/normtool
set -eu
bin=$1
doc="$(dirname "$0")/../docs/usage.md"
configs="$(dirname "$0")/../configs"
missing=0
for sub in $("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}'); do
  grep -q "normtool $sub" "$doc" || { echo "docs/usage.md: no \`normtool $sub\`"; missing=1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run --config "$configs/smoke/lm-layernorm-pre.json" --set train.steps=4 --set train.eval_every=2 \
  --set train.stats_every=2 --set train.checkpoint_every=2 --out "$tmp/run" >/dev/null 2>&1
for f in $(ls -A "$tmp/run"); do
  grep -qF "\`$f\`" "$doc" || { echo "docs/usage.md: no \`$f\` (a file every run writes)"; missing=1; }
done
exit $missing
