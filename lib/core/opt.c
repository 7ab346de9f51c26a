/* opt.c - a program's options declared once: getopt's table, usage, -h and checks; owt_options, the front end */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/opt.h"

int
opt_scan_int(const char *opt, const char *arg, long long min, long long max,
    long long *v, char *err, size_t errsize)
{
	char *end;

	errno = 0;
	*v = strtoll(arg, &end, 10);
	if (end == arg || *end != '\0' || errno == ERANGE) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is not an integer", opt, arg);
	}
	if (*v < min || *v > max) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is out of range %lld..%lld", opt,
		    arg, min, max);
	}
	return 0;
}

int
opt_scan_double(const char *opt, const char *arg, double min, double max,
    double *v, char *err, size_t errsize)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno == ERANGE || isnan(*v)) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is not a number", opt, arg);
	}
	if (*v < min || *v > max) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is out of range %g..%g", opt, arg,
		    min, max);
	}
	return 0;
}

int
opt_scan_size(const char *opt, const char *arg, unsigned long long min,
    unsigned long long max, unsigned long long *v, char *err, size_t errsize)
{
	char *end;
	unsigned long long mul = 1;

	errno = 0;
	*v = 0;
	if (*arg == '-' || *arg == '+')
		goto bad;
	*v = strtoull(arg, &end, 10);
	if (end == arg || errno == ERANGE)
		goto bad;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default: break;
	}
	if (*end != '\0' || *v > ULLONG_MAX / mul)
		goto bad;
	*v *= mul;
	if (*v < min || *v > max) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is out of range %llu..%llu", opt,
		    arg, min, max);
	}
	return 0;
bad:
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "%s: '%s' is not a size", opt, arg);
}

int
opt_scan_shard(const char *opt, const char *arg, unsigned long *k,
    unsigned long *n, char *err, size_t errsize)
{
	const char *slash = strchr(arg, '/');
	long long kv, nv;
	char *ks;
	int r;

	if (slash == NULL) {
		return owt_fail(err, errsize, NULL, XUSAGE,
		    "%s: '%s' is not K/N", opt, arg);
	}
	if (opt_scan_int(opt, slash + 1, 1, 1L << 30, &nv, err, errsize) < 0)
		return -1;
	ks = xstrndup(arg, (size_t)(slash - arg));
	r = opt_scan_int(opt, ks, 0, nv - 1, &kv, err, errsize);
	free(ks);
	if (r < 0)
		return -1;
	*k = (unsigned long)kv;
	*n = (unsigned long)nv;
	return 0;
}

int
opt_check_field(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	if (*arg != '\0' && strchr(arg, ',') == NULL)
		return 0;
	return owt_fail(err, errsize, NULL, XUSAGE,
	    "--%s: '%s' is not one field name", o->name,
	    arg);
}

int
opt_check_word(const struct opt *o, const char *arg, char *err,
    size_t errsize)
{
	struct buf b = { 0 };
	const char *w = o->words, *end;
	size_t len = strlen(arg), n;

	for (; *w; w = *end ? end + 1 : end) {
		end = strchrnul(w, ' ');
		n = (size_t)(end - w);
		if (n == len && memcmp(w, arg, n) == 0) {
			if (o->p)
				*(const char **)o->p = arg;
			return 0;
		}
	}
	/* "a", "a or b", "a, b or c" */
	for (w = o->words; *w; w = *end ? end + 1 : end) {
		end = strchrnul(w, ' ');
		buf_printf(&b, "%s%.*s", w == o->words ? "" : *end ? ", " :
		    " or ", (int)(end - w), w);
	}
	owt_fail(err, errsize, NULL, XUSAGE,
	    "--%s: '%s' is not %s%s", o->name, arg,
	    b.p ? b.p : "", o->why ? o->why : "");
	buf_free(&b);
	return -1;
}

/* A range bound of the table as an integer (2^63 and above: the largest). */
static long long
bound(double x)
{
	if (x >= 9223372036854775807.0)
		return LLONG_MAX;
	if (x <= -9223372036854775807.0)
		return LLONG_MIN;
	return (long long)x;
}

static unsigned long long
ubound(double x)
{
	if (x >= 18446744073709551615.0)
		return ULLONG_MAX;
	return x <= 0 ? 0 : (unsigned long long)x;
}

/* The entry an alias spells: the nearest one before it that is not an alias. */
static size_t
real_index(const struct opt_prog *p, size_t i)
{
	while (i > 0 && (p->opt[i].flags & OPT_ALIAS))
		i--;
	return i;
}

