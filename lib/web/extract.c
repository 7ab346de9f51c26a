/*
 * extract.c - the title and main article text of an HTML page
 *
 * libtidy parses the page; its tree is copied into a compact tree of our
 * own (struct node), on which the article is found the way Mozilla's
 * Readability finds it: drop hidden and unlikely nodes, score paragraphs
 * by length and commas, give the scores to their ancestors, take the best
 * ancestor and its related siblings, then clean boilerplate out of them.
 * When that leaves too little text, the run is repeated with fewer
 * heuristics, and the longest result is kept.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <tidy/tidy.h>
#include <tidy/tidybuffio.h>

#include "web/charset.h"
#include "web/extract.h"

enum tag {
	T_NONE, T_TEXT, T_INLINE, T_BLOCK, T_A, T_ADDRESS, T_ARTICLE, T_ASIDE,
	T_BLOCKQUOTE, T_BODY, T_BR, T_CAPTION, T_CODE, T_DD, T_DIV, T_DL, T_DT,
	T_EMBED, T_FIELDSET, T_FIGURE, T_FOOTER, T_FORM, T_H1, T_H2, T_H3, T_H4,
	T_H5, T_H6, T_HEAD, T_HR, T_HTML, T_IMG, T_INPUT, T_LI, T_LINK, T_META,
	T_OBJECT, T_OL, T_P, T_PRE, T_SECTION, T_TABLE, T_TD, T_TH, T_THEAD,
	T_TITLE, T_TR, T_UL, T_DROP
};

/* Tag flags. */
enum {
	F_BLOCK = 1,		/* starts a new line in the text */
	F_PHRASING = 2,		/* inline content (Readability's PHRASING_ELEMS) */
	F_DIVTOP = 4		/* makes a div not a paragraph (DIV_TO_P_ELEMS) */
};

static const struct tagdef {
	const char *name;
	unsigned char tag, fl;
} tags[] = {	/* sorted by name for bsearch */
	{ "a", T_A, F_PHRASING }, { "abbr", T_INLINE, F_PHRASING },
	{ "address", T_ADDRESS, F_BLOCK }, { "applet", T_DROP, 0 },
	{ "article", T_ARTICLE, F_BLOCK }, { "aside", T_ASIDE, F_BLOCK },
	{ "audio", T_DROP, 0 }, { "b", T_INLINE, F_PHRASING },
	{ "bdi", T_INLINE, F_PHRASING }, { "bdo", T_INLINE, F_PHRASING },
	{ "big", T_INLINE, F_PHRASING }, { "blockquote", T_BLOCKQUOTE, F_BLOCK | F_DIVTOP },
	{ "body", T_BODY, F_BLOCK }, { "br", T_BR, F_PHRASING },
	{ "button", T_DROP, 0 }, { "canvas", T_DROP, 0 },
	{ "caption", T_CAPTION, F_BLOCK }, { "center", T_BLOCK, F_BLOCK },
	{ "cite", T_INLINE, F_PHRASING }, { "code", T_CODE, F_PHRASING },
	{ "data", T_INLINE, F_PHRASING }, { "datalist", T_DROP, 0 },
	{ "dd", T_DD, F_BLOCK }, { "del", T_INLINE, F_PHRASING },
	{ "details", T_BLOCK, F_BLOCK }, { "dfn", T_INLINE, F_PHRASING },
	{ "dialog", T_DROP, 0 }, { "dir", T_UL, F_BLOCK },
	{ "div", T_DIV, F_BLOCK | F_DIVTOP }, { "dl", T_DL, F_BLOCK | F_DIVTOP },
	{ "dt", T_DT, F_BLOCK }, { "em", T_INLINE, F_PHRASING },
	{ "embed", T_EMBED, 0 }, { "fieldset", T_FIELDSET, F_BLOCK },
	{ "figcaption", T_BLOCK, F_BLOCK }, { "figure", T_FIGURE, F_BLOCK },
	{ "font", T_INLINE, F_PHRASING }, { "footer", T_FOOTER, F_BLOCK },
	{ "form", T_FORM, F_BLOCK }, { "frame", T_DROP, 0 },
	{ "frameset", T_DROP, 0 }, { "h1", T_H1, F_BLOCK }, { "h2", T_H2, F_BLOCK },
	{ "h3", T_H3, F_BLOCK }, { "h4", T_H4, F_BLOCK }, { "h5", T_H5, F_BLOCK },
	{ "h6", T_H6, F_BLOCK }, { "head", T_HEAD, 0 }, { "header", T_BLOCK, F_BLOCK },
	{ "hgroup", T_BLOCK, F_BLOCK }, { "hr", T_HR, F_BLOCK },
	{ "html", T_HTML, F_BLOCK }, { "i", T_INLINE, F_PHRASING },
	{ "iframe", T_DROP, 0 }, { "img", T_IMG, F_PHRASING | F_DIVTOP },
	{ "input", T_DROP, 0 }, { "ins", T_INLINE, F_PHRASING },
	{ "kbd", T_INLINE, F_PHRASING }, { "label", T_INLINE, F_PHRASING },
	{ "legend", T_BLOCK, F_BLOCK }, { "li", T_LI, F_BLOCK },
	{ "link", T_LINK, 0 }, { "main", T_BLOCK, F_BLOCK }, { "map", T_INLINE, F_PHRASING },
	{ "mark", T_INLINE, F_PHRASING }, { "math", T_DROP, 0 },
	{ "menu", T_UL, F_BLOCK }, { "meta", T_META, 0 }, { "meter", T_DROP, 0 },
	{ "nav", T_BLOCK, F_BLOCK }, { "nobr", T_INLINE, F_PHRASING },
	{ "noembed", T_DROP, 0 }, { "noframes", T_DROP, 0 }, { "noscript", T_DROP, 0 },
	{ "object", T_OBJECT, 0 }, { "ol", T_OL, F_BLOCK | F_DIVTOP },
	{ "optgroup", T_DROP, 0 }, { "option", T_DROP, 0 }, { "output", T_INLINE, F_PHRASING },
	{ "p", T_P, F_BLOCK | F_DIVTOP }, { "param", T_DROP, 0 },
	{ "picture", T_INLINE, F_PHRASING }, { "pre", T_PRE, F_BLOCK | F_DIVTOP },
	{ "progress", T_DROP, 0 }, { "q", T_INLINE, F_PHRASING },
	{ "rp", T_DROP, 0 }, { "rt", T_INLINE, F_PHRASING }, { "ruby", T_INLINE, F_PHRASING },
	{ "s", T_INLINE, F_PHRASING }, { "samp", T_INLINE, F_PHRASING },
	{ "script", T_DROP, 0 }, { "section", T_SECTION, F_BLOCK },
	{ "select", T_DROP, 0 }, { "small", T_INLINE, F_PHRASING },
	{ "source", T_DROP, 0 }, { "span", T_INLINE, F_PHRASING },
	{ "strike", T_INLINE, F_PHRASING }, { "strong", T_INLINE, F_PHRASING },
	{ "style", T_DROP, 0 }, { "sub", T_INLINE, F_PHRASING },
	{ "summary", T_BLOCK, F_BLOCK }, { "sup", T_INLINE, F_PHRASING },
	{ "svg", T_DROP, 0 }, { "table", T_TABLE, F_BLOCK | F_DIVTOP },
	{ "tbody", T_BLOCK, F_BLOCK }, { "td", T_TD, F_BLOCK },
	{ "template", T_DROP, 0 }, { "textarea", T_DROP, 0 },
	{ "tfoot", T_THEAD, F_BLOCK }, { "th", T_TH, F_BLOCK },
	{ "thead", T_THEAD, F_BLOCK }, { "time", T_INLINE, F_PHRASING },
	{ "title", T_TITLE, 0 }, { "tr", T_TR, F_BLOCK }, { "track", T_DROP, 0 },
	{ "tt", T_INLINE, F_PHRASING }, { "u", T_INLINE, F_PHRASING },
	{ "ul", T_UL, F_BLOCK | F_DIVTOP }, { "var", T_INLINE, F_PHRASING },
	{ "video", T_DROP, 0 }, { "wbr", T_INLINE, F_PHRASING },
};

/* Node flags. */
enum {
	N_GONE = 1,		/* removed from the tree */
	N_CAND = 2,		/* has a content score */
	N_BADROLE = 4,		/* role is menu, navigation, dialog, ... */
	N_BYLINE = 8,		/* rel=author, itemprop=author */
	N_HASHLINK = 16,	/* <a href="#..."> */
	N_SCORE = 32,		/* a paragraph to score */
	N_DATATABLE = 64,	/* a table of data, not of layout */
	N_PRESENT = 128,	/* role=presentation */
	N_INCODE = 256,		/* has a <code> ancestor (see ancestry) */
	N_INFIG = 512,		/* has a <figure> ancestor */
	N_DTKNOWN = 1024,	/* is_data_table's answer is cached ... */
	N_DTYES = 2048,		/* ... and it is yes */
	N_HIDDEN = 4096		/* hidden by an attribute or style */
};

struct node {
	int tag, parent, first, last, next, prev;
	unsigned fl;
	unsigned cls, id;	/* arena offsets of the lower-cased attributes */
	unsigned text, tlen;	/* text nodes: arena offset and byte length */
	int nchar, nlink, ncomma;	/* subtree: characters, in links, commas */
	int tabup;		/* the nearest ancestor table, or -1 (see ancestry) */
	float score;
};

/*
 * What _cleanConditionally counts below a node: its descendants that are
 * p, img, li, input, embed or object, and the characters in its outermost
 * descendants that are ul, ol, h1 ... h6. clean_tag sums them bottom up,
 * once per pass, instead of walking each tested node's subtree again
 * (which costs size times depth: seconds on a page of nested lists).
 */
enum { A_P, A_IMG, A_LI, A_INPUT, A_EMBED, A_NCOUNT };
enum { U_UL, U_OL, U_H1, U_NUNDER = U_H1 + 6 };
struct agg {
	int n[A_NCOUNT];
	int under[U_NUNDER];
};

