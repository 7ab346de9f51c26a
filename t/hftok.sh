# hftok.sh - npm tokenizers (Hugging Face's), the reference of the
# HuggingFaceTokenizer tests, and npm tiktoken beside it (sourced after
# t/lib.sh)
#
# hftok_npm          install the locked packages (t/hftok/) once into
#                    $OWT_BUILD/t/npm-hftok; status 1 and the reason in
#                    $hftok_why without npm or the registry
# hftok_make KIND DIR [ARGS]  DIR/tokenizer.json and tokenizer_config.json
#                    (contrib/oracle/hf-tokenizer-json.js)
# hftok_check DIR ENCODING [BASE]  whether tokenizers' ids with DIR's
#                    tokenizer.json are tiktoken's ENCODING's on a few texts
# hftok_ref DIR FILE  tokenizers' ids of each record's text, one document a
#                    line (none for no ids), on stdout
# hftok_decode DIR FILE  tokenizers' decoding of each line of ids, as JSONL

hftok_dir=$OWT_BUILD/t/npm-hftok

hftok_npm() {
	npm_pinned hftok tokenizers || {
		hftok_why=$npm_why
		return 1
	}
	# The native library must load here (linux-x64-gnu is in the package).
	NODE_PATH=$hftok_dir/node_modules node -e 'require("tokenizers")' \
	    2>>"$T/npm.log" || {
		hftok_why="npm tokenizers does not load on this machine"
		return 1
	}
}

hftok_make() {
	NODE_PATH=$hftok_dir/node_modules node \
	    "$OWT_SRC/contrib/oracle/hf-tokenizer-json.js" "$@"
}

hftok_check() {
	NODE_PATH=$hftok_dir/node_modules node \
	    "$OWT_SRC/contrib/oracle/hf-tokenizer-json.js" check "$@"
}

hftok_ref() {
	NODE_PATH=$hftok_dir/node_modules node "$OWT_SRC/t/hftok/ref.js" "$1" "$2"
}

hftok_decode() {
	NODE_PATH=$hftok_dir/node_modules node "$OWT_SRC/t/hftok/ref.js" --decode "$1" "$2"
}
