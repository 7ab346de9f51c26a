/* unit-lib.c - the foundation library: UTF-8, JSONL parse/edit/write, lines, token stream, shuffle, the record loop, published files */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/batch.h"
#include "core/input.h"
#include "core/outfile.h"
#include "core/par.h"
#include "core/sha256.h"
#include "merge/shuffle.h"
#include "tok/tok.h"
#include "core/utf8.h"
#include "core/util.h"
#include "unit.h"

static void
test_utf8(void)
{
	static const struct { const char *s; size_t valid; } v[] = {
		{ "plain ascii text, longer than sixteen bytes", 43 },
		{ "caf\xc3\xa9", 5 },
		{ "\xe2\x82\xac\xf0\x9f\x98\x80", 7 },
		{ "ab\xc0\xaf", 2 },		/* overlong '/' */
		{ "ab\xe0\x80\xaf", 2 },	/* overlong 3-byte */
		{ "ab\xed\xa0\x80", 2 },	/* surrogate U+D800 */
		{ "ab\xf4\x90\x80\x80", 2 },	/* above U+10FFFF */
		{ "ab\xf8\x88\x80\x80\x80", 2 },/* 5-byte form */
		{ "ab\xc3", 2 },		/* truncated */
		{ "0123456789abcdef\x80", 16 },	/* lone continuation after a fast block */
		{ "\xef\xbb\xbf\xf4\x8f\xbf\xbf", 7 },	/* BOM, U+10FFFF */
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++)
		OK(utf8_valid(v[i].s, strlen(v[i].s)) == v[i].valid,
		    "utf8_valid case %zu: valid prefix %zu", i, v[i].valid);
}

/*
 * A reference of another make: s[0..n)'s longest valid prefix by
 * decoding each character and testing its code point (RFC 3629's
 * ranges), where utf8_valid tests byte ranges.
 */
static size_t
ref_valid(const unsigned char *s, size_t n)
{
	static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t i = 0, len, k;
	uint32_t cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		len = s[i] >= 0xf0 && s[i] < 0xf8 ? 4 : s[i] >= 0xe0 &&
		    s[i] < 0xf0 ? 3 : s[i] >= 0xc0 && s[i] < 0xe0 ? 2 : 0;
		if (len == 0 || i + len > n)
			return i;
		cp = s[i] & (0x7f >> len);
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < least[len] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += len;
	}
	return n;
}

/* Code point cp as UTF-8 (its encoded form, overlong or not, in len bytes) at o. */
static size_t
put_cp(unsigned char *o, uint32_t cp, size_t len)
{
	size_t k;

	if (len == 1) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	for (k = len - 1; k > 0; k--, cp >>= 6)
		o[k] = (unsigned char)(0x80 | (cp & 0x3f));
	o[0] = (unsigned char)((0xff00 >> len) | cp);
	return len;
}

/*
 * utf8_valid on random text against ref_valid: characters of each
 * length near the ranges' edges, in runs across 16-byte blocks (ASCII
 * from a fifth of them to nearly all, whole blocks of it), and now
 * and then a fault (an overlong form, a surrogate, above U+10FFFF, a
 * stray or missing continuation byte, a byte no character starts with)
 * or a random byte, at every place in a block.
 */
static void
test_utf8_random(void)
{
	static const uint32_t edge[][2] = {
		{ 0x20, 0x7f }, { 0x80, 0x7ff }, { 0x800, 0xd7ff },
		{ 0xe000, 0xffff }, { 0x10000, 0x10ffff },
	};
	unsigned char b[300];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i, n, want, got, nbad = 0, bad = (size_t)-1, e, len;
	uint32_t lo, hi, cp;

#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17)
	for (i = 0; i < 200000 && bad == (size_t)-1; i++) {
		size_t target = RND() % 260, faults = RND() % 4 == 0 ? 0 :
		    1 + RND() % 2;
		/* the share of ASCII, in percent: some texts in long runs */
		unsigned ascii = (unsigned[]){ 20, 60, 90, 98 }[RND() % 4];

		for (n = 0; n < target;) {
			e = RND() % 100 < ascii ? 0 : 1 + RND() % 4;
			lo = edge[e][0];
			hi = edge[e][1];
			/* the ranges' ends often, else anywhere in them */
			cp = RND() % 4 == 0 ? lo + (uint32_t)(RND() % 3) :
			    RND() % 4 == 0 ? hi - (uint32_t)(RND() % 3) :
			    lo + (uint32_t)(RND() % (hi - lo + 1));
			len = e == 0 ? 1 : e == 1 ? 2 : e == 4 ? 4 : 3;
			if (faults > 0 && RND() % 40 == 0) {
				faults--;
				switch (RND() % 7) {
				case 0:		/* overlong */
					len = len < 4 ? len + 1 : 4;
					if (len == 2)
						cp &= 0x7f;
					break;
				case 1:		/* a surrogate */
					cp = 0xd800 + (uint32_t)(RND() % 0x800);
					len = 3;
					break;
				case 2:		/* above U+10FFFF */
					cp = 0x110000 + (uint32_t)(RND() %
					    0xeffff);
					len = 4;
					break;
				case 3:		/* a continuation byte alone */
					b[n++] = (unsigned char)(0x80 +
					    RND() % 64);
					continue;
				case 4:		/* a character cut short */
					if (len > 1) {
						n += put_cp(b + n, cp, len) -
						    1 - RND() % (len - 1);
						continue;
					}
					break;
				case 5:		/* no character starts so */
					b[n++] = (unsigned char)(0xf5 +
					    RND() % 11);
					continue;
				default:	/* any byte */
					b[n++] = (unsigned char)RND();
					continue;
				}
			}
			n += put_cp(b + n, cp, len);
		}
		want = ref_valid(b, n);
		got = utf8_valid((const char *)b, n);
		nbad += want < n;
		if (got != want)
			bad = i;
	}
#undef RND
	OK(bad == (size_t)-1, "utf8_valid: 200000 random texts as a "
	    "reference decoder says (first differing: %zd)", (ssize_t)bad);
	OK(nbad > 50000 && nbad < 190000, "of them %zu not valid", nbad);
}

