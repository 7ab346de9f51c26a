# owt-dedup: end to end (default stages) in MB/s per core and with every
# worker, linear in the input size; the lang stage against Debian's
# python3-langdetect (seeded; what Megatron-LM's cleanup_dataset.py calls);
# the near stage against a plain Python MinHash pass (contrib/bench/
# minhash.py: numpy, as datasketch does it). Single-core speeds are bytes
# per CPU second (user + system) of a run pinned to one core, which other
# jobs on a shared machine disturb less than wall time; the run with every
# worker is wall time.
. "$OWT_SRC/contrib/bench/lib.sh"

src=$OWT_SHARED/data/corpus-sample.jsonl
if [ ! -f "$src" ]; then
	echo "owt-dedup bench: needs $src (../shared); skipped"
	exit 0
fi
py=/usr/bin/python3
ncpu=$(nproc)

# rate BYTES SECONDS: MB/s, three significant digits.
rate() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.3g", (s > 0 ? b / 1e6 / s : 0) }'
}

# cpu OUT CMD...: append "cpu_seconds maxrss_kb" of CMD, pinned to core 0.
cpu() {
	o=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$BW/.cpu" taskset -c 0 "$@"
	awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$BW/.cpu" >>"$o"
}

# copies8 FILE: eight copies of FILE, their texts made distinct (a copy
# number first), so that the exact stage does not shortcut the work.
copies8() {
	for i in 1 2 3 4 5 6 7 8; do
		sed "s/\"text\": \"/\"text\": \"copy $i. /" "$1"
	done
}

copies8 "$src" >"$BW/in8.jsonl"
bytes=$(wc -c <"$BW/in8.jsonl")
for i in $(seq "$REPS"); do
	cpu "$BW/one" owt-dedup -q --workers 1 "$BW/in8.jsonl" >/dev/null
	measure "$BW/all" owt-dedup -q "$BW/in8.jsonl" >/dev/null
done
t1=$(median "$BW/one" 1)
ta=$(median "$BW/all" 1)
rss=$(median "$BW/one" 2)
echo "input: shared/data/corpus-sample.jsonl x 8, texts made distinct, $bytes bytes; median of $REPS"
echo "end to end, per core (1 worker, CPU time): $(mbps "$bytes" "$t1") MB/s ($t1 s, peak RSS $((rss / 1024)) MB)"
echo "end to end, $ncpu workers, wall time:         $(mbps "$bytes" "$ta") MB/s ($ta s)"
owt-dedup --workers 1 "$BW/in8.jsonl" 2>&1 >/dev/null | sed 's/^/  /'
# English only, as OpenWebText is: what the lang stage keeps of the sample.
owt-dedup -q --stages lang "$src" >"$BW/en.jsonl"
copies8 "$BW/en.jsonl" >"$BW/en8.jsonl"
eb=$(wc -c <"$BW/en8.jsonl")
for i in $(seq "$REPS"); do
	cpu "$BW/en" owt-dedup -q --workers 1 "$BW/en8.jsonl" >/dev/null
done
echo "end to end, per core, its English documents only x 8 ($eb bytes): $(mbps "$eb" "$(median "$BW/en" 1)") MB/s"
for part in 4 2; do
	head -c $((bytes / part)) "$BW/in8.jsonl" | sed '$d' >"$BW/part.jsonl"
	pb=$(wc -c <"$BW/part.jsonl")
	: >"$BW/p"
	for i in $(seq "$REPS"); do
		cpu "$BW/p" owt-dedup -q --workers 1 "$BW/part.jsonl" >/dev/null
	done
	echo "end to end, per core, 1/$part of the input ($pb bytes): $(mbps "$pb" "$(median "$BW/p" 1)") MB/s"
done

# Language: on langid-dev.jsonl (21 languages, 20 to 2000 characters, the
# set the targets are measured on), then on the first 1 MB of the sample
# (long documents). Both detectors read the same file, each as a fresh
# process, so start-up (CLD2's tables; Python and langdetect's profiles)
# counts alike on both sides.
cat >"$BW/ld.py" <<'PY'
import json, sys
from langdetect import DetectorFactory, detect
DetectorFactory.seed = 0
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for line in f:
        try:
            lang = detect(json.loads(line)["text"])
        except Exception:
            lang = "un"
        if lang == "en":
            out.write(line)