/* Store arg into o's target by its type; 0 or -1 with err. */
static int
set_value(const struct opt *o, const char *arg, char *err, size_t errsize)
{
	char flag[128];
	long long iv;
	unsigned long long uv;
	double dv;
	struct opt_list *l;

	snprintf(flag, sizeof flag, "--%s", o->name);
	switch (o->type) {
	case OPT_FLAG:
		if (o->p)
			*(int *)o->p = 1;
		break;
	case OPT_INT:
	case OPT_U32:
	case OPT_U64:
		if (opt_scan_int(flag, arg, bound(o->min), bound(o->max), &iv, err,
		    errsize) < 0)
			return -1;
		if (o->type == OPT_INT)
			*(int *)o->p = (int)iv;
		else if (o->type == OPT_U32)
			*(uint32_t *)o->p = (uint32_t)iv;
		else
			*(uint64_t *)o->p = (uint64_t)iv;
		break;
	case OPT_DOUBLE:
		if (opt_scan_double(flag, arg, o->min, o->max, &dv, err,
		    errsize) < 0)
			return -1;
		*(double *)o->p = dv;
		break;
	case OPT_SIZE:
		if (opt_scan_size(flag, arg, ubound(o->min), ubound(o->max), &uv,
		    err, errsize) < 0)
			return -1;
		*(size_t *)o->p = (size_t)uv;
		break;
	case OPT_STR:
		if (o->flags & OPT_REPEAT) {
			l = o->p;
			l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
			l->v[l->n++] = (char *)arg;
		} else if (o->p) {
			*(const char **)o->p = arg;
		}
		break;
	case OPT_SHARD:
		if (opt_scan_shard(flag, arg, (unsigned long *)o->p,
		    (unsigned long *)o->p + 1, err, errsize) < 0)
			return -1;
		break;
	case OPT_FUNC:
		return o->check(o, arg, err, errsize);
	case OPT_MODE:
		*(int *)o->p = o->value;
		break;
	default:
		break;
	}
	if (o->check && o->check(o, arg, err, errsize) < 0)
		return -1;
	return 0;
}

/*
 * OPT_MODE k given after the options seen[]: 0, or -1 with "--a, --b and
 * --c exclude each other" when another of its group (its p) was given.
 */
static int
mode_clash(const struct opt_prog *p, size_t k, const char *seen, char *err,
    size_t errsize)
{
	struct buf b = { 0 };
	size_t i, n = 0, m = 0;
	int clash = 0;

	for (i = 0; i < p->n; i++)
		if (p->opt[i].type == OPT_MODE && p->opt[i].p == p->opt[k].p) {
			n++;
			clash |= seen[i] && p->opt[i].value != p->opt[k].value;
		}
	if (!clash)
		return 0;
	for (i = 0; i < p->n; i++)
		if (p->opt[i].type == OPT_MODE && p->opt[i].p == p->opt[k].p) {
			m++;
			buf_printf(&b, "%s--%s", m == 1 ? "" :
			    m == n ? " and " : ", ", p->opt[i].name);
		}
	owt_fail(err, errsize, NULL, XUSAGE, "%s exclude each other", b.p);
	buf_free(&b);
	return -1;
}

int
opt_parse(const struct opt_prog *p, int argc, char **argv, char *given,
    int *optindp, char *err, size_t errsize, int *code)
{
	struct option *lo = xcalloc(p->n + 1, sizeof *lo);
	char *seen = xcalloc(p->n + 1, 1);
	struct buf shorts = { 0 };
	size_t i, k;
	int c, r = 0;

	buf_add(&shorts, "", 0);
	for (i = 0; i < p->n; i++) {
		lo[i].name = p->opt[i].name;
		lo[i].has_arg = p->opt[i].arg ? required_argument : no_argument;
		lo[i].val = p->opt[i].key ? p->opt[i].key : 256 + (int)i;
		if (p->opt[i].key) {
			buf_addc(&shorts, (char)p->opt[i].key);
			if (p->opt[i].arg)
				buf_addc(&shorts, ':');
		}
	}
	err[0] = '\0';
	optind = 0;	/* glibc: start afresh */
	while ((c = getopt_long(argc, argv, shorts.p, lo, NULL)) != -1) {
		if (c >= 256) {
			i = (size_t)c - 256;
		} else {
			for (i = 0; i < p->n && p->opt[i].key != c; i++)
				;
			if (i == p->n) {	/* '?': getopt said why */
				*code = XUSAGE;
				r = -1;
				break;
			}
		}
		k = real_index(p, i);
		if (given)
			given[k] = 1;
		if (p->opt[k].type == OPT_HELP || p->opt[k].type == OPT_VERSION) {
			r = p->opt[k].type;
			break;
		}
		if ((p->opt[k].type == OPT_MODE && mode_clash(p, k, seen, err,
		    errsize) < 0) || set_value(&p->opt[k], optarg, err,
		    errsize) < 0) {
			*code = XUSAGE;
			r = -1;
			break;
		}
		seen[k] = 1;
	}
	*optindp = optind;
	free(lo);
	free(seen);
	buf_free(&shorts);
	return r;
}

