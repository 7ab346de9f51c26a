# serve.sh - gpt-sample --listen for a test: . "$OWT_SRC/t/serve.sh" after t/lib.sh
#
# serve_model [POSITIONS [HIDDEN [DIR]]]
#                          train a tiny GPT-2 into DIR ($T/ck) with
#                          POSITIONS (64) and HIDDEN (64), briefly: the
#                          tests compare answers, not their quality
# serve_start NAME [ARGS]  gpt-sample --load $T/ck (or $serve_ck) --listen 0 ARGS in the
#                          background, its stderr in $T/NAME.log; waits
#                          until it is ready and sets $url
#                          (http://127.0.0.1:PORT) and $serve_pid
# serve_stop               SIGTERM, and its exit status in $serve_rc
# A server still running is killed when the test exits.

serve_pid=
trap '[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null; rm -rf "$T"' EXIT

serve_model() {
	{ [ -f "$T/kjv.idx" ] || { bpe-encode --append-eod -q \
	    "$OWT_SRC/contrib/demo/data/kjv.jsonl.gz" >"$T/kjv.tok" &&
	    idx-pack -q -o "$T/kjv" "$T/kjv.tok"; }; } &&
	    gpt-train --data-path "$T/kjv" --num-layers 2 --hidden-size "${2:-64}" \
	    --num-attention-heads 4 --seq-length 32 \
	    --max-position-embeddings "${1:-64}" --micro-batch-size 8 \
	    --workers 1 --train-iters 10 --lr 1e-2 --lr-warmup-iters 2 \
	    --eval-iters 0 --split 100,0,0 --save "${3:-$T/ck}" -q ||
	    { echo "Bail out! could not train the test model"; exit 1; }
}

serve_start() {
	_log=$T/$1.log
	shift
	gpt-sample --load "${serve_ck:-$T/ck}" --workers 1 --listen 0 "$@" 2>"$_log" &
	serve_pid=$!
	await "$_log" "ready as|: error|cannot" 60
	grep -q 'ready as' "$_log" ||
	    { echo "Bail out! gpt-sample --listen did not start"; cat "$_log"; exit 1; }
	url=http://$(sed -n 's/.*listening on http:\/\/\([^ ]*\)$/\1/p' "$_log")
}

serve_stop() {
	kill -TERM "$serve_pid"
	wait "$serve_pid"
	serve_rc=$?
	serve_pid=
}