static void
test_lines(const char *dir)
{
	char path[512], *line;
	size_t len;
	struct input in;
	FILE *fp;
	int i;

	snprintf(path, sizeof path, "%s/lines", dir);
	fp = fopen(path, "w");
	fputs("one\r\n\nthree", fp);
	for (i = 0; i < 3000; i++)
		fputc('x', fp);
	fputs("\nfour", fp);
	fclose(fp);
	setenv("OWT_MAX_LINE", "1024", 1);
	OK(input_open(&in, path) == 0, "open a plain file");
	OK(input_line(&in, &line, &len) == 1 && len == 4 &&
	    memcmp(line, "one\r", 4) == 0, "first line keeps its CR");
	OK(input_line(&in, &line, &len) == 1 && len == 0, "empty second line");
	OK(input_line(&in, &line, &len) == -1 && in.reason == BAD_TOOLONG &&
	    in.lineno == 3, "a line over the limit is an error on line 3");
	OK(input_line(&in, &line, &len) == 1 && len == 4 &&
	    strcmp(line, "four") == 0 && in.lineno == 4,
	    "reading resumes after the long line; a final line needs no newline");
	OK(input_line(&in, &line, &len) == 0, "then the end");
	input_close(&in);
	setenv("OWT_MAX_LINE", "1023", 1);
	OK(input_open(&in, path) == -1 && in.errcode == XUSAGE &&
	    strcmp(in.err, "OWT_MAX_LINE: '1023' is out of range "
	    "1024..2147483648") == 0, "a bad OWT_MAX_LINE: open fails, XUSAGE, "
	    "no exit");
	unsetenv("OWT_MAX_LINE");
}

/* Write n bytes to path, read them as a token stream: documents, or -1. */
static long
tok_file(const char *path, const void *p, size_t n, struct tok_reader *r)
{
	const uint32_t *ids;
	size_t len;
	long docs = 0;
	FILE *fp;
	int k;

	fp = fopen(path, "w");
	fwrite(p, 1, n, fp);
	fclose(fp);
	if (tok_open(r, path) < 0)
		return -1;
	while ((k = tok_next(r, &ids, &len)) > 0)
		docs++;
	return k < 0 ? -1 : docs;
}

