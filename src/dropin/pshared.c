/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Process-shared objects (DESIGN.md section 14, "Process-shared
 * objects").  Another process's glibc may touch a PTHREAD_PROCESS_SHARED
 * mutex, condition variable, rwlock, barrier or semaphore, so such an
 * object keeps glibc's layout and glibc's own functions act on it.  What
 * the drop-in adds is how a uthread waits, since glibc waits in the
 * kernel and a uthread there takes its worker with it:
 *
 *  - mutexes, rwlocks and semaphores are taken with glibc's try calls
 *    only; between tries the uthread sleeps on the futex emulation's
 *    table (mutex, semaphore: on the futex word, which the drop-in's own
 *    unlocks and posts wake at once) or on the clock (rwlocks), for a
 *    slice that doubles up to PS_SLICE_MAX_NS, since a release by another
 *    process wakes only the kernel's waiters;
 *  - a condition or barrier wait cannot be split into tries: it runs
 *    whole on a helper thread of ult_blocking while the uthread sleeps.
 *
 * glibc names the owner of a mutex or of a write lock by the kernel
 * thread id in the thread's descriptor, which for a uthread is its
 * worker's: two uthreads of one worker look alike, and one that migrated
 * looks like a stranger.  So the drop-in keeps, per thread, the list of
 * the glibc-layout locks it holds (it answers "do I hold it"), and just
 * before glibc's unlock writes the current worker's id into the owner
 * fields, with the uthread pinned to that worker for the call.
 */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "dropin.h"

#define PS_SLICE_MIN_NS 100000u
#define PS_SLICE_MAX_NS 1000000u
/* A condition wait on a helper looks whether its waiter was cancelled or
 * signalled this often, should the broadcast that says so have come
 * before the wait began. */
#define PS_CWAIT_SLICE_NS 50000000

/* A rwlock or barrier of glibc's: a mark in bytes glibc leaves alone. */
#define PS_MARK 0x646572616873746cull /* "ltshared" */
#define RW_MARK(rw) (*(uint64_t *)(void *)((char *)(rw) + 40))
#define BAR_MARK(b) (*(uint64_t *)(void *)((char *)(b) + 24))
_Static_assert(sizeof(pthread_rwlock_t) >= 48 &&
	sizeof(pthread_barrier_t) >= 32,
    "room for the marks");

#define NEXT(name)                                                    \
	({                                                            \
		static void *_Atomic slot_;                           \
		((__typeof__(&name))ult__dropin_next(#name, &slot_)); \
	})

#define TID_MASK 0x3fffffffu
#define KIND(m) ((m)->__data.__kind)
#define TYPE(m) (KIND(m) & 3)
#define ROBUST(m) ((KIND(m) & DP_GL_ROBUST) != 0)

/* The locks a thread holds, glibc's layout (dp->held). */
enum {
	HELD_MUTEX,
	HELD_WRITE
};
struct held_ent {
	void *obj;
	int what;
	unsigned depth; /* recursive relocks */
};
struct dp_held {
	int n, cap;
	struct held_ent e[];
};

static struct held_ent *
held_find(struct dp_thread *dp, void *obj, int what)
{
	struct dp_held *h = dp->held;

	for (int i = 0; h != NULL && i < h->n; i++)
		if (h->e[i].obj == obj && h->e[i].what == what)
			return (&h->e[i]);
	return (NULL);
}

static int
held_add(struct dp_thread *dp, void *obj, int what)
{
	struct dp_held *h = dp->held;

	if (h == NULL || h->n == h->cap) {
		int cap = h == NULL ? 8 : h->cap * 2;

		h = realloc(h, sizeof(*h) + (size_t)cap * sizeof(h->e[0]));
		if (h == NULL)
			return (ENOMEM);
		if (dp->held == NULL)
			h->n = 0;
		h->cap = cap;
		dp->held = h;
	}
	h->e[h->n++] = (struct held_ent){obj, what, 0};
	return (0);
}

static void
held_del(struct dp_thread *dp, struct held_ent *e)
{
	struct dp_held *h = dp->held;

	*e = h->e[--h->n];
}

static void robust_dead(pthread_mutex_t *m);

/* The thread ends: what the kernel does for a kernel thread's robust
 * list, for the robust ones it holds. */
void
ult__dropin_held_free(struct dp_thread *dp)
{
	struct dp_held *h = dp->held;

	for (int i = 0; h != NULL && i < h->n; i++)
		if (h->e[i].what == HELD_MUTEX &&
		    (KIND((pthread_mutex_t *)h->e[i].obj) & DP_GL_ROBUST))
			robust_dead(h->e[i].obj);
	free(h);
	dp->held = NULL;
}

/* The calling uthread's record, or NULL for a thread that is not one
 * (it calls glibc as any thread would). */
static struct dp_thread *
me(void)
{
	return (ult__self_ut() != NULL ? ult__dropin_self() : NULL);
}

static void
pin(int on)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL)
		/* seq_cst, as before: the pin must be seen by a preemption
		 * (the worker's own signal handler) before the glibc call. */
		ULT_PADD_FETCH_SC(&ut->td.td_pinned, on ? 1 : -1);
}

/* Sleep on word w while it holds v, one slice at most. */
static int
futex_nap(uint32_t *w, uint32_t v, uint64_t *slice, uint64_t deadline)
{
	uint64_t now = ult__now(), ns = *slice;
	struct timespec ts;

	if (deadline != 0 && now >= deadline)
		return (ETIMEDOUT);
	if (deadline != 0 && deadline - now < ns)
		ns = deadline - now;
	if (*slice < PS_SLICE_MAX_NS)
		*slice *= 2;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	ult__dropin_futex(w, FUTEX_WAIT, v, &ts, NULL, 0);
	return (0);
}

static int
nap(uint64_t *slice, uint64_t deadline)
{
	uint64_t now = ult__now(), ns = *slice;

	if (deadline != 0 && now >= deadline)
		return (ETIMEDOUT);
	if (deadline != 0 && deadline - now < ns)
		ns = deadline - now;
	if (*slice < PS_SLICE_MAX_NS)
		*slice *= 2;
	ult_sleep_ns(ns);
	return (0);
}

/* A timed wait's deadline, from abs at its first nap: *deadline is 0
 * until then, and is never 0 after (a past one is 1, at once due). */
static int
first_deadline(clockid_t clock, const struct timespec *abs, uint64_t *deadline)
{
	int err;

	if (abs != NULL && *deadline == 0) {
		if ((err = ult__dropin_deadline(clock, abs, deadline)) != 0)
			return (err);
		*deadline = *deadline ? *deadline : 1;
	}
	return (0);
}

/* Mutexes. */

int
ult__dropin_ps_is_mutex(const pthread_mutex_t *m)
{
	return ((KIND(m) & DP_GL_PSHARED) != 0);
}

int
ult__dropin_ps_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	pthread_mutexattr_t b;
	int v, err;

	/* Kernel priority inheritance or ceilings would act on the worker,
	 * not on the uthread: the object gets neither. */
	if ((err = pthread_mutexattr_init(&b)) != 0)
		return (err);
	if (pthread_mutexattr_gettype(a, &v) == 0)
		pthread_mutexattr_settype(&b, v);
	if (pthread_mutexattr_getrobust(a, &v) == 0)
		pthread_mutexattr_setrobust(&b, v);
	pthread_mutexattr_setpshared(&b, PTHREAD_PROCESS_SHARED);
	memset(m, 0, sizeof(*m));
	err = NEXT(pthread_mutex_init)(m, &b);
	pthread_mutexattr_destroy(&b);
	return (err);
}

