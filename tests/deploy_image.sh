# The node image (deploy/Dockerfile) built and run with podman and runc,
# from local bases only (no registry): two Debian 12 roots made with
# debootstrap (--variant=minbase; the build stage's with gcc, cmake, make,
# binutils and libc6-dev included), imported with `podman import`, then
# `podman build --network none` with BUILD_IMAGE and RUN_IMAGE naming them.
# The image then runs as the DaemonSet runs it (deploy/daemonset.yaml):
#  - the exporter, host network and host pids, read-only root, the state
#    folder mounted read-only: /metrics names a capped worker running on
#    the host in that folder, /health answers, both fetched from the host;
#  - node-install.sh --once with the host folders bind-mounted under
#    /host: the library lands on the host (cudacap's folder and, on this
#    fake HAMi node, HAMi's names, HAMi's own file kept as *.hami); that copy
#    passes scripts/check-glibc.sh at 2.17 and, preloaded on the host into
#    the demo worker on the simulator, caps it.
# CUDA headers: where CMakeLists.txt has CUDACAP_CUDA_HEADERS (the project's
# own declarations) the build stage gets no NVIDIA file; before that, the
# toolkit's /usr/local/cuda/include is bind-mounted into the build
# (podman build -v) with CUDA_HEADERS=toolkit.
# Timing, measured 2026-12-03 on 2 cores shared with other builds (load
# 10): the first run makes the two roots with debootstrap (about 4 minutes,
# 110 s and 130 s; the Debian mirror's speed decides) and keeps them as
# tarballs in $DEPLOY_IMAGE_CACHE (build/deploy-image-cache); a later run
# took 2.5 minutes: 35 s to import the roots, 110 s to build (mostly the
# compile), 5 s to run the checks. The control, after it: under 10 s.
# The negative control (deploy.image.negative_control, WILL_FAIL):
# DEPLOY_IMAGE_CONTROL=1 builds a copy of the Dockerfile whose image lacks
# the library (only /usr/bin copied from the build stage): node-install.sh
# finds no library and the library checks fail. Its build stage is taken
# from the layer cache this test left in the shared storage. A control whose
# build fails proves nothing and exits 0, so that WILL_FAIL reports it.
# Skipped (77) without root, podman, runc, debootstrap or curl (failing instead
# when CUDACAP_REQUIRE_TOOLS=1), and in sanitizer builds (the image's
# library is a plain build; the sanitized worker would need its runtime first).
. "$(dirname "$0")/cli_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
need_tool podman podman && need_tool runc runc && need_tool debootstrap debootstrap && need_tool curl curl ||
  { echo "skip: no podman/runc/debootstrap/curl"; exit 77; }
