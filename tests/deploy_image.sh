# The node image (deploy/Dockerfile) built and run with podman and runc,
# from local bases only (no registry): two Debian 12 roots made with
# debootstrap (--variant=minbase; the build stage's with README's packages,
# gcc, cmake, make, binutils and libc6-dev among them), imported with `podman import`, then
# `podman build --network none` with BUILD_IMAGE and RUN_IMAGE naming them.
# The image then runs as the DaemonSet runs it: each of its three
# containers with the options tests/pod_args.py reads from
# deploy/daemonset.yaml (mounts of every hostPath under a fake node root,
# the env with the ConfigMap's values and spec.nodeName, the security
# context, the command; the host network for the pod's):
#  - the initContainer (node-install.sh --once): the library lands on the
#    host (cudacap's folder and, on this fake HAMi node, HAMi's names, HAMi's
#    own file kept as *.hami); that copy passes scripts/check-glibc.sh at 2.17
#    and, preloaded on the host into the demo worker on the simulator, caps it;
#  - the sidecar (--watch): after HAMi's file is put back, its first pass
#    installs cudacap's again; it keeps running and stops on SIGTERM with 0;
#  - the exporter (host pids, read-only root, the state folder, HAMi's, the
#    driver's GPU list outside /proc, the pods' logs and the kubelet's
#    folder mounted read-only): /metrics names a capped worker running on
#    the host in that folder with gpu 1 from the mounted GPU list, /health
#    answers, both on its port 9477 from the host. Its control: the manifest
#    with that GPU list mounted inside /proc, which runc must refuse.
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
# The build stage's root holds README's packages (gcc, cmake, make, binutils
# and libc6-dev among them), so that readme.fresh, run after this test,
# takes the same tarball as its fresh root instead of making another
# (about 2 minutes of CI's 25).
readme=$(readme_packages)
[ -n "$readme" ] || { echo "FAIL: no apt-get install line in README.md" >&2; exit 1; }
base build-base "$readme"
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