int
opt_find(const struct opt_prog *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (strcmp(p->opt[i].name, name) == 0)
			return (int)i;
	return -1;
}

void
opt_note(const struct opt *o, char *msg, size_t size)
{
	snprintf(msg, size, "--%s: accepted; no effect", o->name);
}

void
opt_usage(const struct opt_prog *p, struct buf *b)
{
	const struct opt *o;
	size_t i, nflags = 0;

	buf_printf(b, "usage: %s", p->name ? p->name : owt_prog);
	for (i = 0; i < p->n; i++) {
		o = &p->opt[i];
		if (o->key && o->arg == NULL && !(o->flags & OPT_ALIAS)) {
			if (nflags++ == 0)
				buf_adds(b, " [-");
			buf_addc(b, (char)o->key);
		}
	}
	if (nflags > 0)
		buf_addc(b, ']');
	for (i = 0; i < p->n; i++) {
		o = &p->opt[i];
		if (o->key && o->arg != NULL && !(o->flags & OPT_ALIAS))
			buf_printf(b, o->flags & OPT_REQUIRED ? " -%c %s" :
			    " [-%c %s]", o->key, o->arg);
	}
	for (i = 0; i < p->n; i++) {
		o = &p->opt[i];
		if (o->key || (o->flags & OPT_ALIAS))
			continue;
		buf_printf(b, " %s--%s%s%s%s", o->flags & OPT_REQUIRED ? "" : "[",
		    o->name, o->arg ? " " : "", o->arg ? o->arg : "",
		    o->flags & OPT_REQUIRED ? "" : "]");
	}
	if (p->operands)
		buf_printf(b, " %s", p->operands);
	buf_addc(b, '\n');
}

/* "  -k, --keep-going" or "      --name arg": the first column of -h. */
static void
help_name(const struct opt *o, struct buf *b)
{
	if (o->key)
		buf_printf(b, "  -%c, --%s", o->key, o->name);
	else
		buf_printf(b, "      --%s", o->name);
	if (o->arg)
		buf_printf(b, " %s", o->arg);
}

void
opt_help(const struct opt_prog *p, struct buf *b)
{
	struct buf name = { 0 };
	size_t i, s, col = (size_t)p->helpcol;

	if (col == 0) {
		for (i = 0; i < p->n; i++) {
			name.len = 0;
			help_name(&p->opt[i], &name);
			if (name.len + 2 > col)
				col = name.len + 2;
		}
	}
	for (i = 0; i < p->n; i++) {
		name.len = 0;
		help_name(&p->opt[i], &name);
		buf_add(b, name.p, name.len);
		for (s = 0; s < 2 || name.len + s < col; s++)
			buf_addc(b, ' ');
		buf_printf(b, "%s\n", p->opt[i].help ? p->opt[i].help : "");
	}
	buf_free(&name);
}

int
owt_options(const struct opt_prog *p, int argc, char **argv, char *given)
{
	struct buf b = { 0 };
	char err[1024], *own = NULL;
	size_t i;
	int code, ind, r;

	if (given == NULL)
		given = own = xcalloc(p->n, 1);
	r = opt_parse(p, argc, argv, given, &ind, err, sizeof err, &code);
	if (r == OPT_HELP) {
		opt_usage(p, &b);
		opt_help(p, &b);
		fwrite(b.p, 1, b.len, stdout);
		exit(owt_finish(XOK));
	}
	if (r == OPT_VERSION)
		exit(owt_version());
	if (r < 0) {
		if (err[0] != '\0')
			owt_die(code, "%s", err);
		opt_usage(p, &b);
		fputs(b.p, stderr);
		exit(code);
	}
	for (i = 0; i < p->n; i++)
		if (given[i] && p->opt[i].type == OPT_NOTE &&
		    (p->quiet == NULL || !*p->quiet)) {
			opt_note(&p->opt[i], err, sizeof err);
			owt_warn("%s", err);
		}
	free(own);
	return ind;
}
