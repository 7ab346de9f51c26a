#!/bin/sh
# A stage that dies is noticed downstream, without `set -o pipefail`:
# bpe-encode writes the token stream's trailer (owt-tok(5)) only when it
# finishes, so idx-pack publishes nothing after a bad record, a writer
# killed with SIGKILL anywhere, or a stream cut at any byte; bpe-encode -d
# writes what it has of a cut stream and exits 1. Concatenated streams stay
# valid. JSONL cut inside a line is found, at a line's end it is not.
# Datasets get the umask's mode, and the temporaries of a killed
# idx-pack are removed by the next run that writes there (a live run's are
# not).
. "${OWT_SRC:-.}/t/lib.sh"

cd "$T" || exit 3
tok2ids() { perl "$OWT_SRC/t/bpe/tok2ids"; }

# The King James sample eight times: 368 records, about 2 MB.
for i in 1 2 3 4 5 6 7 8; do
	gzip -dc "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz"
done >big.jsonl
bpe-encode -q --workers 2 big.jsonl >full.tok || exit 3
ndocs=$(tok2ids <full.tok | wc -l | tr -d ' ')

# A bad record: bpe-encode stops, writes no trailer; the pipeline's status
# is idx-pack's, and it is 1.
{ head -n 3 big.jsonl; printf '{"text":"cut\n'; tail -n +4 big.jsonl; } >bad.jsonl
run sh -c 'bpe-encode -q bad.jsonl | idx-pack -q -o d'
is "$rc" 1 "bpe-encode < bad.jsonl | idx-pack -o d exits 1"
like err '^bpe-encode: bad.jsonl:4: invalid JSON: ' "bpe-encode names the bad record"
like err '^idx-pack: <stdin>: byte [0-9]+: truncated token stream: no trailer after document 3 \(the writer did not finish\)$' \
    "idx-pack says the writer did not finish"
none_left d "no d.bin, no d.idx, no temporary"
run sh -c 'bpe-encode -qk bad.jsonl | idx-pack -q -o d'
is "$rc" 0 "under -k a skipped record is not a dead writer: idx-pack packs"
run idx-pack --check d
is "$(cat out)" "d: ok: $ndocs sequences, $ndocs documents, $(tok2ids <full.tok | wc -w | tr -d ' ') tokens (uint16)" \
    "every good record is in the dataset"
rm -f d.*

