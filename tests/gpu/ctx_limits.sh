#!/usr/bin/env bash
# On a real GPU: a context's size, limits' growth, late processes in
# a full 4 GiB container, JAX at its default and .95 (tests/gpu/ctx_probe.py).
#   tests/gpu/ctx_limits.sh BUILD_DIR
set -u
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
P="python3 $D/ctx_probe.py"; export PYTHONUNBUFFERED=1
trap 'pkill -9 -f ctx_probe.py 2>/dev/null' EXIT
maxmib() { awk '{ if ($2 > m) m = $2 } END { printf "%.1f", m / 1048576 }' "$1"; }

echo "== bare"; $P ctx
st=$(mktemp -d)
echo "== capped 4g (one process)"
CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB $P ctx
echo "   learned ctx_size: $(python3 - "$st/memory.region" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
off = 64 + 64 * 16 + 16 * 512 + 2 * 8 * 16 * 512
print([v >> 20 for v in struct.unpack_from("<16Q", b, off) if v], "MiB")
PY
)"

echo "== late processes in a full 4 GiB container"
st=$(mktemp -d); : > "$st/pids"
$P sample "$st/samples" "$st/pids" & spid=$!
CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB $P fill "$st/ready" & f=$!
echo $f >> "$st/pids"
for i in $(seq 1 300); do [ -e "$st/ready" ] && break; sleep 0.1; done
for i in 1 2 3; do
  CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB $P late & echo $! >> "$st/pids"
done
sleep 8; kill $f 2>/dev/null; wait $f 2>/dev/null; sleep 0.3; kill $spid
echo "   NVML sum of the container's processes, max $(maxmib "$st/samples") MiB over $(wc -l < "$st/samples") samples (cap 4096)"

for frac in "" .95; do
  st=$(mktemp -d); : > "$st/pids"
  $P sample "$st/samples" "$st/pids" & spid=$!
  if [ -n "$frac" ]; then
    CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB $P jax $frac & j=$!
  else
    CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB python3 -c "
import os, time, jax, jax.numpy as jnp
x = jnp.ones((4096, 4096)); print('jax default:', float((x @ x)[0, 0])); time.sleep(1)" & j=$!
  fi
  echo $j >> "$st/pids"; wait $j; sleep 0.3; kill $spid
  echo "   JAX ${frac:-default} in 4 GiB: NVML max $(maxmib "$st/samples") MiB"
done
