#!/bin/sh
# Extraction quality on ../shared/data/extraction-dev with its scorer:
# F1 >= 0.985 on the readability set and >= 0.94 on the L3S set (issue 20;
# precision and recall printed beside it). The pages are read from
# $OWT_SHARED, never copied here. Also: the output with extraction threads
# is the output without them; the record's date and lang_hint fields, on a
# page made here and against the readability set's labelled languages.
. "${OWT_SRC:-.}/t/lib.sh"

need_shared
D=$OWT_SHARED/data/extraction-dev
[ -f "$D/evaluate.py" ] || skip_all "no extraction-dev set"
command -v python3 >/dev/null || skip_all "no python3 for evaluate.py"
cd "$T" || exit 3
for set in readability:0.985 l3s-gn1:0.94; do
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
	get() { tr -d '\n ' <score.json | sed "s/.*\"$1\":\([0-9.]*\).*/\1/" | cut -c 1-6; }
	f1=$(get f1)
	echo "# $name F1 $f1, precision $(get precision), recall $(get recall)"
	is "$(awk -v f="$f1" -v m="$min" 'BEGIN { print (f >= m) ? "yes" : "no" }')" yes \
	    "$name: F1 $f1 >= $min"
	if [ "$name" = readability ]; then
		# Every page whose language the set records declares it.
		python3 - "$D/$name/ground-truth.jsonl" pred.jsonl >lang.txt <<'PY'
import json, sys
truth = {}
for line in open(sys.argv[1], encoding="utf-8"):
    d = json.loads(line)
    truth[d["id"]] = (d.get("lang") or "").lower()
n = same = 0
for line in open(sys.argv[2], encoding="utf-8"):
    d = json.loads(line)
    t = truth[d["url"].rsplit("/", 1)[1][:-len(".html.gz")]]
    if t:
        n += 1
        same += d.get("lang_hint") == t
print(n, same)
PY
		read -r n agree <lang.txt
		is "$agree" "$n" "readability: lang_hint is the labelled language on all $n pages that have one"
		is "$(grep -c '"date":"[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]' pred.jsonl)" \
		    "$(grep -c '"date":' pred.jsonl)" "readability: every date is ISO 8601"
	fi
done

# The two fields in a record, where the text's own record keys stand.
cat >page.html <<'EOF2'
<html lang="pt-BR"><head><title>T</title>
<meta property="article:published_time" content="2024-03-05T08:09:10+0100">
</head><body><p>Um texto curto, mas com uma frase inteira.</p></body></html>
EOF2
echo page.html >one.txt
run owt-fetch -q --extract one.txt
is "$rc" 0 "a page with a date and a language: exit 0"
is "$(cat out)" '{"url":"page.html","title":"T","text":"Um texto curto, mas com uma frase inteira.","date":"2024-03-05T08:09:10+01:00","lang_hint":"pt-br","charset":"UTF-8","bytes":195}' \
    "the record has date and lang_hint after the text"
sed 's/ lang="pt-BR"//; /published_time/d' page.html >bare.html
echo bare.html >one.txt
run owt-fetch -q --extract one.txt
unlike out '"(date|lang_hint)"' "a page without them: neither field"
done_testing
