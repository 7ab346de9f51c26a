# owt-fetch: crawl + extraction against t/httpd on loopback, side by side with
# curl --parallel fetching the same URLs without extraction, and with
# owt-fetch --extract on the same pages saved to disk, and as a WARC archive
# that wget writes crawling them (a record a gzip member; issue 28's target:
# >= 0.95 of the pages per second from saved files); and the crawl with
# --warc-file beside the crawl without (target <= 1.05 of its wall time). Pages: the
# extraction-dev sets of ../shared (751 real pages, each URL 3 times with a
# different query), else the demo's speeches. Then peak RSS at 256
# connections.
#
# With the extraction-dev sets, also (issue 20): extraction quality per set
# (precision, recall, F1 by the sets' evaluate.py) beside readability-lxml
# (Debian's python3-readability) on the same pages, and extraction speed
# against a reference build of owt-fetch: REF_FETCH names its binary, else
# it is built from git revision REF_REV (default 8e6c171, the tree before
# issue 20) of this checkout. Speeds are CPU seconds on one core (taskset),
# median of REPS, as a ratio (target >= 0.95 of the reference's).
. "$OWT_SRC/contrib/bench/lib.sh"

extraction_quality() {
	D=$OWT_SHARED/data/extraction-dev
	ev=$D/evaluate.py
	py=/usr/bin/python3
	sh "$OWT_SRC/contrib/build/deps.sh" python3-readability >/dev/null 2>&1 || :
	rl=yes
	"$py" -c 'import readability' 2>/dev/null || rl=no
	score() {
		"$py" "$ev" "$1" --truth "$2" --n-bootstrap 0 --json "$BW/s.json" \
		    >/dev/null 2>&1
		"$py" -c 'import json, sys
d = list(json.load(open(sys.argv[1])).values())[0]
print("precision %.4f recall %.4f F1 %.4f exact %.3f" % (d["precision"], d["recall"], d["f1"], d["accuracy"]))' "$BW/s.json"
	}
	echo "extraction quality (evaluate.py; scrapinghub's benchmark, held out, is not in ../shared):"
	for set in readability l3s-gn1; do
		ls "$D/$set/html/"*.html.gz >"$BW/q.txt"
		owt-fetch -q --extract "$BW/q.txt" >"$BW/q.jsonl"
		printf "  %-12s owt-fetch:        %s\n" "$set" "$(score "$BW/q.jsonl" "$D/$set/ground-truth.jsonl")"
		if [ $rl = yes ]; then
			"$py" "$OWT_SRC/contrib/bench/readability-lxml.py" "$BW/q.txt" \
			    "$BW/r.jsonl" >/dev/null
			printf "  %-12s readability-lxml: %s\n" "$set" "$(score "$BW/r.jsonl" "$D/$set/ground-truth.jsonl")"
		else
			printf "  %-12s readability-lxml: not installed (python3-readability)\n" "$set"
		fi
	done
	ls "$D"/readability/html/*.html.gz "$D"/l3s-gn1/html/*.html.gz >"$BW/all.txt"
	ref=${REF_FETCH:-}
	if [ -z "$ref" ] && git -C "$OWT_SRC" cat-file -e "${REF_REV:-8e6c171}^{commit}" 2>/dev/null; then
		mkdir -p "$BW/ref"
		git -C "$OWT_SRC" archive "${REF_REV:-8e6c171}" | tar -x -C "$BW/ref" &&
		    make -C "$BW/ref" -s NODEPS=1 CUDA=0 -j"$(nproc)" build/bin/owt-fetch \
		    >"$BW/ref.log" 2>&1 && ref=$BW/ref/build/bin/owt-fetch
	fi
	if [ -z "$ref" ] || [ ! -x "$ref" ]; then
		echo "extraction speed: no reference build (set REF_FETCH or REF_REV)"
		return
	fi
	"$ref" -q --extract "$BW/all.txt" >"$BW/ref.jsonl"
	: >"$BW/xn"
	: >"$BW/xr"
	for i in $(seq "$REPS"); do
		/usr/bin/time -f '%U %S' -o "$BW/.t" taskset -c 0 owt-fetch -q --workers 1 \
		    --extract "$BW/all.txt" >/dev/null
		awk '{ print $1 + $2 }' "$BW/.t" >>"$BW/xn"
		/usr/bin/time -f '%U %S' -o "$BW/.t" taskset -c 0 "$ref" -q --workers 1 \
		    --extract "$BW/all.txt" >/dev/null
		awk '{ print $1 + $2 }' "$BW/.t" >>"$BW/xr"
	done
	tn=$(median "$BW/xn" 1)
	tr=$(median "$BW/xr" 1)
	echo "extraction speed, 751 pages, one core, CPU seconds: this build $tn s, reference ${REF_FETCH:-${REF_REV:-8e6c171}} $tr s; throughput ratio $(ratio "$tr" "$tn") (target >= 0.95)"
}

www=$BW/www
mkdir -p "$www"
D=$OWT_SHARED/data/extraction-dev
if [ -d "$D/readability/html" ]; then
	src="extraction-dev (readability + l3s-gn1), 751 pages x 3"
	ln -s "$D/readability/html" "$www/r"
	ln -s "$D/l3s-gn1/html" "$www/l"
	(cd "$www" && ls r/ l/) >/dev/null
	for s in r l; do
		for f in "$www/$s"/*.html.gz; do
			b=${f##*/}
			echo "$s/${b%.gz}"
		done
	done >"$BW/paths"