/* Name the current worker as the owner, as glibc's unlock expects. */
static void
own_here(pthread_mutex_t *m)
{
	int tid = gettid(), o;

	if (ROBUST(m)) {
		uint32_t *w = (uint32_t *)(void *)&m->__data.__lock;
		uint32_t v = ULT_PLD(w);

		while ((v & TID_MASK) != (uint32_t)tid &&
		    !ULT_PCAS_RLX(w, &v, (v & ~TID_MASK) | (uint32_t)tid))
			;
	}
	/* The robust states (INT_MAX and below) stay. */
	o = ULT_PLD(&m->__data.__owner);
	if (o != 0 && o < INT_MAX - 1)
		ULT_PST(&m->__data.__owner, tid);
}

/* Held by another uthread of this worker: glibc would take it for ours. */
static int
worker_mate_holds(pthread_mutex_t *m)
{
	int tid = gettid();

	if (ROBUST(m))
		return ((ULT_PLD(&m->__data.__lock) & (int)TID_MASK) == tid);
	return (TYPE(m) == PTHREAD_MUTEX_RECURSIVE &&
	    ULT_PLD(&m->__data.__owner) == tid);
}

/*
 * A uthread ends holding robust mutex m.  Its descriptor's robust list
 * (glibc's, doubly linked through the mutexes' __list, each link the
 * address of a __next field) is nobody's in the kernel, so m is taken
 * off it as glibc's unlock would, and marked as the kernel marks a dead
 * owner's: FUTEX_OWNER_DIED, the waiters bit kept; one waiter is woken.
 */
