#!/usr/bin/env node
// serve-load.js - the serving benchmark's load client (contrib/bench/serve.sh)
//
// usage: node serve-load.js URL CONCURRENCY REQUESTS PROMPT_TOKENS MAX_TOKENS
//
// Sends REQUESTS streamed OpenAI completions to URL/v1/completions,
// CONCURRENCY at a time over kept-alive connections: request i's prompt
// is PROMPT_TOKENS token ids made from i (the same for every server),
// greedy (temperature 0), MAX_TOKENS generated (ignore_eos), usage at the
// end of the stream. It reads each stream's server-sent events as they
// come: the time to first token is from sending to the first event with
// text, the inter-token latencies the gaps between such events (a
// server that holds back half a UTF-8 character sends fewer events, each
// gap then spans its tokens). Prints one line of JSON: requests, seconds,
// requests/s, generated tokens/s (the usage's completion tokens, else the
// events), ttft and itl p50 and p99 in milliseconds, events and tokens.
"use strict";
const http = require("http");

const [url, conc, nreq, plen, maxTok] = process.argv.slice(2);
if (!maxTok) {
	process.stderr.write("usage: node serve-load.js URL CONCURRENCY REQUESTS PROMPT_TOKENS MAX_TOKENS\n");
	process.exit(2);
}
const C = +conc, N = +nreq, P = +plen, M = +maxTok;
const u = new URL("/v1/completions", url);
const agent = new http.Agent({ keepAlive: true, maxSockets: C });

function prompt(i) {
	const ids = [];
	for (let j = 0; j < P; j++)
		ids.push((i * 7919 + j * 104729 + 11) % 50000);
	return ids;
}

// One streamed request: resolves to { ttft, gaps, events, tokens } (seconds).
function one(i) {
	const body = JSON.stringify({ prompt: prompt(i), max_tokens: M, temperature: 0,
		stream: true, ignore_eos: true, stream_options: { include_usage: true } });
	return new Promise((resolve, reject) => {
		const t0 = process.hrtime.bigint();
		let last = null, ttft = null, buf = "", events = 0, tokens = 0;
		const gaps = [];
		const req = http.request(u, { method: "POST", agent, headers: {
			"Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
			if (res.statusCode !== 200) {
				reject(new Error(`request ${i}: HTTP ${res.statusCode}`));
				res.resume();
				return;
			}
			res.setEncoding("utf8");
			res.on("data", (d) => {
				const now = process.hrtime.bigint();
				buf += d;
				let k;
				while ((k = buf.indexOf("\n\n")) >= 0) {
					const ev = buf.slice(0, k);
					buf = buf.slice(k + 2);
					if (!ev.startsWith("data: ") || ev === "data: [DONE]")
						continue;
					const o = JSON.parse(ev.slice(6));
					if (o.usage)
						tokens = o.usage.completion_tokens;
					if (!o.choices || o.choices.length === 0 ||
					    o.choices[0].text === "")
						continue;	// usage, or an end without text
					events++;
					if (ttft === null)
						ttft = Number(now - t0) / 1e9;
					else
						gaps.push(Number(now - last) / 1e9);
					last = now;
				}
			});
			res.on("end", () => resolve({ ttft, gaps, events, tokens: tokens || events }));
			res.on("error", reject);
		});
		req.on("error", reject);
		req.end(body);
	});
}

function pct(a, p) {
	if (a.length === 0)
		return 0;
	const s = a.slice().sort((x, y) => x - y);
	return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)];
}

async function main() {
	await one(N + 1);	// warm-up: not counted
	const res = [];
	let next = 0;
	const t0 = process.hrtime.bigint();
	async function worker() {
		while (next < N) {
			const i = next++;
			res.push(await one(i));
		}
	}
	await Promise.all(Array.from({ length: C }, worker));
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	const ttft = res.map((r) => r.ttft), gaps = [].concat(...res.map((r) => r.gaps));
	const tokens = res.reduce((s, r) => s + r.tokens, 0);
	const ms = (x) => +(x * 1e3).toFixed(1);
	console.log(JSON.stringify({
		concurrency: C, requests: N, seconds: +secs.toFixed(2),
		req_per_s: +(N / secs).toFixed(3), gen_tok_per_s: +(tokens / secs).toFixed(1),
		ttft_p50_ms: ms(pct(ttft, 50)), ttft_p99_ms: ms(pct(ttft, 99)),
		itl_p50_ms: ms(pct(gaps, 50)), itl_p99_ms: ms(pct(gaps, 99)),
		events: res.reduce((s, r) => s + r.events, 0), tokens,
	}));
	agent.destroy();
}

main().catch((e) => {
	process.stderr.write(`serve-load.js: ${e.message}\n`);
	process.exit(1);
});
