# Regions that are absent, of another layout or mid-rebuild (magic
# unpublished) are "no data", a short one "truncated", never an error; foreign entries in ROOT
# are skipped. The reader takes no lock: status exits 0 with figures for the
# good container next to the broken ones.
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
R=$CUDACAP_ROOT
mkdir -p $R/empty $R/foreign $R/truncated $R/good
$C run --mem 1g --state $R/good -- $WORKER hold --mib 1 --seconds 0 >/dev/null 2>&1 || fail "worker"
[ -s $R/good/memory.region ] || fail "no region made"
mk() { mkdir -p $R/$1; cp $R/good/memory.region $R/$1/memory.region; printf "$2" | dd of=$R/$1/memory.region bs=1 seek=$3 conv=notrunc status=none; }
mk midrebuild '\0\0\0\0' 0          # magic unpublished
mk newlayout '\x63\0\0\0' 4          # layout_version 99
head -c 1048576 /dev/urandom > $R/foreign/memory.region
head -c 100 $R/good/memory.region > $R/truncated/memory.region
touch $R/notafolder; ln -s $R/good $R/alink
expect 0 "status" $C status
has "no process has run capped yet" "empty: no data"
for c in foreign midrebuild newlayout; do
  printf '%s\n' "$out" | grep -q "^$c .*no data (memory region: no data" && ok "$c: no data" || fail "$c: $out"
done
printf '%s\n' "$out" | grep -q "^truncated .*no data (memory region: truncated" && ok "truncated" || fail "truncated: $out"
has "truncated/memory.region is truncated: 100 of 1048576 bytes" "says how short, naming the file"
hasnt "notafolder" "files skipped"
hasnt "alink" "symlinks skipped"
has "0 B / 1.00 GiB" "good container still shown (its process exited)"
expect 0 "status --json" $C status --json
has '"name":"midrebuild","state_dir":"'"$R"'/midrebuild","memory_region":"no data"' "json: no data"
has '"name":"empty","state_dir":"'"$R"'/empty","memory_region":"absent","compute_region":"absent"' "json: absent"
expect 0 "metrics" $C metrics
has 'cudacap_region_ok{cudacap_container="newlayout",Hostname="testnode",region="memory"} 0' "metrics: region not ok"
has 'cudacap_region_ok{cudacap_container="good",Hostname="testnode",region="memory"} 1' "metrics: good region ok"
# HAMi / Volcano layout: the state folder is <ctr>/<uuid>.cache.d.
mkdir -p $R/hami/abc.cache.d && cp $R/good/memory.region $R/hami/abc.cache.d/
expect 0 "status --json" $C status --json
has '"name":"hami","state_dir":"'"$R"'/hami/abc.cache.d","memory_region":"ok"' "HAMi layout found"
expect 1 "missing ROOT" $C status $R/nonexistent; has "$R/nonexistent" "names ROOT"
finish
