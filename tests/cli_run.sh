# cudacap run: environment, preload, state folder, exit status and signals.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
LIB=$(readlink -f "$(dirname "$CUDACAP_BIN")/../lib")/libcudacap.so

expect 0 "true" $C run -- true
expect 7 "exit status passes through" $C run -- sh -c 'exit 7'
expect 143 "killed by SIGTERM: 128+15" $C run -- sh -c 'kill -TERM $$'
expect 137 "killed by SIGKILL: 128+9" $C run -- sh -c 'kill -KILL $$'
expect 127 "command not found" $C run -- /nonexistent/cmd; has "/nonexistent/cmd" "names the command"
touch $CLI_TEST_TMP/noexec; chmod 644 $CLI_TEST_TMP/noexec
expect 126 "not executable" $C run -- $CLI_TEST_TMP/noexec
expect 0 "CMD without --" $C run true

S=$CLI_TEST_TMP/st
expect 0 "environment" env LD_PRELOAD=${SANPRE:+$SANPRE:}/lib/other.so $CUDACAP_BIN run --mem 2g --sm 40 --devices 0 --state $S -- \
  sh -c 'echo "M=$CUDACAP_MEM_LIMIT S=$CUDACAP_SM_LIMIT D=$CUDA_VISIBLE_DEVICES T=$CUDACAP_STATE_DIR P=$LD_PRELOAD"'
has "M=2g S=40 D=0 T=$(readlink -f $S) " "caps, devices and state set"
case "$out" in *"P=${SANPRE:+$SANPRE:}$LIB:/lib/other.so"*) ok "library prepended" ;;
  *) fail "LD_PRELOAD wrong: $out" ;; esac

# --sm-burst: CUDACAP_SM_BURST_MS, as the library takes it, only beside --sm.
expect 0 "burst" $C run --sm 30 --sm-burst 20ms -- sh -c 'echo "B=$CUDACAP_SM_BURST_MS"'
has "B=20ms" "burst set"
expect 2 "burst 0" $C run --sm 30 --sm-burst 0 -- true
has "--sm-burst: \"0\" is not a number of milliseconds in 1..1000" "names the option and the range"
expect 2 "burst without --sm" $C run --sm-burst 5 -- true; has "needs --sm PCT" "says why"

# Without --state: a folder ROOT/NAME for the run, removed after it.
expect 0 "auto folder" $C run --name job -- sh -c 'echo "T=$CUDACAP_STATE_DIR"; test -d "$CUDACAP_STATE_DIR"'
has "T=$(readlink -f $CUDACAP_ROOT)/job" "named under ROOT"
[ ! -e $CUDACAP_ROOT/job ] && ok "removed after the run" || fail "left behind"
expect 0 "--keep" $C run --name kept --keep -- true
[ -d $CUDACAP_ROOT/kept ] && ok "kept" || fail "not kept"
mkdir -p $CUDACAP_ROOT/taken
expect 1 "name in use" $C run --name taken -- true; has "another run uses that name" "says why"
expect 1 "library not found" $C run --lib /nonexistent.so -- true; has "/nonexistent.so" "names it"

# SIGTERM / SIGINT sent to cudacap reach CMD; cudacap dies the same way.
for sig in TERM INT; do
  $C run -- sh -c "trap 'echo got-$sig; exit 0' $sig; while :; do sleep 0.1; done" >$CLI_TEST_TMP/out.$sig 2>&1 &
  p=$!; sleep 0.5; kill -$sig $p; wait $p; rc=$?
  grep -q "got-$sig" $CLI_TEST_TMP/out.$sig && ok "SIG$sig forwarded" || fail "SIG$sig not forwarded: $(cat $CLI_TEST_TMP/out.$sig)"
  [ $rc = 0 ] && ok "CMD's status after SIG$sig" || fail "rc $rc after SIG$sig"
done
$C run -- sleep 30 & p=$!; sleep 0.3; kill -TERM $p; wait $p; rc=$?
[ $rc = 143 ] && ok "CMD killed by the forwarded SIGTERM: 143" || fail "rc $rc"

# The memory cap applies through run: a 64 MiB cap refuses a 128 MiB chunk.
expect 0 "capped run" $C run --mem 64m --name capped -- $WORKER alloc --chunk 16 --seconds 0
has "CUDA_ERROR_OUT_OF_MEMORY" "hits the cap"
has "cuMemGetInfo total 0.06 GiB" "sees the cap as total"
finish
