#!/bin/sh
# pairs.sh OLD NEW ENCODING [PAIRS [FILE]]: two bpe-encode binaries (a
# build before and after a change, or two builds of one define) on the
# same text, one core (taskset -c 1, --workers 1), CPU time (user +
# system, contrib/bench/cputime), alternating, PAIRS pairs (15); prints
# the medians and the median of the pairs' old/new ratios (above 1: NEW
# is faster) with their range, which shows the host's spells. ENCODING is
# a tiktoken encoding whose rank file is $TK/ENCODING.tiktoken (TK:
# /tmp/tks, as contrib/bench/bpe-encode.sh's DISTINCT notes make it);
# FILE the JSONL (the 20 MB of make-distinct.sh). Not part of make bench:
# a tool for the slices' "tried" lists in RESULTS.md.
set -u
[ $# -ge 3 ] || { echo "usage: pairs.sh OLD NEW ENCODING [PAIRS [FILE]]" >&2; exit 2; }
old=$1 new=$2 enc=$3 n=${4:-15} f=${5:-${TK:-/tmp/tks}/distinct.jsonl}
: "${OWT_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
ct=${CPUTIME:-$OWT_SRC/build/bench/cputime}
t=$(mktemp) || exit 3
trap 'rm -f "$t"' EXIT
for i in $(seq "$n"); do
	for b in "$old" "$new"; do
		taskset -c 1 "$ct" -o "$t" "$b" --tokenizer-type TikTokenizer \
		    --tokenizer-model "${TK:-/tmp/tks}/$enc.tiktoken" \
		    --tiktoken-pattern "$enc" --workers 1 -q "$f" >/dev/null ||
		    { echo "pairs.sh: $b failed" >&2; exit 1; }
		awk '{ print $3 + $4 }' "$t"
	done | paste -sd' ' -
done | awk '
	{ o[NR] = $1; w[NR] = $2; r[NR] = $1 / $2 }
	function med(a, n,   i, j, x) {
		for (i = 2; i <= n; i++) { x = a[i]
			for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
			a[j + 1] = x }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	END { lo = r[1]; hi = r[1]
		for (i = 1; i <= NR; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
		printf "pairs %d: old %.4f s, new %.4f s (medians); old/new %.3f (median of the pairs), %.3f-%.3f\n",
		    NR, med(o, NR), med(w, NR), med(r, NR), lo, hi }'
