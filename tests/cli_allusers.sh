# The node-wide view (src/cli/noderoots.c): status, top and metrics with
# --all-users read the system root and each user's default root
# (/tmp/cudacap-<uid>/containers; here under CUDACAP_USER_ROOTS), naming a
# user's containers <user>/<name>. Folders that name nobody's containers are
# left out: a link in place of a user's folder, a folder owned by another
# uid than its name says, one writable by others. Negative control in the
# script: the same folders as ROOT show no user's containers.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
T=$CLI_TEST_TMP
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to give folders to other uids"; exit 77; }
export CUDACAP_SYSTEM_ROOT=$T/sys/containers CUDACAP_USER_ROOTS=$T/tmp
export CUDACAP_SIM_CTX_MEM=64m
mkdir -p $CUDACAP_SYSTEM_ROOT $T/tmp
# A system container and one of uid 4242 (the worker runs as root; the
# folders are given to 4242 after), each holding memory for a while.
$C run --mem 512m --root $CUDACAP_SYSTEM_ROOT --name sysc -- $WORKER hold --mib 32 --seconds 20 \
  --ready $T/ready.sys >$T/sys.out 2>&1 & bgpids+=($!)
mkdir -p $T/tmp/cudacap-4242/containers
$C run --mem 256m --root $T/tmp/cudacap-4242/containers --name userc -- $WORKER hold --mib 16 --seconds 20 \
  --ready $T/ready.user >$T/user.out 2>&1 & bgpids+=($!)
wait_for $T/ready.sys 20 && wait_for $T/ready.user 20 || fail "workers did not start: $(cat $T/*.out)"
chown -R 4242 $T/tmp/cudacap-4242
who=$(getent passwd 4242 | cut -d: -f1); who=${who:-uid4242}
# Folders to leave out: a link to the real one, another uid's, a world-writable one.
ln -s $T/tmp/cudacap-4242 $T/tmp/cudacap-4343
mkdir -p $T/tmp/cudacap-4444/containers/stolen && chown -R 4242 $T/tmp/cudacap-4444
mkdir -p $T/tmp/cudacap-4545/containers/open && chown -R 4545 $T/tmp/cudacap-4545 && chmod 0777 $T/tmp/cudacap-4545

expect 0 "status --all-users" $C status --all-users
has "sysc " "the system root's container"
has "$who/userc " "the user's container, named by its user"
hasnt "stolen" "a folder owned by another uid than its name: left out"
hasnt "open" "a folder others may write: left out"
n=$(printf '%s\n' "$out" | grep -c "userc ")
[ "$n" = 1 ] && ok "the link to a user's folder: not read twice" || fail "userc listed $n times"
expect 0 "status --all-users --json" $C status --all-users --json
has "\"name\":\"$who/userc\"" "JSON name"
expect 0 "metrics --all-users" $C metrics --all-users
has "cudacap_fb_limit_bytes{cudacap_container=\"$who/userc\"" "metrics of the user's container"
expect 0 "top --all-users" $C top --all-users --iterations 1
has "$who/userc" "top"
expect 2 "--all-users with a ROOT" $C status --all-users $T/sys/containers
has "exclude each other" "named"
# Control: without --all-users, the system root alone.
expect 0 "status of the system root" $C status --root $CUDACAP_SYSTEM_ROOT
hasnt "userc" "control: no user's container without --all-users"
finish
