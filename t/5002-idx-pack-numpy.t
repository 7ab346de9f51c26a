#!/bin/sh
# idx-pack against contrib/oracle/mmidx.py, an independent numpy reader and
# writer written from the format description: the same bytes when packing,
# the same tokens document by document when reading. Skips without numpy.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/tok.sh"

py=/usr/bin/python3
"$py" -c 'import numpy' 2>/dev/null || skip_all "no numpy for /usr/bin/python3 (Debian python3-numpy)"
np() { "$py" "$OWT_SRC/contrib/oracle/mmidx.py" "$@"; }
cd "$T" || exit 3

# Documents of 0 to 1500 tokens, some empty, ids over the whole vocabulary.
gen() {	# ndocs vocab seed
	awk -v n="$1" -v v="$2" -v seed="$3" 'BEGIN { srand(seed)
		for (d = 0; d < n; d++) { k = int(rand() * rand() * 1500); s = ""
			for (i = 0; i < k; i++) s = s " " int(rand() * v)
			print s } }'
}
for v in 50257 65499 65500 100000; do
	gen 1000 "$v" "$v" | mktok "$v" $((v - 1)) >s$v.tok
	run idx-pack -q -o c$v s$v.tok
	np pack n$v <s$v.tok
	same n$v.idx c$v.idx "vocabulary $v: .idx equals numpy's"
	same n$v.bin c$v.bin "vocabulary $v: .bin equals numpy's"
	np cat c$v "$v" $((v - 1)) >np.tok
	run idx-pack --cat --vocab "$v" --eod $((v - 1)) c$v
	same np.tok out "vocabulary $v: numpy reads the same documents and tokens"
	run idx-pack --check c$v
	is "$(np info c$v)" "$(sed 's/.*: ok: \([0-9]*\) sequences, \([0-9]*\) documents, \([0-9]*\) tokens (\(.*\))/\1 \2 \3 \4/' out)" \
	    "vocabulary $v: numpy counts what --check counts"
done

# A merge with empty documents kept: numpy reads the shifted document index.
idx-pack -q --keep-empty -o k1 s50257.tok && idx-pack -q -o k2 s50257.tok
run idx-pack -q -o m --merge k1 k2 k1
np cat m 50257 50256 >np.tok
run idx-pack --cat m
same np.tok out "a merged dataset with empty documents reads the same in numpy"

u16=$OWT_SHARED/data/corpus-sample.gpt2.u16
if [ -f "$u16" ]; then
	corpus_tok "$u16" >corpus.tok
	idx-pack -q -o corpus corpus.tok
	np pack ncorpus <corpus.tok
	same ncorpus.idx corpus.idx "shared sample: .idx equals numpy's"
	same ncorpus.bin corpus.bin "shared sample: .bin equals numpy's"
else
	skip "no ../shared test data"
	skip "no ../shared test data"
fi
done_testing
