/*
 * Private to the sched_4bsd*.c files: 4BSD's per-thread state and the
 * global queue's counters and per-CPU tables that more than one of them
 * reads.  As in sched_ule.h, shared names keep their plain spelling in
 * the source and get an ult__bsd_ prefix at link time through the defines
 * below; everything else stays static in its file.
 */
#ifndef ULT_SCHED_4BSD_H
#define ULT_SCHED_4BSD_H

#include "machine.h"
#include "runq.h"
#include "sched.h"

/* exp(-1/20) * FSCALE: 95% of pctcpu forgotten in 60 s */
#define CCPU 1948

#define TSF_BOUND 0x0001

struct td_sched {
	int ts_estcpu;	 /* decayed CPU usage */
	int ts_cpticks;	 /* stat ticks this second */
	int ts_pctcpu;	 /* FSCALE fixed point */
	int ts_slice;	 /* stat ticks left */
	int ts_flags;	 /* TSF_* */
	int ts_cpu;	 /* bound CPU */
	int ts_runq;	 /* per-CPU queue it is on, -1: global */
	int ts_didrun;	 /* ran since the last schedcpu */
	int ts_pctstamp; /* ticks when ts_pctcpu was last decayed */
};

_Static_assert(sizeof(struct td_sched) <= TD_SCHED_SIZE, "td_sched");

static inline struct td_sched *
ts_of(struct thread *td)
{
	return ((struct td_sched *)(void *)td->td_sched);
}

/* sched_4bsd.c: the queues, under sched_lock, and the per-CPU state */
#define sched_lock ult__bsd_sched_lock
#define runq_length ult__bsd_runq_length
#define runq_global_len ult__bsd_runq_global_len
#define sched_tdcnt ult__bsd_sched_tdcnt
#define curthr ult__bsd_curthr
#define idlethr ult__bsd_idlethr
#define ncpu ult__bsd_ncpu
#define sched_slice ult__bsd_sched_slice
#define rq_of ult__bsd_rq_of
extern struct mtx sched_lock;
extern atomic_int *runq_length;
extern atomic_int runq_global_len;
extern atomic_int sched_tdcnt;
extern struct thread *_Atomic *curthr;
extern struct thread **idlethr;
extern int ncpu;
extern atomic_int sched_slice;
struct runq *rq_of(int idx);

/*
 * Another CPU's current thread is read under sched_lock, but its priority
 * may be changed meanwhile by lends made under other locks, and it may be
 * the idle thread: compare pointers, load priorities atomically.
 */
static inline int
pri_of(struct thread *td)
{
	return (__atomic_load_n(&td->td_priority, __ATOMIC_RELAXED));
}

static inline int
cpu_is_idle(int cpu)
{
	return (ULT_LD(&curthr[cpu]) == idlethr[cpu]);
}

static inline int
runnable_for(int cpu)
{
	return (ULT_LD(&runq_global_len) + ULT_LD(&runq_length[cpu]));
}

/* sched_4bsd_cpu.c */
#define ldavg ult__bsd_ldavg
#define iew ult__bsd_iew
#define resetpriority ult__bsd_resetpriority
#define pctcpu_decay ult__bsd_pctcpu_decay
#define schedcpu_thread ult__bsd_schedcpu_thread
#define loadav ult__bsd_loadav
#define updatepri ult__bsd_updatepri
extern int ldavg;
int iew(void);
void resetpriority(struct thread *td);
void pctcpu_decay(struct td_sched *ts, int now);
void schedcpu_thread(struct thread *td, int loadfac, int now);
void loadav(void);
void updatepri(struct thread *td, int slptime);

/* sched_4bsd_check.c: the ops table's views and tunables */
#define bsd_load ult__bsd_load
#define bsd_thread_stats ult__bsd_thread_stats
#define bsd_cpu_stats ult__bsd_cpu_stats
#define bsd_check ult__bsd_check
#define bsd_tunables ult__bsd_tunables
int bsd_load(int cpu);
void bsd_thread_stats(struct thread *td, struct sched_thread_stats *st);
void bsd_cpu_stats(int cpu, struct sched_cpu_stats *st);
const char *bsd_check(void);
#define bsd_dump ult__bsd_dump
void bsd_dump(int cpu, void (*out)(void *, const char *), void *arg);
#define bsd_cpu_idle_flag ult__bsd_cpu_idle_flag
int bsd_cpu_idle_flag(int cpu);
extern const struct sched_tunable bsd_tunables[];

#endif
