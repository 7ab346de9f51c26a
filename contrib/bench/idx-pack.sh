# idx-pack: packing throughput against cat writing the same bytes to the
# same disk, side by side, on synthetic GPT-2 token streams of 100 MB and
# 1 GB; with the peak RSS of each, to show memory does not follow the input.
# idx-pack syncs its dataset before renaming it into place, so the
# reference is `cat in > out && sync out`; plain cat (page cache only) is
# printed too. GNU cat copies inside the kernel (copy_file_range), which no
# program that transforms its input can; `dd bs=1M conv=fsync` moves the
# same bytes through user space, the floor for idx-pack's own I/O path.
: "${REPS:=5}"
. "$OWT_SRC/contrib/bench/lib.sh"
. "$OWT_SRC/t/tok.sh"

# 4000 documents of 200..2000 random ids (about 8.8 MB), repeated.
awk 'BEGIN { srand(1); for (d = 0; d < 4000; d++) { k = 200 + int(rand() * 1800); s = ""
	for (i = 0; i < k; i++) s = s " " int(rand() * 50257); print s } }' |
    mktok 50257 50256 >"$BW/chunk.tok"
# The chunk's documents (no header, no trailer) and its trailer's counts.
size=$(wc -c <"$BW/chunk.tok")
chunk=$((size - 16 - 32))
head -c $((size - 32)) "$BW/chunk.tok" | tail -c +17 >"$BW/docs"
set -- $(od -An -tu8 -j $((size - 24)) -N 24 "$BW/chunk.tok")
cdocs=$1 ctoks=$2 csum=$3
in=$BW/in.tok
echo "median of $REPS, outputs removed and the disk synced before each run; load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
for mb in 100 1000; do
	n=$(((mb * 1000000 + chunk / 2) / chunk))
	{ head -c 16 "$BW/chunk.tok"; i=0; while [ $i -lt $n ]; do
		cat "$BW/docs"; i=$((i + 1)); done
	    perl -e 'print "OWTEND\0\0", pack "Q<3", @ARGV' \
		$((n * cdocs)) $((n * ctoks)) $((n * csum)); } >"$in"
	bytes=$(wc -c <"$in")
	for r in $(seq "$REPS"); do
		rm -f "$BW"/ds.* "$BW/cat.out"; sync
		measure "$BW/pack$mb" idx-pack -q -o "$BW/ds" "$in"
		rm -f "$BW"/ds.* "$BW/cat.out"; sync
		measure "$BW/sync$mb" sh -c 'cat "$1" >"$2" && sync "$2"' sh "$in" "$BW/cat.out"
		rm -f "$BW/cat.out"; sync
		measure "$BW/cat$mb" sh -c 'cat "$1" >"$2"' sh "$in" "$BW/cat.out"
		rm -f "$BW/cat.out"; sync
		measure "$BW/dd$mb" dd if="$in" of="$BW/cat.out" bs=1M conv=fsync status=none
	done
	idx-pack -q -o "$BW/ds" "$in"
	out=$(($(wc -c <"$BW/ds.bin") + $(wc -c <"$BW/ds.idx")))
	t_pack=$(median "$BW/pack$mb" 1)
	t_sync=$(median "$BW/sync$mb" 1)
	t_cat=$(median "$BW/cat$mb" 1)
	t_dd=$(median "$BW/dd$mb" 1)
	echo "input $mb MB: $bytes bytes, $((n * 4000)) documents; idx-pack writes $out bytes, cat $bytes"
	echo "  idx-pack:      $(mbps "$bytes" "$t_pack") MB/s ($t_pack s), peak RSS $(median "$BW/pack$mb" 2) KB"
	echo "  cat + sync:    $(mbps "$bytes" "$t_sync") MB/s ($t_sync s)"
	echo "  cat:           $(mbps "$bytes" "$t_cat") MB/s ($t_cat s)"
	echo "  dd + fsync:    $(mbps "$bytes" "$t_dd") MB/s ($t_dd s)"
	echo "  ratio idx-pack / (cat + sync): $(ratio "$t_sync" "$t_pack")x; / cat: $(ratio "$t_cat" "$t_pack")x; / (dd + fsync): $(ratio "$t_dd" "$t_pack")x"
	rm -f "$BW"/ds.* "$BW/cat.out" "$in"
done
