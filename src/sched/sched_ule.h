/*
 * Private to the sched_ule*.c files: ULE's per-thread and per-CPU state,
 * its constants and tunables.  FreeBSD's names are kept so the port reads
 * side by side with sys/kern/sched_ule.c (FreeBSD 14, "ULE-C").  Functions
 * shared between the files keep their FreeBSD names in the source and get
 * an ult__ule_ prefix at link time through the defines below.
 */
#ifndef ULT_SCHED_ULE_H
#define ULT_SCHED_ULE_H

#include <limits.h>

#include "machine.h"
#include "runq.h"
#include "sched.h"

/* Per-thread policy data (struct td_sched), in struct thread's td_sched. */
struct td_sched {
	int ts_flags;	     /* TSF_* */
	int ts_cpu;	     /* CPU we are queued on or last ran on */
	int ts_rltick;	     /* ticks when we last ran (affinity) */
	int ts_slice;	     /* stat ticks of the slice used so far */
	unsigned ts_slptime; /* voluntary sleep, ticks << SCHED_TICK_SHIFT */
	unsigned ts_runtime; /* run time, ticks << SCHED_TICK_SHIFT */
	int ts_ltick;	     /* last %CPU update, ticks */
	int ts_ftick;	     /* %CPU window start, ticks */
	unsigned ts_ticks;   /* run ticks in the window << SCHED_TICK_SHIFT */
	struct runq *ts_runq;
};

#define TSF_BOUND 0x0001    /* bound to a cpu */
#define TSF_XFERABLE 0x0002 /* counted in tdq_transferable */

_Static_assert(sizeof(struct td_sched) <= TD_SCHED_SIZE,
    "struct td_sched must fit in struct thread");

static inline struct td_sched *
td_get_sched(struct thread *td)
{
	return ((struct td_sched *)(void *)td->td_sched);
}

/* Per-CPU queue.  The lock comes first and the struct is padded so that
 * two CPUs' queues never share a cache line. */
struct tdq {
	struct mtx tdq_lock;
	const struct cpu_group *tdq_cg; /* leaf group of this cpu */
	struct thread *_Atomic tdq_curthread;
	atomic_int tdq_load;	     /* running + queued, idle excluded */
	atomic_int tdq_cpu_idle;     /* idle thread is (about to be) asleep */
	atomic_int tdq_transferable; /* queued threads that may migrate */
	atomic_int tdq_switchcnt;    /* switches this stat tick */
	atomic_int tdq_oldswitchcnt; /* switches last stat tick */
	atomic_int tdq_lowpri;	     /* best priority of curthread + queue */
	atomic_int tdq_owepreempt;   /* remote preemption requested */
	uint8_t tdq_idx;	     /* calendar insert index */
	uint8_t tdq_ridx;	     /* calendar removal index */
	int tdq_id;
	atomic_uint_fast64_t tdq_steals;
	struct thread *tdq_idlethread;
	struct runq tdq_realtime;  /* interrupt, realtime, interactive */
	struct runq tdq_timeshare; /* batch: the calendar */
	struct runq tdq_idle;	   /* idle class */
} ULT_ALIGNED_CL;

/* Priority layout inside the timeshare band (FreeBSD 14/15 values). */
#define PRI_TIMESHARE_RANGE (PRI_MAX_TIMESHARE - PRI_MIN_TIMESHARE + 1)
#define PRI_INTERACT_RANGE ((PRI_TIMESHARE_RANGE - SCHED_PRI_NRESV) / 2)
#define PRI_BATCH_RANGE (PRI_TIMESHARE_RANGE - PRI_INTERACT_RANGE)
#define PRI_MIN_INTERACT PRI_MIN_TIMESHARE
#define PRI_MAX_INTERACT (PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE - 1)
#define PRI_MIN_BATCH (PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE)
#define PRI_MAX_BATCH PRI_MAX_TIMESHARE
#define SCHED_PRI_NRESV (PRIO_MAX - PRIO_MIN)
#define SCHED_PRI_NHALF (SCHED_PRI_NRESV / 2)
#define SCHED_PRI_MIN (PRI_MIN_BATCH + SCHED_PRI_NHALF)
#define SCHED_PRI_MAX (PRI_MAX_BATCH - SCHED_PRI_NHALF)
#define SCHED_PRI_RANGE (SCHED_PRI_MAX - SCHED_PRI_MIN + 1)
#define SCHED_PRI_NICE(nice) (nice)

_Static_assert(PRI_MIN_BATCH == 136 && SCHED_PRI_MIN == 156 &&
	SCHED_PRI_RANGE == 48,
    "FreeBSD 14/15 ULE-C priority layout");

