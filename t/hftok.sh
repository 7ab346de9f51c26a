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
	hftok_why=
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
		hftok_why="no node or npm"
		return 1
	}
	cmp -s "$OWT_SRC/t/hftok/package-lock.json" "$hftok_dir/package-lock.json" &&
	    [ -d "$hftok_dir/node_modules/tokenizers" ] && return 0
	rm -rf "$hftok_dir.$$" &&
	mkdir -p "$hftok_dir.$$" &&
	cp "$OWT_SRC/t/hftok/package.json" "$OWT_SRC/t/hftok/package-lock.json" \
	    "$hftok_dir.$$/" &&
	(cd "$hftok_dir.$$" && npm ci --no-audit --no-fund --loglevel=error) \
	    >"$T/npm.log" 2>&1 || {
		rm -rf "$hftok_dir.$$"
		hftok_why="npm could not install tokenizers (no registry?)"
		return 1
	}
	rm -rf "$hftok_dir"
	mv "$hftok_dir.$$" "$hftok_dir" 2>/dev/null || rm -rf "$hftok_dir.$$"
	# The native library must load here (linux-x64-gnu is in the package).
	NODE_PATH=$hftok_dir/node_modules node -e 'require("tokenizers")' 2>>"$T/npm.log" || {
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
