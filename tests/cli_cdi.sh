# cudacap cdi: a CDI spec with the library, the caps, the state mount and
# the prepare hook; --output writes it and creates the state folders.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CLI_TEST_TMP/cdiroot
LIB=$(readlink -f "$(dirname "$CUDACAP_BIN")/../lib")/libcudacap.so
expect 0 "spec" $C cdi --name job1 --name job2 --mem 4g --sm 30 --root $R
has '"cdiVersion": "0.3.0"' "version: the lowest the content needs"; has '"kind": "cudacap.io/cap"' "kind"
has '"name": "job1"' "device job1"; has '"name": "job2"' "device job2"
has '"CUDACAP_MEM_LIMIT=4g"' "mem env"; has '"CUDACAP_SM_LIMIT=30"' "sm env"
has '"LD_PRELOAD=/usr/local/lib/cudacap/libcudacap.so"' "preload env"
has '"CUDACAP_STATE_DIR=/var/run/cudacap"' "state env"
has "{\"hostPath\": \"$R/job1\", \"containerPath\": \"/var/run/cudacap\"" "state mount"
has "{\"hostPath\": \"$LIB\", \"containerPath\": \"/usr/local/lib/cudacap/libcudacap.so\", \"options\": [\"ro\"" "library mount"
has "\"args\": [\"cudacap\", \"prepare\", \"--mem\", \"4g\", \"--sm\", \"30\", \"$R/job2\"]" "prepare hook, writing the limits file"
has '"hookName": "createRuntime"' "hook kind"
[ ! -e $R ] && ok "printing touches nothing" || fail "created $R"
if command -v python3 >/dev/null; then
  printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["devices"])==2' \
    && ok "valid JSON" || fail "invalid JSON"
fi
expect 0 "--output" $C cdi --name job1 --kind example.com/gpucap --root $R --output $CLI_TEST_TMP/cudacap.json
grep -q '"kind": "example.com/gpucap"' $CLI_TEST_TMP/cudacap.json && ok "file written" || fail "file"
[ "$(stat -c %a $R/job1)" = 700 ] && ok "state folder created 0700" || fail "no state folder"
# The version rule of the CDI library (specs-go/version.go), and its name rules.
expect 0 "digit first" $C cdi --name 7job --root $R; has '"cdiVersion": "0.5.0"' "name starting with a digit: 0.5.0"
expect 0 "dotted class" $C cdi --name job --kind example.com/gpu.cap --root $R; has '"cdiVersion": "0.6.0"' "a dot in the class: 0.6.0"
for bad in "job-" "-job" "a/b" "" "j:b"; do expect 2 "bad name '$bad'" $C cdi --name "$bad"; has "--name" "names the option"; done
for bad in "cudacap.io" "1vendor/cap" "vendor/1cap" "v/c/d" "vendor/cap-" "/cap"; do
  expect 2 "bad kind '$bad'" $C cdi --name a --kind "$bad"; has "--kind" "names the option"; done
expect 1 "library missing" $C cdi --name a --lib /nonexistent.so; has "/nonexistent.so" "names it"
finish
