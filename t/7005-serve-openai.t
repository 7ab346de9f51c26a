#!/bin/sh
# gpt-sample --listen against the official OpenAI Node client (npm's
# openai, pinned by t/serve-openai/package-lock.json and installed into
# the scratch folder with npm ci): models.list, completions answered and
# streamed (the streamed text is the answer's, stop strings included),
# several prompts with n, logprobs with echo, token-id prompts, and
# errors as APIError. Skipped without node and npm or the registry.
. "${OWT_SRC:-.}/t/lib.sh"
. "$OWT_SRC/t/serve.sh"

cd "$T" || exit 3
npm_pinned serve-openai openai || skip_all "$npm_why"
mkdir js && ln -s "$OWT_BUILD/t/npm-serve-openai/node_modules" js/ &&
    cp "$OWT_SRC/t/serve-openai/client.mjs" js/ || exit 3
serve_model 256
serve_start oa --parallel 4

run sh -c 'cd js && exec node client.mjs "$1"' sh "$url"
is "$rc" 0 "the client ran"
[ "$rc" = 0 ] || sed 's/^/# /' err
[ -f js/results ] || : >js/results
while IFS='|' read -r good desc detail; do
	if [ "$good" = 1 ]; then
		ok "$desc"
	else
		not_ok "$desc"
		echo "# $detail"
	fi
done <js/results
serve_stop
is "$serve_rc" 0 "SIGTERM: exit 0"
done_testing
