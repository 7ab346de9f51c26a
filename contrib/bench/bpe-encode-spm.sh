# bpe-encode's SentencePiece types against Debian's spm_encode, the same
# library, side by side: the CPU time (user + system) and peak RSS of the
# whole bpe-encode process (--workers 1: start-up, model load, JSON
# parsing, the library's encoding, the token stream) against spm_encode's
# on the same texts, one a line (the lines of ../shared's 5 MB
# multilingual sample, which are JSONL records for bpe-encode), with a BPE
# and a unigram model of 2000 pieces that spm_train makes from 200 kB of
# them; median of REPS alternating runs. The ids are the same (t/4007).
. "$OWT_SRC/contrib/bench/lib.sh"

S=$OWT_SHARED/data/corpus-sample.jsonl
if [ ! -f "$S" ] || ! command -v spm_encode >/dev/null; then
	echo "skipped: no ../shared sample or no spm_encode"
	exit 0
fi
perl -CO -MJSON::PP -ne 'for (split /\n/, JSON::PP->new->utf8->decode($_)->{text}) {
	print "$_\n" if /\S/ }' "$S" >"$BW/lines.txt"
perl -CSD -MJSON::PP -ne 'BEGIN { $j = JSON::PP->new->canonical }
	chomp; print $j->encode({ text => $_ }), "\n"' "$BW/lines.txt" >"$BW/lines.jsonl"
head -c 200000 "$BW/lines.txt" | sed '$d' >"$BW/train.txt"
for m in bpe unigram; do
	spm_train --input="$BW/train.txt" --model_prefix="$BW/$m" --vocab_size=2000 \
	    --model_type=$m --character_coverage=0.995 --random_seed=1 \
	    --num_threads=1 --minloglevel=2 >/dev/null 2>&1
done
cpu() {	# OUT CMD...: append "user+system_seconds maxrss_kb"
	out=$1
	shift
	cputime -o "$BW/.time" "$@"
	awk '{ printf "%.4f %d\n", $3 + $4, $2 }' "$BW/.time" >>"$out"
}
bytes=$(wc -c <"$BW/lines.txt")
echo "$(wc -l <"$BW/lines.txt") lines, $bytes bytes; median of $REPS; load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
for m in bpe unigram; do
	for r in $(seq "$REPS"); do
		cpu "$BW/ref.$m" spm_encode --model="$BW/$m.model" \
		    --output_format=id <"$BW/lines.txt" >/dev/null
		cpu "$BW/owt.$m" bpe-encode -q --workers 1 \
		    --tokenizer-type GPTSentencePieceTokenizer \
		    --tokenizer-model "$BW/$m.model" "$BW/lines.jsonl" >/dev/null
	done
	o=$(median "$BW/owt.$m" 1) s=$(median "$BW/ref.$m" 1)
	printf '%-8s bpe-encode %5.2f s CPU, %6d KB; spm_encode %5.2f s, %6d KB; spm_encode/bpe-encode %s (%s MB/s)\n' \
	    $m "$o" "$(median "$BW/owt.$m" 2)" "$s" "$(median "$BW/ref.$m" 2)" \
	    "$(ratio "$s" "$o")" "$(mbps "$bytes" "$o")"
done
