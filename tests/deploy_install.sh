# The node installer (deploy/): node-install.sh against a fake host root
# (a HAMi node, a plain one), the HAMi-named copy preloaded and capping, the
# sidecar restoring cudacap's copy after HAMi's vgpu-init.sh put its own
# back; the manifests' schema check (tests/deploy_check.py) and its
# negative control (mutated manifests must fail).
. "$(dirname "$0")/cli_lib.sh"
T=$CLI_TEST_TMP
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
NI=$SRCDIR/deploy/node-install.sh
LIB=$(readlink -f "$(dirname "$CUDACAP_BIN")/../lib/libcudacap.so")
H=$T/host
mkdir -p $H/usr/local/vgpu
printf 'hami-core' > $H/usr/local/vgpu/libvgpu.so.v2.5.0
printf 'hami-core' > $H/usr/local/vgpu/libvgpu.so
printf '/usr/local/vgpu/libvgpu.so\n' > $H/usr/local/vgpu/ld.so.preload
expect 0 "install on a HAMi node" env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --once
V=${LIB##*/libcudacap.so.}
cmp -s $LIB $H/usr/local/lib/cudacap/libcudacap.so.$V && ok "library copied to /usr/local/lib/cudacap" || fail "no copy"
[ "$(readlink $H/usr/local/lib/cudacap/libcudacap.so)" = libcudacap.so.${V%%.*} ] && ok "plain-name link" || fail "link"
for n in libvgpu.so.v2.5.0 libvgpu.so; do
  cmp -s $LIB $H/usr/local/vgpu/$n && ok "$n is cudacap's (the name the plugin mounts)" || fail "$n not replaced"
  [ "$(cat $H/usr/local/vgpu/$n.hami 2>/dev/null)" = hami-core ] && ok "$n.hami keeps HAMi's" || fail "no $n.hami"
done
expect 0 "again: nothing to do" env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --once
hasnt "wrote" "idempotent"
[ "$(cat $H/usr/local/vgpu/libvgpu.so.v2.5.0.hami)" = hami-core ] && ok "backup not overwritten" || fail "backup"
# HAMI_VERSION: the versioned name is written even before vgpu-init made it.
expect 0 "HAMI_VERSION" env HOST_ROOT=$H SRC_LIB=$LIB HAMI_VERSION=v2.6.0 sh $NI --once
cmp -s $LIB $H/usr/local/vgpu/libvgpu.so.v2.6.0 && ok "libvgpu.so.v2.6.0 written" || fail "no v2.6.0"

# The copy under HAMi's name, preloaded with HAMi's variables, caps.
expect 0 "HAMi-named copy preloaded" env LD_PRELOAD=${SANPRE:+$SANPRE:}$H/usr/local/vgpu/libvgpu.so.v2.5.0 \
  CUDA_DEVICE_MEMORY_LIMIT=512m CUDA_DEVICE_MEMORY_SHARED_CACHE=$T/ctr/GPU-x.cache $WORKER alloc --chunk 64 --seconds 0
has "cuMemGetInfo total 0.50 GiB" "held to HAMi's 512m"

# vgpu-init.sh puts HAMi's file back (checksum differs): the sidecar undoes it.
env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --watch 1 >$T/watch.out 2>&1 & wp=$!; bgpids+=($wp)
sleep 0.3
cp $H/usr/local/vgpu/libvgpu.so.v2.5.0.hami $H/usr/local/vgpu/libvgpu.so.v2.5.0
back=
for i in $(seq 60); do cmp -s $LIB $H/usr/local/vgpu/libvgpu.so.v2.5.0 && back=1 && break; sleep 0.1; done
[ -n "$back" ] && ok "the sidecar restored cudacap's copy" || fail "not restored: $(cat $T/watch.out)"
kill -TERM $wp; wait $wp; rc=$?
[ $rc = 0 ] || [ $rc = 143 ] && ok "sidecar stops on SIGTERM" || fail "sidecar rc $rc"

# --uninstall, the rollback: HAMi's files back byte for byte, the name HAMi
# never had (v2.6.0, written for HAMI_VERSION) removed, cudacap's folder
# gone; HAMi's ld.so.preload untouched. Again: nothing left to do.
expect 0 "--uninstall" env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --uninstall
for n in libvgpu.so.v2.5.0 libvgpu.so; do
  [ "$(cat $H/usr/local/vgpu/$n)" = hami-core ] && ok "$n is HAMi's again" || fail "$n not restored"
  [ ! -e $H/usr/local/vgpu/$n.hami ] && ok "$n.hami consumed" || fail "$n.hami left"
done
[ ! -e $H/usr/local/vgpu/libvgpu.so.v2.6.0 ] && ok "the name HAMi never had is removed" || fail "v2.6.0 left"
[ "$(cat $H/usr/local/vgpu/ld.so.preload)" = /usr/local/vgpu/libvgpu.so ] && ok "ld.so.preload untouched" || fail "preload"
[ ! -e $H/usr/local/lib/cudacap ] && ok "cudacap's folder removed" || fail "left: $(ls $H/usr/local/lib/cudacap)"
expect 0 "--uninstall again" env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --uninstall
hasnt "restored" "nothing left to restore"
# A file of HAMi's that is not cudacap's and has no backup is never removed.
printf 'hami-v3' > $H/usr/local/vgpu/libvgpu.so.v3
expect 0 "--uninstall beside a HAMi file of its own" env HOST_ROOT=$H SRC_LIB=$LIB sh $NI --uninstall
[ "$(cat $H/usr/local/vgpu/libvgpu.so.v3)" = hami-v3 ] && ok "HAMi's own file kept" || fail "removed HAMi's v3"

# A node without HAMi: nothing written under /usr/local/vgpu.
H2=$T/plain; mkdir -p $H2/usr/local/vgpu
expect 0 "install on a plain node" env HOST_ROOT=$H2 SRC_LIB=$LIB sh $NI --once
[ -z "$(ls $H2/usr/local/vgpu)" ] && ok "no libvgpu on a plain node" || fail "wrote $(ls $H2/usr/local/vgpu)"
expect 2 "bad --watch" sh $NI --watch abc; has "not a number" "says why"
expect 1 "no host root" env HOST_ROOT=$T/none SRC_LIB=$LIB sh $NI --once; has "HOST_ROOT" "names it"

# The manifests: a schema check, and a negative control on mutated copies.
if need_py yaml python3-yaml; then
  expect 0 "deploy_check" $PY $SRCDIR/tests/deploy_check.py $SRCDIR
  for mut in 's/^        - name: host-lib$/        - name: host-lbi/' 's/9477/9400/' \
             's/hostPath:$/hostpath:/' 's/type: DirectoryOrCreate/type: DirOrCreate/' \
             's|"/usr/share/cudacap/node-install.sh", "--once"|"/usr/share/cudacap/install.sh", "--once"|' \
             's|^      app.kubernetes.io/name: cudacap-node$|      app.kubernetes.io/name: other|' \
             's/^      hostPID: true/      hostPid: true/' 's/^            - name: NODE_NAME/            - nam: NODE_NAME/' \
             's|pod-security.kubernetes.io/enforce: privileged|pod-security.kubernetes.io/enforce: baseline|' \
             's/^\( *\)- "on"$/\1- "yes"/' 's/key: HAMI_VERSION}/key: HAMI_VERSON}/' \
             's/valueFrom: {configMapKeyRef: {name: cudacap-node, key: HAMI_VERSION}}/value: "v2.5.0"/' \
             's|mountPath: /host/proc/driver/nvidia|mountPath: /proc/driver/nvidia|' \
             's|value: /host/proc/driver/nvidia/gpus|value: /hostproc/driver/nvidia/gpus|'; do
    rm -rf $T/mut && mkdir -p $T/mut && cp -r $SRCDIR/deploy $T/mut/ && sed -i "$mut" $T/mut/deploy/daemonset.yaml
    cmp -s $SRCDIR/deploy/daemonset.yaml $T/mut/deploy/daemonset.yaml && fail "mutation '$mut' changed nothing"
    out=$($PY $SRCDIR/tests/deploy_check.py $T/mut 2>&1); rc=$?
    [ $rc = 1 ] && ok "mutation '$mut' caught: $(printf '%s' "$out" | head -1)" || fail "mutation '$mut' passed: $out"
  done
else
  echo "note: no python3 with yaml; manifests not checked"
fi
finish