struct line;

struct ctx {
	TidyDoc doc;
	struct node *n;
	size_t nn, ncap;
	struct buf a;		/* arena: strings, offset 0 is "" */
	struct buf title, ogtitle;
	int body;
	int strip_unlikely, weight_classes, clean_cond;
	int *stack;		/* work list for traversals */
	size_t nstack, scap;
	struct agg *agg;	/* clean_tag's stack of subtree sums */
	size_t nagg, aggcap;
	int *art;		/* the article's nodes */
	size_t artcap;
	struct node *saved;	/* the tree as built, for the later tries */
	size_t nsaved, savecap;	/* nsaved: its node count + 1, 0 before the build */
	int saved_body;
	struct extract_meta *meta;	/* NULL, or the caller's, until the first pass is built */
	int date_rank, lang_rank;
	struct line *lines;	/* emit's lines */
	size_t nlines, lcap;
	struct buf t, raw, best, cur, tmp;	/* scratch, kept for the free */

	/*
	 * The work budget (extract_budget): the pre-scan's steps, then a
	 * step per node visit of all passes together. Over it, spend()
	 * jumps back to extract_html_work, which fails the page: a bound
	 * that holds whatever path the page drives the passes down, with
	 * no check to forget in some loop.
	 */
	unsigned long work, budget;
	jmp_buf over;
};

static void
spend(struct ctx *c, unsigned long n)
{
	if ((c->work += n) > c->budget)
		longjmp(c->over, 1);
}

static int
tagcmp(const void *k, const void *e)
{
	return strcmp(k, ((const struct tagdef *)e)->name);
}

/* The definition of a tag name; custom elements (with '-') are divs. */
static const struct tagdef *
tagdef(const char *name)
{
	static const struct tagdef custom = { "", T_DIV, F_BLOCK | F_DIVTOP };
	static const struct tagdef other = { "", T_INLINE, F_PHRASING };
	char low[16];
	size_t i;
	const struct tagdef *d;

	for (i = 0; name[i] != '\0' && i < sizeof low - 1; i++)
		low[i] = tolower((unsigned char)name[i]);
	low[i] = '\0';
	if (name[i] == '\0' &&
	    (d = bsearch(low, tags, sizeof tags / sizeof tags[0], sizeof tags[0],
	    tagcmp)) != NULL)
		return d;
	return strchr(name, '-') ? &custom : &other;
}

static unsigned
flags_of(int tag)
{
	size_t i;

	for (i = 0; i < sizeof tags / sizeof tags[0]; i++)
		if (tags[i].tag == tag && tag != T_INLINE && tag != T_BLOCK &&
		    tag != T_DROP && tag != T_UL)
			return tags[i].fl;
	return tag == T_BLOCK || tag == T_UL ? F_BLOCK :
	    tag == T_TEXT || tag == T_INLINE ? F_PHRASING : 0;
}

static unsigned
arena_add(struct ctx *c, const char *s, size_t n, int lower)
{
	unsigned off = c->a.len;
	size_t i;

	if (n == 0)
		return 0;
	buf_add(&c->a, s, n);
	if (lower)
		for (i = off; i < c->a.len; i++)
			c->a.p[i] = tolower((unsigned char)c->a.p[i]);
	buf_addc(&c->a, '\0');
	return off;
}

static int
new_node(struct ctx *c, int tag, int parent)
{
	struct node *n;
	int i;

	c->n = xgrow(c->n, &c->ncap, c->nn + 1, sizeof *c->n);
	i = c->nn++;
	n = &c->n[i];
	memset(n, 0, sizeof *n);
	n->tag = tag;
	n->parent = parent;
	n->first = n->last = n->next = n->prev = -1;
	n->tabup = -1;
	if (parent >= 0) {
		n->prev = c->n[parent].last;
		if (n->prev >= 0)
			c->n[n->prev].next = i;
		else
			c->n[parent].first = i;
		c->n[parent].last = i;
	}
	return i;
}

/*
 * Collapse white space to single spaces in place: ASCII white space, the
 * no-break space, NEL and the Unicode line and paragraph separators (which
 * many line readers split on); other C0 and C1 controls are dropped.
 */
static size_t
collapse(char *s, size_t n)
{
	size_t i, j = 0, k;
	int sp = 0;

	for (i = 0; i < n; i += k) {
		unsigned char ch = s[i], c2 = i + 1 < n ? s[i + 1] : 0;
		int white = 0, drop = 0;

		k = 1;
		if (ch <= ' ') {
			white = ch == ' ' || (ch >= '\t' && ch <= '\r') || ch >= 0x1c;
			drop = !white;
		} else if (ch == 0x7f) {
			drop = 1;
		} else if (ch == 0xc2 && c2 >= 0x80 && c2 <= 0xa0) {
			k = 2;
			white = c2 == 0x85 || c2 == 0xa0;
			drop = !white;
		} else if (ch == 0xe2 && c2 == 0x80 && i + 2 < n &&
		    ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			k = 3;
			white = 1;
		}
		if (white) {
			if (!sp)
				s[j++] = ' ';
			sp = 1;
		} else if (!drop) {
			memmove(s + j, s + i, k);
			j += k;
			sp = 0;
		}
	}
	return j;
}

static const char *
attr(TidyNode tn, const char *name)
{
	TidyAttr at;

	for (at = tidyAttrFirst(tn); at; at = tidyAttrNext(at))
		if (strcasecmp(tidyAttrName(at), name) == 0)
			return tidyAttrValue(at) ? tidyAttrValue(at) : "";
	return NULL;
}

static int
hidden(TidyNode tn)
{
	const char *s;

	if (attr(tn, "hidden") != NULL)
		return 1;
	if ((s = attr(tn, "aria-hidden")) != NULL && strcasecmp(s, "true") == 0 &&
	    ((s = attr(tn, "class")) == NULL || strstr(s, "fallback-image") == NULL))
		return 1;
	if ((s = attr(tn, "style")) != NULL) {
		char st[256];
		size_t n = collapse(strncpy(st, s, sizeof st - 1), strnlen(s, sizeof st - 1));
		size_t i, j = 0;

		for (i = 0; i < n; i++)
			if (st[i] != ' ')
				st[j++] = tolower((unsigned char)st[i]);
		st[j] = '\0';
		if (strstr(st, "display:none") || strstr(st, "visibility:hidden"))
			return 1;
	}
	return 0;
}

static void
text_of(struct ctx *c, TidyNode tn, struct buf *b)
{
	TidyBuffer tb;

	tidyBufInit(&tb);
	if (tidyNodeGetValue(c->doc, tn, &tb) && tb.size > 0)
		buf_add(b, tb.bp, tb.size);
	tidyBufFree(&tb);
}

/* ---- the page's date and language ---- */

/*
 * Where a date or language was found, best first; a later find replaces
 * an earlier one only when it ranks better.
 */
enum {
	D_LDJSON = 1, D_METAPUB, D_TIMEPUB, D_META, D_TIME, D_NONE
};
enum {
	L_HTML = 1, L_META, L_LDJSON, L_NONE
};

static void
set_date(struct ctx *c, const char *v, size_t n, int rank)
{
	char iso[40];

	if (c->meta == NULL || rank >= c->date_rank ||
	    extract_iso_date(v, n, iso, sizeof iso) < 0)
		return;
	c->meta->date.len = 0;
	buf_adds(&c->meta->date, iso);
	c->date_rank = rank;
}

static void
set_lang(struct ctx *c, const char *v, size_t n, int rank)
{
	char tag[40];

	if (c->meta == NULL || rank >= c->lang_rank ||
	    extract_lang_tag(v, n, tag, sizeof tag) < 0)
		return;
	c->meta->lang.len = 0;
	buf_adds(&c->meta->lang, tag);
	c->lang_rank = rank;
}

/* The string value of the first "key": "value" in a JSON text, or NULL. */
static const char *
json_value(const char *s, size_t n, const char *key, size_t *len)
{
	const char *end = s + n, *p = s, *q;
	size_t k = strlen(key);

	while ((p = memmem(p, end - p, key, k)) != NULL) {
		p += k;
		if (p[-k - 1] != '"' || p >= end || *p != '"')
			continue;
		for (q = p + 1; q < end && (*q == ' ' || *q == '\t' ||
		    *q == '\n' || *q == '\r'); q++)
			;
		if (q >= end || *q != ':')
			continue;
		for (q++; q < end && (*q == ' ' || *q == '\t' || *q == '\n' ||
		    *q == '\r'); q++)
			;
		if (q >= end || *q != '"')
			continue;
		p = ++q;
		while (q < end && *q != '"' && *q != '\\')
			q++;
		if (q >= end || *q != '"')
			continue;
		*len = q - p;
		return p;
	}
	return NULL;
}

/* A <script type="application/ld+json">: schema.org's datePublished, inLanguage. */
static void
ld_json(struct ctx *c, TidyNode tn)
{
	const char *s = attr(tn, "type"), *v;
	struct buf *t = &c->t;
	size_t n;

	if (s == NULL || strcasestr(s, "ld+json") == NULL)
		return;
	t->len = 0;
	for (TidyNode x = tidyGetChild(tn); x; x = tidyGetNext(x))
		text_of(c, x, t);
	if (t->len == 0)
		return;
	if ((v = json_value(t->p, t->len, "datePublished", &n)) != NULL)
		set_date(c, v, n, D_LDJSON);
	if ((v = json_value(t->p, t->len, "inLanguage", &n)) != NULL)
		set_lang(c, v, n, L_LDJSON);
}