/* %CPU window. */
#define SCHED_TICK_SECS 10
#define SCHED_TICK_TARG (ULT_HZ * SCHED_TICK_SECS)
#define SCHED_TICK_MAX (SCHED_TICK_TARG + ULT_HZ)
#define SCHED_TICK_SHIFT 10
#define SCHED_TICK_HZ(ts) ((ts)->ts_ticks >> SCHED_TICK_SHIFT)

/* Interactivity. */
#define SCHED_SLP_RUN_MAX ((ULT_HZ * 5) << SCHED_TICK_SHIFT)
#define SCHED_SLP_RUN_FORK ((ULT_HZ / 2) << SCHED_TICK_SHIFT)
#define SCHED_INTERACT_MAX (100)
#define SCHED_INTERACT_HALF (SCHED_INTERACT_MAX / 2)
#define SCHED_INTERACT_THRESH (30)

/* Slices. */
#define SCHED_SLICE_DEFAULT_DIVISOR 10
#define SCHED_SLICE_MIN_DIVISOR 6
#define SCHED_AFFINITY_DEFAULT (ULT_HZ / 1000 > 1 ? ULT_HZ / 1000 : 1)

/*
 * Tunables (kern.sched.*), defined in sched_ule_tun.c.  They are read
 * without locks, as in FreeBSD, hence atomic with relaxed loads (TUN()).
 */
#define TUN(x) ULT_LD(&(x))
#define sched_interact ult__ule_interact
#define sched_slice ult__ule_slice
#define sched_slice_min ult__ule_slice_min
#define preempt_thresh ult__ule_preempt_thresh
#define static_boost ult__ule_static_boost
#define sched_idlespins ult__ule_idlespins
#define sched_idlespinthresh ult__ule_idlespinthresh
#define affinity ult__ule_affinity
#define rebalance ult__ule_rebalance
#define balance_interval ult__ule_balance_interval
#define steal_idle ult__ule_steal_idle
#define steal_thresh ult__ule_steal_thresh
#define trysteal_limit ult__ule_trysteal_limit
#define steal_stranded ult__ule_steal_stranded
#define always_steal ult__ule_always_steal
#define tickincr ult__ule_tickincr
#define realstathz ult__ule_realstathz
extern atomic_int sched_interact, sched_slice, sched_slice_min, preempt_thresh,
    static_boost, sched_idlespins, sched_idlespinthresh, affinity, rebalance,
    balance_interval, steal_idle, steal_thresh, trysteal_limit, steal_stranded,
    always_steal, tickincr, realstathz;

/* The per-CPU queues, sized at init. */
#define tdq_cpu ult__ule_tdq_cpu
#define tdq_ncpu ult__ule_tdq_ncpu
#define cpu_top ult__ule_cpu_top
#define all_cpus ult__ule_all_cpus
extern struct tdq *tdq_cpu;
extern int tdq_ncpu;
extern const struct cpu_group *cpu_top;
extern cpuset_t all_cpus;

#define TDQ_CPU(c) (&tdq_cpu[(c)])
#define TDQ_ID(t) ((t)->tdq_id)
#define TDQ_LOCKPTR(t) (&(t)->tdq_lock)
#define TDQ_LOCK(t) mtx_lock(TDQ_LOCKPTR(t))
#define TDQ_UNLOCK(t) mtx_unlock(TDQ_LOCKPTR(t))
#define TDQ_TRYLOCK(t) mtx_trylock(TDQ_LOCKPTR(t))
#define TDQ_LOCK_ASSERT(t) MTX_ASSERT_OWNED(TDQ_LOCKPTR(t))
#define TDQ_LOAD(t) ULT_LD(&(t)->tdq_load)
#define TDQ_TRANSFERABLE(t) ULT_LD(&(t)->tdq_transferable)
#define TDQ_LOWPRI(t) ULT_LD(&(t)->tdq_lowpri)
#define TDQ_SWITCHCNT(t) \
	(ULT_LD(&(t)->tdq_switchcnt) + ULT_LD(&(t)->tdq_oldswitchcnt))

#define THREAD_CAN_MIGRATE(td) ((td)->td_pinned == 0)
/* Affinity: ran within the last t cache-level units of `affinity' ticks. */
#define SCHED_AFFINITY(ts, t, now) \
	((int)((ts)->ts_rltick - ((now) - (t)*TUN(affinity))) > 0)

/* The calling CPU's queue, or NULL for a caller that is not a CPU. */
static inline struct tdq *
tdq_self(int self)
{
	return (self >= 0 ? TDQ_CPU(self) : NULL);
}

