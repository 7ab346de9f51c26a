/* train-test - lib/train/train.c's data parallelism and layout-free checkpoints, run by t/6101-dist.t alone and under mpirun */
#include <inttypes.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/blas.h"
#include "model/ckpt.h"
#include "comm/comm.h"
#include "dist/dist.h"
#include "model/gpt.h"
#include "train/gpt_data.h"
#include "core/json.h"
#include "train/train.h"
#include "core/util.h"

#include "rank.h"

/*
 * train-test [-z] [-s dir] [-l dir] [-w minutes] [-k iter] [-p iter]
 *     [-t iter] iters global micro
 * trains a tiny GPT-2 (L=4, C=32, NH=4, T=16, V=256, dropout 0.1 and 0.1)
 * on mock data for iters iterations of global samples in micro-batches
 * of micro, over the ranks it was launched as (data-parallel), one
 * thread each. World rank 0 prints every iteration's loss, learning rate
 * and gradient norm (%.17g: bit for bit) and, at the end, the validation
 * loss over 2 global batches.
 *	-z	the distributed optimizer (ZeRO-1)
 *	-s dir	save there at the end (rank 0 writes, moments gathered)
 *	-l dir	resume from the checkpoint there (every rank reads it)
 *	-w min	the collective timeout in minutes (10)
 *	-k iter	world rank 1 dies by SIGKILL before iteration iter
 *	-p iter	world rank 1 stops (SIGSTOP) before iteration iter
 *	-t iter	world rank 1 alone asks to stop after iteration iter: every
 *		rank stops there (the control all-reduce)
 *	-S n	also save every n iterations
 *	-P n	n pipeline stages (1F1B)
 *	-T n	n tensor-parallel ranks; the rest of the world / (P x T)
 *		data-parallel replicas
 *	-M L,C,NH,T,V	another model shape (no dropout), for benchmarks
 *	-j n	threads per rank (1)
 *	-q	print each iteration's milliseconds instead (rank 0's clock)
 */

static void
save(struct trainer *tr, const char *dir)
{
	if (train_save(tr, dir, NULL, err, sizeof err, &code) < 0)
		rank_fail();
}

