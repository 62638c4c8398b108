#!/bin/sh
# Writes normtool's man page (troff, section 1) to stdout from the built binary's --help and
# each subcommand's --help, so that the page says what the binary does. The build runs it
# (CMakeLists.txt: normtool.1) and `cmake --install` installs the page in share/man/man1.
#   scripts/man.sh build/normtool > normtool.1
set -eu
bin=$1
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/"; }
# printf, never echo: dash's echo reads "\f" as a form feed, and the synopsis came out "ISUBCOMMANDR"
line() { printf '%s\n' "$1"; }
version=$("$bin" --version | head -n 1)
line ".TH NORMTOOL 1 \"\" \"$version\" \"User Commands\""
line ".SH NAME"
line "normtool \\- reproduce the claims about normalization layers, on a CPU"
line ".SH SYNOPSIS"
line ".B normtool"
line "\\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]"
line ".SH DESCRIPTION"
line ".nf"
"$bin" --help | esc
line ".fi"
for sub in $("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}'); do
  line ".SH \"normtool $sub\""
  line ".nf"
  "$bin" "$sub" --help | esc
  line ".fi"
done
line ".SH FILES"
line "Configs, experiments and the documentation (config.md, data.md, usage.md, claims.md) are installed in"
line ".IR share/normtool/ ."
line ".SH EXIT STATUS"
line "0 success; 1 a run that failed or diverged, or an error of normtool's own; 2 bad input (usage, config, data)."