static void
robust_dead(pthread_mutex_t *m)
{
	const size_t adj = offsetof(__pthread_list_t, __next);
	__pthread_list_t *l = &m->__data.__list, *next, *prev;
	uint32_t *w = (uint32_t *)(void *)&m->__data.__lock;
	uint32_t v = ULT_PLD(w);

	if (l->__next != NULL && l->__prev != NULL) {
		next = (__pthread_list_t *)(((uintptr_t)l->__next &
						~(uintptr_t)1) -
		    adj);
		prev = (__pthread_list_t *)(((uintptr_t)l->__prev &
						~(uintptr_t)1) -
		    adj);
		next->__prev = l->__prev;
		prev->__next = l->__next;
		l->__prev = l->__next = NULL;
	}
	while (!ULT_PCAS_REL(w, &v, (v & FUTEX_WAITERS) | FUTEX_OWNER_DIED))
		;
	ult__dropin_futex(w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int
ult__dropin_ps_mutex_lock(pthread_mutex_t *m, int try, clockid_t clock,
    const struct timespec *abs)
{
	struct dp_thread *dp = me();
	struct held_ent *e;
	uint64_t deadline = 0, slice = PS_SLICE_MIN_NS;
	int err;

	if (dp == NULL)
		return (try ? NEXT(pthread_mutex_trylock)(m)
			: abs != NULL
			? NEXT(pthread_mutex_clocklock)(m, clock, abs)
			: NEXT(pthread_mutex_lock)(m));
	if ((e = held_find(dp, m, HELD_MUTEX)) != NULL) {
		if (TYPE(m) == PTHREAD_MUTEX_RECURSIVE) {
			if (e->depth == UINT_MAX)
				return (EAGAIN);
			e->depth++;
			return (0);
		}
		if (TYPE(m) == PTHREAD_MUTEX_ERRORCHECK || ROBUST(m))
			return (try ? EBUSY : EDEADLK);
		if (try)
			return (EBUSY);
	}
	for (;;) {
		pin(1);
		err = worker_mate_holds(m) ? EBUSY
					   : NEXT(pthread_mutex_trylock)(m);
		pin(0);
		if (err == 0 || err == EOWNERDEAD) {
			if (held_add(dp, m, HELD_MUTEX) != 0) {
				ult__dropin_ps_mutex_unlock(m);
				return (EAGAIN);
			}
			return (err);
		}
		if (err != EBUSY || try)
			return (err);
		if ((err = first_deadline(clock, abs, &deadline)) != 0)
			return (err);
		if (futex_nap((uint32_t *)(void *)&m->__data.__lock,
			(uint32_t)ULT_PLD(&m->__data.__lock), &slice,
			deadline) == ETIMEDOUT)
			return (ETIMEDOUT);
	}
}

int
ult__dropin_ps_mutex_unlock(pthread_mutex_t *m)
{
	struct dp_thread *dp = me();
	struct held_ent *e;
	int err;

	if (dp == NULL)
		return (NEXT(pthread_mutex_unlock)(m));
	if ((e = held_find(dp, m, HELD_MUTEX)) == NULL)
		return (TYPE(m) == PTHREAD_MUTEX_NORMAL && !ROBUST(m)
			? NEXT(pthread_mutex_unlock)(m)
			: EPERM);
	if (e->depth != 0) {
		e->depth--;
		return (0);
	}
	pin(1);
	own_here(m);
	err = NEXT(pthread_mutex_unlock)(m);
	pin(0);
	if (err != 0)
		return (err);
	held_del(dp, e);
	/* The table's sleepers (the kernel's too, once more: a spurious
	 * wakeup they expect). */
	ult__dropin_futex((uint32_t *)(void *)&m->__data.__lock, FUTEX_WAKE, 1,
	    NULL, NULL, 0);
	return (0);
}

int
ult__dropin_ps_mutex_consistent(pthread_mutex_t *m)
{
	return (NEXT(pthread_mutex_consistent)(m));
}

int
ult__dropin_ps_mutex_destroy(pthread_mutex_t *m)
{
	return (NEXT(pthread_mutex_destroy)(m));
}

/* Condition variables: glibc's keeps "shared" in bit 0 of __wrefs, a
 * word the drop-in's own leaves zero. */

int
ult__dropin_ps_is_cond(const pthread_cond_t *c)
{
	return ((ULT_PLD(&c->__data.__wrefs) & 1) != 0);
}

int
ult__dropin_ps_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	memset(c, 0, sizeof(*c));
	return (NEXT(pthread_cond_init)(c, a));
}

struct cwait {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	clockid_t clock;
	const struct timespec *abs;
	struct dp_thread *dp;
	int err;
};

/* The waiting uthread has a cancel to act on or a signal to take: its
 * wait ends (a spurious wakeup, with the mutex held again). */
static int
cwait_due(struct dp_thread *dp)
{
	ult_thread_t *ut = ult__dropin_ut(dp);

	return ((ULT_PLD(&dp->cancel_pending) && !dp->cancel_off) ||
	    (ut != NULL && (ULT_PLD(&dp->sig_pending) & ~ut->sigmask) != 0));
}

/*
 * What a signal or broadcast of c changes, read with the mutex held: the
 * start of glibc's group 1 (a group switch) and the two groups' signal
 * counts.  A waiter's own timeout changes neither (it gives back a
 * signal the broadcast closed its group with by signalling again).
 */
struct cstamp {
	unsigned long long g1_start;
	unsigned g_signals[2];
};

static struct cstamp
cstamp(pthread_cond_t *c)
{
	struct cstamp s;

	s.g1_start = ULT_PLD(&c->__data.__g1_start.__value64);
	s.g_signals[0] = ULT_PLD(&c->__data.__g_signals[0]);
	s.g_signals[1] = ULT_PLD(&c->__data.__g_signals[1]);
	return (s);
}

static int
cstamp_same(const struct cstamp *a, const struct cstamp *b)
{
	return (a->g1_start == b->g1_start &&
	    a->g_signals[0] == b->g_signals[0] &&
	    a->g_signals[1] == b->g_signals[1]);
}

static void *
cwait_run(void *arg)
{
	struct cwait *w = arg;
	struct timespec t;
	struct cstamp before, after;

	/* The helper is the owner for glibc while it waits. */
	own_here(w->m);
	if (w->dp == NULL) {
		w->err = w->abs != NULL
		    ? NEXT(pthread_cond_clockwait)(w->c, w->m, w->clock, w->abs)
		    : NEXT(pthread_cond_wait)(w->c, w->m);
		return (NULL);
	}
	/* A cancel or a signal for the waiter broadcasts the condition
	 * (ult__dropin_interrupt); one that came before this wait began is
	 * seen at the end of a slice, which re-waits holding the mutex
	 * throughout, so no wakeup is lost. */
	for (;;) {
		clock_gettime(w->clock, &t);
		t.tv_nsec += PS_CWAIT_SLICE_NS;
		t.tv_sec += t.tv_nsec / 1000000000;
		t.tv_nsec %= 1000000000;
		if (w->abs != NULL &&
		    (w->abs->tv_sec < t.tv_sec ||
			(w->abs->tv_sec == t.tv_sec &&
			    w->abs->tv_nsec < t.tv_nsec)))
			t = *w->abs;
		before = cstamp(w->c);
		w->err = NEXT(pthread_cond_clockwait)(w->c, w->m, w->clock, &t);
		if (w->err != ETIMEDOUT ||
		    (w->abs != NULL && &t != w->abs &&
			t.tv_sec == w->abs->tv_sec &&
			t.tv_nsec == w->abs->tv_nsec))
			break;
		/* A slice that timed out as a broadcast came returns
		 * ETIMEDOUT from glibc, the broadcast spent on it: waiting
		 * again would lose it (found under a busy host), so the
		 * program sees a spurious wakeup and looks again. */
		after = cstamp(w->c);
		if (cwait_due(w->dp) || !cstamp_same(&before, &after)) {
			w->err = 0;
			break;
		}
	}
	return (NULL);
}

int
ult__dropin_ps_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, int clock,
    const struct timespec *abs)
{
	struct dp_thread *dp = me();
	struct cwait w = {c, m, clock, abs, dp, 0};
	int err;

	if (!ult__dropin_ps_is_mutex(m))
		return (EINVAL);
	if (dp == NULL) {
		cwait_run(&w);
		return (w.err);
	}
	if (held_find(dp, m, HELD_MUTEX) == NULL)
		return (EPERM);
	ult__dropin_point();
	ULT_PST_REL(&dp->ps_cond, c);
	err = ult__blocking_unbounded(cwait_run, &w, NULL);
	ULT_PST(&dp->ps_cond, NULL);
	if (err != 0)
		return (err);
	/* A cancel that ended the wait acts now, with the mutex held. */
	if (cwait_due(dp))
		ult__dropin_point();
	ult__dropin_after_wait();
	return (w.err);
}

