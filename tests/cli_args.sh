# Every subcommand: --help exits 0 and prints its usage; bad input exits 2
# with one line naming what was wrong.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
expect 2 "no command" $C
expect 0 "cudacap --help" $C --help; has "commands:" "help lists commands"
expect 0 "version" $C version; has "cudacap " "version printed"
expect 2 "unknown command" $C frobnicate; has 'unknown command "frobnicate"' "names the command"
# Completion offers every option each --help names (packaging/bash-completion).
COMP=$(dirname "$0")/../packaging/bash-completion/cudacap
for sub in run prepare set status top metrics cdi doctor; do
  offered=$(sed -n "s/^ *$sub) opts=\"\(.*\)\" ;;\$/\1/p" "$COMP")
  missing=
  # Options are named in the usage line and the option list (lines that
  # start with one), not in the prose.
  for o in $($C $sub --help | grep -E '^(usage:|  +--)' | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    case " $offered " in *" $o "*) ;; *) missing="$missing $o" ;; esac
  done
  [ -z "$missing" ] && ok "completion offers every option of $sub" || fail "completion of $sub lacks:$missing"
done
for sub in run prepare status top metrics cdi doctor; do
  expect 0 "$sub --help" $C $sub --help; has "usage: cudacap $sub" "$sub usage"
  expect 0 "help $sub" $C help $sub; has "usage: cudacap $sub" "help $sub usage"
  expect 2 "$sub --bogus" $C $sub --bogus; has "unknown option --bogus" "$sub names the bad option"
done
# Bad values, one per option; each message names the option.
expect 2 "run --mem lots" $C run --mem lots -- true; has '--mem: "lots"' "names --mem"
expect 2 "run --mem 0" $C run --mem 0 -- true; has "--mem" "zero size refused"
expect 2 "run --sm 0" $C run --sm 0 -- true; has '--sm: "0"' "names --sm"
expect 2 "run --sm 101" $C run --sm 101 -- true; has '--sm: "101"' "names --sm"
expect 2 "run --sm x" $C run --sm x -- true; has '--sm' "names --sm"
expect 2 "run --devices 0,,1" $C run --devices 0,,1 -- true; has "--devices" "names --devices"
expect 2 "run --devices abc" $C run --devices abc -- true; has '"abc"' "names the bad device"
expect 2 "run --devices 1," $C run --devices 1, -- true; has "ends with a comma" "trailing comma"
expect 2 "run without CMD" $C run --mem 1g; has "missing CMD" "says CMD is missing"
expect 2 "run --mem without value" $C run --mem; has "--mem needs a value" "missing value"
expect 2 "run --state with --name" $C run --state /tmp/x --name y -- true; has "--name" "conflict named"
expect 2 "run --name a/b" $C run --name a/b -- true; has '--name: "a/b"' "names --name"
expect 2 "run --keep=1" $C run --keep=1 -- true; has "--keep takes no value" "flag with value"
expect 2 "prepare without DIR" $C prepare; has "missing DIR" "says DIR is missing"
expect 2 "prepare two DIRs" $C prepare a b; has '"b"' "names the extra argument"
expect 2 "prepare --mode 0777" $C prepare --mode 0777 $CLI_TEST_TMP/p; has "--mode" "world-writable refused"
expect 2 "prepare --mode 9" $C prepare --mode 9 $CLI_TEST_TMP/p; has '--mode: "9"' "non-octal refused"
expect 2 "prepare --owner nosuchuser" $C prepare --owner nosuchuser_cc $CLI_TEST_TMP/p; has "nosuchuser_cc" "names the user"
expect 2 "prepare /" $C prepare /; has "refusing" "refuses /"
expect 2 "status two ROOTs" $C status a b; has '"b"' "names the extra ROOT"
expect 2 "status ROOT and --root" $C status a --root b; has "ROOT given twice" "conflict"
expect 2 "status --json=1" $C status --json=1; has "--json takes no value" "flag with value"
expect 2 "top --interval 0" $C top --interval 0; has '--interval: "0"' "names --interval"
expect 2 "top --iterations -1" $C top --iterations -1; has '--iterations' "names --iterations"
expect 2 "metrics --listen nonsense" $C metrics --listen nonsense; has "--listen" "names --listen"
expect 2 "metrics --listen :99999" $C metrics --listen :99999; has "--listen port" "port range"
expect 2 "metrics --output with --listen" $C metrics --output x --listen :9 ; has "exclude" "conflict"
expect 2 "cdi without --name" $C cdi; has "missing --name" "names --name"
expect 2 "cdi --name '-x'" $C cdi --name=-x; has '--name: "-x"' "bad CDI name"
expect 2 "cdi --kind bad" $C cdi --name a --kind bad; has '--kind: "bad"' "names --kind"
expect 2 "cdi --sm 200" $C cdi --name a --sm 200; has "--sm" "names --sm"
expect 2 "cdi --root relative" $C cdi --name a --root rel; has "absolute" "relative root refused"
expect 2 "doctor extra" $C doctor extra; has '"extra"' "names the argument"
finish