static void
test_tok(const char *dir)
{
	struct tok_hdr h;
	struct tok_reader r;
	struct tok_count c = { 0 }, c2 = { 0 }, sum = { 0 };
	struct buf b = { 0 }, t = { 0 }, v1 = { 0 };
	uint32_t d1[] = { 15496, 995, 50256 }, d2[] = { 50255 };
	const uint32_t *ids;
	size_t n, member;
	char path[512], lpath[OWT_ERRSIZE + 200];

	snprintf(path, sizeof path, "%s/a.tok", dir);
	tok_hdr_init(&h, 50257, 50256);
	OK(h.width == 2, "GPT-2 ids are 16-bit");
	tok_put_hdr(&b, &h);
	tok_put_doc(&b, &h, &c, d1, 3);
	tok_put_doc(&b, &h, &c, d2, 0);
	tok_put_end(&b, &c);
	member = b.len;
	SAME(b.p, 16, "OWTTOK\x02\x02\x51\xc4\x00\x00\x50\xc4\x00\x00", 16,
	    "header bytes (version 2)");
	SAME(b.p + 16, 10, "\x03\x00\x00\x00\x88\x3c\xe3\x03\x50\xc4", 10,
	    "first document bytes");
	SAME(b.p + 30, 32, "OWTEND\0\0" "\x02\0\0\0\0\0\0\0" "\x03\0\0\0\0\0\0\0"
	    "\xbb\x04\x01\0\0\0\0\0", 32, "trailer bytes: 2 documents, 3 "
	    "tokens, id sum 66747");
	OK(member == 62, "a member of two documents is 62 bytes");
	tok_put_hdr(&b, &h);	/* as after `cat a.tok b.tok` */
	tok_put_doc(&b, &h, &c2, d2, 1);
	tok_put_end(&b, &c2);
	tok_count_add(&sum, &c);
	tok_count_add(&sum, &c2);
	OK(sum.docs == 3 && sum.tokens == 4 && sum.sum == 66747 + 50255,
	    "tok_count_add adds counts and sums");

	OK(tok_open(&r, "/nonexistent/x.tok") == -1 && r.errcode == XDATA,
	    "a missing file is bad input");
	OK(tok_file(path, b.p, b.len, &r) == 3, "two members are read whole");
	tok_close(&r);
	OK(tok_open(&r, path) == 0, "open a token stream");
	OK(tok_next(&r, &ids, &n) == 1 && n == 3 && ids[0] == 15496 &&
	    ids[2] == 50256, "first document");
	OK(tok_next(&r, &ids, &n) == 1 && n == 0, "an empty document survives");
	OK(tok_next(&r, &ids, &n) == 1 && n == 1 && ids[0] == 50255,
	    "the second member's document, after a trailer and a header");
	OK(tok_next(&r, &ids, &n) == 0 && r.nv1 == 0, "end of stream");
	OK(tok_next(&r, &ids, &n) == 0, "and it stays at the end");
	tok_close(&r);

	/* A dead writer: every cut, at any byte, is an error, never an end. */
	for (n = 16; n < b.len; n++) {
		if (n == member)
			continue;
		if (tok_file(path, b.p, n, &r) != -1 || r.errcode != XDATA)
			break;
		tok_close(&r);
	}
	OK(n == b.len, "a stream cut at any byte but a member's end is an error "
	    "(first that is not: %zu)", n);
	tok_close(&r);
	OK(tok_file(path, b.p, 30, &r) == -1 && strncmp(r.err, path, strlen(path)) == 0 &&
	    strstr(r.err, ": byte 30: truncated token stream: no trailer after "
	    "document 2 (the writer did not finish)") != NULL,
	    "a member cut at a document boundary: no trailer (%s)", r.err);
	tok_close(&r);
	/* "./" repeated: a real path longer than err. */
	n = (size_t)snprintf(lpath, sizeof lpath, "%s/", dir);
	while (n < OWT_ERRSIZE + 100)
		n += (size_t)snprintf(lpath + n, sizeof lpath - n, "./");
	snprintf(lpath + n, sizeof lpath - n, "a.tok");
	OK(tok_file(lpath, b.p, 30, &r) == -1 && r.errcode == XDATA &&
	    strlen(r.err) == OWT_ERRSIZE - 1 &&
	    strncmp(r.err, lpath, OWT_ERRSIZE - 1) == 0,
	    "a name longer than err cuts the message to fit");
	tok_close(&r);
	buf_add(&t, b.p, 30);
	buf_add(&t, b.p + member, b.len - member);
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "byte 30: "
	    "truncated token stream: no trailer after document 2, before the "
	    "next header (the writer did not finish)") != NULL,
	    "a cut member followed by a whole one: no trailer (%s)", r.err);
	tok_close(&r);
	OK(tok_file(path, b.p, member - 5, &r) == -1 && strstr(r.err,
	    "byte 30: truncated token stream: a trailer of 27 of 32 bytes"),
	    "a cut trailer (%s)", r.err);
	tok_close(&r);
	OK(tok_file(path, b.p, 16, &r) == -1 && strstr(r.err, "byte 16: "
	    "truncated token stream: no trailer after document 0"),
	    "a header alone is a cut member (%s)", r.err);
	tok_close(&r);

	/* A trailer that does not match its member. */
	t.len = 0;
	buf_add(&t, b.p, member);
	t.p[30 + 8] = 3;
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "byte 30: "
	    "token stream trailer does not match its member: 3 documents, 3 "
	    "tokens, id sum 66747; the member has 2, 3, 66747"),
	    "a trailer with another document count (%s)", r.err);
	tok_close(&r);
	t.p[30 + 8] = 2;
	t.p[20] = 0x89;		/* id 15496 -> 15497: still in the vocabulary */
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "id sum 66747; "
	    "the member has 2, 3, 66748"), "a changed id: the sum tells (%s)",
	    r.err);
	tok_close(&r);
	t.p[20] = (char)0x88;
	t.p[30 + 7] = 1;
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "byte 30: "
	    "corrupt token stream trailer (bad magic)"),
	    "a trailer's reserved bytes must be 0 (%s)", r.err);
	tok_close(&r);
	t.p[30 + 7] = 0;
	buf_add(&t, "\x01\0\0\0\x05\0", 6);
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "byte 62: "
	    "corrupt token stream: a trailer followed by something other than "
	    "a header"), "a document after the trailer (%s)", r.err);
	tok_close(&r);

	/* Version 1: no trailer; read, counted for a warning; mixed with 2. */
	buf_add(&v1, b.p, 30);
	v1.p[6] = 1;
	OK(tok_file(path, v1.p, v1.len, &r) == 2 && r.nv1 == 1,
	    "a version 1 stream is read, and counted");
	tok_close(&r);
	buf_add(&v1, b.p + member, b.len - member);
	buf_add(&v1, v1.p, 30);
	OK(tok_file(path, v1.p, v1.len, &r) == 5 && r.nv1 == 2,
	    "version 1, 2 and 1 members concatenated");
	tok_close(&r);
	OK(tok_file(path, v1.p, 26, &r) == 1 && r.nv1 == 1,
	    "a version 1 stream cut at a document boundary cannot be told");
	tok_close(&r);
	v1.p[6] = 3;
	OK(tok_file(path, v1.p, v1.len, &r) == -1 && strstr(r.err,
	    "byte 0: unsupported token stream version 3"), "version 3 (%s)",
	    r.err);
	tok_close(&r);

	/* An empty member: a header and a trailer. */
	t.len = 0;
	memset(&c, 0, sizeof c);
	tok_put_hdr(&t, &h);
	tok_put_end(&t, &c);
	OK(tok_file(path, t.p, t.len, &r) == 0, "a member of no documents");
	tok_close(&r);

	t.len = 0;
	buf_add(&t, b.p, member);
	t.p[16 + 4] = (char)0xff;	/* 15496 -> 65535 */
	t.p[16 + 5] = (char)0xff;
	OK(tok_file(path, t.p, t.len, &r) == -1 && strstr(r.err, "token 65535 "
	    "in document 1 is outside the vocabulary (50257)") != NULL,
	    "an id outside the vocabulary is an error");
	tok_close(&r);
	OK(tok_file(path, b.p, 16 + 4 + 4, &r) == -1 && r.errcode == XDATA &&
	    strstr(r.err, "truncated token stream: document 1 has 2 of 3") != NULL,
	    "a truncated document is an error");
	tok_close(&r);
	OK(tok_file(path, "{\"text\": \"json, not tokens\"}\n", 29, &r) == -1 &&
	    strstr(r.err, "bad magic") != NULL, "JSON is not a token stream");
	tok_close(&r);
	buf_free(&b);
	buf_free(&t);
	buf_free(&v1);
}

