/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * Private to the sched_ule*.c files (and the policy tests): ULE's
 * per-thread and per-CPU state, its constants and tunables.  The port
 * reads side by side with sys/kern/sched_ule.c (FreeBSD 14, "ULE-C"):
 * static functions, macros and struct fields keep FreeBSD's names, and
 * what the files share is FreeBSD's name with a ule_ prefix (tdq_ kept),
 * the name the source, nm and the debugger all use:
 *
 *   FreeBSD                   here
 *   tdq_add                   ule_tdq_add
 *   tdq_notify                ule_tdq_notify
 *   tdq_idled                 ule_tdq_idled
 *   tdq_trysteal              ule_tdq_trysteal
 *   tdq_slice                 ule_tdq_slice
 *   td_slice                  ule_td_slice
 *   sched_rem                 ule_rem
 *   sched_priority            ule_priority
 *   sched_interact_score      ule_interact_score
 *   sched_interact_update     ule_interact_update
 *   sched_pctcpu              ule_pctcpu
 *   sched_pctcpu_update       ule_pctcpu_update
 *   sched_setpreempt          ule_setpreempt
 *   sched_shouldpreempt       ule_shouldpreempt
 *   sched_random              ule_random
 *   sched_pickcpu             ule_pickcpu
 *   sched_setcpu              ule_setcpu
 *   sched_switch_migrate      ule_switch_migrate
 *   sched_balance             ule_balance
 *   tdq_cpu[] (DPCPU)         ule_tdq_cpu[]
 *   mp_ncpus                  ule_ncpu
 *   cpu_top                   ule_cpu_top
 *   all_cpus                  ule_all_cpus
 *   sched_slice, affinity...  ule_tun.slice, ule_tun.affinity, ...
 *                             (sched_ prefix dropped; see struct ule_tun)
 *
 * The op table's functions are ule_<op> (ule_add, ule_switch, ...).
 */
#ifndef ULT_SCHED_ULE_H
#define ULT_SCHED_ULE_H

#include <limits.h>

#include "machine.h"
#include "runq.h"
#include "sched.h"

/*
 * Per-thread policy data (struct td_sched), in struct thread's td_sched.
 *
 * Locking: every field is (t), under td's thread lock, which is td's tdq
 * lock while it is queued or running: the clock charges the running
 * thread and the queue code sets ts_runq and TSF_XFERABLE under the queue
 * lock for that reason.  While td is blocked (td_lock == &blocked_lock)
 * the CPU that blocked it has them as if it held the lock (ule_switch,
 * ule_switch_migrate, ule_tdq_move).  None is atomic: nothing reads them
 * without the lock; ule_thread_stats even updates the %CPU window, so its
 * callers need the thread lock too.  A child passed to exit() has exited
 * and is read by its parent's caller unlocked.
 */
