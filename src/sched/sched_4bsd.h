/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_4bsd.c. */
/*
 * Private to the sched_4bsd*.c files: 4BSD's per-thread state and the
 * global queue's counters and per-CPU tables that more than one of them
 * reads.  As in sched_ule.h, what the files share is FreeBSD's name (or
 * the port's own, where FreeBSD has none) with a bsd_ prefix, the name
 * that nm and the debugger show too; everything else stays static in its
 * file under FreeBSD's name:
 *
 *   FreeBSD                     here
 *   sched_lock                  bsd_sched_lock (mutex name "sched_lock")
 *   sched_tdcnt                 bsd_sched_tdcnt
 *   runq, runq_pcpu[cpu]        bsd_rq_of(-1), bsd_rq_of(cpu) (static)
 *   mp_ncpus                    bsd_ncpu
 *   averunnable.ldavg[0]        bsd_ldavg
 *   INVERSE_ESTCPU_WEIGHT       bsd_iew()
 *   resetpriority               bsd_resetpriority
 *   updatepri                   bsd_updatepri
 *   loadav                      bsd_loadav
 *   schedcpu's per-thread body  bsd_schedcpu_thread
 *   sched_slice                 bsd_tun.slice
 *
 * The port's own shared state: bsd_runq_length[] and bsd_runq_global_len
 * (queue lengths the idle loop reads), bsd_curthr[] and bsd_idlethr[]
 * (FreeBSD's pcpu curthread and idlethread), bsd_pctcpu_decay.
 */
#ifndef ULT_SCHED_4BSD_H
#define ULT_SCHED_4BSD_H

#include "machine.h"
#include "runq.h"
#include "sched.h"

/* exp(-1/20) * FSCALE: 95% of pctcpu forgotten in 60 s */
#define CCPU 1948

#define TSF_BOUND 0x0001

/*
 * Per-thread policy data.  Every field is (t), under td's thread lock,
 * which is bsd_sched_lock whenever td is queued or running: that is how
 * schedcpu and the clock, which hold bsd_sched_lock, may update every
 * such thread.  While td is blocked (td_lock == &blocked_lock) the CPU
 * that blocked it has them.  None is atomic: nothing reads them without
 * the lock (bsd_thread_stats' callers hold it).
 */
struct td_sched {
	int ts_estcpu;	 /* (t) decayed CPU usage */
	int ts_cpticks;	 /* (t) stat ticks this second */
	int ts_pctcpu;	 /* (t) FSCALE fixed point */
	int ts_slice;	 /* (t) stat ticks left */
	int ts_flags;	 /* (t) TSF_* */
	int ts_cpu;	 /* (t) bound CPU */
	int ts_runq;	 /* (t) per-CPU queue it is on, -1: global */
	int ts_didrun;	 /* (t) ran since the last schedcpu */
	int ts_pctstamp; /* (t) ticks when ts_pctcpu was last decayed */
};

_Static_assert(sizeof(struct td_sched) <= TD_SCHED_SIZE, "td_sched");

static inline struct td_sched *
ts_of(struct thread *td)
{
	return ((struct td_sched *)(void *)td->td_sched);
}

/* Tunables (kern.sched.*), read without locks: TUN(bsd_tun.x). */
#define TUN(x) ULT_LD(&(x))
struct bsd_tun {
	atomic_int slice;      /* sched_slice: kern.sched.slice, stat ticks */
	atomic_int wake_local; /* ult's kern.sched.wake_local (wake costs) */
};
extern struct bsd_tun bsd_tun;

