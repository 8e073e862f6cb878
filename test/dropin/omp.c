/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * OpenMP (libgomp) with 16 threads, four times ult-run's workers here:
 * parallel loops with reductions, barriers, a critical section and
 * atomics, many rounds.  libgomp waits at its barriers with `syscall'
 * instructions of its own, which the drop-in traps (src/dropin/trap.c);
 * without that the team would strand the thread that releases it.  On a
 * kernel without the trap's mode the team is one thread, so that the
 * transcript (which does not name the thread count) stays the same.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 16
#define ROUNDS 100
#define N 100000

static char text[64];

/* Does the kernel take syscall user dispatch's inclusive mode?  Asked in
 * a child, whose setting dies with it. */
static int
trap_mode(void)
{
	int st;
	pid_t p = fork();

	if (p == 0)
		_exit(prctl(59, 2, (unsigned long)text, sizeof(text), 0) == 0);
	return (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 1);
}

int
main(void)
{
	long total = 0, crit = 0, atom = 0, barriers = 0, fail = 0;
	int team = trap_mode() ? NTHREADS : 1, seen = 0;

	if (team == 1)
		fprintf(stderr,
		    "omp: no syscall user dispatch (inclusive); "
		    "one thread\n");
	omp_set_dynamic(0);
	omp_set_num_threads(team);
	for (int r = 0; r < ROUNDS; r++) {
		long sum = 0;

#pragma omp parallel for reduction(+ : sum) schedule(static)
		for (long i = 0; i < N; i++)
			sum += (i % 1000) * (r % 5 + 1);
		total += sum;
#pragma omp parallel
		{
#pragma omp single
			seen = omp_get_num_threads();
#pragma omp barrier
#pragma omp critical
			crit++;
#pragma omp barrier
#pragma omp atomic
			atom++;
#pragma omp barrier
#pragma omp master
			barriers += 3;
		}
		if (seen != team)
			fail++;
	}
	printf("omp: checksum %ld\n", total);
	printf("omp: critical per thread %ld, atomic per thread %ld\n",
	    crit / team, atom / team);
	printf("omp: barriers %ld, rounds with the whole team %d\n", barriers,
	    ROUNDS - (int)fail);
	return (fail != 0);
}
