# A real container runtime on the simulator: podman (Debian 12: 4.3.1) with
# runc, --rootfs on a tiny root filesystem this test builds (empty folders
# and the links of a merged-/usr system, the host's /usr/lib, /usr/lib64 and
# /usr/bin bind-mounted read-only), the
# device requested from the spec `cudacap cdi --output` wrote. Inside, the
# demo worker allocates until it is refused: it must stop at the cap, and
# the createRuntime hook must have prepared the state folder (a stale file
# planted there is gone, the region the library made is there).
# Skipped (77) without root, podman or runc, and in sanitizer builds (the
# injected LD_PRELOAD names the library alone, without its runtime).
. "$(dirname "$0")/cli_lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
need_tool podman podman && need_tool runc runc || { echo "skip: no podman/runc"; exit 77; }
[ -z "$SANPRE" ] || { echo "skip: sanitizer build"; exit 77; }
C=$CUDACAP
T=$CLI_TEST_TMP
R=$T/root
kind=cudacaptest$$.io/cap
spec=/var/run/cdi/cudacap-test-$$.json
mkdir -p /var/run/cdi
trap 'rm -f $spec; cleanup_bg; [ -n "${RUNROOT:-}" ] && rm -rf "$RUNROOT"' EXIT
# Private podman storage: nothing shared with other runs on this machine.
# runc, not crun: crun 1.8 refuses this machine's hybrid cgroup layout
# ("cgroups in hybrid mode not supported"). The rlimits are lowered: runc
# cannot set podman's defaults here (EPERM raising RLIMIT_NPROC/NOFILE).
# The runroot under /tmp: podman refuses one longer than 50 characters.
RUNROOT=/tmp/cc-pod-$(printf %s "$T" | md5sum | cut -c1-12)
rm -rf "$RUNROOT"
POD=(podman --root $T/storage --runroot $RUNROOT --storage-driver vfs --runtime runc
     --cgroup-manager cgroupfs --events-backend none)
RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
rootfs=$T/rootfs
for d in usr/lib usr/lib64 usr/bin usr/local/lib etc tmp proc sys dev var/run; do mkdir -p $rootfs/$d; done
for d in lib lib64 bin; do ln -sfn usr/$d $rootfs/$d; done
HOST=(-v /usr/lib:/usr/lib:ro -v /usr/lib64:/usr/lib64:ro -v /usr/bin:/usr/bin:ro)
B=$(cd "$(dirname "$CUDACAP_BIN")/.." && pwd)
SIM=$(readlink -f "$CUDACAP_SIM_DIR")
mkdir -p "$SIM"

expect 0 "cdi --output" $C cdi --name job1 --mem 1g --kind $kind --root $R --output $spec
grep -q '"cdiVersion": "0.3.0"' $spec && ok "spec at 0.3.0" || fail "spec version: $(head -3 $spec)"
# The control (cli.cdi.podman.control): the limits folder's read-only mount
# taken out of the spec.
if [ "${1:-}" = rw-limits ]; then
  sed -i '\#"/var/run/cudacap/limits.d"#d' $spec
  grep -q limits.d $spec && { echo "control: the mount is still there"; exit 0; }
fi
printf 'stale' > $R/job1/stale.tmp
expect 0 "podman runs the capped worker" "${POD[@]}" "${RUN[@]}" --device $kind=job1 \
  "${HOST[@]}" -v "$B:$B:ro" -v "$SIM:$SIM" \
  -e LD_LIBRARY_PATH="$B/sim" -e CUDACAP_SIM_DIR="$SIM" -e CUDACAP_LOG_LEVEL=0 \
  --rootfs $rootfs "$WORKER" alloc --chunk 64 --seconds 0
has "then CUDA_ERROR_OUT_OF_MEMORY; cuMemGetInfo total 1.00 GiB" "held to the 1 GiB cap inside the container"
has "allocated 0.75 GiB" "allocations stop under the cap (the context counts, as outside)"
[ ! -e $R/job1/stale.tmp ] && ok "the createRuntime hook prepared the folder" || fail "stale file left: hook did not run"
[ -s $R/job1/memory.region ] && ok "the library's region is in the mounted folder" || fail "no memory.region in $R/job1"
expect 0 "env injected" "${POD[@]}" "${RUN[@]}" --device $kind=job1 "${HOST[@]}" --rootfs $rootfs /bin/sh -c 'echo "P=$LD_PRELOAD S=$CUDACAP_STATE_DIR M=$CUDACAP_MEM_LIMIT"; test -r "$LD_PRELOAD" && echo readable'
has "P=/usr/local/lib/cudacap/libcudacap.so S=/var/run/cudacap M=1g" "preload, state and cap"
has "readable" "the library is mounted"
# The limits folder, read-only inside (root in the container included), and
# `cudacap set` on the host seen through it by the running container.
L=/var/run/cudacap/limits.d/limits
"${POD[@]}" "${RUN[@]}" --device $kind=job1 "${HOST[@]}" --rootfs $rootfs /bin/sh -c "
  grep -x 'generation 1' $L >/dev/null && echo 'gen 1 inside'
  touch /var/run/cudacap/limits.d/x 2>/dev/null && echo 'limits.d WRITABLE'
  rm -f $L 2>/dev/null; mv $L /var/run/cudacap/moved 2>/dev/null
  [ -f $L ] && echo 'the file stays'
  mv /var/run/cudacap/limits.d /var/run/cudacap/gone 2>/dev/null || echo 'the folder stays'
  : > /var/run/cudacap/ready.tmp
  for i in \$(seq 100); do grep -x 'generation 2' $L >/dev/null && { echo 'gen 2 inside'; break; }; sleep 0.1; done
  grep -x 'mem 2147483648' $L >/dev/null && echo 'cap 2g inside'" > $T/ro.out 2>&1 &
pod=$!
for i in $(seq 100); do [ -e $R/job1/ready.tmp ] && break; sleep 0.1; done
expect 0 "cudacap set on the host" $C set $R/job1 --mem 2g
wait $pod; out=$(cat $T/ro.out)
has "gen 1 inside" "the container reads its limits"
hasnt "limits.d WRITABLE" "limits.d is read-only inside"
has "the file stays" "the file cannot be removed or moved inside"
has "the folder stays" "the folder cannot be moved inside"
has "gen 2 inside" "the host's set shows through the mount"
has "cap 2g inside" "the new cap is the container's"
# The control: the same spec declared 0.6.0 is what podman 4.3.1 rejected.
spec6=/var/run/cdi/cudacap-test6-$$.json
trap 'rm -f $spec $spec6; cleanup_bg; rm -rf "$RUNROOT"' EXIT
sed "s|\"0.3.0\"|\"0.6.0\"|; s|$kind|${kind}six|" $spec > $spec6
v=$("${POD[@]}" version --format '{{.Client.Version}}' 2>/dev/null)
out=$("${POD[@]}" "${RUN[@]}" --device ${kind}six=job1 "${HOST[@]}" --rootfs $rootfs /bin/true 2>&1); rc=$?
case "$v" in
  4.[0-6].*) [ $rc != 0 ] && ok "podman $v rejects the spec at 0.6.0 (rc $rc)" || fail "podman $v took a 0.6.0 spec" ;;
  *) echo "note: podman $v, rc $rc for the 0.6.0 spec" ;;
esac
finish