/* sched_ule_prio.c */
#define sched_interact_score ult__ule_interact_score
#define sched_interact_update ult__ule_interact_update
#define sched_interact_fork ult__ule_interact_fork
#define sched_pctcpu_update ult__ule_pctcpu_update
#define sched_user_prio ult__ule_user_prio
#define sched_pctcpu ult__ule_pctcpu
#define tdq_slice ult__ule_tdq_slice
#define td_slice ult__ule_td_slice
int sched_interact_score(struct thread *td);
void sched_interact_update(struct thread *td);
void sched_interact_fork(struct thread *td);
void sched_pctcpu_update(struct td_sched *ts, int run, int now);
/* An asm label, not a define: <sched.h> uses the name for a struct member. */
void sched_priority(struct thread *td) __asm__("ult__ule_priority");
void sched_user_prio(struct thread *td, int prio);
int sched_pctcpu(struct thread *td, int now);
int tdq_slice(struct tdq *tdq);
int td_slice(struct thread *td, struct tdq *tdq);

/* sched_ule.c, used by the SMP code */
#define tdq_add ult__ule_tdq_add
#define tdq_setlowpri ult__ule_tdq_setlowpri
#define tdq_choose ult__ule_tdq_choose
#define sched_rem ult__ule_sched_rem
#define sched_setpreempt ult__ule_sched_setpreempt
#define sched_shouldpreempt ult__ule_sched_shouldpreempt
#define sched_random ult__ule_sched_random
int tdq_add(struct tdq *tdq, struct thread *td, int flags);
void tdq_setlowpri(struct tdq *tdq, struct thread *ctd);
struct thread *tdq_choose(struct tdq *tdq);
void sched_rem(struct thread *td);
void sched_setpreempt(struct tdq *tdq, int pri);
int sched_shouldpreempt(int pri, int cpri, int remote);
unsigned sched_random(void);

/* sched_ule_smp.c */
#define sched_pickcpu ult__ule_pickcpu
#define sched_lowest ult__ule_lowest
#define sched_highest ult__ule_highest
#define tdq_notify ult__ule_tdq_notify
#define tdq_move ult__ule_tdq_move
#define tdq_idled ult__ule_tdq_idled
#define tdq_trysteal ult__ule_tdq_trysteal
#define tdq_lock_pair ult__ule_tdq_lock_pair
#define tdq_unlock_pair ult__ule_tdq_unlock_pair
#define sched_balance ult__ule_balance
#define sched_setcpu ult__ule_setcpu
#define sched_switch_migrate ult__ule_switch_migrate
int sched_pickcpu(struct thread *td, int flags, int self, int now);
int sched_lowest(const struct cpu_group *cg, const cpuset_t *mask, int pri,
    int maxload, int prefer, int running);
int sched_highest(const struct cpu_group *cg, const cpuset_t *mask, int minload,
    int mintrans);
void tdq_notify(struct tdq *tdq, int lowpri);
int tdq_move(struct tdq *from, struct tdq *to);
int tdq_idled(struct tdq *tdq);
void tdq_trysteal(struct tdq *tdq);
void tdq_lock_pair(struct tdq *one, struct tdq *two);
void tdq_unlock_pair(struct tdq *one, struct tdq *two);
void sched_balance(void);
struct tdq *sched_setcpu(struct thread *td, int cpu, int flags);
struct mtx *sched_switch_migrate(struct tdq *tdq, struct thread *td, int flags);

/* sched_ule_idle.c: the ops table's idle loop */
#define ule_idle_poll ult__ule_idle_poll
#define ule_idle_enter ult__ule_idle_enter
#define ule_idle_exit ult__ule_idle_exit
#define ule_idle_spins ult__ule_idle_spins
int ule_idle_poll(int cpu, struct sched_idle *st);
int ule_idle_enter(int cpu, struct sched_idle *st);
void ule_idle_exit(int cpu, struct sched_idle *st);
int ule_idle_spins(void);

/* sched_ule_tun.c: the ops table's tunables */
#define ule_tunables ult__ule_tunables
extern const struct sched_tunable ule_tunables[];

/* sched_ule_check.c: the ops table's read-only views */
#define ule_load ult__ule_load
#define ule_thread_stats ult__ule_thread_stats
#define ule_cpu_stats ult__ule_cpu_stats
#define ule_check ult__ule_check
int ule_load(int cpu);
void ule_thread_stats(struct thread *td, struct sched_thread_stats *st);
void ule_cpu_stats(int cpu, struct sched_cpu_stats *st);
const char *ule_check(void);
#define ule_dump ult__ule_dump
void ule_dump(int cpu, void (*out)(void *, const char *), void *arg);

#endif