/* pthread_cancel or pthread_kill for dp, waiting on c in a helper. */
void
ult__dropin_ps_cond_kick(pthread_cond_t *c)
{
	(void)NEXT(pthread_cond_broadcast)(c);
}

int
ult__dropin_ps_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
    const struct timespec *abs)
{
	clockid_t clock = CLOCK_REALTIME;

	/* glibc's clock: bit 1 of __wrefs. */
	if (ULT_PLD(&c->__data.__wrefs) & 2)
		clock = CLOCK_MONOTONIC;
	return (ult__dropin_ps_cond_wait(c, m, clock, abs));
}

int
ult__dropin_ps_cond_wake(pthread_cond_t *c, int all)
{
	return (all ? NEXT(pthread_cond_broadcast)(c)
		    : NEXT(pthread_cond_signal)(c));
}

int
ult__dropin_ps_cond_destroy(pthread_cond_t *c)
{
	return (NEXT(pthread_cond_destroy)(c));
}

/* Rwlocks. */

/* An init puts a rwlock's or barrier's mark, a destroy takes it off, but
 * only once glibc's own call has succeeded. */
static int
mark_if_ok(int err, uint64_t *mark, uint64_t v)
{
	if (err == 0)
		*mark = v;
	return (err);
}

int
ult__dropin_ps_is_rwlock(const pthread_rwlock_t *rw)
{
	return (RW_MARK(rw) == PS_MARK);
}