static int nout;
static char got[64][16];

static int
collect(void *arg, const char *rec, size_t len)
{
	(void)arg;
	snprintf(got[nout++], sizeof got[0], "%.*s", (int)len, rec);
	return 0;
}

static void
test_shuffle(const char *dir)
{
	struct shuffle s;
	char rec[16], first[64][16];
	int i, moved = 0, seen[64] = { 0 };

	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 in memory; pass 1 with a limit that spills every record */
		shuffle_init(&s, 42, pass ? 1 : 1 << 20, dir);
		for (i = 0; i < 64; i++) {
			snprintf(rec, sizeof rec, "r%02d", i);
			shuffle_add(&s, rec, strlen(rec));
		}
		nout = 0;
		OK(shuffle_finish(&s, collect, NULL) == 0 && nout == 64,
		    "shuffle pass %d returns 64 records", pass);
		OK(pass == 0 || s.nruns > 1, "pass 1 spilled (%zu runs)", s.nruns);
		shuffle_free(&s);
		if (pass == 0)
			memcpy(first, got, sizeof got);
	}
	OK(memcmp(first, got, sizeof got) == 0,
	    "spilled and in-memory orders are the same");
	for (i = 0; i < 64; i++) {
		seen[atoi(got[i] + 1)]++;
		moved += atoi(got[i] + 1) != i;
	}
	for (i = 0; i < 64 && seen[i] == 1; i++)
		;
	OK(i == 64, "every record exactly once");
	OK(moved > 48, "the order is shuffled (%d of 64 moved)", moved);
}

static long order[200];

static void
par_work(void *job, void *state)
{
	long *j = job;

	if (*j % 7 == 0)
		usleep(2000);
	*j += 1000 + (state != NULL);
}

static void *
par_init(void *arg)
{
	return arg;
}

static void
test_par(void)
{
	struct par *p;
	long i, *done;
	int threads, n, ok;

	for (threads = 0; threads <= 3; threads += 3) {
		p = par_start(threads, 5, 1 << 20, par_work, par_init, NULL,
		    (void *)order);
		n = 0;
		ok = 1;
		for (i = 0; i < 200; i++) {
			order[i] = i;
			if ((done = par_put(p, &order[i])) != NULL)
				ok &= *done == 1001 + n++;
			while ((done = par_poll(p)) != NULL)
				ok &= *done == 1001 + n++;
		}
		while ((done = par_get(p)) != NULL)
			ok &= *done == 1001 + n++;
		par_stop(p);
		OK(n == 200 && ok, "par with %d threads: 200 jobs done once each, "
		    "with their worker's state, back in order", threads);
	}
}

/*
 * The record loop. A test that would hang when the loop waits where it
 * must not ends by this watchdog instead, failing.
 */
static void
watchdog(int sig)
{
	static const char msg[] = "not ok - the record loop waited (watchdog)\n";

	(void)sig;
	if (write(1, msg, sizeof msg - 1) < 0)
		_exit(1);
	_exit(1);
}

/* stderr into a tmpfile, and back. */
static FILE *err_file;
static int err_saved = -1;

static void
err_capture(void)
{
	fflush(stderr);
	err_file = tmpfile();
	err_saved = dup(2);
	dup2(fileno(err_file), 2);
}

static char *
err_release(void)
{
	char *s;

	fflush(stderr);
	dup2(err_saved, 2);
	close(err_saved);
	s = unit_file_text(err_file);
	fclose(err_file);
	return s;
}

static pthread_mutex_t lmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lcond = PTHREAD_COND_INITIALIZER;
static int gate_open = 1, nworked;
static pthread_t caller;
static int worked_inline;
static size_t longest_batch_line, long_batch_lines;

/*
 * Each line "bad..." is a note; others go out upper-cased, and every
 * seventh batch waits a little so that batches finish out of order.
 */
static void
loop_work(struct batch *b, void *state)
{
	size_t i, j, len;
	const char *p;

	(void)state;
	pthread_mutex_lock(&lmu);
	while (!gate_open)
		pthread_cond_wait(&lcond, &lmu);
	pthread_mutex_unlock(&lmu);
	if (pthread_equal(pthread_self(), caller))
		worked_inline = 1;
	if (b->nline > 0 && b->lineno[0] % 7 == 0)
		usleep(1000);
	for (i = 0; i < b->nline; i++) {
		p = b->in.p + b->off[i];
		len = b->off[i + 1] - b->off[i] - 1;
		if (len >= 64 << 10) {
			pthread_mutex_lock(&lmu);
			long_batch_lines += b->nline;
			pthread_mutex_unlock(&lmu);
		}
		if (len >= 3 && memcmp(p, "bad", 3) == 0) {
			batch_note(b, 2, "%s:%lu: bad line", b->name, b->lineno[i]);
			buf_adds(&b->rep, "r-bad\n");
			continue;
		}
		for (j = 0; j < len && j < 16; j++)
			buf_addc(&b->out, p[j] >= 'a' && p[j] <= 'z' ?
			    p[j] - 32 : p[j]);
		buf_addc(&b->out, '\n');
		b->count[0]++;
	}
	pthread_mutex_lock(&lmu);
	nworked++;
	if (b->in.len > longest_batch_line)
		longest_batch_line = b->in.len;
	pthread_cond_broadcast(&lcond);
	pthread_mutex_unlock(&lmu);
}