static void
head_meta(struct ctx *c, TidyNode tn)
{
	static const char *const pub[] = { "article:published_time",
	    "og:published_time", "datepublished", "publish-date",
	    "publish_date", "publishdate", "pubdate", "sailthru.date",
	    "parsely-pub-date", "dc.date.issued", "dcterms.issued", NULL };
	static const char *const other[] = { "date", "dc.date",
	    "dcterms.date", "dcterms.created", "dc.date.created", NULL };
	const char *k, *v = attr(tn, "content");
	const char *const *w;

	if (v && (k = attr(tn, "http-equiv")) != NULL &&
	    strcasecmp(k, "content-language") == 0) {
		set_lang(c, v, strlen(v), L_META);
		return;
	}
	if ((k = attr(tn, "property")) == NULL && (k = attr(tn, "name")) == NULL)
		k = attr(tn, "itemprop");
	if (k == NULL || v == NULL)
		return;
	if (c->ogtitle.len == 0 &&
	    (strcasecmp(k, "og:title") == 0 || strcasecmp(k, "twitter:title") == 0))
		buf_adds(&c->ogtitle, v);
	for (w = pub; *w; w++)
		if (strcasecmp(k, *w) == 0)
			set_date(c, v, strlen(v), D_METAPUB);
	for (w = other; *w; w++)
		if (strcasecmp(k, *w) == 0)
			set_date(c, v, strlen(v), D_META);
}

/* Copy tidy's subtree under tn into our tree as children of parent. */
static void
build(struct ctx *c, TidyNode tn, int parent, int depth)
{
	TidyNode ch;
	struct buf *t = &c->t;

	for (ch = tidyGetChild(tn); ch; ch = tidyGetNext(ch)) {
		TidyNodeType ty = tidyNodeGetType(ch);
		const struct tagdef *d;
		const char *s, *name;
		int i;

		spend(c, 1);
		if (ty == TidyNode_Text || ty == TidyNode_CDATA) {
			t->len = 0;
			text_of(c, ch, t);
			t->len = collapse(t->p ? t->p : "", t->len);
			if (t->len == 0)
				continue;
			i = new_node(c, T_TEXT, parent);
			c->n[i].text = arena_add(c, t->p, t->len, 0);
			c->n[i].tlen = t->len;
			continue;
		}
		if (ty != TidyNode_Start && ty != TidyNode_StartEnd)
			continue;
		if ((name = tidyNodeGetName(ch)) == NULL)
			continue;
		d = tagdef(name);
		if (d->tag == T_TITLE) {
			if (c->title.len == 0)
				for (TidyNode x = tidyGetChild(ch); x; x = tidyGetNext(x))
					text_of(c, x, &c->title);
			continue;
		}
		if (d->tag == T_META) {
			head_meta(c, ch);
			continue;
		}
		if (d->tag == T_DROP || d->tag == T_LINK) {
			if (c->meta && strcasecmp(name, "script") == 0)
				ld_json(c, ch);
			continue;
		}
		if (c->meta && d->tag == T_HTML && ((s = attr(ch, "lang")) ||
		    (s = attr(ch, "xml:lang"))))
			set_lang(c, s, strlen(s), L_HTML);
		if (c->meta && strcasecmp(name, "time") == 0 &&
		    (s = attr(ch, "datetime")) != NULL) {
			const char *ip = attr(ch, "itemprop");

			set_date(c, s, strlen(s), attr(ch, "pubdate") ||
			    (ip && strcasecmp(ip, "datePublished") == 0) ?
			    D_TIMEPUB : D_TIME);
		}
		if (d->tag == T_HEAD) {
			build(c, ch, -1, depth + 1);
			continue;
		}
		i = new_node(c, d->tag, parent);
		if ((s = attr(ch, "class")) != NULL)
			c->n[i].cls = arena_add(c, s, strlen(s), 1);
		if ((s = attr(ch, "id")) != NULL)
			c->n[i].id = arena_add(c, s, strlen(s), 1);
		if ((s = attr(ch, "role")) != NULL) {
			static const char *const bad[] = { "menu", "menubar",
			    "complementary", "navigation", "alert", "alertdialog",
			    "dialog" };
			size_t k;

			for (k = 0; k < sizeof bad / sizeof bad[0]; k++)
				if (strcasecmp(s, bad[k]) == 0)
					c->n[i].fl |= N_BADROLE;
			if (strcasecmp(s, "presentation") == 0)
				c->n[i].fl |= N_PRESENT;
		}
		if (((s = attr(ch, "rel")) != NULL && strcasecmp(s, "author") == 0) ||
		    ((s = attr(ch, "itemprop")) != NULL && strstr(s, "author")))
			c->n[i].fl |= N_BYLINE;
		if (d->tag == T_A && (s = attr(ch, "href")) != NULL && s[0] == '#')
			c->n[i].fl |= N_HASHLINK;
		if (hidden(ch))
			c->n[i].fl |= N_HIDDEN;
		if (d->tag == T_BODY && c->body < 0)
			c->body = i;
		if (d->tag == T_TABLE && (attr(ch, "summary") != NULL))
			c->n[i].fl |= N_DATATABLE;
		build(c, ch, i, depth + 1);
	}
}

/* ---- traversal helpers ---- */

static int
gone(const struct ctx *c, int i)
{
	return c->n[i].fl & N_GONE;
}

/* The next node in document order after i within the subtree of root. */
static int
next_in(struct ctx *c, int i, int root, int skip_children)
{
	spend(c, 1);
	if (!skip_children && c->n[i].first >= 0)
		return c->n[i].first;
	while (i != root && i >= 0) {
		if (c->n[i].next >= 0)
			return c->n[i].next;
		i = c->n[i].parent;
	}
	return -1;
}

static void
unlink_node(struct ctx *c, int i)
{
	struct node *n = &c->n[i];

	if (n->prev >= 0)
		c->n[n->prev].next = n->next;
	else if (n->parent >= 0)
		c->n[n->parent].first = n->next;
	if (n->next >= 0)
		c->n[n->next].prev = n->prev;
	else if (n->parent >= 0)
		c->n[n->parent].last = n->prev;
	n->next = n->prev = -1;
}

/*
 * Remove i and its subtree; ancestors' counts are kept right, and their
 * cached is_data_table answers forgotten.
 */
static void
remove_node(struct ctx *c, int i)
{
	int p;

	for (p = c->n[i].parent; p >= 0; p = c->n[p].parent) {
		spend(c, 1);
		c->n[p].nchar -= c->n[i].nchar;
		c->n[p].nlink -= c->n[i].nlink;
		c->n[p].ncomma -= c->n[i].ncomma;
		c->n[p].fl &= ~(N_DTKNOWN | N_DTYES);	/* its subtree changed */
	}
	unlink_node(c, i);
	c->n[i].fl |= N_GONE;
}

/* Characters (code points) and commas of a text. */
static void
count_text(const char *s, size_t n, int *nchar, int *ncomma)
{
	size_t i;

	*nchar = *ncomma = 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = s[i];

		if ((ch & 0xc0) != 0x80)
			++*nchar;
		if (ch == ',')
			++*ncomma;
		else if (ch == 0xef && i + 2 < n && (unsigned char)s[i + 1] == 0xbc &&
		    (unsigned char)s[i + 2] == 0x8c)
			++*ncomma;	/* U+FF0C fullwidth comma */
		else if (ch == 0xd8 && i + 1 < n && (unsigned char)s[i + 1] == 0x8c)
			++*ncomma;	/* U+060C Arabic comma */
		else if (ch == 0xe3 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
		    (unsigned char)s[i + 2] == 0x81)
			++*ncomma;	/* U+3001 ideographic comma */
	}
}

/* Recompute the counts of every live tree, bottom up (iterative post-order). */
static void
stats(struct ctx *c)
{
	size_t r;

	for (r = 0; r < c->nn; r++) {
		int j = r;

		if (c->n[r].parent >= 0 || gone(c, r))
			continue;
		for (;;) {
			while (c->n[j].first >= 0)
				j = c->n[j].first;
			for (;;) {
				struct node *n = &c->n[j];
				int k;

				spend(c, 1);
				if (n->tag == T_TEXT) {
					const char *t = c->a.p + n->text;
					size_t len = n->tlen;

					/* Edge spaces are not counted. */
					if (len && t[0] == ' ')
						t++, len--;
					if (len && t[len - 1] == ' ')
						len--;
					count_text(t, len, &n->nchar, &n->ncomma);
					n->nlink = 0;
				} else {
					n->nchar = n->nlink = n->ncomma = 0;
					for (k = n->first; k >= 0; k = c->n[k].next) {
						n->nchar += c->n[k].nchar;
						n->ncomma += c->n[k].ncomma;
						n->nlink += c->n[k].nlink;
					}
					if (n->tag == T_A)
						n->nlink = n->fl & N_HASHLINK ?
						    (int)(n->nchar * 0.3) : n->nchar;
				}
				if (j == (int)r)
					goto done;
				if (n->next >= 0) {
					j = n->next;
					break;
				}
				j = n->parent;
			}
		}
done:
		;
	}
}

static double
link_density(const struct ctx *c, int i)
{
	return c->n[i].nchar > 0 ? (double)c->n[i].nlink / c->n[i].nchar : 0;
}

/* ---- Readability's regular expressions, as word lists ---- */

static int
match_any(const char *s, const char *const *w)
{
	for (; *w; w++)
		if (strstr(s, *w))
			return 1;
	return 0;
}

static const char *const unlikely[] = { "-ad-", "ai2html", "banner",
	"breadcrumbs", "combx", "comment", "community", "cover-wrap", "disqus",
	"extra", "footer", "gdpr", "header", "legends", "menu", "related",
	"remark", "replies", "rss", "shoutbox", "sidebar", "skyscraper",
	"social", "sponsor", "supplemental", "ad-break", "agegate",
	"pagination", "pager", "popup", "yom-remote", NULL };
static const char *const maybe[] = { "and", "article", "body", "column",
	"content", "main", "shadow", NULL };
static const char *const positive[] = { "article", "body", "content",
	"entry", "hentry", "h-entry", "main", "page", "pagination", "post",
	"text", "blog", "story", NULL };
static const char *const negative[] = { "-ad-", "hidden", "banner",
	"combx", "comment", "com-", "contact", "footer", "gdpr", "masthead",
	"media", "meta", "outbrain", "promo", "related", "scroll", "share",
	"shoutbox", "sidebar", "skyscraper", "sponsor", "shopping", "tags",
	"widget", NULL };
