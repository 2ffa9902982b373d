# cudacap prepare refuses a live folder whatever its regions hold (issue
# 10, item 10): a live process that maps memory.region keeps the folder
# live with the magic zeroed, with a garbage body, and with the region
# replaced by a FIFO (no hang either). Liveness then comes from the process
# mapping a file of the folder (/proc/<pid>/maps), not from parsing the
# region. Once the process is dead the folder is emptied. The negative
# control runs this against a build without that scan (CLI_TEST_NO_PROC_SCAN)
# and must fail (checked: the FIFO case empties the folder there; the
# holder's liveness byte finds it in the other cases: cli.prepare.livebytes).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
D=$CLI_TEST_TMP/root/c1
mkdir -p $D
start_holder $D
w=$holder
expect 3 "live, region intact" timeout -k 2 10 $C prepare $D; has "$w" "names the process"
printf '\0\0\0\0' | dd of=$D/memory.region bs=1 seek=0 conv=notrunc status=none
expect 3 "live, magic zeroed" timeout -k 2 10 $C prepare $D; has "$w" "names the process"
[ -e $D/memory.region ] && ok "region kept" || fail "region removed under a live process"
head -c $((1048576 - 16)) /dev/urandom | dd of=$D/memory.region bs=16 seek=1 conv=notrunc status=none
expect 3 "live, garbage body" timeout -k 2 10 $C prepare $D
# One rename, not rm then mkfifo: the holder's keeper recreates a removed
# region (O_CREAT) within its check period, and did so between the two in
# the CI of 4d07db2 (mkfifo: File exists).
mkfifo $CLI_TEST_TMP/fifo && mv -f $CLI_TEST_TMP/fifo $D/memory.region
expect 3 "live, region replaced by a FIFO" timeout -k 2 10 $C prepare $D; has "$w" "names the process"
[ -p $D/memory.region ] && ok "FIFO kept" || fail "folder emptied under a live process"
expect 3 "cudacap run --state joins, never empties" timeout -k 2 10 $C run --state $D -- sh -c 'test -p memory.region || exit 3' 2>/dev/null
kill -9 $w; wait $w 2>/dev/null
expect 0 "dead: emptied" timeout -k 2 10 $C prepare $D
[ -z "$(ls -A $D)" ] && ok "empty" || fail "left: $(ls -A $D)"
finish