static uint64_t ndone_lines;

static void
loop_done(struct batch *b, void *arg)
{
	(void)arg;
	ndone_lines += b->count[0];
}

/* n lines "line N" (every badevery-th "bad N"), as the loop should write them. */
static void
loop_feed(struct batch_loop *l, int n, int badevery, struct buf *want,
    int *stopped_at)
{
	char line[64];
	int i, len;

	*stopped_at = -1;
	for (i = 1; i <= n; i++) {
		if (badevery && i % badevery == 0)
			len = snprintf(line, sizeof line, "bad %d", i);
		else {
			len = snprintf(line, sizeof line, "line %d", i);
			buf_printf(want, "LINE %d\n", i);
		}
		if (batch_add(l, "t", (unsigned long)i, line, (size_t)len, NULL)) {
			*stopped_at = i;
			return;
		}
	}
}

static void
test_loop_order(void)
{
	struct batch_opts o = { .bytes = 40, .work = loop_work,
	    .done = loop_done };
	struct batch_loop *l;
	struct buf want = { 0 };
	char err[256], *got;
	int threads, code, r, stopped;
	FILE *out;

	caller = pthread_self();
	for (threads = 0; threads <= 4; threads += 4) {
		o.nworkers = threads;
		o.out = out = tmpfile();
		want.len = 0;
		ndone_lines = 0;
		worked_inline = 0;
		l = batch_start(&o);
		loop_feed(l, 500, 0, &want, &stopped);
		if (threads == 0) {
			got = unit_file_text(out);
			fseek(out, 0, SEEK_END);
			OK(strlen(got) > 0 && strncmp(got, want.p, strlen(got)) == 0,
			    "inline: each batch is written as soon as it is full");
			free(got);
		}
		r = batch_end(l, err, sizeof err, &code);
		got = unit_file_text(out);
		OK(r == XOK && stopped == -1, "%d workers: the loop ends XOK",
		    threads);
		SAMES(got, want.p, "%d workers: 500 records out in input order",
		    threads);
		OK(ndone_lines == 500, "%d workers: done saw every batch once "
		    "(%llu records)", threads, (unsigned long long)ndone_lines);
		OK(worked_inline == (threads == 0), "%d workers: the work runs %s",
		    threads, threads ? "on the workers" : "inline");
		free(got);
		fclose(out);
	}
	buf_free(&want);
}

static void
test_loop_notes(void)
{
	struct tally bad[4] = { { 0 } };
	struct batch_opts o = { .nworkers = 3, .bytes = 40, .bad = bad,
	    .work = loop_work, .done = loop_done };
	struct batch_loop *l;
	struct buf want = { 0 }, wantrep = { 0 }, wanterr = { 0 };
	char err[256], *got, *rep, *msgs;
	int code, r, stopped, i;

	o.out = tmpfile();
	o.rep = tmpfile();
	o.keep_going = 1;
	err_capture();
	l = batch_start(&o);
	loop_feed(l, 300, 10, &want, &stopped);
	batch_bad(l, "other", 1, "other: cannot open");
	r = batch_end(l, err, sizeof err, &code);
	msgs = err_release();
	for (i = 10; i <= 300; i += 10) {
		buf_printf(&wanterr, "unit-lib: t:%d: bad line\n", i);
		buf_adds(&wantrep, "r-bad\n");
	}
	buf_adds(&wanterr, "unit-lib: other: cannot open\n");
	got = unit_file_text(o.out);
	rep = unit_file_text(o.rep);
	OK(r == XDATA && stopped == -1, "-k: every record read, the loop ends "
	    "XDATA");
	SAMES(got, want.p, "-k: the output skips the bad records only");
	SAMES(rep, wantrep.p, "-k: the report channel has each record's lines");
	SAMES(msgs, wanterr.p, "-k: each note is warned once, in input order");
	OK(bad[2].n == 30 && bad[1].n == 1, "-k: notes counted by reason");
	free(got);
	free(rep);
	free(msgs);
	fclose(o.out);
	fclose(o.rep);

	/* Without -k: the output stops before the first bad record. */
	o.keep_going = 0;
	o.out = tmpfile();
	o.rep = tmpfile();
	bad[2].n = 0;
	want.len = 0;
	err_capture();
	l = batch_start(&o);
	loop_feed(l, 300, 50, &want, &stopped);
	r = batch_end(l, err, sizeof err, &code);
	msgs = err_release();
	got = unit_file_text(o.out);
	rep = unit_file_text(o.rep);
	want.len = 0;
	for (i = 1; i < 50; i++)
		buf_printf(&want, "LINE %d\n", i);
	OK(r == XDATA, "no -k: the loop ends XDATA");
	OK(stopped == -1 || stopped > 50, "no -k: batch_add says stop only "
	    "after the bad record (at %d)", stopped);
	SAMES(got, want.p, "no -k: the output stops before the bad record");
	SAMES(rep, "", "no -k: nor is the bad record's report written");
	SAMES(msgs, "unit-lib: t:50: bad line\n", "no -k: one warning");
	OK(bad[2].n == 1, "no -k: the one note counted");
	free(got);
	free(rep);
	free(msgs);
	fclose(o.out);
	fclose(o.rep);
	buf_free(&want);
	buf_free(&wantrep);
	buf_free(&wanterr);
}

