# cudacap doctor on the simulator: every check passes; a missing library,
# a world-writable state folder and a missing driver are reported plainly.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
mkdir -p $CLI_TEST_TMP/state && chmod 700 $CLI_TEST_TMP/state
expect 0 "all checks pass on the simulator" $C doctor --state $CLI_TEST_TMP/state
has "[ ok ] routing" "routing checked"; has "[ ok ] driver" "driver"; has "[ ok ] nvml" "nvml"
has "[ ok ] library" "library"; has "[ ok ] state" "state"
[ "$(ls -A $CLI_TEST_TMP/state)" = "" ] && ok "state folder left clean" || fail "left: $(ls -A $CLI_TEST_TMP/state)"
expect 0 "default state folder under ROOT" $C doctor
# A root that does not exist is not made as a side effect: a temporary
# folder stands in (before, doctor created the root itself).
expect 0 "no root" env CUDACAP_ROOT=$CLI_TEST_TMP/noroot $C doctor
[ ! -e $CLI_TEST_TMP/noroot ] && ok "the root was not created" || fail "doctor created $CLI_TEST_TMP/noroot"
expect 1 "missing library" $C doctor --lib /nonexistent.so --state $CLI_TEST_TMP/state
has "[FAIL] library" "library failure"; has "/nonexistent.so" "names it"
chmod 777 $CLI_TEST_TMP/state
expect 1 "world-writable state" $C doctor --state $CLI_TEST_TMP/state; has "writable by everyone" "says why"
chmod 700 $CLI_TEST_TMP/state
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
  expect 1 "no driver" env LD_LIBRARY_PATH=$CLI_TEST_TMP $C doctor --state $CLI_TEST_TMP/state
  has "[FAIL] driver" "driver failure"; has "cannot load libcuda.so.1" "says why"
fi
finish
