#!/usr/bin/env bash
# gcc's -Wmaybe-uninitialized depends on the optimisation level and on the
# compiler's version: the device machine's gcc refused a Release build that
# this gcc at -O2/-O3 accepted (podres_pb.c), and this gcc at -O1 shows the
# same warning. So every source of the library, the CLI and the simulator is
# compiled (not linked) at each level with the project's flags, -Werror.
#   scripts/check_optlevels.sh [levels...]   (default: -O1 -O3 -Os -Og; -O2 is
#   the level every build of the project compiles at, RelWithDebInfo, -Werror)
set -euo pipefail
cd "$(dirname "$0")/.."
levels=("$@"); [ ${#levels[@]} -gt 0 ] || levels=(-O1 -O3 -Os -Og)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
# CUDA_ENABLE_DEPRECATED: as src/CMakeLists.txt (the deprecated launches are hooked).
# cuda.h: ours (include/cuda_decls, the build's default), or the folder in
# CUDACAP_CUDA_INCLUDE_DIR (NVIDIA's, as -DCUDACAP_CUDA_HEADERS=toolkit builds).
cuda_inc=${CUDACAP_CUDA_INCLUDE_DIR:-include/cuda_decls}
flags="-std=c11 -fPIC -Wall -Wextra -Werror -D_GNU_SOURCE -fno-strict-aliasing -Iinclude -Isrc -I$cuda_inc -DCUDACAP_VERSION_STRING=\"0\" -DCUDA_ENABLE_DEPRECATED"
export flags out
fails=$(for f in src/*/*.c src/*/*/*.c sim/*.c; do for o in "${levels[@]}"; do echo "$o $f"; done; done |
  xargs -P "$(nproc)" -L1 sh -c 'gcc $flags "$0" -c "$1" -o "$out/$(echo "$0$1" | tr / _).o" 2>&1 | grep -E "error|warning" | sed "s|^|$0: |" || true')
if [ -n "$fails" ]; then echo "$fails"; echo "check_optlevels: $(echo "$fails" | wc -l) diagnostics" >&2; exit 1; fi
echo "check_optlevels: $(ls src/*/*.c src/*/*/*.c sim/*.c | wc -l) sources clean at ${levels[*]}"