struct td_sched {
	int ts_flags;	      /* (t) TSF_* */
	int ts_cpu;	      /* (t) CPU we are queued on or last ran on */
	int ts_rltick;	      /* (t) ticks when we last ran (affinity) */
	int ts_slice;	      /* (t) stat ticks of the slice used so far */
	unsigned ts_slptime;  /* (t) sleep time, ticks << SCHED_TICK_SHIFT */
	unsigned ts_runtime;  /* (t) run time, ticks << SCHED_TICK_SHIFT */
	int ts_ltick;	      /* (t) last %CPU update, ticks */
	int ts_ftick;	      /* (t) %CPU window start, ticks */
	unsigned ts_ticks;    /* (t) window's run ticks << SCHED_TICK_SHIFT */
	struct runq *ts_runq; /* (t) the tdq runq td is on */
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

/*
 * Per-CPU queue.  The lock comes first and the struct is padded so that
 * two CPUs' queues never share a cache line.
 *
 * Locking key, as FreeBSD's:
 *   (c)  constant once ule_init (ule_idle_init for tdq_idlethread) ran
 *   (t)  read and written under tdq_lock only
 *   (ts) stores under tdq_lock, loads also without it, hence an atomic
 *        (relaxed): by other CPUs' placement, stealing and balancing
 *        searches, which re-check under the locks before anything moves;
 *        by this CPU's idle loop (load, switch counts); by the host (load
 *        for the worker's park test; load, transferable, lowpri and steals
 *        for ult_cpu_info)
 *   (ls) stored by this CPU's idle loop without tdq_lock, loaded by the
 *        CPUs that add work here: an atomic, with the fence pairing of
 *        ule_idle_enter and ule_tdq_notify
 *   (f)  set under tdq_lock by a CPU asking this one to preempt, cleared
 *        by this CPU, in ule_switch even without tdq_lock (the outgoing
 *        thread's lock is then a sleep queue's): an atomic
 * The switch counts are (ts) rather than FreeBSD's CPU-local (l): the
 * clock that resets them runs on the clock thread, not on this CPU.  The
 * hang report (ule_dump) reads every field without waiting for the lock.
 */
struct tdq {
	struct mtx tdq_lock;
	const struct cpu_group *tdq_cg;	      /* (c) leaf group of this cpu */
	struct thread *_Atomic tdq_curthread; /* (ts) running thread */
	atomic_int tdq_load;	 /* (ts) running + queued, idle excluded */
	atomic_int tdq_cpu_idle; /* (ls) idle thread is (about to be) asleep */
	atomic_int tdq_transferable; /* (ts) queued threads that may migrate */
	atomic_int tdq_switchcnt;    /* (ts) switches this stat tick */
	atomic_int tdq_oldswitchcnt; /* (ts) switches last stat tick */
	atomic_uint tdq_nlow;	     /* (ts) ult: times the load fell to
				      one or zero, never reset */
	atomic_int tdq_lowpri;	   /* (ts) best priority of curthread + queue */
	atomic_int tdq_owepreempt; /* (f) remote preemption requested */
	uint8_t tdq_syncwait;	   /* (t) ult: a thread queued by pick_sync
				      or sync_defer waits for the running
				      one to switch */
	uint8_t tdq_idx;	   /* (t) calendar insert index */
	uint8_t tdq_ridx;	   /* (t) calendar removal index */
	int tdq_id;		   /* (c) the cpu */
	int tdq_syncwait_tick;	   /* (t) ult: ticks when syncwait was set */
	int tdq_batch_tick;	   /* (t) ult: batch last ran a stat tick here,
				      or its queue was empty (batch_guard) */
	atomic_int tdq_curpct;	   /* (ts) ult: the running thread's %CPU
				      estimate at the last stat tick
				      (balance_fair) */
	atomic_uint_fast64_t tdq_steals; /* (ts) threads this cpu took */
	struct thread *tdq_idlethread;	 /* (c) */
	struct runq tdq_realtime;  /* (t) interrupt, realtime, interactive */
	struct runq tdq_timeshare; /* (t) batch: the calendar */
	struct runq tdq_idle;	   /* (t) idle class */
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
#define SCHED_INTERACT_MAX (100)
#define SCHED_INTERACT_HALF (SCHED_INTERACT_MAX / 2)
#define SCHED_INTERACT_THRESH (30)

/* Slices. */
#define SCHED_SLICE_DEFAULT_DIVISOR 10
#define SCHED_SLICE_MIN_DIVISOR 6
#define SCHED_AFFINITY_DEFAULT (ULT_HZ / 1000 > 1 ? ULT_HZ / 1000 : 1)

/*
 * Tunables (kern.sched.*), defined in sched_ule_tun.c, each under its
 * FreeBSD variable's name less any sched_ prefix.  They are read without
 * locks, as in FreeBSD, hence atomic with relaxed loads: TUN(ule_tun.x).
 */
#define TUN(x) ULT_LD(&(x))
struct ule_tun {
	atomic_int interact;	     /* sched_interact: kern.sched.interact */
	atomic_int slice;	     /* sched_slice, stat ticks */
	atomic_int slice_min;	     /* sched_slice_min: slice / 6 */
	atomic_int preempt_thresh;   /* kern.sched.preempt_thresh */
	atomic_int static_boost;     /* kern.sched.static_boost */
	atomic_int idlespins;	     /* sched_idlespins */
	atomic_int idlespinthresh;   /* sched_idlespinthresh */
	atomic_int affinity;	     /* kern.sched.affinity, ticks */
	atomic_int rebalance;	     /* kern.sched.balance */
	atomic_int balance_interval; /* kern.sched.balance_interval */
	atomic_int steal_idle;	     /* kern.sched.steal_idle */
	atomic_int steal_thresh;     /* kern.sched.steal_thresh */
	atomic_int trysteal_limit;   /* kern.sched.trysteal_limit */
	atomic_int steal_stranded;   /* ult's kern.sched.steal_stranded */
	atomic_int always_steal;     /* kern.sched.always_steal */
	atomic_int wake_local;	     /* ult's kern.sched.wake_local */
	atomic_int batch_guard;	     /* ult's kern.sched.batch_guard, ms */
	atomic_int nice_weight;	     /* ult's kern.sched.nice_weight */
	atomic_int balance_fair;     /* ult's kern.sched.balance_fair */
	/* Not tunables: what FreeBSD's sched_initticks derives from the
	 * clocks, constant here. */
	atomic_int tickincr;   /* run time per stat tick << SCHED_TICK_SHIFT */
	atomic_int realstathz; /* stat ticks per second */
};
extern struct ule_tun ule_tun;

/* The per-CPU queues, sized at init. */
static inline int
imax(int a, int b)
{
	return (a > b ? a : b);
}

extern struct tdq *ule_tdq_cpu;
extern int ule_ncpu;
extern int ule_nactive; /* ult: CPUs below are not reserve (machine.h) */
extern const struct cpu_group *ule_cpu_top;
extern cpuset_t ule_all_cpus;

/* ult: cpu is a reserve CPU out of service (machine.h): it places,
 * steals and is handed nothing, and runs only what is queued on it. */
static inline int
ule_cpu_reserved(int cpu)
{
	return (cpu >= ule_nactive && mach_cpu_state(cpu) == MACH_CPU_BLOCKED);
}

#define TDQ_CPU(c) (&ule_tdq_cpu[(c)])
#define TDQ_ID(t) ((t)->tdq_id)
#define TDQ_LOCKPTR(t) (&(t)->tdq_lock)
#define TDQ_LOCK(t) mtx_lock_spin(TDQ_LOCKPTR(t))
#define TDQ_UNLOCK(t) mtx_unlock_spin(TDQ_LOCKPTR(t))
#define TDQ_TRYLOCK(t) mtx_trylock_spin(TDQ_LOCKPTR(t))
#define TDQ_LOCK_ASSERT(t) MTX_ASSERT_OWNED(TDQ_LOCKPTR(t))
#define TDQ_LOAD(t) ULT_LD(&(t)->tdq_load)
#define TDQ_TRANSFERABLE(t) ULT_LD(&(t)->tdq_transferable)
#define TDQ_LOWPRI(t) ULT_LD(&(t)->tdq_lowpri)
#define TDQ_SWITCHCNT(t) \
	(ULT_LD(&(t)->tdq_switchcnt) + ULT_LD(&(t)->tdq_oldswitchcnt))

#define THREAD_CAN_MIGRATE(td) ((td)->td_pinned == 0)
/* Affinity: ran within the last t cache-level units of `affinity' ticks. */
#define SCHED_AFFINITY(ts, t, now) \
	((int)((ts)->ts_rltick - ((now) - (t)*TUN(ule_tun.affinity))) > 0)

/* The calling CPU's queue, or NULL for a caller that is not a CPU. */
static inline struct tdq *
tdq_self(int self)
{
	return (self >= 0 ? TDQ_CPU(self) : NULL);
}

/* sched_ule_prio.c */
int ule_interact_score(struct thread *td);
void ule_interact_update(struct thread *td);
void ule_pctcpu_update(struct td_sched *ts, int run, int now);
void ule_priority(struct thread *td);
int ule_pctcpu(struct thread *td, int now);
int ule_tdq_slice(struct tdq *tdq);
int ule_td_slice(struct thread *td, struct tdq *tdq);

/* sched_ule.c, used by the SMP code */
int ule_tdq_add(struct tdq *tdq, struct thread *td, int flags);
void ule_add(struct thread *td, int flags);
void ule_rem(struct thread *td);
void tdq_runq_add(struct tdq *tdq, struct thread *td, int flags);
void tdq_runq_rem(struct tdq *tdq, struct thread *td);
void tdq_setlowpri(struct tdq *tdq, struct thread *ctd);
void tdq_assert_lowpri(struct tdq *tdq);
void ule_setpreempt(struct tdq *tdq, int pri);
int ule_shouldpreempt(int pri, int cpri, int remote);
unsigned ule_random(void);

/* sched_ule_smp.c */
int ule_pickcpu(struct thread *td, int flags, int self, int now);
/* sched_ule_search.c: least loaded acceptable CPU, busiest CPU, or -1 */
int ule_sched_lowest(const struct cpu_group *cg, const cpuset_t *mask, int pri,
    int maxload, int prefer, int running);
int ule_sched_highest(const struct cpu_group *cg, const cpuset_t *mask,
    int minload, int mintrans);
void ule_tdq_notify(struct tdq *tdq, int lowpri);
int ule_tdq_idled(struct tdq *tdq);
int ule_tdq_take_stale(struct tdq *tdq, struct sched_idle *st);
void ule_wakep(int self);
extern atomic_int ule_wakep_tick;
void ule_tdq_trysteal(struct tdq *tdq);
void ule_balance(void);
int ule_evacuate(int cpu);
struct tdq *ule_setcpu(struct thread *td, int cpu, int flags);
struct mtx *ule_switch_migrate(struct tdq *tdq, struct thread *td, int flags);

/* sched_ule_thread.c: the ops on one thread's state */
void ule_lend_prio(struct thread *td, int prio);
void ule_unlend_prio(struct thread *td, int prio);
void ule_prio(struct thread *td, int prio);
void ule_nice(struct thread *td, int nice);
void ule_set_class(struct thread *td, int cls);
void ule_unbind(struct thread *td);
int ule_bind(struct thread *td, int cpu);
int ule_is_bound(struct thread *td);
void ule_thread_init(struct thread *td);
void ule_fork(struct thread *td, struct thread *child);
void ule_exit(struct thread *td, struct thread *child);
void ule_idle_init(struct thread *td, int cpu);

/* sched_ule_idle.c: the ops table's idle loop */
int ule_idle_poll(int cpu, struct sched_idle *st);
int ule_idle_enter(int cpu, struct sched_idle *st);
void ule_idle_exit(int cpu, struct sched_idle *st);

/* sched_ule_tun.c: the ops table's tunables */
extern const struct sched_tunable ule_tunables[];
int ule_slice_min_us(void);

/* sched_ule_check.c: the ops table's read-only views */
int ule_load(int cpu);
void ule_thread_stats(struct thread *td, struct sched_thread_stats *st);
void ule_cpu_stats(int cpu, struct sched_cpu_stats *st);
const char *ule_check(void);
void ule_dump(int cpu, void (*out)(void *, const char *), void *arg);

#endif