# SIGKILL: bpe-encode reads big.jsonl over and over from a FIFO, so it
# cannot finish, and is killed once it has written a number of bytes
# (seeded; wchar in /proc/PID/io), wherever that is in its output.
# Whatever idx-pack got, it publishes nothing. The first run reads
# big.jsonl once and is not killed: the harness does publish a whole
# stream.
mkfifo in.fifo tok.fifo
# written PID: the bytes PID has written (wchar), or -1 where /proc does not say.
written() {
	awk '$1 == "wchar:" { print $2; n = 1 } END { if (!n) print -1 }' \
	    "/proc/$1/io" 2>/dev/null || echo -1
}
kill_run() {	# bytes (0: no kill)
	bpe-encode -q --workers 2 <in.fifo >tok.fifo 2>/dev/null &
	wpid=$!
	idx-pack -q -o k <tok.fifo 2>kerr &
	rpid=$!
	if [ "$1" -eq 0 ]; then
		cat big.jsonl >in.fifo
	else
		(while cat big.jsonl; do :; done) >in.fifo 2>/dev/null &
		fpid=$!
		i=0
		while [ $i -lt 400 ] && [ "$(written "$wpid")" -lt "$1" ] &&
		    [ "$(written "$wpid")" -ge 0 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		[ "$(written "$wpid")" -ge 0 ] || sleep 1
		kill -KILL "$wpid"
		wait "$fpid"
	fi
	wait "$wpid" 2>/dev/null
	wrc=$?
	wait "$rpid"
	rrc=$?
}
kill_run 0
is "$wrc $rrc" "0 0" "not killed: bpe-encode and idx-pack exit 0"
idx-pack -q -o ref full.tok
same ref.bin k.bin "and the dataset is the whole stream's"
rm -f k.*
size=$(wc -c <full.tok)
for n in $(awk -v n="$size" 'BEGIN { srand(8002); for (i = 0; i < 5; i++) print 1 + int(rand() * n / 3) }'); do
	kill_run "$n"
	is "$wrc $rrc" "137 1" "bpe-encode killed after writing $n bytes or more: idx-pack exits 1"
	none_left k "and publishes nothing"
	like kerr '^idx-pack: <stdin>: byte [0-9]+: (truncated token stream|empty input)' \
	    "and says why: $(sed 's/^[^:]*: [^:]*: //' kerr)"
done

# Every cut: at document boundaries (the hard case: a count may follow)
# and at seeded random bytes, through a pipe and from a file.
tok2ids <full.tok | awk 'BEGIN { o = 16 } { o += 4 + 2 * NF; print o }' >bounds
is "$(tail -n 1 bounds)" "$((size - 32))" "the last document ends where the trailer starts"
awk 'BEGIN { srand(2); for (i = 0; i < 6; i++) print 1 + int(rand() * 360) }' |
    while read -r k; do sed -n "${k}p" bounds; done >cuts
awk -v n="$size" 'BEGIN { srand(3); for (i = 0; i < 6; i++) print int(rand() * n) }' >>cuts
echo $((size - 1)) >>cuts
bad=0
while read -r c; do
	head -c "$c" full.tok >cut.tok
	if cat cut.tok | idx-pack -q -o c 2>/dev/null || ls c.* >/dev/null 2>&1; then
		bad=$((bad + 1))
		echo "# published a stream cut at byte $c (pipe)"
	fi
	if idx-pack -q -o c cut.tok 2>/dev/null || ls c.* >/dev/null 2>&1; then
		bad=$((bad + 1))
		echo "# published a stream cut at byte $c (file)"
	fi
	rm -f c.*
done <cuts
is "$bad" 0 "$(wc -l <cuts | tr -d ' ') cuts, 6 at document boundaries: none is published"

# bpe-encode -d on a cut stream: what it has, then exit 1, as gzip -d.
b10=$(sed -n 10p bounds)
head -c "$b10" full.tok >cut10.tok
run bpe-encode -d cut10.tok
is "$rc" 1 "bpe-encode -d of a stream cut after 10 documents exits 1"
is "$(cat err)" "bpe-encode: cut10.tok: byte $b10: truncated token stream: no trailer after document 10 (the writer did not finish)" \
    "and says where"
bpe-encode -dq full.tok | head -n 10 >want
same want out "after writing the 10 documents"
head -c $((b10 + 7)) full.tok | bpe-encode -dq >got 2>/dev/null
is "$?" 1 "cut inside document 11: exits 1"
same want got "after writing the 10 documents before it"

# Concatenated streams are valid member by member; a cut member is found
# wherever it is.
head -n 100 big.jsonl | bpe-encode -q >a.tok
tail -n +101 big.jsonl | bpe-encode -q >b.tok
run sh -c 'cat a.tok b.tok | idx-pack -q -o ab'
is "$rc" 0 "cat a.tok b.tok | idx-pack exits 0"
same ref.bin ab.bin "and packs the documents of both (.bin)"
same ref.idx ab.idx "and packs the documents of both (.idx)"
run sh -c 'cat a.tok b.tok | bpe-encode -dq'
bpe-encode -dq full.tok >want
same want out "bpe-encode -d reads the concatenation"
head -c "$(sed -n 50p bounds)" a.tok >acut.tok
run sh -c 'cat acut.tok b.tok | idx-pack -q -o abc'
is "$rc" 1 "a cut member followed by a whole one exits 1"
like err 'no trailer after document 50, before the next header' "the cut is named"
none_left abc "and nothing is published"

# JSONL between programs (owt-jsonl(5)): a cut inside a line is found, a
# cut at the end of a line or just before its newline is not.
printf '{"text":"a"}\n{"te' >cutline.jsonl
run bpe-encode -q cutline.jsonl
is "$rc" 1 "JSONL cut inside a line exits 1"
like err "^bpe-encode: cutline.jsonl:2: invalid JSON: parse error: premature EOF" \
    "the cut line is named"
printf '{"text":"a"}\n{"text":"b"}' >nonl.jsonl
run bpe-encode -q nonl.jsonl
is "$rc" 0 "JSONL whose last line lacks its newline is read"
is "$(tok2ids <out | tr '\n' ' ')" "64 65 " "whole, with both records"

# Modes: what open(O_CREAT, 0666) gives under the umask, for a pack and
# a merge.
for m in 022 002 077; do
	(umask "$m" && idx-pack -q -o m$m a.tok && idx-pack -q -o mm$m --merge m$m)
	echo "$(stat -c %a m$m.bin m$m.idx mm$m.bin mm$m.idx | tr '\n' ' ')" >got
	case $m in 022) want=644 ;; 002) want=664 ;; 077) want=600 ;; esac
	is "$(cat got)" "$want $want $want $want " "under umask $m datasets are $want"
done

# A killed idx-pack leaves its temporaries; the next run that writes the
# same prefix removes them. A live run's temporaries are not removed.
mkfifo p.fifo
# wait_tmp PREFIX: until PREFIX.idx.tmp* exists (a live writer has made
# both its temporaries, the .bin's first).
wait_tmp() {
	i=0
	while [ $i -lt 300 ] && ! ls "$1".idx.tmp* >/dev/null 2>&1; do
		sleep 0.1
		i=$((i + 1))
	done
}
idx-pack -q -o stale <p.fifo &
ipid=$!
exec 4>p.fifo
head -c 100000 full.tok >&4
wait_tmp stale
kill -KILL "$ipid"
wait "$ipid" 2>/dev/null
exec 4>&-
ls stale.* | sed 's/tmp.*/tmp/' | tr '\n' ' ' >got
is "$(cat got)" "stale.bin.tmp stale.idx.tmp " "idx-pack killed with SIGKILL leaves its temporaries"
run idx-pack -q -o stale a.tok
is "$rc" 0 "the next idx-pack -o stale exits 0"
ls stale.* | tr '\n' ' ' >got
is "$(cat got)" "stale.bin stale.idx " "and removed them"

idx-pack -q -f -o live <p.fifo &
lpid=$!
exec 4>p.fifo
head -c 100000 full.tok >&4
wait_tmp live
run idx-pack -q -f -o live a.tok
is "$rc" 0 "another idx-pack writes the prefix a live one is writing"
is "$(ls live.*.tmp* | wc -l | tr -d ' ')" 2 "and leaves the live one's temporaries"
tail -c +100001 full.tok >&4
exec 4>&-
wait "$lpid"
is "$?" 0 "the live one finishes"
same ref.bin live.bin "and publishes its dataset"
done_testing
