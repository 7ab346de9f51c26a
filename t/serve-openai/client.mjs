// client.mjs BASE - t/7005: the official OpenAI Node client against
// gpt-sample --listen at BASE (http://127.0.0.1:PORT); one line a check in
// ./results: "1|what" or "0|what|detail".
import OpenAI from 'openai';
import { appendFileSync } from 'node:fs';

const base = process.argv[2];
const client = new OpenAI({ baseURL: base + '/v1', apiKey: 'unused',
    maxRetries: 0, timeout: 60000 });

function check(good, what, detail) {
	appendFileSync('results', `${good ? 1 : 0}|${what}|` +
	    JSON.stringify(detail ?? '').slice(0, 300) + '\n');
}

async function streamed(req) {
	const s = await client.completions.create({ ...req, stream: true,
	    stream_options: { include_usage: true } });
	const text = {}, finish = {};
	let usage = null, chunks = 0;
	for await (const c of s) {
		chunks++;
		for (const ch of c.choices) {
			text[ch.index] = (text[ch.index] ?? '') + ch.text;
			if (ch.finish_reason)
				finish[ch.index] = ch.finish_reason;
		}
		if (c.usage)
			usage = c.usage;
	}
	return { text, finish, usage, chunks };
}

const models = await client.models.list();
const ids = models.data.map((m) => m.id);
check(ids.length === 1 && ids[0] === 'ck', 'models.list: the one model, named ck', ids);

const req = { model: 'ck', prompt: 'And the LORD said unto', max_tokens: 24,
    seed: 11, temperature: 1 };
const plain = await client.completions.create(req);
const p = plain.choices[0];
check(plain.object === 'text_completion' && p.finish_reason === 'length' &&
    p.text.length > 0, 'completions.create: text and finish_reason', plain);
check(plain.usage.prompt_tokens === 5 && plain.usage.completion_tokens === 24 &&
    plain.usage.total_tokens === 29, 'usage counts the tokens', plain.usage);

const s = await streamed(req);
check(s.text[0] === p.text, 'streamed text equals the unstreamed text', [s.text[0], p.text]);
check(s.chunks > 2 && s.finish[0] === 'length', 'a stream of chunks, finish_reason last', s);
check(s.usage && s.usage.completion_tokens === 24, 'stream_options.include_usage: usage at the end', s.usage);

// A stop string from the middle of the text: cut there, streamed or not.
const stop = p.text.slice(7, 10);
const cut = p.text.slice(0, p.text.indexOf(stop));
const sp = await client.completions.create({ ...req, stop: [stop, 'zzzz'] });
check(sp.choices[0].text === cut && sp.choices[0].finish_reason === 'stop',
    'stop: the text cut before it, finish_reason stop', [sp.choices[0], stop, cut]);
const ss = await streamed({ ...req, stop: [stop, 'zzzz'] });
check(ss.text[0] === cut && ss.finish[0] === 'stop',
    'stop in a stream: the same text, held back until it cannot be a stop', [ss.text[0], cut]);

// Several prompts and n, streamed and not.
const many = { model: 'ck', prompt: ['In the beginning', 'And David', 'The'],
    n: 2, max_tokens: 12, seed: 3 };
const m = await client.completions.create(many);
const ms = await streamed(many);
check(m.choices.length === 6 && m.choices.every((c, i) => c.index === i),
    'three prompts, n 2: six choices in order', m.choices.map((c) => c.index));
check(m.choices.every((c) => ms.text[c.index] === c.text),
    'each streamed choice equals its unstreamed text', [m.choices.map((c) => c.text), ms.text]);
check(new Set(m.choices.map((c) => c.text)).size === 6,
    'the n completions of a prompt differ', m.choices.map((c) => c.text));

const lp = await client.completions.create({ ...req, max_tokens: 5, logprobs: 2, echo: true });
const l = lp.choices[0].logprobs;
check(l.tokens.length === 10 && l.token_logprobs[0] === null &&
    l.token_logprobs.slice(1).every((x) => x <= 0) &&
    l.top_logprobs[5] && Object.keys(l.top_logprobs[5]).length === 2 &&
    lp.choices[0].text.startsWith('And the LORD said unto'),
    'logprobs 2 with echo: tokens, log-probabilities, top 2, the prompt first', l);

const ids2 = await client.completions.create({ model: 'ck', prompt: [464, 3290],
    max_tokens: 4, seed: 1 });
check(ids2.usage.prompt_tokens === 2, 'a prompt of token ids', ids2.usage);

try {
	await client.completions.create({ ...req, max_tokens: 100000 });
	check(false, 'beyond the context: an APIError 400', 'no error');
} catch (e) {
	check(e instanceof OpenAI.APIError && e.status === 400 &&
	    /maximum context length is 256 tokens/.test(e.message),
	    'beyond the context: an APIError 400 with its message', [e.status, e.message]);
}
try {
	await client.completions.create({ ...req, temperature: 3 });
	check(false, 'temperature 3: an APIError 400', 'no error');
} catch (e) {
	check(e.status === 400 && e.error && e.error.type === 'invalid_request_error',
	    "temperature 3: 400, OpenAI's error type", [e.status, e.error]);
}