/*
 * The shared state: the queues, their counters and the per-CPU tables,
 * defined in sched_4bsd.c.  Locking key:
 *   (c)  constant between bsd_init and bsd_fini (bsd_idle_init fills
 *        bsd_idlethr before the CPUs run)
 *   (s)  read and written under bsd_sched_lock only
 *   (ss) stores under bsd_sched_lock, loads also without it, hence atomic
 *        (relaxed): the queue lengths by every CPU's idle loop
 *        (runnable_for) and by the host (bsd_load for the worker's park
 *        test, bsd_cpu_stats); the current threads by maybe_resched (a
 *        nice change, under the thread's own lock, which may be a sleep
 *        queue's) and by bsd_cpu_stats
 *   (ls) stored by a CPU's own idle loop without bsd_sched_lock, loaded
 *        by CPUs looking for one to wake: atomic, with the fence pairing
 *        of bsd_idle_enter and forward_wakeup / kick_other_cpu
 * The hang report (bsd_dump) reads them all without waiting for the lock.
 * The run queues themselves, static in sched_4bsd.c, are (s).
 */
extern struct mtx bsd_sched_lock;
extern atomic_int *bsd_runq_length;	   /* (c) array, entries (ss) */
extern atomic_int bsd_runq_global_len;	   /* (ss) */
extern atomic_int bsd_sched_tdcnt;	   /* (s), atomic for bsd_dump */
extern struct thread *_Atomic *bsd_curthr; /* (c) array, entries (ss) */
extern struct thread **bsd_idlethr;	   /* (c) */
extern int bsd_ncpu;			   /* (c) */
extern int bsd_nactive; /* (c) ult: CPUs below are not reserve (machine.h) */
struct runq *bsd_rq_of(int idx);

/*
 * Another CPU's current thread is read under bsd_sched_lock, but its priority
 * may be changed meanwhile by lends made under other locks, and it may be
 * the idle thread: compare pointers, load priorities atomically.
 */
static inline int
pri_of(struct thread *td)
{
	return (ULT_PLD(&td->td_priority));
}

static inline int
cpu_is_idle(int cpu)
{
	return (ULT_LD(&bsd_curthr[cpu]) == bsd_idlethr[cpu]);
}

/* ult: cpu is a reserve CPU out of service (machine.h): it takes
 * nothing from the global queue and is never woken for it. */
static inline int
bsd_reserved(int cpu)
{
	return (cpu >= bsd_nactive && mach_cpu_state(cpu) == MACH_CPU_BLOCKED);
}

static inline int
runnable_for(int cpu)
{
	return ((bsd_reserved(cpu) ? 0 : ULT_LD(&bsd_runq_global_len)) +
	    ULT_LD(&bsd_runq_length[cpu]));
}

/* estcpu's ceiling: FreeBSD's ESTCPULIM, by bsd_iew() */
#define ESTCPULIM(e, iew) ((e) < 37 * (iew)-1 ? (e) : 37 * (iew)-1)

/* sched_4bsd_cpu.c */
extern atomic_int bsd_ldavg; /* (s, a): see its definition */
int bsd_iew(void);
void bsd_resetpriority(struct thread *td);
void bsd_pctcpu_decay(struct td_sched *ts, int now);
void bsd_schedcpu_thread(struct thread *td, int loadfac, int now);
void bsd_loadav(void);
void bsd_updatepri(struct thread *td, int slptime);

/* sched_4bsd_check.c: the ops table's views and tunables */
int bsd_load(int cpu);
void bsd_thread_stats(struct thread *td, struct sched_thread_stats *st);
void bsd_cpu_stats(int cpu, struct sched_cpu_stats *st);
const char *bsd_check(void);
void bsd_dump(int cpu, void (*out)(void *, const char *), void *arg);
extern const struct sched_tunable bsd_tunables[];
int bsd_slice_min_us(void);

/* sched_4bsd.c */
int bsd_cpu_idle_flag(int cpu);

/* sched_4bsd_thread.c: the ops on a thread's first and last state */
void bsd_thread_init(struct thread *td);
void bsd_idle_init(struct thread *td, int cpu);
void bsd_fork(struct thread *td, struct thread *child);
void bsd_exit(struct thread *td, struct thread *child);

#endif
