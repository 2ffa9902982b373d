#!/usr/bin/env bash
# docs/configuration.md's table of variables is printed from the options table
# the library compiles (src/common/options.c) by cc_options_doc
# (src/common/options_doc.c); it stands between the lines
# <!-- options:begin --> and <!-- options:end -->, the prose around it is kept.
#   scripts/gen_config_doc.sh            rewrites the table in place
#   scripts/gen_config_doc.sh --check    exit 1 and the diff when the doc's table
#                                        differs (the test docs.configuration)
#   --gen PROGRAM   the generator (default: built in build/, configured if need be)
#   --doc FILE      the doc (default: docs/configuration.md)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0 gen="" doc=docs/configuration.md
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --gen) gen=$2; shift ;;
    --doc) doc=$2; shift ;;
    *) echo "usage: $0 [--check] [--gen PROGRAM] [--doc FILE]" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$gen" ]; then
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build --target cc_options_doc -j1 >/dev/null
  gen=build/tests/cc_options_doc
fi
begin='<!-- options:begin -->' end='<!-- options:end -->'
if [ "$(grep -cxF "$begin" "$doc")" != 1 ] || [ "$(grep -cxF "$end" "$doc")" != 1 ] ||
   [ "$(grep -nxF "$begin" "$doc" | cut -d: -f1)" -gt "$(grep -nxF "$end" "$doc" | cut -d: -f1)" ]; then
  echo "$doc: want one line '$begin' and, after it, one line '$end' around the table" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" >"$tmp/table"
sed -n "/^$begin\$/,/^$end\$/p" "$doc" | sed '1d;$d' >"$tmp/now"
if [ "$check" = 1 ]; then
  if ! diff -u --label "$doc (now)" --label "from src/common/options.c" "$tmp/now" "$tmp/table"; then
    echo "$doc: the table of variables differs from the options table (src/common/options.c)." >&2
    echo "Regenerate it with: scripts/gen_config_doc.sh  (or: cmake --build build --target config-doc)" >&2
    exit 1
  fi
  echo "$doc: the table of variables is the options table's"
  exit 0
fi
{
  sed -n "1,/^$begin\$/p" "$doc"
  cat "$tmp/table"
  sed -n "/^$end\$/,\$p" "$doc"
} >"$tmp/doc"
if cmp -s "$tmp/doc" "$doc"; then
  echo "$doc: already up to date"
else
  cat "$tmp/doc" >"$doc"
  echo "$doc: table rewritten from src/common/options.c"
fi
