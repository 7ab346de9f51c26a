# lib.sh - helpers for the benchmark scripts: . "$OWT_SRC/contrib/bench/lib.sh"
#
# cputime -o F CMD...  run CMD, write "wall maxrss_kb user sys" to F, as
#                      GNU time -f '%e %M %U %S' but to the microsecond
#                      (make bench's contrib/bench/cputime.c; GNU time
#                      where it is not built)
# measure OUT CMD...   run CMD (stdin/stdout as given by the caller's
#                      redirections), append "seconds maxrss_kb" to OUT
# median FILE COL      the median of column COL (1 = seconds, 2 = KB)
# ratio A B            A/B with two decimals
# core_share           coreprobe's chains at once on core 0 now ("-" where
#                      it is not built): a run beside a busy hyperthread
#                      twin gets a smaller share (contrib/bench/coreprobe.c)
# torch_ref            the PyTorch reference: py (its python), ref=yes or
#                      no, THREADS (2); installs python3-torch and
#                      OpenBLAS's OpenMP build for it where it can
# BW is a scratch folder, removed at exit; REPS the repetitions (3).
set -eu
: "${REPS:=3}"
BW=$(mktemp -d "${TMPDIR:-/tmp}/owt-bench.XXXXXX")
trap 'rm -rf "$BW"' EXIT

if [ -x "${OWT_BUILD:-}/bench/cputime" ]; then
	cputime() { "$OWT_BUILD/bench/cputime" "$@"; }
else
	cputime() { /usr/bin/time -f '%e %M %U %S' "$@"; }
fi

core_share() {
	if [ -x "${OWT_BUILD:-}/bench/coreprobe" ]; then
		taskset -c 0 "$OWT_BUILD/bench/coreprobe" | cut -d' ' -f1
	else
		echo -
	fi
}

measure() {
	out=$1
	shift
	cputime -o "$BW/.time" "$@"
	cut -d' ' -f1,2 "$BW/.time" >>"$out"
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

torch_ref() {
	: "${THREADS:=2}"
	py=/usr/bin/python3
	ref=yes
	sh "$OWT_SRC/contrib/build/deps.sh" libopenblas0-openmp python3-torch || ref=no
	"$py" -c 'import torch' 2>/dev/null || ref=no
}

# The demo's speeches as pages in www, their paths in $BW/paths.
speech_pages() {
	for f in "$OWT_SRC"/contrib/demo/data/speeches/*.txt; do
		b=${f##*/}
		awk '{ print "<p>" $0 "</p>" }' "$f" >"$1/${b%.txt}.html"
		echo "${b%.txt}.html"
	done >"$BW/paths"
}

# t/httpd serving www on loopback until the script exits (which removes
# $BW); its base URL in B. With a second operand, each answer waits that
# many milliseconds first (httpd -w: a server on the web, not on loopback).
serve_www() {
	rm -f "$BW/port"
	"$OWT_BUILD/t/httpd" -d "$1" -p "$BW/port" -t 3600 -w "${2:-0}" &
	httpds="${httpds:-} $!"
	trap 'kill $httpds 2>/dev/null || :; rm -rf "$BW"' EXIT
	while [ ! -s "$BW/port" ]; do sleep 0.05; done
	B=http://127.0.0.1:$(cat "$BW/port")
}
