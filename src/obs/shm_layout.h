/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The statistics segment a running ult process keeps for ult-top
 * (shm.c writes it, tools/ult-top.c reads it): /dev/shm/ult-<pid>, mode
 * 0600, rewritten twice a second.  A reader maps it read-only and copies
 * it between two equal even values of seq (a sequence lock).  Plain C
 * types only: the reader is a separate program.
 */
#ifndef ULT_CORE_SHM_LAYOUT_H
#define ULT_CORE_SHM_LAYOUT_H

#include <stdint.h>

#define ULT_SHM_MAGIC 0x31304d4853544c55ull /* "ULTSHM01" */
#define ULT_SHM_VERSION 1
#define ULT_SHM_THREADS 4096 /* uthreads a snapshot shows, at most */
#define ULT_SHM_CPUS 257     /* ULT_MAXCPU and the spare */

struct ult_shm_cpu {
	int32_t cpu, load, blocked, spare;
	uint64_t switches, steals, idle_ns, busy_ns, preemptions, parks;
};

struct ult_shm_thread {
	uint64_t id;
	char name[32];
	char wchan[16];
	int32_t state, cpu, priority, nice, score;
	int32_t pctcpu_x100; /* the policy's %CPU estimate, times 100 */
	uint64_t runtime_ns, nvcsw, nivcsw, nmigrations;
};

struct ult_shm {
	uint64_t magic;
	uint32_t version, size; /* size: bytes of the whole segment */
	uint32_t seq;		/* odd while a snapshot is written */
	int32_t pid, ncpu, nworkers;
	char policy[8];
	uint64_t snap_ns;  /* CLOCK_MONOTONIC of this snapshot */
	uint32_t nthreads; /* entries in threads[] */
	uint32_t nalive;   /* uthreads alive, which may be more */
	struct ult_shm_cpu cpus[ULT_SHM_CPUS];
	struct ult_shm_thread threads[ULT_SHM_THREADS];
	/* Appended (after every older field, whose offsets stay): for
	 * threads[i], ult_thread_info's wait_obj and wait_owner_id. */
	struct ult_shm_wait {
		uint64_t obj, owner_id;
	} waits[ULT_SHM_THREADS];
};

#endif
