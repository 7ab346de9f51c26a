#!/bin/sh
# owt-dedup's quality targets on the shared dev sets (skipped without
# ../shared): is-English accuracy at least python3-langdetect's on
# langid-dev.jsonl; lang_hint as a fallback and a prior; on dedup-dev, recall >= 0.97 of the pairs with word
# 5-gram Jaccard >= 0.8, lost documents <= 0.5% of the drops, and no
# document of a boilerplate-sharing group dropped; the same output with one
# worker or many; and at most 256 bytes of index per kept document.
# (ftfy agreement on ftfy-dev is t/2002-textfix.t.)
. "${OWT_SRC:-.}/t/lib.sh"
need_shared

S=$OWT_SHARED/data
cd "$T" || exit 3

# Language: which lines the lang stage keeps, against the labels.
run owt-dedup -q --stages lang --report rep.jsonl "$S/langid-dev.jsonl"
is "$rc" 0 "lang stage on langid-dev exits 0"
sed -n 's/.*"line":\([0-9]*\),.*/\1/p' rep.jsonl >dropped
acc=$(awk 'NR == FNR { d[$1] = 1; next }
    { n++; if (($0 ~ /"lang": "en"/) == !(FNR in d)) ok++ }
    END { printf "%.4f", ok / n }' dropped "$S/langid-dev.jsonl")
echo "# owt-dedup is-English accuracy: $acc"
if /usr/bin/python3 -c 'import langdetect' 2>/dev/null; then
	ref=$(/usr/bin/python3 "$OWT_SRC/t/ld-accuracy.py" "$S/langid-dev.jsonl" |
	    cut -d' ' -f1)
	echo "# python3-langdetect is-English accuracy: $ref"
else
	ref=0.9840	# python3-langdetect 1.0.9, seed 0, measured
	echo "# python3-langdetect is not installed; its measured accuracy: $ref"
fi
awk -v a="$acc" -v b="$ref" 'BEGIN { exit !(a >= b) }' &&
    ok "is-English accuracy $acc >= langdetect's $ref" ||
    not_ok "is-English accuracy $acc >= langdetect's $ref"

# lang_hint (owt-fetch's): where CLD2 finds no language, the page's
# declared one (its primary subtag, if CLD2 knows it); a hint does not
# outvote the text.
printf '%s\n' '{"text":"12345 67890","lang_hint":"en-us"}' \
    '{"text":"12345 67890"}' '{"text":"12345 67890","lang_hint":"de-at"}' \
    '{"text":"12345 67890","lang_hint":"xx"}' '{"text":"12345 67890","lang_hint":5}' \
    '{"text":"Der Hund schläft im Garten unter dem großen alten Baum, und die Katze sieht ihm zu.","lang_hint":"en"}' \
    '{"text":"The dog sleeps in the garden under the big old tree while the cat watches.","lang_hint":"de"}' >hint.jsonl
run owt-dedup -q --stages lang --report rep.jsonl hint.jsonl
is "$rc" 0 "lang_hint: exit 0"
is "$(cat out)" '{"text":"12345 67890","lang_hint":"en-us"}
{"text":"The dog sleeps in the garden under the big old tree while the cat watches.","lang_hint":"de"}' \
    "lang_hint: a text of no language is the hint's; a text in another language is not"
is "$(sed 's/.*"line":\([0-9]*\),.*"reason":"\([^"]*\)","lang":"\([^"]*\)".*/\1 \2 \3/' rep.jsonl)" \
"2 unknown language un
3 other language de
4 unknown language un
5 unknown language un
6 other language de" "lang_hint: the report (no hint, de-at, an unknown code, not a string, outvoted)"

# Near duplicates, all default stages (no language or length drops here).
run owt-dedup -q --report rep.jsonl "$S/dedup-dev/corpus.jsonl"
is "$rc" 0 "dedup-dev: exit 0"
cp out o1
sed 's/^{"id": "\([^"]*\)".*/\1/' out >kept
score=$(awk -v kept=kept -f "$OWT_SRC/t/score-dedup.awk" "$S/dedup-dev/truth.jsonl")
echo "# $score"
set -- $score
is "$2" 1271 "dedup-dev: every document scored"
awk -v r="${10}" 'BEGIN { exit !(r >= 0.97) }' &&
    ok "recall ${10} >= 0.97 at word 5-gram Jaccard >= 0.8" ||
    not_ok "recall ${10} >= 0.97 at word 5-gram Jaccard >= 0.8"
awk -v l="${14}" 'BEGIN { exit !(l <= 0.005) }' &&
    ok "lost documents ${12} = ${14} of the drops <= 0.005" ||
    not_ok "lost documents ${12} = ${14} of the drops <= 0.005"
is "${16}" 0 "no document of a boilerplate-sharing group is dropped"
unlike rep.jsonl '"stage":"(lang|length)"' "no language or length drops here"
for w in 1 3; do
	run owt-dedup -q --workers $w --report rep$w.jsonl "$S/dedup-dev/corpus.jsonl"
	same o1 out "dedup-dev, --workers $w: the same output"
	same rep.jsonl rep$w.jsonl "dedup-dev, --workers $w: the same report"
done

# Token counts: every document of the sample counted (--min-tokens 20000
# reaches past its longest text), against tiktoken's ids of it.
run owt-dedup -q --stages length --min-tokens 20000 --report rep.jsonl \
    "$S/corpus-sample.jsonl"
od -An -v -tu2 -w2 "$S/corpus-sample.gpt2.u16" |
    awk '{ n++ } $1 == 50256 { print n; n = 0 }' >ref
sed 's/.*"line":\([0-9]*\),.*"tokens":\([0-9]*\)}$/\1 \2/' rep.jsonl >ours
res=$(awk 'NR == FNR { ref[NR] = $1; next }
    { n++; if (ref[$1] != $2) bad++; seen[$1] = 1 }
    END { for (i in ref) if (!(i in seen) && ref[i] < 20000) bad++
	print n, bad + 0 }' ref ours)
echo "# token counts: $res (documents counted, differing from tiktoken's)"
is "${res#* }" 0 "token counts (EOD included) equal tiktoken's for every document"

# Index memory per kept document: 100,000 distinct documents with URLs.
awk 'BEGIN { srand(7); for (i = 0; i < 100000; i++) { s = ""
	for (j = 0; j < 30; j++) s = s " w" int(rand() * 1000000)
	printf "{\"url\":\"u%d\",\"text\":\"%s\"}\n", i, s } }' >many.jsonl
run owt-dedup --stages exact,near --report rep.jsonl many.jsonl
bytes=$(sed -n 's/.*index: 100000 documents, .* MB, \([0-9]*\) bytes per document$/\1/p' err)
echo "# index: $bytes bytes per kept document"
[ -n "$bytes" ] && [ "$bytes" -le 256 ] &&
    ok "at most 256 bytes of index per kept document ($bytes)" ||
    not_ok "at most 256 bytes of index per kept document ($bytes)"
done_testing
