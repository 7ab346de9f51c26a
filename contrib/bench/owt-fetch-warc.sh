#!/bin/sh
# owt-fetch-warc.sh - the cost of --warc-file: the same loopback crawl
# (the demo speeches as 700 pages of 48 KB, 64 connections) with and
# without it, in turn, REPS times (5); medians of wall and CPU seconds,
# the ratio (target <= 1.05 wall), the archive's size and the share of
# the CPU time that the archive takes. Once for each of CASES
# ("100:gzip 0:gzip 0:identity"), MS:CODING: the time t/httpd waits before
# each answer (-w), and whether the pages are sent gzip-encoded, as web
# servers send HTML, or as they are. At 100 ms the crawl waits on its
# servers as a crawl of the web does, and the archive is made while it
# waits; at 0 the loopback answers at once, the crawl is bound by the CPU
# of two cores (its own, the server's) and the wall ratio follows the CPU
# the archive adds, most of it deflate, which has five times the bytes to
# pack when the pages come unencoded. With REF_FETCH=path, that build's
# --warc-file crawl runs in turn too (an older writer, side by side).
. "$OWT_SRC/contrib/bench/lib.sh"
: "${REPS:=5}" "${CASES:=100:gzip 0:gzip 0:identity}"

mkdir -p "$BW/identity" "$BW/gzip"
speech_pages "$BW/identity"
for f in "$BW"/identity/*.html; do
	gzip -n -6 -c "$f" >"$BW/gzip/${f##*/}.gz"
done
flags="-q --allow-private --ignore-robots --delay 0 --per-host 64 --connections 64"
level=$(grep -o 'WARC_GZIP_LEVEL [0-9]*' "$OWT_SRC/lib/web/warc_write.h" | cut -d' ' -f2)

# Wall seconds, then CPU seconds (user + system) in a third column.
measure_cpu() {
	out=$1
	shift
	/usr/bin/time -f '%e %M %U %S' -o "$BW/.time" "$@"
	awk '{ print $1, $2, $3 + $4 }' "$BW/.time" >>"$out"
}
for case in $CASES; do
	ms=${case%%:*}
	coding=${case#*:}
	serve_www "$BW/$coding" "$ms"
	for i in $(seq 50); do
		sed "s#^#$B/#; s#\$#?copy=$i#" "$BW/paths"
	done >"$BW/urls"
	n=$(wc -l <"$BW/urls" | tr -d ' ')
	owt-fetch $flags "$BW/urls" >/dev/null	# warm the page cache
	load=$(cut -d ' ' -f 1 /proc/loadavg)
	: >"$BW/plain"
	: >"$BW/warc"
	: >"$BW/ref"
	for i in $(seq "$REPS"); do
		measure_cpu "$BW/plain" owt-fetch $flags "$BW/urls" >/dev/null
		measure_cpu "$BW/warc" owt-fetch $flags --warc-file "$BW/w$i" "$BW/urls" >/dev/null
		if [ -n "${REF_FETCH:-}" ]; then
			measure_cpu "$BW/ref" "$REF_FETCH" $flags --warc-file "$BW/r$i" "$BW/urls" >/dev/null
		fi
	done
	tp=$(median "$BW/plain" 1)
	cp_=$(median "$BW/plain" 3)
	tw=$(median "$BW/warc" 1)
	cw=$(median "$BW/warc" 3)
	gz=$(gzip -dc "$BW/w1.warc.gz" | wc -c | tr -d ' ')
	echo "server wait $ms ms an answer (t/httpd -w), pages sent $coding; demo speeches x 50, $n URLs; $(nproc) cores, load average $load before the runs; median of $REPS, in turn"
	echo "  owt-fetch (crawl):             $tp s wall, CPU $cp_ s ($(awk -v c="$cp_" -v t="$tp" -v n="$(nproc)" 'BEGIN { printf "%.0f%%", (t > 0 ? c * 100 / (t * n) : 0) }') of $(nproc) cores)"
	echo "  owt-fetch --warc-file (crawl): $tw s wall, CPU $cw s, $(wc -c <"$BW/w1.warc.gz" | tr -d ' ') bytes of .warc.gz ($gz bytes of WARC; libdeflate level $level)"
	echo "  ratio crawl with / without --warc-file: wall $(ratio "$tw" "$tp") (target <= 1.05), CPU $(ratio "$cw" "$cp_"); the archive's share of the CPU time: $(awk -v a="$cw" -v b="$cp_" 'BEGIN { printf "%.0f%%", (a > 0 ? (a - b) * 100 / a : 0) }')"
	if [ -n "${REF_FETCH:-}" ]; then
		tr_=$(median "$BW/ref" 1)
		cr=$(median "$BW/ref" 3)
		echo "  $REF_FETCH --warc-file (crawl): $tr_ s wall, CPU $cr s, $(wc -c <"$BW/r1.warc.gz" | tr -d ' ') bytes of .warc.gz; ratio to the crawl without: wall $(ratio "$tr_" "$tp"), CPU $(ratio "$cr" "$cp_")"
	fi
	rm -f "$BW"/w*.warc.gz "$BW"/r*.warc.gz
done