else
	src="demo speeches x 50"
	speech_pages "$www"
fi
serve_www "$www"
copies=3
[ -d "$D/readability/html" ] || copies=50
for i in $(seq $copies); do
	sed "s#^#$B/#; s#\$#?copy=$i#" "$BW/paths"
done >"$BW/urls"
n=$(wc -l <"$BW/urls" | tr -d ' ')
awk '{ print "url = \"" $0 "\"\noutput = \"/dev/null\"" }' "$BW/urls" >"$BW/curl.cfg"

flags="-q --allow-private --ignore-robots --delay 0 --per-host 64 --connections 64"
owt-fetch $flags --html-dir "$BW/saved" --log "$BW/log" "$BW/urls" >/dev/null
ls "$BW/saved"/*.gz >"$BW/files"
wget -q -i "$BW/urls" -P "$BW/wget" --warc-file="$BW/site" 2>/dev/null || :
saved=$(wc -l <"$BW/files" | tr -d ' ')
bytes=$(sed 's/.*"bytes":\([0-9]*\).*/\1/' "$BW/log" | awk '{ s += $1 } END { print s }')
# Wall seconds, peak RSS, CPU seconds (user + system), minor page faults.
measure_cpu() {
	out=$1
	shift
	/usr/bin/time -f '%e %M %U %S %R' -o "$BW/.time" "$@"
	awk '{ print $1, $2, $3 + $4, $5 }' "$BW/.time" >>"$out"
}
load=$(cut -d ' ' -f 1 /proc/loadavg)
for i in $(seq "$REPS"); do
	measure_cpu "$BW/crawl" owt-fetch $flags "$BW/urls" >/dev/null
	measure_cpu "$BW/crawlw" owt-fetch $flags --warc-file "$BW/crawl$i" "$BW/urls" >/dev/null
	measure_cpu "$BW/curl" curl -s -Z --parallel-max 64 --compressed -K "$BW/curl.cfg" 2>/dev/null
	measure_cpu "$BW/extract" owt-fetch -q --extract "$BW/files" >/dev/null
	measure_cpu "$BW/warc" owt-fetch -q --extract "$BW/site.warc.gz" >/dev/null
	# One core: CPU time is steadier than wall time on a shared machine.
	measure_cpu "$BW/extract1" taskset -c 0 owt-fetch -q --workers 1 \
	    --extract "$BW/files" >/dev/null
	measure_cpu "$BW/warc1" taskset -c 0 owt-fetch -q --workers 1 \
	    --extract "$BW/site.warc.gz" >/dev/null
