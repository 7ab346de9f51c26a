#!/bin/sh
# owt-mk.sh - contrib/install/owt.mk (issue 19): wall and CPU time of a 4-shard
# build with make -j2 against the one-shot pipeline on the same loopback
# pages (both fetch, clean, dedup, shuffle, encode and pack the same URL
# lists from t/httpd), and the cost of a no-op rerun. The pages: the demo's
# speeches cut into pages of twenty sentences, in eight URL files.
. "$OWT_SRC/contrib/bench/lib.sh"
T=$BW
. "$OWT_SRC/t/httpd.sh"
trap '[ -n "$httpd_pid" ] && kill "$httpd_pid" 2>/dev/null; rm -rf "$BW"' EXIT
command -v flock >/dev/null || { echo "owt-mk: no flock (util-linux): skipped"; exit 0; }
cd "$BW"
mkdir -p www urls
cat "$OWT_SRC"/contrib/demo/data/speeches/*.txt | awk '
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
{ n = split(esc($0), s, /\. /); for (i = 1; i <= n; i++) sent[++m] = s[i] }
END {
	for (i = 1; i <= m; i += 20) {
		f = sprintf("www/p%04d.html", ++pg)
		printf "<html><head><title>page %d</title></head><body><div class=\"article\"><p>", pg >f
		for (j = i; j < i + 20 && j <= m; j++)
			printf "%s. ", sent[j] >f
		printf "</p></div></body></html>\n" >f
		close(f)
	}
}'
httpd_start www -t 3600
ls www | sed "s|^|$B/|" | split -n r/8 -d - urls/u
for f in urls/u*; do mv "$f" "$f.txt"; done
npages=$(ls www | wc -l)
F="--allow-private --delay 0 --ignore-robots"

cat >one.sh <<EOF
cat urls/*.txt | owt-fetch -q $F --connections 1 --workers 0 >one.pages &&
    jsonl-merge -q --add-id ref one.pages >one.merged &&
    owt-dedup -q one.merged >one.clean &&
    jsonl-merge -q --shuffle --seed 1234 one.clean >one.shuffled &&
    bpe-encode -q --append-eod one.shuffled | idx-pack -q -o one
EOF
cat >mk.sh <<EOF
make -s --no-print-directory -j2 -f "$OWT_SRC/contrib/install/owt.mk" URLS=urls \\
    OUT=out SHARDS=4 NAME=b FETCH_FLAGS="$F" >/dev/null 2>&1
EOF
timed() {	# OUT CMD...: append "wall cpu" (CPU of every process it waited for)
	o=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$BW/.t" "$@"
	awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$BW/.t" >>"$o"
}
: >one.t
: >mk.t
: >noop.t
r=0
while [ $r -lt "$REPS" ]; do
	rm -rf one.pages one.merged one.clean one.shuffled one.bin one.idx out
	timed one.t sh one.sh
	timed mk.t sh mk.sh
	timed noop.t sh mk.sh
	cmp -s one.bin out/b_text_document.bin && cmp -s one.idx out/b_text_document.idx ||
	    echo "owt-mk: the 4-shard build differs from the one-shot pipeline" >&2
	r=$((r + 1))
done
echo "owt.mk on $npages loopback pages in 8 URL files; median of $REPS runs (wall s, CPU s of all processes):"
printf '  one-shot pipeline            %6s s wall %6s s CPU\n' "$(median one.t 1)" "$(median one.t 2)"
printf '  owt.mk SHARDS=4 -j2          %6s s wall %6s s CPU\n' "$(median mk.t 1)" "$(median mk.t 2)"
printf '  owt.mk no-op rerun           %6s s wall %6s s CPU\n' "$(median noop.t 1)" "$(median noop.t 2)"
echo "  ratio 4-shard / one-shot: $(ratio "$(median mk.t 1)" "$(median one.t 1)") wall, $(ratio "$(median mk.t 2)" "$(median one.t 2)") CPU"