static void
test_loop_held(void)
{
	struct batch_opts o = { .nworkers = 3, .bytes = 1 << 20,
	    .held = 1 << 20, .work = loop_work, .done = loop_done };
	struct batch_loop *l;
	struct buf want = { 0 };
	char err[256], *got, *line;
	size_t bytes, n, maxbytes = 0, len;
	int i, code, r, ok = 1;

	o.out = tmpfile();
	line = xmalloc(300 << 10);
	longest_batch_line = long_batch_lines = 0;
	l = batch_start(&o);
	for (i = 1; i <= 400; i++) {
		/* every 20th line 300 KB: longer than a batch (1 MB / 8) */
		len = i % 20 == 0 ? (300 << 10) - 1 : 1000;
		memset(line, 'a' + i % 26, len);
		memcpy(line, "line", 4);
		batch_add(l, "t", (unsigned long)i, line, len, NULL);
		n = batch_inflight(l, &bytes);
		if (bytes > o.held && n > 1)
			ok = 0;
		if (bytes > maxbytes)
			maxbytes = bytes;
		buf_adds(&want, "LINE");
		for (n = 4; n < 16; n++)
			buf_addc(&want, (char)('A' + i % 26));
		buf_addc(&want, '\n');
	}
	r = batch_end(l, err, sizeof err, &code);
	got = unit_file_text(o.out);
	OK(r == XOK && ok, "held: the input in flight never exceeds 1 MB "
	    "(at most %zu bytes)", maxbytes);
	OK(maxbytes > o.held / 2, "held: and the bound is approached "
	    "(%zu bytes)", maxbytes);
	OK(long_batch_lines == 20, "held: each long record is a batch alone");
	SAMES(got, want.p, "held: the output in input order");
	free(got);
	free(line);
	fclose(o.out);
	buf_free(&want);
}

static void
test_loop_poll(void)
{
	struct batch_opts o = { .nworkers = 2, .maxrecs = 1, .work = loop_work,
	    .done = loop_done };
	struct batch_loop *l;
	struct buf want = { 0 };
	char err[256], *got;
	int code, r, stopped;

	o.out = tmpfile();
	signal(SIGALRM, watchdog);
	alarm(60);
	pthread_mutex_lock(&lmu);
	gate_open = 0;
	nworked = 0;
	pthread_mutex_unlock(&lmu);
	l = batch_start(&o);
	loop_feed(l, 4, 0, &want, &stopped);
	r = batch_poll(l);
	got = unit_file_text(o.out);
	OK(r == 0 && strcmp(got, "") == 0, "poll with every worker busy "
	    "returns at once, nothing written");
	free(got);
	pthread_mutex_lock(&lmu);
	gate_open = 1;
	pthread_cond_broadcast(&lcond);
	while (nworked < 4)
		pthread_cond_wait(&lcond, &lmu);
	pthread_mutex_unlock(&lmu);
	/* All worked on: poll writes them once the pool has them done. */
	do {
		batch_poll(l);
		fflush(o.out);
		fseek(o.out, 0, SEEK_END);
	} while (ftell(o.out) < (long)want.len && usleep(1000) == 0);
	OK(ftell(o.out) == (long)want.len, "poll writes the batches done");
	r = batch_end(l, err, sizeof err, &code);
	got = unit_file_text(o.out);
	SAMES(got, want.p, "then the end writes nothing more");
	alarm(0);
	free(got);
	fclose(o.out);
	buf_free(&want);
}

/* batch_run on a pipe whose writer waits for the first record's output. */
struct stall_arg {
	int fd;
	FILE *out;
	int r;
};

static void *
stall_reader(void *arg)
{
	struct stall_arg *a = arg;
	struct batch_opts o = { .nworkers = 2, .bytes = 1 << 20,
	    .work = loop_work, .done = loop_done };
	char path[64], err[256], *paths[1] = { path };
	int code;

	o.out = a->out;
	snprintf(path, sizeof path, "/dev/fd/%d", a->fd);
	a->r = batch_run(&o, paths, 1, err, sizeof err, &code);
	return NULL;
}

static void
test_loop_stall(void)
{
	struct stall_arg a;
	struct stat st;
	pthread_t t;
	int fds[2];
	char *got;

	if (pipe(fds) < 0) {
		OK(0, "pipe");
		return;
	}
	a.fd = fds[0];
	a.out = tmpfile();
	signal(SIGALRM, watchdog);
	alarm(60);
	if (write(fds[1], "one\ntwo\n", 8) != 8)
		OK(0, "write to the pipe");
	pthread_create(&t, NULL, stall_reader, &a);
	/* No more input until the first two records are out. */
	do
		usleep(1000);
	while (fstat(fileno(a.out), &st) == 0 && st.st_size < 8);
	OK(st.st_size == 8, "a quiet pipe: what was read is written (and "
	    "flushed) before the next read waits");
	if (write(fds[1], "three\n", 6) != 6)
		OK(0, "write to the pipe");
	close(fds[1]);
	pthread_join(t, NULL);
	alarm(0);
	close(fds[0]);
	got = unit_file_text(a.out);
	OK(a.r == XOK, "then the rest, to the end");
	SAMES(got, "ONE\nTWO\nTHREE\n", "the whole output in order");
	free(got);
	fclose(a.out);
}

