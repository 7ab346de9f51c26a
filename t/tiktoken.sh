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
	npm_pinned tiktoken tiktoken || {
		tiktoken_why=$npm_why
		return 1
	}
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
