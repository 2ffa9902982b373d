# cudacap prepare on hostile paths, only ever inside a
# temporary tree (and a chroot of one for / itself): a symbolic link at any
# component is refused, "link/.", "a/../link", relative forms too; / in any
# spelling and system folders are refused before anything is opened, with
# --force as well; a folder holding nothing cudacap writes is never emptied;
# links planted inside a state folder are removed, never followed. After
# every case, nothing outside the prepared folder changed. The negative
# control runs this against a build resolving DIR through the kernel
# (CLI_TEST_FOLLOW_LINKS) and must fail (checked: the link cases empty the
# victim there).
. "$(dirname "$0")/cli_lib.sh"
C=$CUDACAP
T=$CLI_TEST_TMP/tree
mkdir -p $T/victim $T/home $T/real/sub $T/a $T/empty
for f in memory.region compute.region sampling.lock; do echo data > $T/victim/$f; cp $T/victim/$f $T/real/sub/; done
echo mine > $T/home/notes.txt; mkdir $T/home/src; echo x > $T/home/src/main.c
ln -s victim $T/link; ln -s real $T/reallink
tree() { (cd $T && find . -printf '%p %y %s %m %n %U\n' | sort); }
before=$(tree)
unchanged() { [ "$(tree)" = "$before" ] && ok "$1: tree unchanged" || fail "$1: tree changed: $(diff <(echo "$before") <(tree))"; }
for p in $T/link $T/link/ $T/link/. $T/link/./ $T/a/../link $T/reallink/sub $T/reallink/sub/. $T//link//; do
  expect 1 "refuses $p" $C prepare $p; has "symbolic link" "says why"
  expect 1 "refuses --force $p" $C prepare --force $p
  unchanged "$p"
done
expect 1 "relative link/." bash -c "cd $T && $C prepare link/."; has "$T/link is a symbolic link" "names the link"
unchanged "relative link/."
expect 1 "refuses a folder that is no state folder" $C prepare $T/home; has "not a state folder" "says why"
expect 1 "--force does not widen that" $C prepare --force $T/home; has "--force does not change that" "says so"
unchanged "home"
expect 0 "an empty folder is fine" $C prepare $T/empty; chmod 755 $T/empty
expect 0 "a new folder under a real path" $C prepare $T/a/new/c1
[ -d $T/a/new/c1 ] && ok "made" || fail "not made"
rm -rf $T/a/new; unchanged "new folder removed again"
# Links planted inside a state folder: removed, not followed.
mkdir $T/s
ln -s $T/victim/memory.region $T/s/memory.region; ln -s $T/victim $T/s/x.lock
ln $T/victim/compute.region $T/s/compute.region; ln $T/victim/sampling.lock $T/s/sampling.lock
expect 0 "prepare a folder of planted links" $C prepare --owner 65534:65534 --mode 0700 $T/s
[ -z "$(ls -A $T/s)" ] && ok "links removed (sampling.lock too: not a plain file)" || fail "left: $(ls -A $T/s)"
rmdir $T/s; unchanged "planted links"

# / in every spelling, system folders: inside a chroot of a scratch tree
# (root, or an unprivileged user namespace), never on the real root.
J=$CLI_TEST_TMP/jail
mkdir -p $J/etc $J/tmp $J/usr/bin $J/var/lib/cudacap/containers/c1 $J/home/u
echo 'root:x:0:0::/root:/bin/sh' > $J/etc/passwd; echo keep > $J/tmp/x; echo keep > $J/home/u/f
touch $J/var/lib/cudacap/containers/c1/memory.region
cp "$CUDACAP_BIN" $J/cudacap
for l in $(ldd "$CUDACAP_BIN" | grep -o '/[^ ]*'); do mkdir -p $J$(dirname $l); cp -L $l $J$l; done
inj() { if [ "$(id -u)" = 0 ]; then chroot $J /cudacap "$@"; else unshare -r chroot $J /cudacap "$@"; fi; }
if inj --help >/dev/null 2>&1; then
  jtree() { (cd $J && find . -printf '%p %y %s %m %n\n' | sort); }
  jb=$(jtree)
  for p in / // /// /. /./ /tmp/.. /etc/.. /etc /usr/ /lib64 /var /home /proc /tmp; do
    for force in "" --force; do
      out=$(inj prepare $force $p 2>&1); rc=$?
      [ $rc = 2 ] && ok "jail: prepare $force $p refused (exit 2)" || fail "jail: prepare $force $p: exit $rc: $out"
      case "$out" in *refusing*) ;; *) fail "jail: $p: no refusal message: $out" ;; esac
    done
  done
  [ "$(jtree)" = "$jb" ] && ok "jail: nothing touched" || fail "jail changed: $(diff <(echo "$jb") <(jtree))"
  expect 0 "jail: a real state folder still works" inj prepare /var/lib/cudacap/containers/c1
  [ -z "$(ls -A $J/var/lib/cudacap/containers/c1)" ] && ok "jail: emptied" || fail "jail: not emptied"
else
  echo "skip: no chroot here (not root, no user namespaces, or the binary needs more than its libraries)"
fi
finish