static void
test_loop_errors(const char *dir)
{
	struct tally bad[BAD_NREASONS] = { { 0 } };
	struct batch_opts o = { .nworkers = 1, .bad = bad, .keep_going = 1,
	    .work = loop_work };
	char path[512], missing[512], err[256], *paths[2], *msgs, *got;
	FILE *fp;
	int code = 0, r;

	snprintf(path, sizeof path, "%s/loop", dir);
	snprintf(missing, sizeof missing, "%s/nope", dir);
	fp = fopen(path, "w");
	fputs("a\nb\n", fp);
	fclose(fp);
	paths[0] = missing;
	paths[1] = path;
	o.out = tmpfile();
	err_capture();
	r = batch_run(&o, paths, 2, err, sizeof err, &code);
	msgs = err_release();
	got = unit_file_text(o.out);
	OK(r == XDATA && bad[BAD_OPEN].n == 1, "batch_run: a missing file is "
	    "a note (BAD_OPEN), the next file is read");
	OK(strstr(msgs, "nope': No such file or directory") != NULL,
	    "batch_run: the note says why");
	SAMES(got, "A\nB\n", "batch_run: the next file's records");
	free(msgs);
	free(got);
	fclose(o.out);

	setenv("OWT_MAX_LINE", "5", 1);
	o.out = tmpfile();
	r = batch_run(&o, paths + 1, 1, err, sizeof err, &code);
	unsetenv("OWT_MAX_LINE");
	OK(r == -1 && code == XUSAGE && strcmp(err, "OWT_MAX_LINE: '5' is out "
	    "of range 1024..2147483648") == 0, "batch_run: a bad OWT_MAX_LINE "
	    "is returned, XUSAGE");
	fclose(o.out);

	if ((o.out = fopen("/dev/full", "w")) == NULL) {
		OK(1, "# SKIP no /dev/full");
		return;
	}
	setvbuf(o.out, NULL, _IONBF, 0);	/* the error at the write */
	o.outname = "full";
	r = batch_run(&o, paths + 1, 1, err, sizeof err, &code);
	OK(r == -1 && code == XSYS && strcmp(err, "full: write error: No space "
	    "left on device") == 0, "batch_run: a write error is returned, "
	    "XSYS, named (%s)", err);
	fclose(o.out);
}

/* Publish a file and a directory under umask u in a child (the mask is
 * read once per process); their modes, or -1. */
static void
publish_under(const char *dir, mode_t u, mode_t *fmode, mode_t *dmode)
{
	char f[600], d[600], err[256];
	struct outfile o;
	struct stat sb;
	pid_t pid;
	int code, st;

	snprintf(f, sizeof f, "%s/mode-%03o", dir, (unsigned)u);
	snprintf(d, sizeof d, "%s/mode-%03o.d", dir, (unsigned)u);
	if ((pid = fork()) == 0) {
		umask(u);
		if (outfile_open(&o, f, err, sizeof err, &code) < 0 ||
		    outfile_write_all(o.fd, "x", 1) < 0 ||
		    outfile_commit(&o, 0, err, sizeof err, &code) < 0 ||
		    outfile_open_dir(&o, d, err, sizeof err, &code) < 0 ||
		    outfile_commit(&o, 0, err, sizeof err, &code) < 0)
			_exit(1);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	*fmode = *dmode = (mode_t)-1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		if (stat(f, &sb) == 0)
			*fmode = sb.st_mode & 07777;
		if (stat(d, &sb) == 0)
			*dmode = sb.st_mode & 07777;
	}
}