int
ult__dropin_ps_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
	memset(rw, 0, sizeof(*rw));
	return (mark_if_ok(NEXT(pthread_rwlock_init)(rw, a), &RW_MARK(rw),
	    PS_MARK));
}

int
ult__dropin_ps_rwlock_destroy(pthread_rwlock_t *rw)
{
	return (mark_if_ok(NEXT(pthread_rwlock_destroy)(rw), &RW_MARK(rw), 0));
}

int
ult__dropin_ps_rwlock_lock(pthread_rwlock_t *rw, int write, int try,
    clockid_t clock, const struct timespec *abs)
{
	struct dp_thread *dp = me();
	uint64_t deadline = 0, slice = PS_SLICE_MIN_NS;
	int err;

	if (dp == NULL) {
		if (try)
			return (write ? NEXT(pthread_rwlock_trywrlock)(rw)
				      : NEXT(pthread_rwlock_tryrdlock)(rw));
		if (abs != NULL)
			return (write ? NEXT(pthread_rwlock_clockwrlock)(rw,
					    clock, abs)
				      : NEXT(pthread_rwlock_clockrdlock)(rw,
					    clock, abs));
		return (write ? NEXT(pthread_rwlock_wrlock)(rw)
			      : NEXT(pthread_rwlock_rdlock)(rw));
	}
	if (held_find(dp, rw, HELD_WRITE) != NULL)
		return (try ? EBUSY : EDEADLK);
	for (;;) {
		pin(1);
		err = write ? NEXT(pthread_rwlock_trywrlock)(rw)
			    : NEXT(pthread_rwlock_tryrdlock)(rw);
		pin(0);
		if (err == 0 && write && held_add(dp, rw, HELD_WRITE) != 0) {
			ult__dropin_ps_rwlock_unlock(rw);
			return (EAGAIN);
		}
		if (err != EBUSY || try)
			return (err);
		if ((err = first_deadline(clock, abs, &deadline)) != 0)
			return (err);
		if (nap(&slice, deadline) == ETIMEDOUT)
			return (ETIMEDOUT);
	}
}

