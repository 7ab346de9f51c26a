/* robots.h - robots.txt (RFC 9309): parse the rules for one agent, match paths */
#ifndef OWT_ROBOTS_H
#define OWT_ROBOTS_H

#include <stddef.h>

/* robots.txt beyond this many bytes is ignored (RFC 9309 asks for 500 KiB at least). */
#define ROBOTS_MAX (512 << 10)

struct robots_rule {
	char *pat;		/* path pattern: '*' any run, '$' at the end anchors */
	int allow;
};

struct robots {
	struct robots_rule *r;
	size_t n;
	double delay;		/* Crawl-delay in seconds, 0 when none */
	int deny_all;		/* robots.txt was unreachable (5xx): nothing allowed */
};

/*
 * Parse txt[0..n) for the product token agent ("owt-fetch"): the groups
 * whose user-agent line matches the token (case-insensitive) are used,
 * else the '*' groups. Rules and the delay of the chosen groups only.
 */
void robots_parse(struct robots *rb, const char *txt, size_t n, const char *agent);

/*
 * May path (the URL's path and query, starting with '/') be fetched? The
 * longest matching rule decides; allow wins a tie; no match allows.
 * "/robots.txt" is always allowed.
 */
int robots_allowed(const struct robots *rb, const char *path);

void robots_free(struct robots *rb);

#endif
