#!/usr/bin/env bash
# normtool against the PyTorch peer (../shared/peer, Debian's python3-torch) on the same
# configs, seed and thread count, alternating normtool, peer, normtool, peer, ...; prints the
# median step time (the median of each run's step_ms_median) of each and the ratio.
#
#   scripts/bench_vs_torch.sh                 lm-tiny, lm-small, mlp-fmnist at 1 and 2 threads
#   REPEATS=3 CONFIGS="lm-tiny" THREADS=1 scripts/bench_vs_torch.sh
# Needs an otherwise idle machine: other work on the 2 cores spoils both sides' timings.
set -euo pipefail
cd "$(dirname "$0")/.."
PEER=${PEER:-../shared/peer/torch_peer.py}
REPEATS=${REPEATS:-2}
CONFIGS=${CONFIGS:-"lm-tiny lm-small mlp-fmnist"}
THREADS=${THREADS:-"1 2"}
[ -x build/normtool ] || scripts/setup.sh
[ -f "$PEER" ] || { echo "no PyTorch peer at $PEER (set PEER=...)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

steps_of() { case $1 in lm-small) echo 40 ;; lm-deep18) echo 60 ;; mlp-fmnist) echo 300 ;; *) echo 150 ;; esac; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
field() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

printf '| config | threads | normtool ms/step | PyTorch ms/step | ratio | normtool tokens/s | PyTorch tokens/s |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
for config in $CONFIGS; do
  for threads in $THREADS; do
    args=(--config "configs/$config.json" --set "train.threads=$threads" --set "train.steps=$(steps_of "$config")"
          --set train.stats_every=0 --set train.eval_every=1000000)
    for r in $(seq "$REPEATS"); do
      build/normtool run "${args[@]}" --out "$out/nt-$config-$threads-$r" >/dev/null 2>&1
      /usr/bin/python3 "$PEER" run "${args[@]}" --out "$out/pt-$config-$threads-$r" >/dev/null 2>&1
    done
    nt=$(for r in $(seq "$REPEATS"); do field "$out/nt-$config-$threads-$r/summary.json" step_ms_median; done | median)
    pt=$(for r in $(seq "$REPEATS"); do field "$out/pt-$config-$threads-$r/summary.json" step_ms_median; done | median)
    ntt=$(for r in $(seq "$REPEATS"); do field "$out/nt-$config-$threads-$r/summary.json" tokens_per_s; done | median)
    ptt=$(for r in $(seq "$REPEATS"); do field "$out/pt-$config-$threads-$r/summary.json" tokens_per_s; done | median)
    awk -v c="$config" -v t="$threads" -v a="$nt" -v b="$pt" -v x="$ntt" -v y="$ptt" \
      'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2f | %.0f | %.0f |\n", c, t, a, b, a / b, x, y }'
  done
done