int
main(int argc, char **argv)
{
	struct gpt_config cfg = { .nlayer = 4, .nhead = 4, .nembd = 32,
	    .maxpos = 16, .vocab = 256, .vocab_pad = 256, .ln_eps = 1e-5f,
	    .hidden_dropout = 0.1f, .attn_dropout = 0.1f };
	struct gpt_data_mock mock[2] = { { 1234, 0, 16, 256 },
	    { 1234, 1, 16, 256 } };
	struct sample_src src[2] = { { gpt_data_mock_get, &mock[0] },
	    { gpt_data_mock_get, &mock[1] } };
	struct gpt model;
	struct trainer tr = { 0 };
	struct train_ranks ranks;
	struct step_result r;
	const char *save_dir = NULL, *load_dir = NULL;
	char path[4096];
	double minutes = 10, vloss;
	long iters, kill_at = -1, stop_at = -1, ask_at = -1, save_every = 0;
	int c, zero = 0, global, micro, kind, k, threads = 1, quiet = 0, T = 16;
	int stages = 1, tensor = 1;
	double t0 = 0;

	owt_setprog(argv[0]);
	while ((c = getopt(argc, argv, "zs:l:w:k:p:t:S:M:j:qP:T:")) != -1) {
		switch (c) {
		case 'z': zero = 1; break;
		case 's': save_dir = optarg; break;
		case 'l': load_dir = optarg; break;
		case 'w': minutes = atof(optarg); break;
		case 'k': kill_at = atol(optarg); break;
		case 'p': stop_at = atol(optarg); break;
		case 't': ask_at = atol(optarg); break;
		case 'S': save_every = atol(optarg); break;
		case 'j': threads = atoi(optarg); break;
		case 'q': quiet = 1; break;
		case 'P': stages = atoi(optarg); break;
		case 'T': tensor = atoi(optarg); break;
		case 'M':
			if (sscanf(optarg, "%d,%d,%d,%d,%d", &cfg.nlayer,
			    &cfg.nembd, &cfg.nhead, &T, &cfg.vocab) != 5)
				return XUSAGE;
			cfg.maxpos = T;
			cfg.vocab_pad = gpt_pad_vocab(cfg.vocab, 128);
			cfg.hidden_dropout = cfg.attn_dropout = 0;
			mock[0].T = mock[1].T = T;
			mock[0].vocab = mock[1].vocab = (uint32_t)cfg.vocab;
			break;
		default: return XUSAGE;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: train-test [-z] [-s dir] [-l dir] "
		    "[-w minutes] [-k iter] [-p iter] [-t iter] [-S n] iters "
		    "global micro\n");
		return XUSAGE;
	}
	omp_set_num_threads(threads);
	blas_init(threads);
	iters = atol(argv[optind]);
	global = atoi(argv[optind + 1]);
	micro = atoi(argv[optind + 2]);

	tr.micro = micro;
	if (train_ranks_open(&ranks, minutes * 60, err, sizeof err,
	    &code) < 0)
		rank_fail();
	world = ranks.world;
	if (train_ranks_layout(&ranks, &tr, tensor, stages, &cfg, 128, global, err,
	    sizeof err, &code) < 0)
		rank_fail();

	if (stages > 1 || tensor > 1) {
		const struct dist *d = &ranks.dist;
		struct gpt_part part = { d->l0, d->l1, d->pp_rank == 0,
		    d->pp_rank == d->pp - 1, d->tp, d->tp_rank };
		int slots = d->pp - d->pp_rank;

		cfg.vocab_pad = d->vocab_pad;
		if (gpt_init_part(&model, &cfg, &part, ranks.tp, &gpt_cpu, err,
		    sizeof err) < 0)
			rank_die(XUSAGE, "%s", err);
		if (stages > 1)
			gpt_set_slots(&model, slots < d->micro ? slots :
			    d->micro);
	} else if (gpt_init(&model, &cfg, &gpt_cpu, err, sizeof err) < 0) {
		rank_die(XUSAGE, "%s", err);
	}
	if (gpt_set_batch(&model, micro, T, err, sizeof err) < 0)
		rank_die(XUSAGE, "%s", err);
	gpt_init_weights(&model, 1234, 0.02f);
	tr.st.seed = 1234;
	if (load_dir) {
		struct json_val *doc = NULL;

		if (ckpt_resolve(load_dir, path, sizeof path, &kind, err,
		    sizeof err, &code) < 0 || kind != CKPT_RUN)
			rank_die(kind != CKPT_RUN ? XDATA : code, "%s", kind !=
			    CKPT_RUN ? "no checkpoint" : err);
		tr.dist = &ranks.dist;
		tr.m = &model;
		if ((stages > 1 || tensor > 1 ? train_load_part(&tr, path, 1, err, sizeof err,
		    &code) < 0 : ckpt_load_model(path, &model, err, sizeof err,
		    &code) < 0 || ckpt_load_optim(path, &model, err, sizeof err,
		    &code) < 0) || ckpt_load_state(path, &tr.st, &doc, err,
		    sizeof err, &code) != 0)
			rank_fail();
		json_doc_free(doc);
	}
	tr.m = &model;
	tr.T = T;
	tr.zero = zero;
	tr.lr = (struct schedule){ SCHEDULE_COSINE, 1e-2, 1e-3, 2 * global,
	    (uint64_t)iters * global };
	tr.adam = (struct adamw){ 0.9f, 0.95f, 1e-8f, 0.1f };
	tr.clip = 1.0f;
	train_init(&tr);

	while ((long)tr.st.iteration < iters) {
		if (world->rank == 1 && (long)tr.st.iteration == kill_at)
			raise(SIGKILL);
		if (world->rank == 1 && (long)tr.st.iteration == stop_at)
			raise(SIGSTOP);
		tr.stop = world->rank == 1 && (long)tr.st.iteration == ask_at;
		t0 = owt_now();
		if ((k = train_iteration(&tr, &src[0], &r, err, sizeof err,
		    &code)) < 0)
			rank_fail();
		if (k > 0)
			rank_die(XDATA, "iteration %" PRIu64 ": not finite",
			    tr.st.iteration + 1);
		if (world->rank == 0 && quiet)
			printf("%.1f\n", (owt_now() - t0) * 1000);
		else if (world->rank == 0)
			printf("iteration %" PRIu64 " loss %.17g lr %.17g norm "
			    "%.17g\n", tr.st.iteration, r.loss, r.lr,
			    r.grad_norm);
		if (save_dir && save_every && tr.st.iteration % save_every == 0)
			save(&tr, save_dir);
		if (tr.stop > 0) {
			if (world->rank == 0)
				printf("stopped at iteration %" PRIu64 "\n",
				    tr.st.iteration);
			break;
		}
	}
	if (!quiet && train_eval(&tr, &src[1], 0, 2, &vloss, err, sizeof err, &code) < 0)
		rank_fail();
	if (world->rank == 0 && !quiet)
		printf("valid loss %.17g\n", vloss);
	if (save_dir)
		save(&tr, save_dir);
	fflush(stdout);
	train_free(&tr);
	gpt_free(&model);
	world = NULL;		/* train_ranks_close finishes it */
	if (train_ranks_close(&ranks, err, sizeof err, &code) < 0)
		rank_fail();
	return 0;
}
