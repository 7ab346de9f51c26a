#!/bin/sh
# contrib/install/owt.mk killed right after each rename and each link of an
# incremental build, in turn, every one (not a sample): the rerun exits 0
# and gives the dataset and the summary of the same build uninterrupted,
# byte for byte, every fetch unit's outcome log and no temporary file (a
# unit's work folder, .part, killed after the unit was published, stays
# until the unit is fetched again, which removes it). The build: two shards, two URL files built first, then a
# third that sorts first and repeats five URLs of another (so that five
# of its pages become exact duplicates and a published unit's drop list
# changes), and a document added to DOCS. mv and ln are wrappers first in
# PATH that do the real thing, count it, and at the count asked for kill
# the whole run (kill -9 of its process group) at once.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/httpd.sh"

command -v flock >/dev/null || skip_all "no flock (util-linux)"
command -v setsid >/dev/null || skip_all "no setsid (util-linux)"
MK=$OWT_SRC/contrib/install/owt.mk
cd "$T" || exit 3

# Twelve pages, a third of a speech each, and a page the server lacks.
mkdir -p www urls docs
speech_pages www "$OWT_SRC"/contrib/demo/data/speeches/address-0[1-4].txt
httpd_start www -t 900
ls www | sed "s|^|$B/|" >all.txt
{ sed -n 1,5p all.txt; echo "$B/missing.html"; } >urls/b.txt
{ sed -n 6,12p all.txt; echo "https://www.youtube.com/watch?v=x"; } >urls/c.txt
{ sed -n 8,12p all.txt; } >a.txt
cp "$OWT_SRC/contrib/demo/data/speeches/address-05.txt" docs/a-speech.txt
cp "$OWT_SRC/contrib/demo/data/speeches/address-06.txt" doc-added.txt

real_mv=$(command -v mv) real_ln=$(command -v ln)
mkdir wrap
for w in mv ln; do
	eval "real=\$real_$w"
	cat >wrap/$w <<EOF
#!/bin/sh
# $w, counted in \$KILL_COUNT; the run is killed after the \$KILL_AT-th.
'$real' "\$@" || exit
n=\$((\$(cat "\$KILL_COUNT") + 1))
echo "\$n" >"\$KILL_COUNT"
[ "\$n" != "\${KILL_AT:-}" ] || kill -9 0
EOF
	chmod +x wrap/$w
done

# mk.sh OUT [make args]: the recipe, quietly, one step at a time; every
# build here runs it, so that the killed ones are the same command.
cat >mk.sh <<EOF
o=\$1
shift
exec make -s --no-print-directory -f "$MK" URLS=urls OUT="\$o" SHARDS=2 \\
    NAME=t DOCS=docs FETCH_FLAGS="--allow-private --delay 0.01" "\$@"
EOF
mk() {
	sh "$T/mk.sh" "$@"
}
# killed OUT K: the build in its own process group, through the wrappers,
# killed after the K-th rename or link (never with K 0); the count in OUT.n.
killed() {
	echo 0 >"$1.n"
	PATH=$T/wrap:$PATH KILL_COUNT=$T/$1.n KILL_AT=$2 \
	    setsid sh "$T/mk.sh" "$1" >"$1.out" 2>&1
}

run mk base
is "$rc" 0 "the first build (two URL files, a document)"
cp -a base snap
cp a.txt urls/a.txt
cp doc-added.txt docs/b-speech.txt
run mk whole
is "$rc" 0 "the incremental build uninterrupted (a third URL file, a second document)"
mv whole/t.summary want.summary
like want.summary '^  exact duplicate: 5$' "five pages of the third file repeat another's"
rm -rf whole
cp -a snap whole
run killed whole 0
is "$rc" 0 "the same build through the wrappers"
same whole/t.summary want.summary "gives the same summary"
total=$(cat whole.n)
ok "the incremental build makes $total renames and links"
[ "$total" -ge 40 ] && ok "enough to cover every step ($total)" ||
    not_ok "enough to cover every step ($total)"

# Each kill point in turn: killed, then the same command again.
bad=
k=1
while [ "$k" -le "$total" ]; do
	rm -rf run
	cp -a snap run
	killed run "$k"
	s=$?
	if [ "$s" -eq 0 ] || [ "$(cat run.n)" != "$k" ]; then
		bad="$bad $k(not killed: status $s, $(cat run.n) renames)"
	else
		mk run >run.out 2>&1
		s=$?
		if [ "$s" -ne 0 ]; then
			bad="$bad $k(rerun exit $s: $(head -1 run.out))"
		elif ! cmp -s run/t_text_document.bin whole/t_text_document.bin ||
		    ! cmp -s run/t_text_document.idx whole/t_text_document.idx; then
			bad="$bad $k(dataset differs)"
		elif ! sed 's|^run/|whole/|' run/t.summary | cmp -s - want.summary; then
			bad="$bad $k(summary differs: $(sed 's|^run/|whole/|' run/t.summary | diff want.summary - | sed -n 2p))"
		elif [ -n "$(find run -name '*.tmp')" ]; then
			bad="$bad $k(left $(find run -name '*.tmp' | head -1))"
		elif [ "$(ls run/2-fetch/*.log | wc -l)" -ne 6 ]; then
			bad="$bad $k(the outcomes of $(ls run/2-fetch/*.log | wc -l) units, not 6)"
		fi
	fi
	k=$((k + 1))
done
is "${bad:-none}" none "killed after each of the $total renames and links, the rerun gives the uninterrupted build's dataset and summary"

# A fresh build of the same lists and documents gives the same again.
run mk fresh
dataset_same=no
cmp -s fresh/t_text_document.bin whole/t_text_document.bin &&
    cmp -s fresh/t_text_document.idx whole/t_text_document.idx && dataset_same=yes
is "$dataset_same" yes "a fresh build of the three files and two documents: the same dataset"
sed 's|^fresh/|whole/|' fresh/t.summary >fresh.summary
same fresh.summary want.summary "and the same summary"

# A unit's work folder left by a kill after the unit was published (its
# .jsonl newer than the folder's log) is done with: the unit's next fetch,
# for a changed list, removes it and starts from the unit's own pages and
# outcomes, so that no outcome of a URL the list has lost comes back.
u=st/x.txt.0-of-1
mkdir -p st
sed -n 1,2p all.txt >$u.urls
run env FETCH_FLAGS=--allow-private sh "$OWT_SRC/contrib/install/owt-stage" fetch $u
is "$rc" 0 "owt-stage fetch of a unit of two URLs"
mkdir $u.part
printf '{"url":"%s","outcome":"ok"}\n' "$B/old.html" >$u.part/log
printf '{"url":"%s","text":"old"}\n' "$B/old.html" >$u.part/pages
touch -d '-1 minute' $u.part/log $u.part/pages
sed -n 1,3p all.txt >$u.urls
run env FETCH_FLAGS=--allow-private sh "$OWT_SRC/contrib/install/owt-stage" fetch $u
is "$rc" 0 "the unit fetched again with a third URL"
is "$(sed 's/^{"url":"\([^"]*\)".*/\1/' $u.log | sort | tr '\n' ' ')" \
    "$(sort $u.urls | tr '\n' ' ')" "its outcomes are those of its three URLs"
is "$(grep -c . $u.jsonl)" 3 "and its pages those of the three"
test -d $u.part && not_ok "the old work folder is gone" || ok "the old work folder is gone"

done_testing
