/* cputime - run a command and say the time and memory it took, finely */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: cputime -o FILE COMMAND [ARG...]
 * Runs COMMAND and writes to FILE, as /usr/bin/time -f '%e %M %U %S'
 * does, its wall seconds, peak RSS (KB), user and system CPU seconds (of
 * it and the processes it waited for), but to the microsecond: GNU
 * time's %U and %S have two decimals, 2.5% of a 0.4 s run. FILE is
 * opened before COMMAND runs, so that a run is not made for figures that
 * cannot be kept. The exit status is COMMAND's (128 + the signal that
 * killed it); 127 where it could not be run or waited for; 2 for a wrong
 * call, or a FILE that cannot be written (COMMAND not run where it is
 * known before).
 */
int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int st;

	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fprintf(stderr, "usage: cputime -o FILE COMMAND [ARG...]\n");
		return 2;
	}
	/* close-on-exec ("e"): the command does not inherit it */
	if ((f = fopen(argv[2], "we")) == NULL) {
		fprintf(stderr, "cputime: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((pid = fork()) < 0) {
		fprintf(stderr, "cputime: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "cputime: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "cputime: wait4: %s\n", strerror(errno));
			return 127;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(f, "%.6f %ld %ld.%06ld %ld.%06ld\n",
	    (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	    ru.ru_maxrss, (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
	    (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	if (fclose(f) != 0) {
		fprintf(stderr, "cputime: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
