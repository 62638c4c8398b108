#!/usr/bin/env bash
# No function in src/ over 60 lines (STYLE.md): a function is a definition that opens at column 0
# (its closing brace at column 0 too, as clang-format leaves it) and is not a namespace, a type or a
# table; a table is data, however long: a function named *_claims (the claims as values, claims/)
# or whose body is one initializer (a line "  return {" or "  static const ... = {" right after
# the opening). Prints each longer function, file:line and length; exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/../src"
limit=60
find . -name '*.cpp' -o -name '*.h' | sort | xargs awk -v limit="$limit" '
  FNR == 1 { open = 0; pending = 0 }
  !open && !pending && /^[A-Za-z_].*[(]/ && !/^(namespace|struct|class|enum|union|template|#)/ && !/;$/ {
    pending = 1; start = FNR; name = $0; table = (name ~ /_claims[(][)]/)
  }
  pending && /(;|[}])$/ { pending = 0 }
  pending && /[{]$/ { pending = 0; open = 1; body = FNR; next }
  open && FNR == body + 1 && /^  (return \{|static const .* = [\[{])/ { table = 1 }
  open && /^[}]/ {
    open = 0
    if (!table && FNR - body - 1 > limit) { printf "%s:%d: %d lines: %s\n", FILENAME, start, FNR - body - 1, name; bad = 1 }
  }
  END { exit bad }
'
