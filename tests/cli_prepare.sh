# cudacap prepare: creates with the right modes, empties, keeps
# sampling.lock, refuses foreign contents without --force, refuses a folder
# still in use (a live 'cudacap run', or a live process of the container).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
LIB=$(dirname "$CUDACAP_BIN")/../lib/libcudacap.so
preload=${CLI_TEST_SAN_PRELOAD:+$CLI_TEST_SAN_PRELOAD:}$LIB
D=$CLI_TEST_TMP/root/deep/c1

expect 0 "creates a missing folder and its parents" $C prepare $D
[ "$(stat -c %a $D)" = 700 ] && ok "mode 700" || fail "mode $(stat -c %a $D)"
[ "$(stat -c %a $(dirname $D))" = 711 ] && ok "parent 711" || fail "parent mode $(stat -c %a $(dirname $D))"

touch $D/memory.region $D/compute.region $D/x.tmp
echo > $D/sampling.lock; chmod 644 $D/sampling.lock
expect 0 "empties" $C prepare --mode 0750 --owner "$(id -u):$(id -g)" $D
[ "$(ls -A $D)" = sampling.lock ] && ok "only sampling.lock left" || fail "left: $(ls -A $D)"
[ "$(stat -c %a $D/sampling.lock)" = 600 ] && ok "lock mode 600" || fail "lock mode $(stat -c %a $D/sampling.lock)"
[ "$(stat -c %a $D)" = 750 ] && ok "mode 750 applied" || fail "mode $(stat -c %a $D)"

echo hi > $D/notes.txt
expect 1 "refuses foreign contents" $C prepare $D; has '"notes.txt"' "names the foreign file"
[ -e $D/notes.txt ] && ok "foreign file kept" || fail "foreign file removed"
mkdir -p $D/sub/deeper; touch $D/sub/deeper/f
expect 0 "--force empties everything" $C prepare --force $D
[ "$(ls -A $D)" = sampling.lock ] && ok "forced: only sampling.lock left" || fail "left: $(ls -A $D)"

ln -s $D $CLI_TEST_TMP/link
expect 1 "refuses a symlink" $C prepare $CLI_TEST_TMP/link; has "symbolic link" "says why"
touch $CLI_TEST_TMP/file
expect 1 "refuses a file" $C prepare $CLI_TEST_TMP/file; has "not a folder" "says why"

# In use by a cudacap run (its shared flock).
$C run --state $D -- sleep 20 & bgpids+=($!)
for i in $(seq 50); do [ -e /proc/$!/status ] && pgrep -P $! sleep >/dev/null && break; sleep 0.1; done
expect 3 "refuses while cudacap run uses it" $C prepare $D; has "in use" "says in use"
kill -TERM "${bgpids[-1]}"; wait "${bgpids[-1]}" 2>/dev/null

# In use by a process of the container started without cudacap run (its
# slot in the memory region, alive).
rm -f $CLI_TEST_TMP/ready
LD_PRELOAD=$preload CUDACAP_STATE_DIR=$D CUDACAP_MEM_LIMIT=1g $WORKER hold --mib 1 --seconds 20 \
  --ready $CLI_TEST_TMP/ready >/dev/null & bgpids+=($!)
wait_for $CLI_TEST_TMP/ready || fail "worker did not start"
expect 3 "refuses while a container process lives" $C prepare $D; has "${bgpids[-1]}" "names its pid"
[ -e $D/memory.region ] && ok "region left alone" || fail "region removed under a live process"
kill -9 "${bgpids[-1]}"; wait "${bgpids[-1]}" 2>/dev/null
expect 0 "empties once it is dead" $C prepare $D
[ ! -e $D/memory.region ] && ok "region removed" || fail "region still there"
finish