static int
count_tmp(const char *dir)
{
	char cmd[600];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c 'tmp'", dir);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void
test_outfile(const char *top)
{
	static const mode_t masks[] = { 022, 002, 077 };
	char dir[512], path[700], sub[600], err[256];
	struct outfile o, live;
	struct stat sb;
	mode_t fm, dm;
	pid_t pid;
	int code = 0, st, r;

	snprintf(dir, sizeof dir, "%s/out", top);
	mkdir(dir, 0777);
	for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
		publish_under(dir, masks[i], &fm, &dm);
		OK(fm == (0666 & ~masks[i]) && dm == (0777 & ~masks[i]),
		    "umask %03o: a published file is %03o (got %03o), a "
		    "directory %03o (got %03o)", (unsigned)masks[i],
		    (unsigned)(0666 & ~masks[i]), (unsigned)fm,
		    (unsigned)(0777 & ~masks[i]), (unsigned)dm);
	}

	snprintf(path, sizeof path, "%s/data.bin", dir);
	r = outfile_open(&o, path, err, sizeof err, &code);
	OK(r == 0 && stat(path, &sb) < 0 && count_tmp(dir) == 1,
	    "an open output is a temporary only");
	outfile_write_all(o.fd, "new", 3);
	r = outfile_commit(&o, 0, err, sizeof err, &code);
	OK(r == 0 && stat(path, &sb) == 0 && sb.st_size == 3 &&
	    count_tmp(dir) == 0, "commit renames it into place");
	outfile_open(&o, path, err, sizeof err, &code);
	r = outfile_commit(&o, OUTFILE_NOREPLACE, err, sizeof err, &code);
	OK(r < 0 && code == XUSAGE && strstr(err, "already exists") &&
	    stat(path, &sb) == 0 && sb.st_size == 3 && count_tmp(dir) == 0,
	    "NOREPLACE keeps an existing output and removes the temporary "
	    "(%s)", err);
	outfile_open(&o, path, err, sizeof err, &code);
	outfile_abort(&o);
	OK(stat(path, &sb) == 0 && count_tmp(dir) == 0,
	    "abort removes the temporary only");

	snprintf(sub, sizeof sub, "%s/iter_0000002", dir);
	outfile_open_dir(&o, sub, err, sizeof err, &code);
	snprintf(path, sizeof path, "%s/a", o.tmp);
	fclose(fopen(path, "w"));
	outfile_commit(&o, 0, err, sizeof err, &code);
	outfile_open_dir(&o, sub, err, sizeof err, &code);
	snprintf(path, sizeof path, "%s/b", o.tmp);
	fclose(fopen(path, "w"));
	r = outfile_commit(&o, 0, err, sizeof err, &code);
	snprintf(path, sizeof path, "%s/a", sub);
	st = stat(path, &sb);
	snprintf(path, sizeof path, "%s/b", sub);
	OK(r == 0 && st < 0 && stat(path, &sb) == 0 && count_tmp(dir) == 0,
	    "a directory is replaced whole");

	/* Temporaries of killed writers, beside a live one. */
	snprintf(path, sizeof path, "%s/data.bin", dir);
	outfile_open(&live, path, err, sizeof err, &code);
	if ((pid = fork()) == 0) {
		outfile_open(&o, path, err, sizeof err, &code);
		outfile_open_dir(&o, sub, err, sizeof err, &code);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	OK(count_tmp(dir) == 3, "three temporaries: one live, two dead");
	snprintf(sub, sizeof sub, "%s/iter_*", dir);
	r = outfile_sweep(path) + outfile_sweep(sub);
	OK(r == 2 && count_tmp(dir) == 1 && stat(live.tmp, &sb) == 0,
	    "sweep removes the dead writers' temporaries (%d), not the live "
	    "one", r);
	outfile_abort(&live);
	OK(count_tmp(dir) == 0, "nothing left");
	snprintf(path, sizeof path, "%s/", dir);
	r = outfile_open(&o, path, err, sizeof err, &code);
	OK(r < 0 && code == XUSAGE, "a directory name is not a file name");
}

/* The error convention: message, class, -1; owt_fatal's line and status. */
static void
test_fail(void)
{
	char err[OWT_ERRSIZE], small[8], got[256];
	int code = 0, st, fd[2];
	size_t k;
	ssize_t n;
	pid_t pid;

	OK(owt_fail(err, sizeof err, &code, XDATA, "%s:%d: bad", "f", 3) == -1 &&
	    code == XDATA, "owt_fail returns -1 and sets the class");
	SAMES(err, "f:3: bad", "owt_fail writes the message");
	errno = ENOENT;
	OK(owt_fail_errno(err, sizeof err, &code, XSYS, "'%s': cannot open",
	    "x") == -1 && code == XSYS && errno == ENOENT,
	    "owt_fail_errno returns -1, sets the class, keeps errno");
	SAMES(err, "'x': cannot open: No such file or directory",
	    "owt_fail_errno appends strerror");
	OK(owt_fail(small, sizeof small, NULL, XSYS, "0123456789") == -1,
	    "owt_fail with no code");
	SAMES(small, "0123456", "a long message is cut to fit");
	errno = ENOENT;
	owt_fail_errno(small, sizeof small, NULL, XSYS, "abcdefghij");
	SAMES(small, "abcdefg", "no strerror when the message fills err");
	if (pipe(fd) < 0) {
		OK(0, "pipe");
		return;
	}
	if ((pid = fork()) == 0) {
		dup2(fd[1], STDERR_FILENO);
		owt_fatal("cannot start a thread: %s", "why");
	}
	close(fd[1]);
	/* stderr is unbuffered: the line comes in several writes. */
	for (k = 0; k < sizeof got - 1; k += (size_t)n)
		if ((n = read(fd[0], got + k, sizeof got - 1 - k)) <= 0)
			break;
	got[k] = '\0';
	close(fd[0]);
	waitpid(pid, &st, 0);
	OK(WIFEXITED(st) && WEXITSTATUS(st) == XSYS, "owt_fatal exits 3");
	SAMES(got, "unit-lib: cannot start a thread: why\n",
	    "owt_fatal prints prog: message");
}

/* FIPS 180-4's vectors: empty, one block, two (56 bytes), a million 'a's. */
static void
test_sha256(void)
{
	char hex[65], *a = xmalloc(1000000);
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	sha256_hex("", 0, hex);
	SAMES(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	    "sha256 of nothing");
	sha256_hex("abc", 3, hex);
	SAMES(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "sha256 of abc");
	sha256_hex(two, strlen(two), hex);
	SAMES(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	    "sha256 of 56 bytes (the length in a second block)");
	memset(a, 'a', 1000000);
	sha256_hex(a, 1000000, hex);
	SAMES(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	    "sha256 of a million a's");
	free(a);
}

int
main(void)
{
	char dir[] = "/tmp/owt-unit.XXXXXX", cmd[64];

	if (mkdtemp(dir) == NULL)
		return 3;
	setvbuf(stdout, NULL, _IOLBF, 0);	/* whole lines before a watchdog */
	test_utf8();
	test_utf8_random();
	test_lines(dir);
	test_tok(dir);
	test_shuffle(dir);
	test_par();
	owt_setprog("unit-lib");
	test_fail();
	test_loop_order();
	test_loop_notes();
	test_loop_held();
	test_loop_poll();
	test_loop_stall();
	test_loop_errors(dir);
	test_outfile(dir);
	test_sha256();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 3;
	return unit_done();
}
