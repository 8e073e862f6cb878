/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nice: the independent single-CPU model of ULE's nice shares
 * (docs/ULE.md section 10).
 */
#ifndef BENCH_NICE_MODEL_H
#define BENCH_NICE_MODEL_H

/*
 * Run n (at most 32) always-runnable threads of nice nv[0..n-1] on one
 * CPU for `seconds', counting CPU from `warm' seconds on; out[k] gets
 * thread k's share in %.
 */
void model_run(const int *nv, int n, long seconds, long warm, double *out);

#endif /* !BENCH_NICE_MODEL_H */