static const char *const byline[] = { "byline", "author", "dateline",
	"writtenby", "p-author", NULL };

/* " hid " as a whole word of a class or id list. */
static int
word_hid(const char *s)
{
	const char *p;

	for (p = s; (p = strstr(p, "hid")) != NULL; p += 3)
		if ((p == s || p[-1] == ' ') && (p[3] == '\0' || p[3] == ' '))
			return 1;
	return 0;
}

static int
class_weight(const struct ctx *c, int i)
{
	const char *v[2] = { c->a.p + c->n[i].cls, c->a.p + c->n[i].id };
	int w = 0, k;

	if (!c->weight_classes)
		return 0;
	for (k = 0; k < 2; k++) {
		if (*v[k] == '\0')
			continue;
		if (match_any(v[k], negative) || word_hid(v[k]))
			w -= 25;
		if (match_any(v[k], positive))
			w += 25;
	}
	return w;
}

/* "class id" of node i in buf s. */
static const char *
match_string(const struct ctx *c, int i, char *s, size_t size)
{
	snprintf(s, size, "%s %s", c->a.p + c->n[i].cls, c->a.p + c->n[i].id);
	return s;
}

static int
has_ancestor(struct ctx *c, int i, int tag)
{
	for (i = c->n[i].parent; i >= 0; i = c->n[i].parent) {
		spend(c, 1);
		if (c->n[i].tag == tag)
			return 1;
	}
	return 0;
}

static int
is_heading(int tag)
{
	return tag >= T_H1 && tag <= T_H6;
}

/* The text of node i, collapsed and trimmed, into b (b is reset). */
static void
inner_text(struct ctx *c, int i, struct buf *b)
{
	int j;

	b->len = 0;
	for (j = i; j >= 0; j = next_in(c, j, i, 0)) {
		if (c->n[j].tag == T_TEXT)
			buf_add(b, c->a.p + c->n[j].text, c->n[j].tlen);
		else if (c->n[j].tag == T_BR || (flags_of(c->n[j].tag) & F_BLOCK))
			buf_addc(b, ' ');
	}
	b->len = collapse(b->p ? b->p : "", b->len);
	while (b->len && b->p[b->len - 1] == ' ')
		b->len--;
	if (b->len && b->p[0] == ' ')
		memmove(b->p, b->p + 1, --b->len);
	buf_reserve(b, 0);
	b->p[b->len] = '\0';
}

/* Up to 64 words of s (runs of letters and digits, lower-cased, cut at 31 bytes). */
static int
split_words(const char *s, char w[64][32])
{
	int n = 0;

	while (*s && n < 64) {
		char *d;

		while (*s && !isalnum((unsigned char)*s) && (unsigned char)*s < 0x80)
			s++;
		if (!*s)
			break;
		d = w[n];
		while (*s && (isalnum((unsigned char)*s) || (unsigned char)*s >= 0x80)) {
			if (d - w[n] < 31)
				*d++ = tolower((unsigned char)*s);
			s++;
		}
		*d = '\0';
		n++;
	}
	return n;
}

/*
 * Readability's _textSimilarity: 1 minus the share of b's text (by length)
 * made of words that are not in a.
 */
static double
similarity(const char *a, const char *b)
{
	char wa[64][32], wb[64][32];
	int na = split_words(a, wa), nb = split_words(b, wb), i, j;
	size_t len = 0, lenb = 0;

	if (na == 0 || nb == 0)
		return 0;
	for (j = 0; j < nb; j++) {
		int found = 0;

		for (i = 0; i < na && !found; i++)
			found = strcmp(wa[i], wb[j]) == 0;
		lenb += strlen(wb[j]) + 1;
		if (!found)
			len += strlen(wb[j]) + 1;
	}
	return 1 - (double)len / lenb;
}

/* Readability's isElementWithoutContent: no text, only br and hr inside. */
static int
without_content(struct ctx *c, int i)
{
	int k;

	if (c->n[i].nchar > 0)
		return 0;
	for (k = c->n[i].first; k >= 0; k = c->n[k].next, spend(c, 1))
		if (c->n[k].tag != T_BR && c->n[k].tag != T_HR &&
		    !(c->n[k].tag == T_TEXT))
			return 0;
	return 1;
}

static int
has_block_child(struct ctx *c, int i)
{
	int j;

	for (j = c->n[i].first; j >= 0; j = next_in(c, j, i, 0))
		if (flags_of(c->n[j].tag) & F_DIVTOP)
			return 1;
	return 0;
}

static int
is_phrasing(struct ctx *c, int i)
{
	int j;

	spend(c, 1);
	if (c->n[i].tag == T_TEXT)
		return 1;
	if (!(flags_of(c->n[i].tag) & F_PHRASING))
		return 0;
	if (c->n[i].tag != T_A && c->n[i].tag != T_INLINE)
		return 1;
	/* a, del, ins: phrasing only when all their children are. */
	for (j = c->n[i].first; j >= 0; j = c->n[j].next)
		if (!is_phrasing(c, j))
			return 0;
	return 1;
}

/* Wrap each run of phrasing children of div i in a new p. */
static void
wrap_runs(struct ctx *c, int i)
{
	int k, next, p = -1;

	for (k = c->n[i].first; k >= 0; k = next) {
		next = c->n[k].next;
		spend(c, 1);
		if (is_phrasing(c, k)) {
			if (p < 0) {
				if (c->n[k].tag == T_TEXT && c->n[k].tlen == 1 &&
				    c->a.p[c->n[k].text] == ' ')
					continue;
				p = new_node(c, T_P, -1);
				/* Put p where k is. */
				c->n[p].parent = i;
				c->n[p].prev = c->n[k].prev;
				c->n[p].next = k;
				if (c->n[k].prev >= 0)
					c->n[c->n[k].prev].next = p;
				else
					c->n[i].first = p;
				c->n[k].prev = p;
			}
			unlink_node(c, k);
			c->n[k].parent = p;
			c->n[k].prev = c->n[p].last;
			if (c->n[p].last >= 0)
				c->n[c->n[p].last].next = k;
			else
				c->n[p].first = k;
			c->n[p].last = k;
		} else {
			p = -1;
		}
	}
}

/* Replace node i by its child k in i's parent. */
static void
replace_by_child(struct ctx *c, int i, int k)
{
	struct node *n = &c->n[i];

	unlink_node(c, k);
	c->n[k].parent = n->parent;
	c->n[k].prev = n->prev;
	c->n[k].next = n->next;
	if (n->prev >= 0)
		c->n[n->prev].next = k;
	else if (n->parent >= 0)
		c->n[n->parent].first = k;
	if (n->next >= 0)
		c->n[n->next].prev = k;
	else if (n->parent >= 0)
		c->n[n->parent].last = k;
	n->next = n->prev = -1;
	n->fl |= N_GONE;
}

/* The only element child of i (text must be blank), or -1. */
static int
single_child(struct ctx *c, int i, int tag)
{
	int k, found = -1;

	for (k = c->n[i].first; k >= 0; k = c->n[k].next) {
		spend(c, 1);
		if (c->n[k].tag == T_TEXT) {
			if (c->n[k].nchar > 0)
				return -1;
			continue;
		}
		if (found >= 0 || (tag != T_NONE && c->n[k].tag != tag))
			return -1;
		found = k;
	}
	return found;
}

/* ---- the Readability passes ---- */

/*
 * Remove the hidden nodes, except one that holds most of the page's text:
 * a page whose markup leaves a hidden menu open nests the rest of the
 * page, article and all, inside it (a browser shows it, or the page's
 * script does).
 */
static void
unhide(struct ctx *c)
{
	int i, next, total = c->n[c->body].nchar;

	for (i = c->body; i >= 0; i = next) {
		if ((c->n[i].fl & N_HIDDEN) && !(c->n[i].nchar > 500 &&
		    2 * c->n[i].nchar > total)) {
			next = next_in(c, i, c->body, 1);
			remove_node(c, i);
			continue;
		}
		next = next_in(c, i, c->body, 0);
	}
}

static void
prepare(struct ctx *c, struct buf *tmp)
{
	int i, next, removed_title = 0;
	char ms[512];
	const char *title = c->ogtitle.len ? c->ogtitle.p : c->title.p ? c->title.p : "";
	int have_byline = 0;

	stats(c);
	unhide(c);
	for (i = c->body; i >= 0; i = next) {
		struct node *n = &c->n[i];
		const char *m;

		if (n->tag == T_TEXT) {
			next = next_in(c, i, c->body, 0);
			continue;
		}
		m = match_string(c, i, ms, sizeof ms);
		if (!have_byline && ((n->fl & N_BYLINE) || match_any(m, byline)) &&
		    n->nchar > 0 && n->nchar < 100) {
			have_byline = 1;
			next = next_in(c, i, c->body, 1);
			remove_node(c, i);
			continue;
		}
		if (!removed_title && (n->tag == T_H1 || n->tag == T_H2)) {
			inner_text(c, i, tmp);
			if (similarity(title, tmp->p ? tmp->p : "") > 0.75) {
				removed_title = 1;
				next = next_in(c, i, c->body, 1);
				remove_node(c, i);
				continue;
			}
		}
		if (c->strip_unlikely && i != c->body && n->tag != T_A &&
		    ((match_any(m, unlikely) && !match_any(m, maybe) &&
		    !has_ancestor(c, i, T_TABLE) && !has_ancestor(c, i, T_CODE)) ||
		    (n->fl & N_BADROLE))) {
			next = next_in(c, i, c->body, 1);
			remove_node(c, i);
			continue;
		}
		if ((n->tag == T_DIV || n->tag == T_SECTION || n->tag == T_BLOCK ||
		    is_heading(n->tag)) && i != c->body && without_content(c, i)) {
			next = next_in(c, i, c->body, 1);
			remove_node(c, i);
			continue;
		}
		if (n->tag == T_SECTION || (n->tag >= T_H2 && n->tag <= T_H6) ||
		    n->tag == T_P || n->tag == T_TD || n->tag == T_PRE)
			n->fl |= N_SCORE;
		if (n->tag == T_DIV) {
			int k;

			wrap_runs(c, i);
			n = &c->n[i];
			if ((k = single_child(c, i, T_P)) >= 0 &&
			    link_density(c, i) < 0.25) {
				replace_by_child(c, i, k);
				c->n[k].fl |= N_SCORE;
				next = k;
				continue;
			} else if (!has_block_child(c, i)) {
				n->tag = T_P;
				n->fl |= N_SCORE;
			}
		}
		next = next_in(c, i, c->body, 0);
	}
	stats(c);
}