[ -z "$SANPRE" ] || { echo "skip: sanitizer build"; exit 77; }
T=$CLI_TEST_TMP
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${DEPLOY_IMAGE_CACHE:?the cache folder (set by CTest)}
MIRROR=${DEPLOY_IMAGE_MIRROR:-http://deb.debian.org/debian}
CONTROL=${DEPLOY_IMAGE_CONTROL:-0}
mkdir -p "$CACHE/debs"
# Private podman storage (runc, cgroupfs and lowered rlimits as in
# tests/cli_cdi_podman.sh), kept in the cache folder for the control's layer
# cache and emptied at the start of every run of the test itself (mounts a
# killed run left there first). The overlay driver: vfs copies the whole
# root at every Dockerfile step (a run took 5 minutes more); vfs only where
# the folder is itself on overlayfs, which the kernel's overlay refuses.
S=$CACHE/podman
if [ "$CONTROL" != 1 ]; then
  awk -v s="$S/" 'index($2, s) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
  rm -rf "$S"
fi
driver=${DEPLOY_IMAGE_DRIVER:-overlay}
[ "$(stat -f -c %T "$CACHE")" = overlayfs ] && driver=vfs
# podman refuses a runroot longer than 50 characters (CI's checkout is under
# a longer path than ours): the runroot, which holds only this run's locks
# and mounts, lives under /tmp, named by a hash of the storage folder.
RUNROOT=/tmp/cc-pod-$(printf %s "$S" | md5sum | cut -c1-12)
if [ "$CONTROL" != 1 ]; then rm -rf "$RUNROOT"; fi
POD=(podman --root "$S/storage" --runroot "$RUNROOT" --storage-driver $driver --runtime runc
     --cgroup-manager cgroupfs --events-backend none)
LIM=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
name=cudacap-exporter-$$
trap 'cleanup_bg; "${POD[@]}" rm -f -t 0 $name >/dev/null 2>&1' EXIT
t0=$SECONDS

# base NAME [PACKAGES]: a Debian 12 minbase root as $CACHE/NAME.tar, made
# once (the stamp names what it holds), imported as localhost/cudacap-NAME.
base() {
  local tar=$CACHE/$1.tar stamp="bookworm minbase ${2:-} $MIRROR"
  if [ "$(cat "$tar.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$tar" "$tar.stamp" "$CACHE/$1.root"
    local t=$SECONDS
    if ! debootstrap --variant=minbase --cache-dir="$CACHE/debs" ${2:+--include=$2} bookworm \
         "$CACHE/$1.root" "$MIRROR" >"$T/debootstrap-$1.log" 2>&1; then
      tail -5 "$T/debootstrap-$1.log" >&2
      [ "${CUDACAP_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: debootstrap $1 from $MIRROR" >&2; exit 1; }
      echo "skip: debootstrap from $MIRROR failed (no mirror?)"; exit 77
    fi
    rm -rf "$CACHE/$1.root"/var/cache/apt/archives/*.deb "$CACHE/$1.root"/var/lib/apt/lists/*
    tar -C "$CACHE/$1.root" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar" && rm -rf "$CACHE/$1.root"
    echo "$stamp" >"$tar.stamp"
    echo "note: debootstrap $1: $((SECONDS - t)) s"
  fi
  "${POD[@]}" image exists localhost/cudacap-$1 ||
    "${POD[@]}" import -q "$tar" localhost/cudacap-$1 >/dev/null || { echo "FAIL: podman import $1" >&2; exit 1; }
}
base run-base
base build-base gcc,cmake,make,binutils,libc6-dev
echo "note: bases ready after $((SECONDS - t0)) s"

df=$SRCDIR/deploy/Dockerfile
img=localhost/cudacap-node:test
if [ "$CONTROL" = 1 ]; then
  df=$T/Dockerfile img=localhost/cudacap-node:control
  sed 's|^COPY --from=build /out/usr/ /usr/$|COPY --from=build /out/usr/bin/ /usr/bin/|' "$SRCDIR/deploy/Dockerfile" >"$df"
  cmp -s "$df" "$SRCDIR/deploy/Dockerfile" && { echo "control: the mutation changed nothing"; exit 0; }
fi
BUILD=(build --network none "${LIM[@]}" -f "$df" -t $img
       --build-arg BUILD_IMAGE=localhost/cudacap-build-base --build-arg RUN_IMAGE=localhost/cudacap-run-base)
if grep -q CUDACAP_CUDA_HEADERS "$SRCDIR/CMakeLists.txt"; then
  echo "note: the build stage uses the project's own CUDA declarations"
else
  [ -f /usr/local/cuda/include/cuda.h ] || { echo "FAIL: no CUDACAP_CUDA_HEADERS in this tree and no /usr/local/cuda/include/cuda.h" >&2; exit 1; }
  BUILD+=(-v /usr/local/cuda/include:/usr/local/cuda/include:ro --build-arg CUDA_HEADERS=toolkit)
  echo "note: the build stage uses NVIDIA's cuda.h (bind-mounted from /usr/local/cuda/include)"
fi
t=$SECONDS
if "${POD[@]}" "${BUILD[@]}" "$SRCDIR" >"$T/build.log" 2>&1; then
  ok "podman build --network none on the local bases ($((SECONDS - t)) s)"
else
  tail -30 "$T/build.log" >&2
  [ "$CONTROL" = 1 ] && { echo "control: the build itself failed, which proves nothing"; exit 0; }
  fail "podman build (log: $T/build.log)"; finish
fi
# (The control's build stage comes from the cache: its RUN printed nothing.)
if [ "$CONTROL" != 1 ]; then
  grep -q "check-glibc: .* (at most 2.17)" "$T/build.log" && ok "the build stage's glibc check ran" ||
    fail "no check-glibc line in the build log"
fi

# The exporter, as the DaemonSet's exporter container: host pids, read-only
# root, the state folder read-only. The host network stands for the pod's
# port: the test reaches it on 127.0.0.1.
start_holder "$T/state/job1"
port=$((20000 + RANDOM % 20000))
expect 0 "exporter container started" "${POD[@]}" run -d --name $name --network host --pid host --read-only "${LIM[@]}" \
  -e NODE_NAME=testnode -v "$T/state:/var/lib/cudacap/containers:ro" $img \
  metrics --root /var/lib/cudacap/containers --listen ":$port"
for i in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
out=$(curl -s -i "http://127.0.0.1:$port/health" 2>&1)
has "200 OK" "/health answers from the container"
out=$(curl -s -i "http://127.0.0.1:$port/metrics" 2>&1)
has "200 OK" "/metrics answers"
has 'cudacap_build_info{Hostname="testnode"' "the exposition, with the node's name"
has 'cudacap_fb_used_bytes{cudacap_container="job1"' "the host's capped worker, read through the mounted state folder"
[ "$(awk '/^cudacap_fb_used_bytes\{cudacap_container="job1"/ {print $2; exit}' <<<"$out")" -gt 0 ] 2>/dev/null &&
  ok "its bytes in use are counted" || fail "job1's fb_used_bytes: $(grep job1 <<<"$out" | head -3)"
"${POD[@]}" rm -f -t 0 $name >/dev/null 2>&1
cleanup_bg

# The installer, as the initContainer: the host's folders under /host.
H=$T/host
mkdir -p "$H/lib" "$H/vgpu"
printf 'hami-core' >"$H/vgpu/libvgpu.so"
expect 0 "node-install.sh --once in the image" "${POD[@]}" run --rm --network none "${LIM[@]}" \
  -e HOST_ROOT=/host -e HAMI_DIR=/usr/local/vgpu -e HAMI_VERSION=v2.5.0 \
  -v "$H/lib:/host/usr/local/lib/cudacap" -v "$H/vgpu:/host/usr/local/vgpu" \
  --entrypoint /usr/share/cudacap/node-install.sh $img --once
has "wrote /host/usr/local/lib/cudacap/libcudacap.so" "says what it wrote"
lib=$H/lib/libcudacap.so
[ -f "$lib" ] && ok "the library is on the host: $(readlink "$lib") -> $(readlink "$H/lib/$(readlink "$lib")")" ||
  fail "no $lib: $(ls -l "$H/lib")"
expect 0 "the host's copy passes check-glibc.sh 2.17" "$SRCDIR/scripts/check-glibc.sh" "$lib" 2.17
for n in libvgpu.so libvgpu.so.v2.5.0; do
  cmp -s "$lib" "$H/vgpu/$n" && ok "HAMi's name $n holds it" || fail "$n is not cudacap's"
done
[ "$(cat "$H/vgpu/libvgpu.so.hami" 2>/dev/null)" = hami-core ] && ok "HAMi's own file kept as libvgpu.so.hami" ||
  fail "no libvgpu.so.hami"
expect 0 "the image's library preloaded on the host" env LD_PRELOAD="$lib" CUDACAP_MEM_LIMIT=512m \
  CUDACAP_STATE_DIR="$T/s" "$WORKER" alloc --chunk 64 --seconds 0
has "cuMemGetInfo total 0.50 GiB" "it caps the worker at 512m"
echo "note: $((SECONDS - t0)) s in all"
finish
