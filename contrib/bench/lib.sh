# lib.sh - helpers for the benchmark scripts: . "$OWT_SRC/contrib/bench/lib.sh"
#
# measure OUT CMD...   run CMD (stdin/stdout as given by the caller's
#                      redirections), append "seconds maxrss_kb" to OUT
# median FILE COL      the median of column COL (1 = seconds, 2 = KB)
# ratio A B            A/B with two decimals
# BW is a scratch folder, removed at exit; REPS the repetitions (3).
set -eu
: "${REPS:=3}"
BW=$(mktemp -d "${TMPDIR:-/tmp}/owt-bench.XXXXXX")
trap 'rm -rf "$BW"' EXIT

measure() {
	out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$BW/.time" "$@"
	cat "$BW/.time" >>"$out"
}

median() {
	sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}

mbps() {
	awk -v bytes="$1" -v s="$2" 'BEGIN { printf "%.1f", (s > 0 ? bytes / 1e6 / s : 0) }'
}
