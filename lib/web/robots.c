/* robots.c - robots.txt (RFC 9309): parse the rules for one agent, match paths */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "web/robots.h"
#include "core/util.h"

/* A "key: value" line: the key lower-cased into k, the value trimmed into v. */
static int
split(const char *s, size_t n, char *k, size_t ks, char *v, size_t vs)
{
	const char *end = s + n, *colon = memchr(s, ':', n), *e;
	size_t i, j = 0;

	if (colon == NULL)
		return -1;
	for (i = 0; s + i < colon && j + 1 < ks; i++)
		if (!isspace((unsigned char)s[i]))
			k[j++] = tolower((unsigned char)s[i]);
	k[j] = '\0';
	s = colon + 1;
	for (e = s; e < end && *e != '#'; e++)
		;
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if ((size_t)(e - s) >= vs)
		e = s + vs - 1;
	memcpy(v, s, e - s);
	v[e - s] = '\0';
	return 0;
}

void
robots_parse(struct robots *rb, const char *txt, size_t n, const char *agent)
{
	/* Two passes: 0 collects the groups naming agent, 1 the '*' groups. */
	int pass, found = 0;
	size_t cap = 0;

	memset(rb, 0, sizeof *rb);
	if (n > ROBOTS_MAX)
		n = ROBOTS_MAX;
	for (pass = 0; pass < 2 && !found; pass++) {
		const char *s = txt, *end = txt + n;
		int in_group = 0, mine = 0;

		while (s < end) {
			const char *nl = s;
			char k[32], v[2048];

			while (nl < end && *nl != '\n' && *nl != '\r')
				nl++;
			if (split(s, nl - s, k, sizeof k, v, sizeof v) == 0) {
				if (strcmp(k, "user-agent") == 0) {
					if (in_group)	/* a rule ended the last group */
						mine = 0, in_group = 0;
					if (pass == 0 ? strncasecmp(v, agent, strlen(agent)) == 0 &&
					    strlen(v) >= strlen(agent) :
					    strcmp(v, "*") == 0)
						mine = 1;
				} else if (strcmp(k, "allow") == 0 || strcmp(k, "disallow") == 0) {
					in_group = 1;
					if (mine)
						found = 1;
					if (mine && v[0] != '\0') {
						rb->r = xgrow(rb->r, &cap, rb->n + 1, sizeof *rb->r);
						rb->r[rb->n].pat = xstrdup(v);
						rb->r[rb->n++].allow = k[0] == 'a';
					}
				} else if (strcmp(k, "crawl-delay") == 0) {
					in_group = 1;
					if (mine) {
						char *q;
						double d = strtod(v, &q);

						found = 1;
						if (q != v && d > 0 && d < 86400)
							rb->delay = d;
					}
				}
			}
			s = nl;
			while (s < end && (*s == '\n' || *s == '\r'))
				s++;
		}
	}
}

/*
 * Does pattern p match a prefix of s? '*' matches any run, a final '$'
 * the end. Backtracks only to the last '*': O(len(p) * len(s)).
 */
static int
match(const char *p, const char *s)
{
	const char *star = NULL, *ss = NULL;

	for (;;) {
		if (*p == '\0')
			return 1;
		if (*p == '$' && p[1] == '\0') {
			if (*s == '\0')
				return 1;
		} else if (*p == '*') {
			star = ++p;
			ss = s;
			continue;
		} else if (*s != '\0' && *p == *s) {
			p++;
			s++;
			continue;
		}
		if (star == NULL || *ss == '\0')
			return 0;
		p = star;
		s = ++ss;
	}
}

int
robots_allowed(const struct robots *rb, const char *path)
{
	size_t i, best = 0;
	int allow = 1, any = 0;

	if (strcmp(path, "/robots.txt") == 0)
		return 1;
	if (rb->deny_all)
		return 0;
	for (i = 0; i < rb->n; i++) {
		size_t len = strlen(rb->r[i].pat);

		if (!match(rb->r[i].pat, path))
			continue;
		if (!any || len > best || (len == best && rb->r[i].allow)) {
			allow = rb->r[i].allow;
			best = len;
			any = 1;
		}
	}
	return allow;
}

void
robots_free(struct robots *rb)
{
	size_t i;

	for (i = 0; i < rb->n; i++)
		free(rb->r[i].pat);
	free(rb->r);
	memset(rb, 0, sizeof *rb);
}