static void
init_candidate(struct ctx *c, int i)
{
	struct node *n = &c->n[i];
	float s = 0;

	switch (n->tag) {
	case T_DIV: s = 5; break;
	case T_PRE: case T_TD: case T_BLOCKQUOTE: s = 3; break;
	case T_ADDRESS: case T_OL: case T_UL: case T_DL: case T_DD: case T_DT:
	case T_LI: case T_FORM: s = -3; break;
	case T_H1: case T_H2: case T_H3: case T_H4: case T_H5: case T_H6:
	case T_TH: s = -5; break;
	}
	n->score = s + class_weight(c, i);
	n->fl |= N_CAND;
}

/* Score the paragraphs, return the top candidate (or -1). */
static int
score(struct ctx *c)
{
	int i, level, top = -1;
	size_t k;

	spend(c, 2 * c->nn);
	for (k = 0; k < c->nn; k++) {
		struct node *n = &c->n[k];
		float s;

		if (!(n->fl & N_SCORE) || gone(c, k) || n->parent < 0 ||
		    n->nchar < 25)
			continue;
		s = 1 + (n->ncomma + 1) + (n->nchar / 100 < 3 ? n->nchar / 100 : 3);
		for (i = n->parent, level = 0; i >= 0 && level < 5;
		    i = c->n[i].parent, level++) {
			if (c->n[i].parent < 0 && c->n[i].tag == T_HTML)
				break;
			if (!(c->n[i].fl & N_CAND))
				init_candidate(c, i);
			c->n[i].score += s / (level == 0 ? 1 : level == 1 ? 2 : level * 3);
		}
	}
	for (k = 0; k < c->nn; k++) {
		if (!(c->n[k].fl & N_CAND) || gone(c, k))
			continue;
		c->n[k].score *= 1 - link_density(c, k);
		if (top < 0 || c->n[k].score > c->n[top].score)
			top = k;
	}
	return top;
}

static int
depth_of(struct ctx *c, int i)
{
	int d = 0;

	for (; c->n[i].parent >= 0; i = c->n[i].parent, d++)
		spend(c, 1);
	return d;
}

/* The depth of the deepest common ancestor of a and b, or -1 if none. */
static int
meet_depth(struct ctx *c, int a, int b)
{
	int da = depth_of(c, a), db = depth_of(c, b);

	for (; da > db; da--)
		a = c->n[a].parent;
	for (; db > da; db--)
		b = c->n[b].parent;
	while (a != b && a >= 0) {
		spend(c, 1);
		a = c->n[a].parent;
		b = c->n[b].parent;
		da--;
	}
	return a >= 0 ? da : -1;
}

/* Readability's refinements of the top candidate. */
static int
refine(struct ctx *c, int top)
{
	int alt[5], nalt = 0, p, k;
	size_t i;
	float last, thr;

	/* The best few others within 75 % of the top score. */
	spend(c, c->nn);
	for (i = 0; i < c->nn; i++) {
		if ((int)i == top || !(c->n[i].fl & N_CAND) || gone(c, i) ||
		    c->n[i].score < 0.75 * c->n[top].score)
			continue;
		if (nalt < 5) {
			alt[nalt++] = i;
		} else {
			int w = 0;

			for (k = 1; k < nalt; k++)
				if (c->n[alt[k]].score < c->n[alt[w]].score)
					w = k;
			if (c->n[i].score > c->n[alt[w]].score)
				alt[w] = i;
		}
	}
	if (nalt >= 3) {
		/*
		 * Readability climbs to the first ancestor of top that holds
		 * three of them. An ancestor holds one when it is at or above
		 * their deepest common ancestor with top, so it is the first
		 * at or above the third deepest of those: a walk up per
		 * alternative, not one per alternative and ancestor.
		 */
		int d[5], dp, x;

		for (k = 0; k < nalt; k++) {
			d[k] = meet_depth(c, alt[k], top);
			for (x = k; x > 0 && d[x] > d[x - 1]; x--) {
				int t = d[x];

				d[x] = d[x - 1];
				d[x - 1] = t;
			}
		}
		dp = depth_of(c, top) - 1;
		for (p = c->n[top].parent; p >= 0 && c->n[p].tag != T_BODY;
		    p = c->n[p].parent, dp--) {
			spend(c, 1);
			if (dp <= d[2]) {
				top = p;
				if (!(c->n[top].fl & N_CAND))
					init_candidate(c, top);
				break;
			}
		}
	}
	last = c->n[top].score;
	thr = last / 3;
	for (p = c->n[top].parent; p >= 0 && c->n[p].tag != T_BODY;
	    p = c->n[p].parent) {
		spend(c, 1);
		if (!(c->n[p].fl & N_CAND))
			continue;
		if (c->n[p].score < thr)
			break;
		if (c->n[p].score > last) {
			top = p;
			break;
		}
		last = c->n[p].score;
	}
	for (p = c->n[top].parent; p >= 0 && c->n[p].tag != T_BODY &&
	    single_child(c, p, T_NONE) == top; p = c->n[p].parent)
		top = p;
	return top;
}

static int
ends_sentence(const char *s)
{
	const char *p;

	for (p = s; (p = strchr(p, '.')) != NULL; p++)
		if (p[1] == ' ' || p[1] == '\0')
			return 1;
	return 0;
}

/* The article: top and the siblings that belong with it, into out[]. */
static size_t
siblings(struct ctx *c, int top, int *out, size_t max, struct buf *tmp)
{
	float thr = c->n[top].score * 0.2f;
	int k, parent = c->n[top].parent;
	size_t n = 0;
	const char *tcls = c->a.p + c->n[top].cls;

	if (thr < 10)
		thr = 10;
	if (parent < 0) {
		out[n++] = top;
		return n;
	}
	for (k = c->n[parent].first; k >= 0 && n < max; k = c->n[k].next) {
		int add = k == top;

		spend(c, 1);
		if (!add && c->n[k].tag != T_TEXT) {
			float bonus = 0;

			if (*tcls && strcmp(c->a.p + c->n[k].cls, tcls) == 0)
				bonus = c->n[top].score * 0.2f;
			if ((c->n[k].fl & N_CAND) && c->n[k].score + bonus >= thr) {
				add = 1;
			} else if (c->n[k].tag == T_P) {
				double ld = link_density(c, k);
				int len = c->n[k].nchar;

				if (len > 80 && ld < 0.25) {
					add = 1;
				} else if (len < 80 && len > 0 && ld == 0) {
					inner_text(c, k, tmp);
					add = ends_sentence(tmp->p);
				}
			}
		}
		if (add)
			out[n++] = k;
	}
	return n;
}

/*
 * Readability's _isDataTable: the first caption, th, thead or nested table
 * (in document order) decides, else the rows and columns. The answer is
 * cached on the node until a removal below it (remove_node).
 */
static int
is_data_table(struct ctx *c, int i)
{
	int rows = 0, cols = 0, cur = 0, j, yes = -1;

	if (c->n[i].fl & N_PRESENT)
		return 0;
	if (c->n[i].fl & N_DATATABLE)
		return 1;
	if (c->n[i].fl & N_DTKNOWN)
		return (c->n[i].fl & N_DTYES) != 0;
	for (j = c->n[i].first; j >= 0 && yes < 0; j = next_in(c, j, i, 0)) {
		int t = c->n[j].tag;

		if (t == T_CAPTION || t == T_TH || t == T_THEAD)
			yes = 1;
		else if (t == T_TABLE)
			yes = 0;
		else if (t == T_TR) {
			rows++;
			cur = 0;
		} else if (t == T_TD) {
			if (++cur > cols)
				cols = cur;
		}
	}
	if (yes < 0)
		yes = rows >= 10 || cols > 4 || rows * cols > 10;
	c->n[i].fl |= N_DTKNOWN | (yes ? N_DTYES : 0);
	return yes;
}

static int
in_data_table(struct ctx *c, int i)
{
	for (i = c->n[i].tabup; i >= 0; i = c->n[i].tabup) {
		spend(c, 1);
		if (is_data_table(c, i))
			return 1;
	}
	return 0;
}

/*
 * Set every node's N_INCODE, N_INFIG and tabup, top down. Removals do not
 * change a live node's ancestors, so they hold while the article is
 * cleaned, and should_clean asks them without a walk to the root.
 */
static void
ancestry(struct ctx *c)
{
	size_t r;
	int j;

	for (r = 0; r < c->nn; r++) {
		if (c->n[r].parent >= 0 || gone(c, r))
			continue;
		c->n[r].fl &= ~(N_INCODE | N_INFIG);
		c->n[r].tabup = -1;
		for (j = c->n[r].first; j >= 0; j = next_in(c, j, r, 0)) {
			int p = c->n[j].parent;
			struct node *pn = &c->n[p];

			c->n[j].fl &= ~(N_INCODE | N_INFIG);
			c->n[j].fl |= (pn->fl & (N_INCODE | N_INFIG)) |
			    (pn->tag == T_CODE ? N_INCODE : 0) |
			    (pn->tag == T_FIGURE ? N_INFIG : 0);
			c->n[j].tabup = pn->tag == T_TABLE ? p : pn->tabup;
		}
	}
}

/*
 * Readability's _cleanConditionally verdict for node i; below holds the
 * counts of its subtree (struct agg).
 */
