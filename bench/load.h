/* SPDX-License-Identifier: BSD-2-Clause */
/* Host load for the loaded mode (load.c). */
#ifndef BENCH_LOAD_H
#define BENCH_LOAD_H

/* Start n spinning processes (the caller's children, gone with it);
 * 0, or -1 with none left running. */
int bw_load_start(int n);
void bw_load_stop(void);
/* Spin n processes until SIGTERM or SIGINT, then exit: load for a peer
 * that has no loaded mode of its own. */
int bw_load_only(int n);

#endif
