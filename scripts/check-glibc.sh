#!/usr/bin/env bash
# check-glibc.sh LIB [MAX]: fails when LIB requires a GLIBC_ symbol version
# above MAX (default 2.17, the oldest glibc cudacap preloads into: CentOS 7
# images), listing the symbols that do. Prints the highest version needed.
set -euo pipefail
lib=${1:?usage: check-glibc.sh LIB [MAX]}
max=${2:-2.17}
[ -r "$lib" ] || { echo "check-glibc: cannot read $lib" >&2; exit 2; }
command -v objdump >/dev/null || { echo "check-glibc: objdump (binutils) is needed" >&2; exit 2; }
# Undefined dynamic symbols with their versions: "... *UND* ... (GLIBC_2.34) name".
need=$(objdump -T "$lib" | awk '$0 ~ /\*UND\*/ && match($0, /GLIBC_[0-9.]+/) { print substr($0, RSTART + 6, RLENGTH - 6), $NF }')
top=$(printf '%s\n' "$need" | awk '{print $1}' | sort -V | tail -1)
over=$(printf '%s\n' "$need" | while read -r v s; do
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" != "$max" ] && echo "  $s@GLIBC_$v"
done || true)
if [ -n "$over" ]; then
  echo "check-glibc: $lib needs glibc $top, above $max:" >&2
  printf '%s\n' "$over" >&2
  exit 1
fi
echo "check-glibc: $lib needs glibc ${top:-none} (at most $max)"
