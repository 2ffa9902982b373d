# cudacap prepare finds a live process by the liveness byte it holds in
# memory.region (CC_MEM_LIVE_BASE + pid, cudacap/abi_mem_region.h), with nothing
# else to go by: run against a build without the /proc scan
# (cudacap_noprocscan), the holder stopped (SIGSTOP: its keeper cannot
# repair the region meanwhile, and it still holds its locks), the magic
# zeroed, then the whole file random. Both must give exit 3 (live); once the
# holder is dead the folder is emptied. The negative control
# (cudacap_nolivebytes: no /proc scan, no byte query) empties the live
# folder at the first case, every run: the holder is stopped, no timing
# decides.
. "$(dirname "$0")/cli_lib.sh"
D=$CLI_TEST_TMP/root/c1
start_holder $D
kill -STOP $holder
printf '\0\0\0\0' | dd of=$D/memory.region bs=1 seek=0 conv=notrunc status=none
expect 3 "live (liveness byte only), magic zeroed" timeout -k 2 10 $CUDACAP prepare $D
[ -e $D/memory.region ] && ok "region kept" || fail "region removed under a live process"
head -c 1048576 /dev/urandom | dd of=$D/memory.region bs=65536 conv=notrunc status=none
expect 3 "live (liveness byte only), random file" timeout -k 2 10 $CUDACAP prepare $D
kill -9 $holder; kill -CONT $holder 2>/dev/null; wait $holder 2>/dev/null
expect 0 "dead: emptied" timeout -k 2 10 $CUDACAP prepare $D
[ -z "$(ls -A $D)" ] && ok "empty" || fail "left: $(ls -A $D)"
finish
