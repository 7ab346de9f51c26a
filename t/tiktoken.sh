# tiktoken.sh - npm tiktoken, the reference of the TikTokenizer tests
# (sourced after t/lib.sh)
#
# tiktoken_npm        install the locked npm tiktoken (t/tiktoken/) once
#                     into $OWT_BUILD/t/npm-tiktoken; status 1 and the
#                     reason in $tiktoken_why without npm or the registry
# tiktoken_ranks NAME $T/NAME.tiktoken, OpenAI's rank file, from the ranks
#                     npm tiktoken ships (contrib/oracle/tiktoken-ranks.js)
# tiktoken_ref NAME FILE  the ids of encode_ordinary of each record's text,
#                     one document a line (none for no ids), on stdout
# tiktoken_same_text A B  whether the records' texts are the same

tiktoken_dir=$OWT_BUILD/t/npm-tiktoken

tiktoken_npm() {
	tiktoken_why=
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
		tiktoken_why="no node or npm"
		return 1
	}
	cmp -s "$OWT_SRC/t/tiktoken/package-lock.json" \
	    "$tiktoken_dir/package-lock.json" &&
	    [ -d "$tiktoken_dir/node_modules/tiktoken" ] && return 0
	rm -rf "$tiktoken_dir.$$" &&
	mkdir -p "$tiktoken_dir.$$" &&
	cp "$OWT_SRC/t/tiktoken/package.json" "$OWT_SRC/t/tiktoken/package-lock.json" \
	    "$tiktoken_dir.$$/" &&
	(cd "$tiktoken_dir.$$" && npm ci --no-audit --no-fund --loglevel=error) \
	    >"$T/npm.log" 2>&1 || {
		rm -rf "$tiktoken_dir.$$"
		tiktoken_why="npm could not install tiktoken (no registry?)"
		return 1
	}
	rm -rf "$tiktoken_dir"
	mv "$tiktoken_dir.$$" "$tiktoken_dir" 2>/dev/null || rm -rf "$tiktoken_dir.$$"
}

tiktoken_ranks() {
	NODE_PATH=$tiktoken_dir/node_modules node \
	    "$OWT_SRC/contrib/oracle/tiktoken-ranks.js" "$1" "$T"
}

tiktoken_ref() {
	NODE_PATH=$tiktoken_dir/node_modules node "$OWT_SRC/t/tiktoken/ref.js" "$1" "$2"
}

tiktoken_same_text() {
	node "$OWT_SRC/t/tiktoken/ref.js" --text "$1" "$2"
}
