#!/bin/sh
# Extraction quality on ../shared/data/extraction-dev with its scorer:
# F1 >= 0.93 on the readability set and >= 0.90 on the L3S set (issue 6).
# The pages are read from $OWT_SHARED, never copied here. Also: the
# output with extraction threads is the output without them.
. "${OWT_SRC:-.}/t/lib.sh"

need_shared
D=$OWT_SHARED/data/extraction-dev
[ -f "$D/evaluate.py" ] || skip_all "no extraction-dev set"
command -v python3 >/dev/null || skip_all "no python3 for evaluate.py"
cd "$T" || exit 3
for set in readability:0.93 l3s-gn1:0.90; do
	name=${set%%:*}
	min=${set#*:}
	ls "$D/$name/html/"*.html.gz >files.txt
	run owt-fetch -q --extract files.txt
	is "$rc" 0 "$name: --extract exits 0"
	cp out pred.jsonl
	run owt-fetch -q --workers 0 --extract files.txt
	same pred.jsonl out "$name: threads give the bytes one thread gives (libtidy's HTML 4 race avoided)"
	python3 "$D/evaluate.py" pred.jsonl --truth "$D/$name/ground-truth.jsonl" \
	    --n-bootstrap 0 --json score.json >/dev/null 2>&1
	f1=$(tr -d '\n ' <score.json | sed 's/.*"f1":\([0-9.]*\).*/\1/' | cut -c 1-5)
	echo "# $name F1 $f1"
	is "$(awk -v f="$f1" -v m="$min" 'BEGIN { print (f >= m) ? "yes" : "no" }')" yes \
	    "$name: F1 $f1 >= $min"
done
done_testing