done
t_warc=$(median "$BW/warc" 1)
t_crawlw=$(median "$BW/crawlw" 1)
c_crawlw=$(median "$BW/crawlw" 3)
t_crawl=$(median "$BW/crawl" 1)
t_curl=$(median "$BW/curl" 1)
t_ext=$(median "$BW/extract" 1)
c_crawl=$(median "$BW/crawl" 3)
c_ext=$(median "$BW/extract" 3)
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }'; }
echo "pages: $src; $n URLs, $saved saved, $bytes bytes decompressed; $(nproc) cores, load average $load before the runs; median of $REPS"
echo "owt-fetch (fetch + extract, 64 connections): $(rate "$n" "$t_crawl") pages/s, $(mbps "$bytes" "$t_crawl") MB/s ($t_crawl s, RSS $(($(median "$BW/crawl" 2) / 1024)) MB)"
echo "curl --parallel (fetch only, 64):            $(rate "$n" "$t_curl") pages/s, $(mbps "$bytes" "$t_curl") MB/s ($t_curl s)"
echo "owt-fetch --extract (same pages from disk):  $(rate "$saved" "$t_ext") pages/s, $(mbps "$bytes" "$t_ext") MB/s ($t_ext s)"
echo "owt-fetch --extract (wget's WARC of them):  $(rate "$saved" "$t_warc") pages/s ($t_warc s, $(wc -c <"$BW/site.warc.gz" | tr -d ' ') bytes of .warc.gz)"
echo "ratio pages/s WARC / saved files: $(ratio "$t_ext" "$t_warc") (target >= 0.95)"
c_ext1=$(median "$BW/extract1" 3)
c_warc1=$(median "$BW/warc1" 3)
echo "one core (taskset -c 0, --workers 1), CPU seconds: saved files $c_ext1 s ($(median "$BW/extract1" 4) page faults), WARC $c_warc1 s ($(median "$BW/warc1" 4) page faults)"
echo "ratio pages per CPU-second WARC / saved files, one core: $(ratio "$c_ext1" "$c_warc1") (target >= 0.95)"
echo "owt-fetch --warc-file (crawl, archived, libdeflate level 1): $(rate "$n" "$t_crawlw") pages/s ($t_crawlw s, CPU $c_crawlw s, $(wc -c <"$BW/crawl1.warc.gz" | tr -d ' ') bytes of .warc.gz)"
echo "ratio crawl with / without --warc-file: wall $(ratio "$t_crawlw" "$t_crawl") (target <= 1.05), CPU $(ratio "$c_crawlw" "$c_crawl"); the archive's share of the CPU time: $(awk -v a="$c_crawlw" -v b="$c_crawl" 'BEGIN { printf "%.0f%%", (a > 0 ? (a - b) * 100 / a : 0) }') (contrib/bench/owt-fetch-warc.sh: the same, in turn, more times)"
echo "ratio crawl / extract-from-disk time: $(ratio "$t_crawl" "$t_ext") (target <= 1.25)"
echo "ratio crawl / curl time: $(ratio "$t_crawl" "$t_curl")"
echo "CPU time: crawl $c_crawl s = $(rate "$n" "$c_crawl") pages per CPU-second, $(rate "$((n * $(nproc)))" "$c_crawl") pages/s on $(nproc) idle cores; extract $c_ext s = $(rate "$saved" "$c_ext") pages per CPU-second"
echo "ratio crawl / extract-from-disk CPU time: $(ratio "$c_crawl" "$c_ext")"

: >"$BW/wide"
measure "$BW/wide" owt-fetch $flags --connections 256 --per-host 256 "$BW/urls" >/dev/null
read -r t rss <"$BW/wide"
echo "owt-fetch --connections 256: $(rate "$n" "$t") pages/s, peak RSS $((rss / 1024)) MB (target < 300)"
if [ -d "$D/readability/html" ]; then
	extraction_quality
fi
