#!/usr/bin/env bash
# On a real GPU: a plugin linked against the real libcuda opened
# with RTLD_DEEPBIND (allocations direct and through its own dlsym, and
# launches of a 1 ms spin kernel), under cudacap and bare; two processes in
# separate pid namespaces (each pid 1) sharing one memory cap. Usage:
#   tests/gpu/deepbind_pidns.sh BUILD_DIR OUT_DIR        (as root: unshare)
# Prints figures; docs/validation.md judges them.
set -u
B=${1:-build}; O=${2:-/tmp/deepbind_pidns}; mkdir -p "$O"
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
CUDA_INC=${CUDA_INC:-/usr/local/cuda/include}
W=$(mktemp -d); mkdir -p "$W/plug"
cat > "$W/plug/plug.c" <<'C'
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
static CUdeviceptr held[512]; static int n;
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
uint64_t plug_alloc(int via_dlsym) {
  alloc_fn f = cuMemAlloc;
  if (via_dlsym) { void *l = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    f = l ? (alloc_fn)dlsym(l, "cuMemAlloc_v2") : 0; if (!f) return 0; }
  uint64_t got = 0;
  while (n < 512 && f(&held[n], 256u << 20) == CUDA_SUCCESS) n++, got += 256u << 20;
  return got;
}
void plug_free(void) { while (n) cuMemFree(held[--n]); }
CUresult plug_launch(CUfunction f, unsigned g, CUstream s) {
  return cuLaunchKernel(f, g, 1, 1, 32, 1, 1, 0, s, 0, 0); }
C
cat > "$W/host.c" <<'C'
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
/* spin: loops on %globaltimer for 1 ms */
static const char ptx[] =
".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry spin()\n{\n"
".reg .u64 %t<3>;\n.reg .pred %p;\nmov.u64 %t0, %globaltimer;\nL: mov.u64 %t1, %globaltimer;\n"
"sub.u64 %t2, %t1, %t0;\nsetp.lt.u64 %p, %t2, 1000000;\n@%p bra L;\nret;\n}\n";
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUstream s; int sms;
  if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c)) return 3;
  void *h = dlopen("libplug.so", RTLD_NOW | RTLD_DEEPBIND);
  if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
  uint64_t (*al)(int) = (uint64_t (*)(int))dlsym(h, "plug_alloc");
  void (*fr)(void) = (void (*)(void))dlsym(h, "plug_free");
  CUresult (*la)(CUfunction, unsigned, CUstream) = (CUresult (*)(CUfunction, unsigned, CUstream))dlsym(h, "plug_launch");
  if (argc > 1 && argv[1][0] == 'a') {
    for (int v = 0; v < 2; v++) { uint64_t g = al(v); printf("alloc %s: %.2f GiB granted\n", v ? "dlsym" : "direct", g / 1073741824.0); fr(); }
    return 0;
  }
  if (cuModuleLoadData(&m, ptx) || cuModuleGetFunction(&f, m, "spin") || cuStreamCreate(&s, 1) ||
      cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d)) return 4;
  double t0 = now(), from = t0 + 1.0, end = from + 4.0; unsigned k = 0;
  while (now() < end) { if (la(f, sms, s)) return 5; cuStreamSynchronize(s); if (now() > from) k++; }
  printf("launch: %u x 1 ms in 4 s: busy %.3f\n", k, k * 1e-3 / 4.0);
  return 0;
}
C
gcc -O2 -shared -fPIC -I"$CUDA_INC" -o "$W/plug/libplug.so" "$W/plug/plug.c" -l:libcuda.so.1 -ldl || exit 1
gcc -O2 -I"$CUDA_INC" -Wl,--enable-new-dtags,-rpath,"$W/plug" -o "$W/host" "$W/host.c" -l:libcuda.so.1 -ldl || exit 1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for mode in bare capped; do
  st=$(mktemp -d); pre=; [ $mode = capped ] && pre=$LIB
  echo "== RTLD_DEEPBIND plugin, $mode (CUDACAP_MEM_LIMIT=2g CUDACAP_SM_LIMIT=30)"
  CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=2g CUDACAP_SM_LIMIT=30 LD_PRELOAD=$pre "$W/host" alloc
  st=$(mktemp -d)
  CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=30 LD_PRELOAD=$pre "$W/host" launch &
  hp=$!
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$W/util.$mode" &
  sp=$!
  wait $hp; kill $sp 2>/dev/null; wait $sp 2>/dev/null
  echo "NVML utilization samples (200 ms, from 1.2 s): $(tail -n +7 "$W/util.$mode" | head -18 | tr '\n' ' ')"
done
echo "== two pid namespaces (each pid 1), one 4 GiB cap, PyTorch filling in 256 MiB pieces"
st=$(mktemp -d)
cat > "$W/fill.py" <<'P'
import torch, time, sys
x = []
try:
    while True:
        x.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
except RuntimeError:
    pass
print(f"pid 1 of its namespace: {len(x) * 256} MiB held", flush=True)
time.sleep(6)
P
for i in 1 2; do
  unshare --pid --fork --mount-proc env CUDACAP_STATE_DIR=$st CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB \
    python3 "$W/fill.py" > "$W/ns$i.log" 2>&1 &
  sleep 1
done
sleep 5
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
wait
cat "$W"/ns*.log | grep -v Warning
