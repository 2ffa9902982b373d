#!/usr/bin/env bash
# The layering rule of src/ (docs/design.md, "Layout"), from its
# #include "..." lines. Layers, bottom to top:
#   common < os < region < cap (cap/mem included) < hook
# A file may include headers of its own layer and the layers below, and the
# public headers (include/cudacap/). cli/ may include common, os, region,
# cap, cli and the public headers, never hook; nothing outside cli/ includes
# cli.
# Each upward edge is printed as file:line -> header; exit 1 if any.
#   scripts/check_layers.sh [source root]   (default: this checkout)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"

rank() { # layer of a path relative to the root: a number, cli, public or ""
  case "$1" in
    src/common/*) echo 0 ;;
    src/os/*) echo 1 ;;
    src/region/*) echo 2 ;;
    src/cap/*) echo 3 ;;
    src/hook/*) echo 4 ;;
    src/cli/*) echo cli ;;
    include/*) echo public ;;
    *) echo "" ;;
  esac
}
name() { case "$1" in 0) echo common ;; 1) echo os ;; 2) echo region ;; 3) echo cap ;; 4) echo hook ;; *) echo "$1" ;; esac; }

bad=0 edges=0
while IFS= read -r -d '' f; do
  from=$(rank "$f")
  [ -n "$from" ] || continue
  dir=$(dirname "$f")
  while IFS=: read -r line hdr; do
    # As the compiler finds it: beside the file, then src/, then include/.
    if [ -f "$dir/$hdr" ]; then to_path=$(realpath -m --relative-to=. "$dir/$hdr")
    elif [ -f "src/$hdr" ]; then to_path="src/$hdr"
    elif [ -f "include/$hdr" ]; then to_path="include/$hdr"
    else continue # not ours (cuda.h through quotes, generated files)
    fi
    to=$(rank "$to_path")
    edges=$((edges + 1))
    ok=1
    if [ "$to" = public ] || [ -z "$to" ]; then ok=1
    elif [ "$from" = cli ]; then [ "$to" = 4 ] && ok=0
    elif [ "$to" = cli ]; then ok=0
    elif [ "$to" -gt "$from" ]; then ok=0
    fi
    if [ $ok = 0 ]; then
      echo "$f:$line -> $hdr ($(name "$from") includes $(name "$to"))"
      bad=$((bad + 1))
    fi
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
           sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
done < <(find src -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)

if [ $bad -gt 0 ]; then
  echo "check_layers: $bad upward include(s) of $edges" >&2
  exit 1
fi
echo "check_layers: $edges includes, none upward"