static int
should_clean(struct ctx *c, int i, const struct agg *below)
{
	struct node *n = &c->n[i];
	int tag = n->tag, weight, is_list, p, img, li, input, embed, hchars = 0;
	int j, list_chars = 0;
	double ld;

	if (!c->clean_cond)
		return 0;
	if (tag == T_TABLE && is_data_table(c, i))
		return 0;
	if ((n->fl & N_INCODE) || in_data_table(c, i))
		return 0;
	is_list = tag == T_UL || tag == T_OL;
	if (!is_list) {
		list_chars = below->under[U_UL] + below->under[U_OL];
		is_list = n->nchar > 0 && (double)list_chars / n->nchar > 0.9;
	}
	weight = class_weight(c, i);
	if (weight < 0)
		return 1;
	if (n->ncomma >= 10)
		return 0;
	p = below->n[A_P];
	img = below->n[A_IMG];
	li = below->n[A_LI] - 100;
	input = below->n[A_INPUT];
	embed = below->n[A_EMBED];
	for (j = 0; j < 6; j++)
		hchars += below->under[U_H1 + j];
	ld = link_density(c, i);
	if (img > 1 && (double)p / img < 0.5 && !(n->fl & N_INFIG))
		return 1;
	if (!is_list && li > p)
		return 1;
	if (input > p / 3)
		return 1;
	if (!is_list && (n->nchar == 0 || (double)hchars / n->nchar < 0.9) &&
	    n->nchar < 25 && (img == 0 || img > 2) && !(n->fl & N_INFIG))
		return 1;
	if (!is_list && weight < 25 && ld > 0.2)
		return 1;
	if (weight >= 25 && ld > 0.5)
		return 1;
	if ((embed == 1 && n->nchar < 75) || embed > 1)
		return 1;
	return 0;
}

/* Node i's own share of a struct agg, added to the sums of its children. */
static void
agg_self(const struct ctx *c, int i, struct agg *a)
{
	int t = c->n[i].tag;

	switch (t) {
	case T_P: a->n[A_P]++; break;
	case T_IMG: a->n[A_IMG]++; break;
	case T_LI: a->n[A_LI]++; break;
	case T_INPUT: a->n[A_INPUT]++; break;
	case T_EMBED: case T_OBJECT: a->n[A_EMBED]++; break;
	case T_UL: a->under[U_UL] = c->n[i].nchar; break;
	case T_OL: a->under[U_OL] = c->n[i].nchar; break;
	case T_H1: case T_H2: case T_H3: case T_H4: case T_H5: case T_H6:
		a->under[U_H1 + t - T_H1] = c->n[i].nchar;
		break;
	}
}

/*
 * Remove, last first, the nodes under root with tag t that pass the test
 * (all of them without one). Last first, every node below a tested one
 * has been decided before it: going backwards through the nodes in
 * document order, each node finds the sums of its remaining children on
 * top of c->agg, as in evaluating a postfix expression.
 */
static void
clean_tag(struct ctx *c, int root, int t,
    int (*test)(struct ctx *, int, const struct agg *))
{
	int j, k, sums = test == should_clean && c->clean_cond;
	struct agg a;

	memset(&a, 0, sizeof a);
	c->nstack = 0;
	for (j = c->n[root].first; j >= 0; j = next_in(c, j, root, 0))
		if (sums || c->n[j].tag == t) {
			c->stack = xgrow(c->stack, &c->scap, c->nstack + 1, sizeof *c->stack);
			c->stack[c->nstack++] = j;
		}
	c->nagg = 0;
	for (k = (int)c->nstack - 1; k >= 0; k--) {
		j = c->stack[k];
		spend(c, 1);
		if (sums) {
			int ch, m;

			memset(&a, 0, sizeof a);
			for (ch = c->n[j].first; ch >= 0; ch = c->n[ch].next) {
				const struct agg *b = &c->agg[--c->nagg];

				spend(c, 1);
				for (m = 0; m < A_NCOUNT; m++)
					a.n[m] += b->n[m];
				for (m = 0; m < U_NUNDER; m++)
					a.under[m] += b->under[m];
			}
		}
		if (c->n[j].tag == t && !gone(c, j) &&
		    (test == NULL || test(c, j, &a))) {
			remove_node(c, j);
			continue;
		}
		if (sums) {
			agg_self(c, j, &a);
			c->agg = xgrow(c->agg, &c->aggcap, c->nagg + 1, sizeof *c->agg);
			c->agg[c->nagg++] = a;
		}
	}
}

/* ---- after the article is found ---- */

/*
 * Lines at the article's edges shorter than this many words that end no
 * sentence are taken for headlines, datelines, bylines and tool bars.
 */
#define EDGE_WORDS 10

static int
clean_share(struct ctx *c, int i)
{
	char ms[512];
	const char *m = match_string(c, i, ms, sizeof ms), *p;

	if (c->n[i].nchar >= 500)
		return 0;
	for (p = m; (p = strstr(p, "share")) != NULL; p++)
		if (p == m || !isalnum((unsigned char)p[-1]))
			return 1;
	return 0;
}

static int
clean_header(struct ctx *c, int i, const struct agg *unused)
{
	(void)unused;
	return class_weight(c, i) < 0;
}

static const char *const discard[] = { "comment", "disqus", "respond",
	"reply", NULL };

static int
discarded(struct ctx *c, int i)
{
	if (!c->weight_classes)
		return 0;
	return match_any(c->a.p + c->n[i].cls, discard) ||
	    match_any(c->a.p + c->n[i].id, discard);
}

/* Remove the boilerplate sections under root that their names give away. */
static void
prune(struct ctx *c, int root)
{
	int j, next;

	for (j = c->n[root].first; j >= 0; j = next) {
		if (c->n[j].tag != T_TEXT && discarded(c, j)) {
			next = next_in(c, j, root, 1);
			remove_node(c, j);
		} else if (c->n[j].tag == T_PRE || c->n[j].tag == T_CODE) {
			next = next_in(c, j, root, 1);
		} else {
			next = next_in(c, j, root, 0);
		}
	}
}

/* Readability's _prepArticle on one subtree of the article. */
static void
prep_article(struct ctx *c, int root)
{
	static const int plain[] = { T_OBJECT, T_EMBED, T_FOOTER, T_ASIDE };
	size_t k;
	int j;

	clean_tag(c, root, T_FORM, should_clean);
	clean_tag(c, root, T_FIELDSET, should_clean);
	for (k = 0; k < sizeof plain / sizeof plain[0]; k++)
		clean_tag(c, root, plain[k], NULL);
	for (j = c->n[root].first; j >= 0; j = c->n[j].next) {
		int d, next;

		for (d = c->n[j].first; d >= 0; d = next) {
			if (c->n[d].tag != T_TEXT && clean_share(c, d)) {
				next = next_in(c, d, j, 1);
				remove_node(c, d);
			} else {
				next = next_in(c, d, j, 0);
			}
		}
	}
	clean_tag(c, root, T_H1, clean_header);
	clean_tag(c, root, T_H2, clean_header);
	clean_tag(c, root, T_TABLE, should_clean);
	clean_tag(c, root, T_UL, should_clean);
	clean_tag(c, root, T_DIV, should_clean);
}

/*
 * A line of the article's raw text as emit writes it: where it starts,
 * and how many of its bytes are in links and in headings.
 */
struct line {
	size_t off;
	int link, head;
};

static void
line_start(struct ctx *c, size_t off)
{
	c->lines = xgrow(c->lines, &c->lcap, c->nlines + 1, sizeof *c->lines);
	c->lines[c->nlines].off = off;
	c->lines[c->nlines].link = c->lines[c->nlines].head = 0;
	c->nlines++;
}

static void
line_end(struct ctx *c, struct buf *out)
{
	buf_addc(out, '\n');
	line_start(c, out->len);
}

/*
 * Append the text of the subtree of i: blocks and <br> end lines (noted
 * in c->lines, which the caller starts).
 */
static void
emit(struct ctx *c, int i, struct buf *out)
{
	int j = i, in_a = 0, in_h = 0;

	for (;;) {
		const struct node *n = &c->n[j];

		spend(c, 1);
		if (n->tag == T_TEXT) {
			buf_add(out, c->a.p + n->text, n->tlen);
			if (in_a)
				c->lines[c->nlines - 1].link += n->tlen;
			if (in_h)
				c->lines[c->nlines - 1].head += n->tlen;
		} else if (n->tag == T_BR || (flags_of(n->tag) & F_BLOCK))
			line_end(c, out);
		in_a += n->tag == T_A;
		in_h += is_heading(n->tag);
		if (n->first >= 0) {
			j = n->first;
			continue;
		}
		/* Leave finished elements, ending a line after each block. */
		for (;;) {
			in_a -= c->n[j].tag == T_A;
			in_h -= is_heading(c->n[j].tag);
			if (flags_of(c->n[j].tag) & F_BLOCK)
				line_end(c, out);
			if (j == i)
				return;
			if (c->n[j].next >= 0) {
				j = c->n[j].next;
				break;
			}
			j = c->n[j].parent;
		}
	}
}

/*
 * Words of a line for the edge test: runs of letters and digits, each
 * CJK, kana or hangul character half a word (they are written without
 * spaces); *end is set when the line ends a sentence.
 */
static double
line_words(const char *s, size_t n, int *end)
{
	double w = 0;
	size_t i = 0, e = n;
	int in = 0;

	while (e > 0 && s[e - 1] == ' ')
		e--;
	*end = 0;
	if (e > 0) {
		unsigned char l = s[e - 1];

		/* 。」』 ！）？ … ’ ” (UTF-8) */
		static const char *const wide[] = { "\xe3\x80\x82",
		    "\xe3\x80\x8d", "\xe3\x80\x8f", "\xef\xbc\x81",
		    "\xef\xbc\x89", "\xef\xbc\x9f", "\xe2\x80\xa6",
		    "\xe2\x80\x99", "\xe2\x80\x9d", NULL };
		const char *const *w;

		*end = strchr(".!?:;\"')]", l) != NULL && l != '\0';
		for (w = wide; *w && !*end && e >= 3; w++)
			*end = memcmp(s + e - 3, *w, 3) == 0;
	}
	while (i < e) {
		unsigned char ch = s[i];

		if (ch >= 0xe3 && ch <= 0xed) {
			w += 0.5;
			in = 0;
			i += 3;
			continue;
		}
		if (isalnum(ch) || ch >= 0x80) {
			if (!in)
				w++;
			in = 1;
		} else {
			in = 0;
		}
		i++;
	}
	return w;
}

