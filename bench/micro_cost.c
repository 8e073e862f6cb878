/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * micro: the cases that price a feature rather than a runtime: tls_cost
 * (per-uthread TLS against per-worker) and trace_cost (ULT_TRACE on
 * against off).  Both run the two settings one round each in turn, so
 * that both meet the same machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "micro.h"
#include "ult.h"
#include "work.h"

/*
 * What per-uthread TLS costs: the ult figures of yield and create_join
 * with it and with per-worker TLS, one round of each in turn so that
 * both meet the same machine.
 */
void
case_tls_cost(void)
{
	static const struct {
		const char *name;
		double (*f)(int, long);
		long full, quick;
		int ncpu; /* create_join's workers; 0: all */
	} k[] = {
	    {"yield_tls", yield_ns, 1000000, 20000, 0},
	    {"create_join_tls", create_join_ns, 100000, 5000, 0},
	    {"create_join_tls_w1", create_join_ns, 100000, 5000, 1},
	};
	long on = 0;

	bw_rt_start("ult", 1, 0);
	bw_must(ult_sysctl("ult.tls", &on, NULL), "sysctl");
	bw_rt_stop();
	fprintf(stderr, "  per-uthread TLS %s\n",
	    on ? "in force" : "NOT in force (ult_init said why)");
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		double v[2][MAXROUNDS], u, w;
		long n = case_size(k[i].full, k[i].quick);

		all_ncpu = k[i].ncpu;
		for (int j = 0; j < rounds; j++)
			for (int m = 0; m < 2; m++) {
				ult_rt = m ? "ult-tlsworker" : "ult";
				v[m][j] = k[i].f(RT_ULT, n);
			}
		ult_rt = "ult";
		all_ncpu = 0;
		u = bw_median(v[0], rounds);
		w = bw_median(v[1], rounds);
		bw_emit(k[i].name, "ult", "ns/op", 1, u);
		bw_emit(k[i].name, "ult-tlsworker", "ns/op", 1, w);
		fprintf(stderr,
		    "  %s: per-uthread TLS %.1f, per-worker %.1f ns/op "
		    "(%+.1f)\n",
		    k[i].name, u, w, u - w);
	}
}

void
case_trace_cost(void)
{
	static const struct {
		const char *name;
		double (*f)(int, long);
		long full, quick;
	} k[] = {
	    {"yield_trace", yield_ns, 200000, 20000},
	    {"mutex_handoff_trace", mutex_handoff_ns, 100000, 10000},
	    {"create_join_trace", create_join_ns, 50000, 5000},
	};
	const char *dir = getenv("TMPDIR");
	char path[512];

	snprintf(path, sizeof(path), "%s/ult-micro-trace-%d.json",
	    dir != NULL ? dir : "/tmp", (int)getpid());
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		double v[2][MAXROUNDS], off, on;
		long n = case_size(k[i].full, k[i].quick);

		for (int j = 0; j < rounds; j++)
			for (int m = 0; m < 2; m++) {
				if (m)
					setenv("ULT_TRACE", path, 1);
				v[m][j] = k[i].f(RT_ULT, n);
				unsetenv("ULT_TRACE");
				remove(path);
			}
		off = bw_median(v[0], rounds);
		on = bw_median(v[1], rounds);
		bw_emit(k[i].name, "ult", "ns/op", 1, off);
		bw_emit(k[i].name, "ult+trace", "ns/op", 1, on);
		fprintf(stderr,
		    "  %s: tracing off %.1f, on %.1f ns/op (on/off %.2fx)\n",
		    k[i].name, off, on, off > 0 ? on / off : 0.0);
	}
}