PY
dev=$OWT_SHARED/data/langid-dev.jsonl
head -c 1000000 "$src" | sed '$d' >"$BW/one.jsonl"
for set in dev one; do
	if [ $set = dev ]; then
		in=$dev what="langid-dev.jsonl"
	else
		in=$BW/one.jsonl what="corpus-sample, first 1 MB (long texts)"
	fi
	: >"$BW/lo"
	: >"$BW/lp"
	for i in $(seq "$REPS"); do
		cpu "$BW/lo" owt-dedup -q --workers 1 --stages lang "$in" >/dev/null
		cpu "$BW/lp" "$py" "$BW/ld.py" "$in" "$BW/lp.out"
	done
	so=$(rate "$(wc -c <"$in")" "$(median "$BW/lo" 1)")
	sp=$(rate "$(wc -c <"$in")" "$(median "$BW/lp" 1)")
	echo "lang stage, per core, $what ($(wc -c <"$in") bytes, start-up included): owt-dedup (CLD2) $so MB/s, python3-langdetect $sp MB/s; ratio $(ratio "$so" "$sp")x"
done
owt-dedup -q --workers 1 --stages lang "$BW/one.jsonl" >"$BW/lo.out"
echo "  kept as English of the first $(wc -l <"$BW/one.jsonl") documents of the sample: owt-dedup $(wc -l <"$BW/lo.out"), langdetect $(wc -l <"$BW/lp.out")"

# Language ID accuracy by text length (issue 20), against langdetect: on
# langid-dev.jsonl, and on the held-out set that contrib/bench/
# langid-heldout.py builds from this machine's Debian translations and
# manual pages (never tuned on; HELDOUT names a copy built before, else it
# is built here, a few minutes; it depends on the packages installed, so
# its checksum is printed). Its speed: owt-dedup and langdetect on it
# as above, each a fresh process.
held=${HELDOUT:-}
if [ -z "$held" ]; then
	held=$BW/heldout.jsonl
	"$py" "$OWT_SRC/contrib/bench/langid-heldout.py" --dev "$dev" "$held" 2>/dev/null
fi
# The set is built from the packages installed: say which one was measured.
echo "held-out set: $(wc -l <"$held" | tr -d ' ') texts, sha256 $(sha256sum <"$held" | cut -c 1-16)"
for set in dev held; do
	if [ $set = dev ]; then
		in=$dev what=langid-dev
	else
		in=$held what="held-out (langid-heldout.py)"
	fi
	owt-dedup -q --workers 1 --stages lang --report "$BW/lr.jsonl" "$in" >/dev/null
	"$py" "$OWT_SRC/contrib/bench/langid-score.py" "$in" "$BW/lr.jsonl" "$what"
done
: >"$BW/lo"
: >"$BW/lp"
for i in $(seq "$REPS"); do
	cpu "$BW/lo" owt-dedup -q --workers 1 --stages lang "$held" >/dev/null
	cpu "$BW/lp" "$py" "$BW/ld.py" "$held" "$BW/lp.out"
done
so=$(rate "$(wc -c <"$held")" "$(median "$BW/lo" 1)")
sp=$(rate "$(wc -c <"$held")" "$(median "$BW/lp" 1)")
echo "lang stage, per core, held-out set ($(wc -c <"$held") bytes, start-up included): owt-dedup (CLD2) $so MB/s, python3-langdetect $sp MB/s; ratio $(ratio "$so" "$sp")x (target >= 100)"

# Near duplicates: the sample and a copy of it with a word added to each
# text (every document a near duplicate of one before it).
{ cat "$src"; sed "s/\"text\": \"/\"text\": \"A copy. /" "$src"; } >"$BW/near.jsonl"
nb=$(wc -c <"$BW/near.jsonl")
for i in $(seq "$REPS"); do
	cpu "$BW/no" owt-dedup -q --workers 1 --stages near "$BW/near.jsonl" \
	    >"$BW/no.out"
	cpu "$BW/np" "$py" "$OWT_SRC/contrib/bench/minhash.py" "$BW/near.jsonl" \
	    "$BW/np.out"
done
so=$(rate "$nb" "$(median "$BW/no" 1)")
sp=$(rate "$nb" "$(median "$BW/np" 1)")
echo "near stage, per core, $nb bytes: owt-dedup $so MB/s, Python MinHash $sp MB/s; ratio $(ratio "$so" "$sp")x"
echo "  documents kept: owt-dedup $(wc -l <"$BW/no.out"), Python $(wc -l <"$BW/np.out") of $(wc -l <"$BW/near.jsonl")"