/*
 * Whether line k of raw (from..to) is boilerplate at an edge of the
 * article: mostly links, a heading that repeats the title, or, when not
 * a heading (at the head, where headings open the text), a short line
 * that ends no sentence: the headline, date, byline, tool and share
 * lines that sit above an article and the link lists below it.
 */
static int
edge_junk(struct ctx *c, const char *s, size_t n, const struct line *l,
    int tail, struct buf *tmp)
{
	int end, bytes = 0;
	size_t i;
	double w;

	for (i = 0; i < n; i++)
		bytes += s[i] != ' ';
	if (bytes == 0)
		return 1;
	if (2 * l->link >= bytes)
		return 1;
	if (l->head * 2 >= bytes) {
		const char *title = c->ogtitle.len ? c->ogtitle.p : c->title.p ? c->title.p : "";

		tmp->len = 0;
		buf_add(tmp, s, n);
		buf_addc(tmp, '\0');
		if (similarity(title, tmp->p) > 0.75)
			return 1;
		if (!tail)
			return 0;
	}
	w = line_words(s, n, &end);
	return w < EDGE_WORDS && !end;
}

/*
 * The article's text without the boilerplate lines at its two edges
 * (edge_junk), into [*from, *to) of raw; all of it when that would leave
 * too little.
 */
static void
trim_edges(struct ctx *c, const char *raw, size_t len, size_t *from, size_t *to)
{
	size_t a = 0, b = c->nlines, k;

	*from = 0;
	*to = len;
	if (!c->weight_classes)
		return;
	for (k = 0; k < c->nlines; k++) {
		size_t s = c->lines[k].off, e = k + 1 < c->nlines ?
		    c->lines[k + 1].off - 1 : len;

		if (!edge_junk(c, raw + s, e - s, &c->lines[k], 0, &c->tmp))
			break;
		a = k + 1;
	}
	for (k = c->nlines; k > a; k--) {
		size_t s = c->lines[k - 1].off, e = k < c->nlines ?
		    c->lines[k].off - 1 : len;

		if (!edge_junk(c, raw + s, e - s, &c->lines[k - 1], 1, &c->tmp))
			break;
		b = k - 1;
	}
	if (a >= b)
		return;
	*from = c->lines[a].off;
	*to = b < c->nlines ? c->lines[b].off : len;
}

/* Trim every line, collapse spaces, drop empty lines. */
static void
tidy_lines(const char *s, size_t n, struct buf *out)
{
	size_t i = 0, e, start = out->len;

	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);

		e = nl ? (size_t)(nl - s) : n;
		while (i < e && s[i] == ' ')
			i++;
		while (e > i && s[e - 1] == ' ')
			e--;
		if (e > i) {
			if (out->len > start)
				buf_addc(out, '\n');
			buf_add(out, s + i, e - i);
		}
		i = (nl ? (size_t)(nl - s) : n) + 1;
	}
}

static void
clean_title(struct ctx *c, struct buf *title)
{
	struct buf *t = c->ogtitle.len ? &c->ogtitle : &c->title;
	size_t n = collapse(t->p ? t->p : "", t->len);

	while (n && t->p[n - 1] == ' ')
		n--;
	buf_add(title, t->p && t->p[0] == ' ' ? t->p + 1 : t->p, n && t->p[0] == ' ' ? n - 1 : n);
}

static void
ctx_reset(struct ctx *c)
{
	c->nn = 0;
	c->a.len = 0;
	buf_addc(&c->a, '\0');
	c->title.len = c->ogtitle.len = 0;
	c->body = -1;
}

/* One run of the article search with the current flags; the text into out. */
static void
grab(struct ctx *c, struct buf *out)
{
	int top, *art;
	size_t n, k, from, to;

	if (c->nsaved == 0) {
		ctx_reset(c);
		build(c, tidyGetRoot(c->doc), -1, 0);
		/*
		 * The tries after the first start from this tree again: a
		 * copy of the nodes, the arena as it is (the passes only add
		 * nodes), not another walk of libtidy's tree, whose text
		 * values it decodes anew at each call.
		 */
		c->saved = xgrow(c->saved, &c->savecap, c->nn + 1, sizeof *c->saved);
		memcpy(c->saved, c->n, c->nn * sizeof *c->n);
		c->nsaved = c->nn + 1;
		c->saved_body = c->body;
	} else {
		memcpy(c->n, c->saved, (c->nsaved - 1) * sizeof *c->n);
		c->nn = c->nsaved - 1;
		c->body = c->saved_body;
	}
	out->len = 0;
	if (c->body < 0)
		return;
	prepare(c, &c->tmp);
	top = score(c);
	c->art = art = xgrow(c->art, &c->artcap, c->nn + 1, sizeof *art);
	if (top < 0 || c->n[top].tag == T_BODY) {
		art[0] = c->body;
		n = 1;
	} else {
		top = refine(c, top);
		n = siblings(c, top, art, c->nn + 1, &c->tmp);
	}
	ancestry(c);
	for (k = 0; k < n; k++) {
		if (art[k] != top && discarded(c, art[k])) {
			remove_node(c, art[k]);
			continue;
		}
		prune(c, art[k]);
		prep_article(c, art[k]);
	}
	c->raw.len = 0;
	c->nlines = 0;
	line_start(c, 0);
	for (k = 0; k < n; k++)
		if (!gone(c, art[k]))
			emit(c, art[k], &c->raw);
	trim_edges(c, c->raw.p ? c->raw.p : "", c->raw.len, &from, &to);
	tidy_lines(c->raw.p ? c->raw.p + from : "", to - from, out);
}

static int
scan_depth(const char *html, size_t n, unsigned long long *load)
{
	static const char *const noend[] = { "area", "base", "br", "col",
		"embed", "hr", "img", "input", "link", "meta", "param", "source",
		"track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option",
		"thead", "tbody", "tfoot", "colgroup", "optgroup", "rb", "rt",
		"rp", "keygen", "basefont", "frame", "isindex", "spacer", NULL };
	const char *s = html, *end = html + n, *q;
	int depth = 0, max = 0;

	*load = 0;
	while (s < end && (s = memchr(s, '<', end - s)) != NULL) {
		char name[16];
		size_t k = 0;
		int close = 0;
		const char *const *w;

		s++;
		if (end - s >= 3 && strncmp(s, "!--", 3) == 0) {
			q = memmem(s, end - s, "-->", 3);
			s = q ? q + 3 : end;
			continue;
		}
		if (s < end && *s == '/')
			close = 1, s++;
		while (s < end && k < sizeof name - 1 && (isalnum((unsigned char)*s) ||
		    *s == '-' || *s == ':'))
			name[k++] = tolower((unsigned char)*s++);
		name[k] = '\0';
		if (k == 0 || !isalpha((unsigned char)name[0]))
			continue;
		*load += depth;
		for (w = noend; *w && strcmp(*w, name) != 0; w++)
			;
		if (*w)
			continue;
		q = memchr(s, '>', end - s);
		if (close) {
			if (depth > 0)
				depth--;
		} else if (q == NULL || q[-1] != '/') {
			if (++depth > max)
				max = depth;
			if (strcmp(name, "script") == 0 || strcmp(name, "style") == 0) {
				const char *e = q;

				while (e && (e = memmem(e, end - e, "</", 2)) != NULL &&
				    strncasecmp(e + 2, name, strlen(name)) != 0)
					e += 2;
				s = e ? e : end;
			}
		}
	}
	return max;
}

int
extract_depth(const char *html, size_t n)
{
	unsigned long long load;

	return scan_depth(html, n, &load);
}

/*
 * Copy html with every <!DOCTYPE ...> made <!DOCTYPE html>. libtidy 5.6
 * switches its global tag table to HTML 4 rules when it meets an older
 * doctype (tidy-html5 issue 816, fixed in 5.9.10), which races with the
 * other threads' parses; with HTML5 doctypes only, it never does.
 */
static void
html5_doctype(const char *html, size_t n, struct buf *out)
{
	const char *s = html, *end = html + n, *d, *gt;

	buf_reserve(out, n + 16);
	while ((d = memmem(s, end - s, "<!", 2)) != NULL) {
		if (end - d < 9 || strncasecmp(d + 2, "doctype", 7) != 0) {
			buf_add(out, s, d + 2 - s);
			s = d + 2;
			continue;
		}
		buf_add(out, s, d - s);
		buf_adds(out, "<!DOCTYPE html>");
		gt = memchr(d, '>', end - d);
		s = gt ? gt + 1 : end;
	}
	buf_add(out, s, end - s);
}

/*
 * The bytes of text's lines that read as prose: ten words or more ending a
 * sentence, or twenty-five words or more.
 */
static size_t
prose(const char *s, size_t n)
{
	size_t i = 0, sum = 0;

	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - s) : n;
		int end;
		double w = line_words(s + i, e - i, &end);

		if ((w >= EDGE_WORDS && end) || w >= 25)
			sum += e - i;
		i = e + 1;
	}
	return sum;
}

/*
 * Readability's retries: fewer heuristics when too little text is left.
 * Of the tries, the one with the most prose is kept (Readability keeps
 * the longest, which is often a list of links or a table of headlines
 * when the article is short).
 */