int
ult__dropin_ps_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct dp_thread *dp = me();
	struct held_ent *e;
	int err;

	if (dp == NULL || (e = held_find(dp, rw, HELD_WRITE)) == NULL)
		return (NEXT(pthread_rwlock_unlock)(rw));
	/* glibc tells a writer's unlock from a reader's by this id. */
	pin(1);
	ULT_PST(&rw->__data.__cur_writer, gettid());
	err = NEXT(pthread_rwlock_unlock)(rw);
	pin(0);
	if (err == 0)
		held_del(dp, e);
	return (err);
}

/* Barriers. */

int
ult__dropin_ps_is_barrier(const pthread_barrier_t *b)
{
	return (BAR_MARK(b) == PS_MARK);
}

int
ult__dropin_ps_barrier_init(pthread_barrier_t *b,
    const pthread_barrierattr_t *a, unsigned count)
{
	memset(b, 0, sizeof(*b));
	return (mark_if_ok(NEXT(pthread_barrier_init)(b, a, count),
	    &BAR_MARK(b), PS_MARK));
}

int
ult__dropin_ps_barrier_destroy(pthread_barrier_t *b)
{
	return (mark_if_ok(NEXT(pthread_barrier_destroy)(b), &BAR_MARK(b), 0));
}

struct bwait {
	pthread_barrier_t *b;
	int err;
};

static void *
bwait_run(void *arg)
{
	struct bwait *w = arg;

	w->err = NEXT(pthread_barrier_wait)(w->b);
	return (NULL);
}

int
ult__dropin_ps_barrier_wait(pthread_barrier_t *b)
{
	struct bwait w = {b, 0};
	int err;

	if (me() == NULL)
		return (NEXT(pthread_barrier_wait)(b));
	if ((err = ult__blocking_unbounded(bwait_run, &w, NULL)) != 0)
		return (err);
	return (w.err);
}

/* Semaphores of glibc's (sem_init's pshared ones, sem_open's): the
 * count is the low word of the first 64 bits. */

int
ult__dropin_ps_sem_init(sem_t *s, unsigned value)
{
	memset(s, 0, sizeof(*s));
	return (NEXT(sem_init)(s, 1, value));
}

static int
posix(int err)
{
	if (err == 0)
		return (0);
	errno = err;
	return (-1);
}

int
ult__dropin_ps_sem_wait(sem_t *s, int try, clockid_t clock,
    const struct timespec *abs)
{
	uint32_t *w = (uint32_t *)(void *)s;
	uint64_t deadline = 0, slice = PS_SLICE_MIN_NS;
	int err;

	if (me() == NULL)
		return (try	      ? NEXT(sem_trywait)(s)
			: abs != NULL ? NEXT(sem_clockwait)(s, clock, abs)
				      : NEXT(sem_wait)(s));
	if (!try)
		ult__dropin_point();
	for (;;) {
		if (NEXT(sem_trywait)(s) == 0) {
			if (!try)
				ult__dropin_after_wait();
			return (0);
		}
		if (errno != EAGAIN || try)
			return (-1);
		if ((err = first_deadline(clock, abs, &deadline)) != 0)
			return (posix(err));
		if (futex_nap(w, 0, &slice, deadline) == ETIMEDOUT)
			return (posix(ETIMEDOUT));
		ult__dropin_point();
	}
}

int
ult__dropin_ps_sem_post(sem_t *s)
{
	if (NEXT(sem_post)(s) != 0)
		return (-1);
	/* Only a uthread: a child forked without the runtime has a copy of
	 * the table that names sleepers it does not have. */
	if (me() != NULL)
		ult__dropin_futex((uint32_t *)(void *)s, FUTEX_WAKE, 1, NULL,
		    NULL, 0);
	return (0);
}
