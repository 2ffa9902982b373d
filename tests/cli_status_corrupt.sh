# A region with a valid header over garbage is shown as
# "corrupt", naming the file and the first bad field, in the table, in JSON
# and in metrics; never as devices, processes or limits. Live regions, with
# processes coming and going while they are read, are never called corrupt.
# The negative control runs this against a build that does not check the
# fields (CLI_TEST_NO_VALIDATE) and must fail (checked: every corrupt case
# shows "ok" there, with garbage devices and processes).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
G=$CLI_TEST_TMP/good
mkdir -p $R
$C run --mem 1g --sm 30 --state $G -- bash -c \
  "$WORKER hold --mib 1 --seconds 0 && $WORKER spin --us 1000 --seconds 1" >/dev/null 2>&1 || fail "worker"
# mk NAME FILE BYTES OFFSET: a copy of the good file with BYTES written at OFFSET.
mk() {
  mkdir -p $R/$1; cp $G/$2 $R/$1/$2
  printf "$3" | dd of=$R/$1/$2 bs=1 seek=$4 conv=notrunc status=none
}
mkdir -p $R/garbage-memory $R/garbage-compute
cp $G/memory.region $R/garbage-memory/; cp $G/compute.region $R/garbage-compute/
head -c $((1048576 - 16)) /dev/urandom | dd of=$R/garbage-memory/memory.region bs=16 seek=1 conv=notrunc status=none
head -c $((65536 - 16)) /dev/urandom | dd of=$R/garbage-compute/compute.region bs=16 seek=1 conv=notrunc status=none
mk owner memory.region '\xef\xbe\xad\xde' 1088                          # slot 0 owner
mk limit memory.region '\x4d\x13\x87\x3f\x3a\x4b\xaf\x75' 72            # device 0 cap 8.4e18 B
mk hw memory.region '\xe8\x03\0\0' 16                                   # slots_hw 1000
mk freebytes memory.region '\x01' $((9280 + 8 * 5))                     # bytes in free slot 5
mk tail memory.region '\x01' 900000                                     # past the layout
mk smcap compute.region '\x88\x13\0\0' 104                              # cap 5000 permille
mk smpid compute.region '\xff\xff\xff\x7f' 1856                         # process slot 0 pid
mk stamp compute.region '\xff\xff\xff\xff\xff\xff\xff\x7f' 88           # sample in the future
expect 0 "status" timeout -k 2 10 $C status
for c in memory compute; do
  has "(${c} region: corrupt: $R/garbage-$c/$c.region is corrupt:" "random body of $c.region: corrupt"
done
printf '%s\n' "$out" | grep -q "^garbage-memory .*no data (memory region: corrupt" && ok "no garbage devices" ||
  fail "garbage-memory shown with devices"
for p in "owner:slot 0: owner 3735928559 is not a pid" "limit:device entry 0: cap 8480079336907936589 B is over 1 PiB" \
         "hw:slots_hw 1000 is over 512" "freebytes:free slot 5 holds bytes on device entry 0" \
         "tail:bytes past the layout are not zero" "smcap:device line 0: cap 5000 permille" \
         "smpid:process slot 0: pid is not a pid" "stamp:device line 0: sample stamp in the future"; do
  c=${p%%:*}; has "$R/$c/" "$c: file named"; has "is corrupt: ${p#*:}" "$c: ${p#*:}"
done
hasnt "exited; not counted" "no fake dead processes"
hasnt "TiB" "no absurd limit shown as a limit"
expect 0 "status --json" timeout -k 2 10 $C status --json
has '"name":"garbage-memory","state_dir":"'$R'/garbage-memory","memory_region":"corrupt"' "json: corrupt"
has '"memory_region_problem":"'$R'/hw/memory.region is corrupt: slots_hw 1000 is over 512"' "json: why"
expect 0 "metrics" timeout -k 2 10 $C metrics
has 'cudacap_region_ok{cudacap_container="smcap",Hostname="testnode",region="compute"} 0' "metrics: corrupt region not ok"
hasnt 'cudacap_container="garbage-memory",gpu' "metrics: no garbage devices"
# Live: processes claim and free slots while status reads; never corrupt.
rm -rf $R/*
$C run --mem 1g --sm 30 --state $R/live -- bash -c \
  "for i in \$(seq 12); do $WORKER hold --mib 1 --seconds 0 & $WORKER spin --us 500 --seconds 0.2; wait; done" \
  >/dev/null 2>&1 & bgpids+=($!)
bad=0
for i in $(seq 40); do
  o=$($C status --json 2>&1)
  case "$o" in *'_region":"corrupt"'*) bad=$((bad + 1)); echo "$o" | grep '"corrupt"' >&2 ;; esac
  kill -0 "${bgpids[-1]}" 2>/dev/null || break
done
[ $bad = 0 ] && ok "live region never corrupt ($i reads)" || fail "live region corrupt in $bad reads"
wait "${bgpids[-1]}" 2>/dev/null
finish
