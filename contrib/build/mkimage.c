/*
 * mkimage - write the image of a GPT-2-format vocabulary for lib/tok/bpe.c to
 * link in (the Makefile runs it on data/gpt2 at build time):
 *
 *	mkimage encoder.json vocab.bpe OUT
 *
 * The tables are the loader's own (bpe_load, bpe_image_write), built from
 * the two files alone. Linked with lib/tok/bpe.c compiled without an image.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tok/bpe.h"
#include "core/outfile.h"
#include "core/util.h"

int
main(int argc, char **argv)
{
	struct bpe *v;
	struct buf img = { 0 };
	struct outfile o;
	char err[1024];
	int code;

	owt_setprog(argv[0]);
	if (argc != 4)
		owt_die(XUSAGE, "usage: mkimage encoder.json vocab.bpe out");
	if ((v = bpe_load(argv[1], argv[2], err, sizeof err, &code)) == NULL)
		owt_die(code, "%s", err);
	bpe_image_write(v, &img);
	if (outfile_open(&o, argv[3], err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	if (outfile_write_all(o.fd, img.p, img.len) < 0) {
		outfile_abort(&o);
		owt_die(XSYS, "%s: write: %s", argv[3], strerror(errno));
	}
	if (outfile_commit(&o, OUTFILE_NOSYNC, err, sizeof err, &code) < 0)
		owt_die(code, "%s", err);
	buf_free(&img);
	bpe_free(v);
	return 0;
}