static void
passes(struct ctx *c, struct buf *title, struct buf *text)
{
	int pass;
	size_t cur_p, best_p = 0;

	for (pass = 0; pass < 4; pass++) {
		c->strip_unlikely = pass < 1;
		c->weight_classes = pass < 2;
		c->clean_cond = pass < 3;
		grab(c, &c->cur);
		c->meta = NULL;	/* found in the first pass's build */
		cur_p = prose(c->cur.p ? c->cur.p : "", c->cur.len);
		if (pass == 0 || cur_p > best_p) {
			best_p = cur_p;
			struct buf t = c->best;

			c->best = c->cur;
			c->cur = t;
		}
		if (c->best.len >= 500)
			break;
	}
	buf_add(text, c->best.p ? c->best.p : "", c->best.len);
	clean_title(c, title);
}

unsigned long
extract_budget(size_t n)
{
	double w = EXTRACT_WORK_BASE + (double)EXTRACT_WORK_PER_BYTE * n;

	return w < EXTRACT_WORK_MAX ? (unsigned long)w : EXTRACT_WORK_MAX;
}

static int
digits(const char *s, size_t n, int k, int *v)
{
	int i;

	if ((size_t)k > n)
		return -1;
	for (*v = 0, i = 0; i < k; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*v = *v * 10 + s[i] - '0';
	}
	return 0;
}

/* 1..12 for an English month name or its first three letters, else 0. */
static int
month_of(const char *s, size_t n)
{
	static const char m[] = "janfebmaraprmayjunjulaugsepoctnovdec";
	char low[3];
	int i;

	if (n < 3)
		return 0;
	for (i = 0; i < 3; i++)
		low[i] = tolower((unsigned char)s[i]);
	for (i = 0; i < 12; i++)
		if (memcmp(m + 3 * i, low, 3) == 0)
			return i + 1;
	return 0;
}

int
extract_iso_date(const char *s, size_t n, char *out, size_t size)
{
	const char *e;
	int y, mo = 0, d = 0, h, mi, sec = 0, k;
	char zone[16] = "";

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	e = s + n;
	if (digits(s, n, 4, &y) == 0 && n >= 10 && (s[4] == '-' || s[4] == '/') &&
	    s[7] == s[4] && digits(s + 5, 2, 2, &mo) == 0 &&
	    digits(s + 8, 2, 2, &d) == 0 && (n == 10 || !isdigit((unsigned char)s[10]))) {
		s += 10;
		/* THH:MM[:SS[.f]][Z|+HH[:]MM] */
		if (s < e && (*s == 'T' || *s == ' ') && e - s >= 6 &&
		    digits(s + 1, e - s - 1, 2, &h) == 0 && s[3] == ':' &&
		    digits(s + 4, e - s - 4, 2, &mi) == 0 && h < 24 && mi < 60) {
			s += 6;
			if (s < e && *s == ':' && digits(s + 1, e - s - 1, 2, &sec) == 0) {
				s += 3;
				while (s < e && (*s == '.' || *s == ',' ||
				    isdigit((unsigned char)*s)))
					s++;
			}
			if (s < e && *s == 'Z')
				snprintf(zone, sizeof zone, "Z");
			else if (s < e && (*s == '+' || *s == '-') &&
			    digits(s + 1, e - s - 1, 2, &k) == 0 && k < 24) {
				int zm = 0;
				const char *z = s + 3;

				if (z < e && *z == ':')
					z++;
				if (digits(z, e - z, 2, &zm) < 0)
					zm = 0;
				zone[0] = *s;
				zone[1] = '0' + k / 10;
				zone[2] = '0' + k % 10;
				zone[3] = ':';
				zone[4] = '0' + zm / 10 % 6;
				zone[5] = '0' + zm % 10;
				zone[6] = '\0';
			}
			if (sec > 60)
				return -1;
			if (y < 1900 || y > 2099 || mo < 1 || mo > 12 || d < 1 || d > 31)
				return -1;
			return snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d%s",
			    y, mo, d, h, mi, sec, zone) < (int)size ? 0 : -1;
		}
	} else {
		/* "Tue, 8 Jan 2008 ...", "8 January 2008", "January 8, 2008" */
		const char *p = s;
		int day = 0, mon = 0, year = 0;

		y = 0;
		while (p < e && !(day && mon && year)) {
			const char *w = p;

			while (p < e && isalnum((unsigned char)*p))
				p++;
			if (p - w >= 1 && p - w <= 2 && isdigit((unsigned char)*w) &&
			    !day && digits(w, p - w, p - w, &d) == 0)
				day = 1;
			else if (p - w == 4 && !year && digits(w, 4, 4, &y) == 0)
				year = 1;
			else if (p - w >= 3 && !mon && (mo = month_of(w, p - w)) > 0)
				mon = 1;
			else if (p > w && isdigit((unsigned char)*w))
				return -1;
			while (p < e && !isalnum((unsigned char)*p))
				p++;
		}
		if (!(day && mon && year))
			return -1;
	}
	if (y < 1900 || y > 2099 || mo < 1 || mo > 12 || d < 1 || d > 31)
		return -1;
	return snprintf(out, size, "%04d-%02d-%02d", y, mo, d) < (int)size ? 0 : -1;
}

int
extract_lang_tag(const char *s, size_t n, char *out, size_t size)
{
	size_t i = 0, k = 0, sub = 0;

	while (i < n && isspace((unsigned char)s[i]))
		i++;
	for (; i < n && s[i] != ',' && s[i] != ';' && !isspace((unsigned char)s[i]); i++) {
		char ch = tolower((unsigned char)s[i]);

		if (ch == '_')
			ch = '-';
		if (k + 1 >= size)
			return -1;
		if (ch == '-') {
			/* The first subtag: 2 or 3 letters; each later one 1 to 8. */
			if ((k == sub && k > 0) || (sub == 0 && (k < 2 || k > 3)) ||
			    k - sub > 8)
				return -1;
			out[k++] = ch;
			sub = k;
			continue;
		}
		if (!(ch >= 'a' && ch <= 'z') && !(sub > 0 && isdigit((unsigned char)ch)))
			return -1;
		out[k++] = ch;
	}
	if (k == sub || (sub == 0 && (k < 2 || k > 3)) || k - sub > 8)
		return -1;
	out[k] = '\0';
	return 0;
}

int
extract_html(const char *html, size_t n, struct buf *title, struct buf *text,
    char *err, size_t errsize, int *code)
{
	return extract_html_work(html, n, extract_budget(n), title, text, NULL,
	    err, errsize, code);
}

int
extract_html_work(const char *html, size_t n, unsigned long budget,
    struct buf *title, struct buf *text, struct extract_meta *meta, char *err,
    size_t errsize, int *code)
{
	struct ctx *c;
	TidyBuffer in, errbuf;
	struct buf page = { 0 };
	unsigned long long load;
	int rc;

	if (scan_depth(html, n, &load) > EXTRACT_MAX_DEPTH) {
		return owt_fail(err, errsize, code, XDATA,
		    "nested deeper than %d elements", EXTRACT_MAX_DEPTH);
	}
	/*
	 * libtidy's parse slows with the nesting too (on deep lists it is
	 * quadratic), and cannot be stopped once started: its share of the
	 * budget is paid up front, a step per tag and level it is nested.
	 */
	if (load > budget)
		return owt_fail(err, errsize, code, XDATA, "over the extraction "
		    "work budget (%lu steps)", budget);
	/* On the heap: setjmp leaves a local that changed after it undefined. */
	c = xcalloc(1, sizeof *c);
	c->budget = budget;
	c->work = load;
	c->meta = meta;
	c->date_rank = D_NONE;
	c->lang_rank = L_NONE;
	if (meta != NULL)
		meta->date.len = meta->lang.len = 0;
	c->doc = tidyCreate();
	tidyBufInit(&errbuf);
	tidySetErrorBuffer(c->doc, &errbuf);
	tidyOptSetBool(c->doc, TidyForceOutput, yes);
	tidyOptSetBool(c->doc, TidyQuiet, yes);
	tidyOptSetBool(c->doc, TidyShowWarnings, no);
	tidyOptSetInt(c->doc, TidyShowErrors, 0);
	tidyOptSetBool(c->doc, TidyShowInfo, no);
	tidyOptSetInt(c->doc, TidyMergeDivs, TidyNoState);
	tidyOptSetInt(c->doc, TidyMergeSpans, TidyNoState);
	tidyOptSetBool(c->doc, TidyDropEmptyElems, no);
	tidyOptSetBool(c->doc, TidyDropEmptyParas, no);
	tidyOptSetInt(c->doc, TidyUseCustomTags, TidyCustomBlocklevel);
	tidySetInCharEncoding(c->doc, "utf8");
	tidyBufInit(&in);
	html5_doctype(html, n, &page);
	tidyBufAttach(&in, (byte *)(page.p ? page.p : ""), (uint)page.len);
	tidyParseBuffer(c->doc, &in);
	tidyBufDetach(&in);

	if (setjmp(c->over) == 0)
		passes(c, title, text);
	if (c->work > c->budget)
		rc = owt_fail(err, errsize, code, XDATA, "over the extraction "
		    "work budget (%lu steps)", c->budget);
	else
		rc = 0;
	tidyBufFree(&errbuf);
	tidyRelease(c->doc);
	free(c->n);
	free(c->stack);
	free(c->agg);
	free(c->art);
	free(c->lines);
	free(c->saved);
	buf_free(&c->a);
	buf_free(&c->title);
	buf_free(&c->ogtitle);
	buf_free(&c->t);
	buf_free(&c->raw);
	buf_free(&c->best);
	buf_free(&c->cur);
	buf_free(&c->tmp);
	free(c);
	buf_free(&page);
	return rc;
}

int
extract_page(const char *p, size_t n, const char *ctype, struct buf *title,
    struct buf *text, struct extract_meta *meta, const char **enc, char *err,
    size_t errsize, int *code)
{
	struct buf u = { 0 };
	int rc;

	*enc = charset_detect(p, n, ctype, NULL);
	charset_to_utf8(p, n, *enc, &u);
	rc = extract_html_work(u.p ? u.p : "", u.len, extract_budget(u.len),
	    title, text, meta, err, errsize, code);
	buf_free(&u);
	return rc;
}
