#!/usr/bin/env bash
# Every relative link of the README, the docs and the experiments' READMEs resolves to a file or
# directory of the repository (CTest: repo.EveryDocLinkResolves). Prints each broken one; exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
broken=0
for md in README.md docs/*.md experiments/*/README.md reports/*.md; do
  [ -f "$md" ] || continue
  dir=$(dirname "$md")
  while IFS= read -r link; do
    target=${link%%#*}
    case $link in http://*|https://*|mailto:*|\#*) continue ;; esac
    [ -n "$target" ] || continue
    if [ ! -e "$dir/$target" ]; then
      echo "$md: broken link ($link)"
      broken=1
    fi
  done < <(grep -oE '\]\([^) ]+\)' "$md" | sed -E 's/^\]\(//; s/\)$//')
done
exit $broken