# The DaemonSet's three containers, each run with the options
# tests/pod_args.py reads from deploy/daemonset.yaml (its mounts, env,
# security context, command), HOST standing for the node's /: the installer
# (the initContainer), the sidecar, the exporter. What podman does not run
# of a pod (resources, probes, the pod network: the host network here) is
# named by pod_args and done by the test where it checks something.
H=$T/host
mkdir -p "$H/usr/local/vgpu" "$H/var/log/pods" "$H/var/lib/kubelet/pod-resources"
printf 'hami-core' >"$H/usr/local/vgpu/libvgpu.so"
# The host's GPU list, as the driver's /proc/driver/nvidia/gpus: the
# simulator's device second in bus order, so the exporter's gpu label (the
# NVML index) is 1 only if the mount and CUDACAP_NVIDIA_PROC reached it.
U0=GPU-5ac1ca00-0000-4000-8000-000000000000 # the simulator's device 0 (sim/cuda_device.c)
mkdir -p "$H/proc/driver/nvidia/gpus/0000:1a:00.0" "$H/proc/driver/nvidia/gpus/0000:3b:00.0"
printf 'Device Minor:\t 5\nGPU UUID:\t GPU-other\n' >"$H/proc/driver/nvidia/gpus/0000:1a:00.0/information"
printf 'Device Minor:\t 0\nGPU UUID:\t %s\n' "$U0" >"$H/proc/driver/nvidia/gpus/0000:3b:00.0/information"
need_py yaml python3-yaml || { echo "skip: no python3 with yaml (python3-yaml)"; finish; }
# pod_run CONTAINER [podman run options...]: the container as the manifest has it.
pod_run() {
  local c=$1 a=() x; shift
  mapfile -d '' a < <($PY "$SRCDIR/tests/pod_args.py" "${MANIFEST:-$SRCDIR/deploy/daemonset.yaml}" "$c" "$H" testnode \
                         HAMI_VERSION=v2.5.0 2>>"$T/pod_args.err") || { fail "pod_args $c: $(cat "$T/pod_args.err")"; return 1; }
  [ ${#a[@]} -gt 0 ] || { fail "pod_args $c: nothing: $(cat "$T/pod_args.err")"; return 1; }
  local i; for i in "${!a[@]}"; do [ "${a[$i]}" = @IMAGE@ ] && a[$i]=$img; done
  "${POD[@]}" run "$@" "${LIM[@]}" "${a[@]}"
}
: >"$T/pod_args.err"
expect 0 "the initContainer (install) from the manifest" pod_run install --rm
has "wrote /host/usr/local/lib/cudacap/libcudacap.so" "says what it wrote"
lib=$H/usr/local/lib/cudacap/libcudacap.so
[ -f "$lib" ] && ok "the library is on the host: $(readlink "$lib") -> $(readlink "$(dirname "$lib")/$(readlink "$lib")")" ||
  fail "no $lib: $(ls -l "$(dirname "$lib")")"
expect 0 "the host's copy passes check-glibc.sh 2.17" "$SRCDIR/scripts/check-glibc.sh" "$lib" 2.17
for n in libvgpu.so libvgpu.so.v2.5.0; do
  cmp -s "$lib" "$H/usr/local/vgpu/$n" && ok "HAMi's name $n holds it" || fail "$n is not cudacap's"
done
[ "$(cat "$H/usr/local/vgpu/libvgpu.so.hami" 2>/dev/null)" = hami-core ] &&
  ok "HAMi's own file kept as libvgpu.so.hami" || fail "no libvgpu.so.hami"
expect 0 "the image's library preloaded on the host" env LD_PRELOAD="$lib" CUDACAP_MEM_LIMIT=512m \
  CUDACAP_STATE_DIR="$T/s" "$WORKER" alloc --chunk 64 --seconds 0
has "cuMemGetInfo total 0.50 GiB" "it caps the worker at 512m"

# The sidecar, after HAMi's vgpu-init.sh put its own file back: its first
# pass (at start, then every 30 s) installs cudacap's again; it keeps
# running and stops on SIGTERM with 0.
printf 'hami-core-2' >"$H/usr/local/vgpu/libvgpu.so"
expect 0 "the sidecar (reinstall) from the manifest, detached" pod_run reinstall -d --name $name-sidecar
for i in $(seq 100); do cmp -s "$lib" "$H/usr/local/vgpu/libvgpu.so" && break; sleep 0.1; done
cmp -s "$lib" "$H/usr/local/vgpu/libvgpu.so" && ok "the sidecar put cudacap's library back over HAMi's" ||
  fail "libvgpu.so still HAMi's: $("${POD[@]}" logs $name-sidecar 2>&1 | tail -3)"
[ "$("${POD[@]}" inspect -f '{{.State.Running}}' $name-sidecar 2>&1)" = true ] && ok "the sidecar keeps watching" ||
  fail "the sidecar stopped: $("${POD[@]}" logs $name-sidecar 2>&1 | tail -3)"
"${POD[@]}" stop -t 5 $name-sidecar >/dev/null 2>&1
rc=$("${POD[@]}" inspect -f '{{.State.ExitCode}}' $name-sidecar 2>&1)
[ "$rc" = 0 ] && ok "the sidecar stops on SIGTERM with 0" || fail "sidecar exit code $rc"
"${POD[@]}" rm -f -t 0 $name-sidecar >/dev/null 2>&1

# The exporter: host pids, read-only root, every hostPath of the manifest
# (the state folder, HAMi's, the driver's GPU list outside /proc, the pods'
# logs, the kubelet's socket folder), on its port 9477.
start_holder "$H/var/lib/cudacap/containers/job1"
if curl -s -o /dev/null "http://127.0.0.1:9477/" 2>/dev/null; then
  fail "port 9477 is taken on this machine: the exporter's port cannot be checked"
else
  expect 0 "the exporter from the manifest, detached" pod_run exporter -d --name $name
  for i in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:9477/health" && break; sleep 0.1; done
  out=$(curl -s -i "http://127.0.0.1:9477/health" 2>&1)
  has "200 OK" "/health answers from the container (the liveness probe's path)"
  out=$(curl -s -i "http://127.0.0.1:9477/metrics" 2>&1)
  has "200 OK" "/metrics answers (the readiness probe's path)"
  has 'cudacap_build_info{Hostname="testnode"' "the exposition, with the node's name from spec.nodeName"
  has 'cudacap_fb_used_bytes{cudacap_container="job1",gpu="1",' \
    "the host's capped worker through the state mount, gpu 1 from the GPU list mounted outside /proc"
  [ "$(awk '/^cudacap_fb_used_bytes\{cudacap_container="job1"/ {print $2; exit}' <<<"$out")" -gt 0 ] 2>/dev/null &&
    ok "its bytes in use are counted" || fail "job1's fb_used_bytes: $(grep job1 <<<"$out" | head -3)"
  out=$("${POD[@]}" logs $name 2>&1)
  hasnt "pod-resources" "no complaint about the kubelet's folder (mounted, no socket: silent)"
  "${POD[@]}" rm -f -t 0 $name >/dev/null 2>&1
  # The check's own control: the manifest as it was before 2026-12-02, the
  # driver's folder mounted at /proc/driver/nvidia, which runc refuses.
  sed 's|mountPath: /host/proc/driver/nvidia|mountPath: /proc/driver/nvidia|' "$SRCDIR/deploy/daemonset.yaml" >"$T/proc.yaml"
  if cmp -s "$T/proc.yaml" "$SRCDIR/deploy/daemonset.yaml"; then fail "control: the mutation changed nothing"
  else
    out=$(MANIFEST=$T/proc.yaml pod_run exporter --rm 2>&1); rc=$?
    [ $rc != 0 ] && ok "control: runc refuses the exporter with its mount inside /proc (exit $rc)" ||
      fail "control: a mount inside /proc ran"
    has "inside /proc" "control: for that reason"
  fi
fi
cleanup_bg
echo "note: $(tr '\n' ' ' <"$T/pod_args.err")"
echo "note: $((SECONDS - t0)) s in all"
finish
