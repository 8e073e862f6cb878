/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uthread lifecycle: the thread slab, spawn, exit, join, detach.  The
 * per-thread calls that act through the scheduler (yield, nice, bind,
 * class) are in src/api/sched_calls.c, sleeping in src/api/sleep.c and
 * the clock in clock.c.
 *
 * Handles stay valid memory for the life of the runtime: thread structs
 * come from a slab that is only released at shutdown and are recycled in
 * FIFO order, so a handle used after its thread was joined is recognised
 * (ESRCH) until a later spawn reuses it.  Each worker keeps the structs
 * freed on it in a FIFO of its own and reuses one only after
 * TCACHE_DELAY others were freed there since, so spawn and join take no
 * shared lock; the oldest overflow to the slab's list.
 *
 * The slab's chunks are mapped, not malloc'ed, and unmapped at shutdown:
 * a program that spawned many threads gets the memory back, where
 * malloc would keep the fragmented heap resident.  A chunk's structs are
 * made from the front as needed, so a fresh chunk costs only the pages
 * its threads use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sleepq.h"
#include "turnstile.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "stack.h"
#include "../api/sched_calls.h"
#include "../obs/stats.h"
#include "tls.h"
#include "subsys.h"

/*
 * The lock of threads that have exited, and of structs not yet handed
 * out.  One lock for all of them was the most contended line of a fork
 * tree on two workers (every exit and every reaping join took it), so a
 * struct's zombie lock is one of a table, by its address.
 */
#define ZOMBIE_LOCKS 64

static struct zombie_lock {
	struct mtx m;
} ULT_ALIGNED_CL zombie_locks[ZOMBIE_LOCKS] = {
    [0 ... ZOMBIE_LOCKS - 1] = {MTX_INITIALIZER("zombie")}};

static struct mtx *
zombie_lock_of(const struct ult_thread *ut)
{
	return (&zombie_locks[((uintptr_t)ut / sizeof(*ut)) % ZOMBIE_LOCKS].m);
}

#define SLAB_CHUNK_BYTES (256u * 1024)

struct slab_chunk {
	struct slab_chunk *next;
	size_t nmade; /* t[0..nmade) have been handed out at least once */
	struct ult_thread t[] ULT_ALIGNED_CL; /* from a cache-line boundary */
};

#define SLAB_CHUNK_THREADS                                \
	((SLAB_CHUNK_BYTES - sizeof(struct slab_chunk)) / \
	    sizeof(struct ult_thread))

static struct mtx slab_lock = MTX_INITIALIZER("thread slab");
static struct slab_chunk *slab_chunks; /* the newest, being made, first */
static struct ult_thread *free_head, *free_tail;

#define TCACHE_DELAY (ULT_TCACHE / 2)

/* The oldest struct freed on w, once TCACHE_DELAY newer ones wait. */
static struct ult_thread *
tcache_get(struct ult__worker *w)
{
	struct ult_thread *ut;

	if (w == NULL || w->tcache_n <= TCACHE_DELAY)
		return (NULL);
	ut = w->tcache[w->tcache_head];
	w->tcache_head = (w->tcache_head + 1) % ULT_TCACHE;
	w->tcache_n--;
	return (ut);
}

static void
slab_free(struct ult_thread *ut)
{
	mtx_lock_spin(&slab_lock);
	ut->free_next = NULL;
	if (free_tail != NULL)
		free_tail->free_next = ut;
	else
		free_head = ut;
	free_tail = ut;
	mtx_unlock_spin(&slab_lock);
}

/*
 * The worker's FIFO first; then the rest of the newest chunk, the free
 * list, a new chunk: the order a free list fed a whole chunk at a time
 * would give.
 */
static struct ult_thread *
thread_alloc(struct ult__worker *w)
{
	struct slab_chunk *c;
	struct ult_thread *ut;

	if ((ut = tcache_get(w)) != NULL)
		return (ut);
	mtx_lock_spin(&slab_lock);
	c = slab_chunks;
	if ((c == NULL || c->nmade == SLAB_CHUNK_THREADS) &&
	    free_head == NULL) {
		c = ult__os_map(SLAB_CHUNK_BYTES, 0);
		if (c == NULL) {
			mtx_unlock_spin(&slab_lock);
			return (NULL);
		}
		c->next = slab_chunks;
		slab_chunks = c;
	}
	if (c != NULL && c->nmade < SLAB_CHUNK_THREADS) {
		ut = &c->t[c->nmade++]; /* zero-filled */
		atomic_init(&ut->lstate, UT_FREE);
		atomic_init(&ut->td.td_lock, zombie_lock_of(ut));
	} else {
		ut = free_head;
		free_head = ut->free_next;
		if (free_head == NULL)
			free_tail = NULL;
	}
	mtx_unlock_spin(&slab_lock);
	return (ut);
}

static void
thread_free(struct ult_thread *ut)
{
	struct ult__worker *w = ult__worker_self();

	if (w == NULL) {
		slab_free(ut);
		return;
	}
	if (w->tcache_n == ULT_TCACHE) {
		slab_free(w->tcache[w->tcache_head]);
		w->tcache_head = (w->tcache_head + 1) % ULT_TCACHE;
		w->tcache_n--;
	}
	w->tcache[(w->tcache_head + w->tcache_n) % ULT_TCACHE] = ut;
	w->tcache_n++;
}

/* Ids come from the global counter a block at a time per worker. */
#define ID_BLOCK 256

static uint64_t
thread_id(struct ult__worker *w)
{
	if (w == NULL)
		return (ULT_ADD(&ult__rt.next_id, 1) + 1);
	if (w->id_next == w->id_end) {
		w->id_next = ULT_ADD(&ult__rt.next_id, ID_BLOCK) + 1;
		w->id_end = w->id_next + ID_BLOCK;
	}
	return (w->id_next++);
}

void
ult__thread_slab_fini(void)
{
	while (slab_chunks != NULL) {
		struct slab_chunk *c = slab_chunks;

		slab_chunks = c->next;
		for (size_t i = 0; i < c->nmade; i++) {
			ult__ts_free(c->t[i].ts_spare);
			ult__stats_thread_free(&c->t[i]);
		}
		munmap(c, SLAB_CHUNK_BYTES);
	}
	free_head = free_tail = NULL;
	ult__ts_reclaim();
}

void
ult__thread_foreach(void (*fn)(struct ult_thread *, void *), void *arg,
    int hang)
{
	/* A hang may hold the slab lock: then read the chunk list as is
	 * (chunks are only added, and freed at shutdown). */
	int locked = 1;

	if (hang)
		locked = mtx_trylock_spin(&slab_lock);
	else
		mtx_lock_spin(&slab_lock);

	for (struct slab_chunk *c = slab_chunks; c != NULL; c = c->next)
		for (size_t i = 0; i < c->nmade; i++)
			if (ULT_LD(&c->t[i].lstate) != UT_FREE)
				fn(&c->t[i], arg);
	if (locked)
		mtx_unlock_spin(&slab_lock);
}

/* Handle is dead: mark it so under its (zombie) thread lock and recycle. */
static void
thread_release(struct ult_thread *ut)
{
	thread_lock(&ut->td);
	ULT_ST_REL(&ut->lstate, UT_FREE);
	thread_unlock(&ut->td);
	thread_free(ut);
}

/*
 * Called by the next thread on the worker once `ut' has switched away for
 * good: its stack is free to reuse, joiners may proceed.
 */
void
ult__thread_dead(struct ult__worker *w, struct ult_thread *ut)
{
	int free_now;

	/* Its figures are final, and nothing is locked here. */
	if (ult__stats_on)
		ult__stats_exit(ut);
	ult__san_destroy(&ut->san);
	ult__stack_put(w, ut->stack);
	ut->stack = NULL;
	ult__tls_put(w, ut);
	/* Its thread lock is still blocked_lock, which no one else can take:
	 * lstate changes under both its locks without taking a second one,
	 * and the move to its zombie lock publishes it. */
	ult__sleepq_lock(ut);
	ULT_ST_REL(&ut->lstate, UT_ZOMBIE);
	thread_lock_unblock(&ut->td, zombie_lock_of(ut));
	free_now = ut->detached;
	if (!free_now)
		ult__sleepq_broadcast(ut);
	ult__sleepq_release(ut);
	if (free_now)
		thread_release(ut);
	ULT_ST_REL(&w->nexited, ULT_LD(&w->nexited) + 1);
	/* A system call only while ult_shutdown sleeps, once per sleep. */
	if (ULT_UNLIKELY(ULT_LD(&ult__rt.shutdown_waits)) &&
	    /* seq_cst: after nexited's store; pairs with
	     * ult__wait_no_threads's store of exit_waiter before it counts. */
	    ULT_XCHG_SC(&ult__rt.exit_waiter, 0) != 0)
		ult__futex_wake(&ult__rt.exit_waiter, 1);
}

/*
 * The live count is kept per worker, because one shared counter that
 * every spawn and exit moved was, with the zombie lock, most of what a
 * fork tree lost on a second worker.  Each worker counts what it spawns
 * and what exits on it, both only growing.  The exits are read first and
 * the spawns after: an exit that was read happened after its spawn, which
 * is then read too, so the difference never counts a thread that is
 * gone, and it is 0 only once every thread spawned has exited.
 */
uint64_t
ult__live_threads(void)
{
	uint64_t spawned, exited = 0;

	for (int i = 0; i < ult__rt.nworkers; i++)
		exited += ULT_LD_ACQ(&ult__rt.workers[i].nexited);
	spawned = ULT_LD_ACQ(&ult__rt.nspawned_foreign);
	for (int i = 0; i < ult__rt.nworkers; i++)
		spawned += ULT_LD_ACQ(&ult__rt.workers[i].nspawned);
	return (spawned - exited);
}

/*
 * ult_shutdown's wait.  An exit wakes it only when it has said it sleeps,
 * and without a fence on the exit path that word may be seen late; the
 * sleep is bounded so that such an exit costs at most a millisecond.
 */
void
ult__wait_no_threads(void)
{
	/* seq_cst: both pair with the exit path's load of shutdown_waits
	 * and exchange of exit_waiter (ult__thread_dead), which follow its
	 * store of nexited: either the exit sees the word, or this count
	 * sees the exit. */
	ULT_ST_SC(&ult__rt.shutdown_waits, 1);
	for (;;) {
		ULT_ST_SC(&ult__rt.exit_waiter, 1);
		if (ult__live_threads() == 0)
			break;
		ult__futex_wait(&ult__rt.exit_waiter, 1, ult__now() + 1000000);
	}
	ULT_ST(&ult__rt.exit_waiter, 0);
}

void
ult_attr_init(struct ult_attr *a)
{
	if (a == NULL)
		return;
	memset(a, 0, sizeof(*a));
	a->cpu = -1;
}

static int
spawn_check(ult_thread_t **t, const struct ult_attr *a, void *(*fn)(void *))
{
	if (!ult__running())
		return (ENXIO);
	if (fn == NULL)
		return (EINVAL);
	if (a == NULL)
		return (t == NULL ? EINVAL : 0);
	if (t == NULL && !a->detached)
		return (EINVAL);
	if (a->nice < PRIO_MIN || a->nice > PRIO_MAX)
		return (EINVAL);
	if (a->cls < ULT_CLASS_TIMESHARE || a->cls > ULT_CLASS_IDLE ||
	    a->rtprio < RTP_PRIO_MIN || a->rtprio > RTP_PRIO_MAX)
		return (EINVAL);
	if (a->cpu < -1 || a->cpu >= ult__rt.ncpu)
		return (EINVAL);
	if (a->stack_size != 0 &&
	    (a->stack_size < ULT_STACK_MIN || a->stack_size > ULT_STACK_MAX))
		return (EINVAL);
	return (0);
}

/*
 * A struct being set up may be looked at by a thread that found it in the
 * slab (ult-top's publisher, shm.c): such a reader takes whatever lock
 * td_lock names and then checks lstate, and leaves at once if it is not
 * UT_ALIVE.  So td_lock stays a real lock throughout (the zombie lock,
 * left there by the struct's last death or by thread_alloc), and lstate
 * becomes UT_ALIVE only once sched_fork has moved the lock (spawn); a
 * reader that then sees the move takes the new lock
 * (ult__thread_lock_handle).
 */
static void
thread_setup(struct ult_thread *ut, const struct ult_attr *a,
    void *(*fn)(void *), void *arg)
{
	MPASS(ULT_LD(&ut->td.td_lock) == zombie_lock_of(ut));
	memset((char *)&ut->td + sizeof(ut->td.td_lock), 0,
	    sizeof(ut->td) - sizeof(ut->td.td_lock));
	ult__list_init(&ut->td.td_runq);
	ult__rt.sched->thread_init(&ut->td);
	ut->fn = fn;
	ut->arg = arg;
	ut->ret = NULL;
	ut->saved_errno = 0;
	ut->detached = a != NULL && a->detached;
	ut->joining = 0;
	ut->last_cpu = -1;
	ut->last_swt = SWT_NONE;
	ut->id = thread_id(ult__worker_self());
	ut->sigmask =
	    ult__self_ut() != NULL ? ult__self_ut()->sigmask : ult__rt.sigmask0;
	memset(&ut->altstack, 0, sizeof(ut->altstack));
	ut->name[0] = '\0';
	if (a != NULL && a->name != NULL) {
		strncpy(ut->name, a->name, sizeof(ut->name) - 1);
		ut->name[sizeof(ut->name) - 1] = '\0';
	}
	atomic_init(&ut->runtime_ns, 0);
	atomic_init(&ut->nvcsw, 0);
	atomic_init(&ut->nivcsw, 0);
	atomic_init(&ut->nmigrations, 0);
	ult__stats_thread_init(ut);
	atomic_init(&ut->wmesg, NULL);
	ult__timer_init(&ut->slp_timer);
	atomic_init(&ut->slp_waiter, NULL);
	atomic_init(&ut->wchan, NULL);
	ut->ts_blocked = NULL;
	ut->ts_waiter = NULL;
	mtx_init(&ut->contested_lock, "contested");
	ult__list_init(&ut->contested);
	atomic_init(&ut->ncontested, 0);
	atomic_init(&ut->oncpu, 0);
	atomic_init(&ut->nopreempt, 0);
	ult__witness_thread_init(ut);
	atomic_init(&ut->sc_nest, 0);
	atomic_init(&ut->sc_owed, 0);
	atomic_init(&ut->sc_since, 0);
	atomic_init(&ut->sc_deferred, 0);
	atomic_init(&ut->sc_forced, 0);
	ut->preempt_pinned = 0;
	ut->bind_pending = 0;
	ut->chaos_bound = 0;
	ut->tls_exiting = 0;
	ult__ctx_init(&ut->ctx, (char *)ut->stack->base + ut->stack->guard,
	    ut->stack->size, ult__thread_entry, ut);
	ult__san_create(&ut->san, (char *)ut->stack->base + ut->stack->guard,
	    ut->stack->size);
}

/*
 * Fork-join without blow-up: a child that lands on its creator's worker
 * runs first, and the creator waits at the head of the queue as if it had
 * been preempted.  A fork tree then unfolds depth first, so a program like
 * skynet keeps a few dozen threads alive instead of all of them.  ULE
 * fairness is kept: the child starts with only sched_slice_min of its
 * slice left (sched_fork), and a child of another class or of a worse
 * priority than its creator does not jump the queue.
 */
static int
child_runs_first(struct thread *parent, struct thread *child, int cpu)
{
	if (!ULT_LD(&ult__rt.child_first))
		return (0);
	/* Bound elsewhere (4BSD's one lock cannot tell), or queued on
	 * another worker. */
	if (cpu >= 0 && cpu != ult__worker_self()->id)
		return (0);
	if (ULT_LD(&child->td_lock) != ULT_LD(&parent->td_lock))
		return (0);
	return (child->td_pri_class == parent->td_pri_class ||
	    child->td_priority <= parent->td_priority);
}

/* The attributes that are scheduling state, on the new thread (locked). */
static void
spawn_attrs(struct thread *td, const struct ult_attr *a)
{
	const struct sched_ops *s = ult__rt.sched;

	if (a == NULL)
		return;
	if (a->nice != 0)
		s->nice(td, a->nice);
	if (a->cpu >= 0)
		s->bind(td, a->cpu);
	if (a->cls != ULT_CLASS_TIMESHARE)
		ult__class_apply(td, a->cls, a->rtprio);
}

/* The caller's memory as a stack (ult__spawn_on): not pooled, not
 * unmapped, no guard; only the descriptor is ours. */
static struct ult__stack *
user_stack(void *base, size_t size)
{
	struct ult__stack *s = malloc(sizeof(*s));

	if (s != NULL)
		*s = (struct ult__stack){.base = base, .size = size, .user = 1};
	return (s);
}

static int spawn(ult_thread_t **t, const struct ult_attr *a,
    void *(*fn)(void *), void *arg, void *stack, size_t stack_size);

int
ult_spawn(ult_thread_t **t, const struct ult_attr *a, void *(*fn)(void *),
    void *arg)
{
	return (spawn(t, a, fn, arg, NULL, 0));
}

int
ult__spawn_on(ult_thread_t **t, const struct ult_attr *a, void *(*fn)(void *),
    void *arg, void *stack, size_t size)
{
	if (stack == NULL || size < ULT_STACK_MIN)
		return (EINVAL);
	return (spawn(t, a, fn, arg, stack, size));
}

static int
spawn(ult_thread_t **t, const struct ult_attr *a, void *(*fn)(void *),
    void *arg, void *stack, size_t stack_size)
{
	const struct sched_ops *s = ult__rt.sched;
	/* Nothing below switches before thread_setup: w stays ours. */
	struct ult__worker *w = ult__worker_self();
	struct ult_thread *self, *ut;
	size_t size;
	int err, held;

	if ((err = spawn_check(t, a, fn)) != 0)
		return (err);
	size =
	    (a != NULL && a->stack_size) ? a->stack_size : ult__rt.stack_size;
	if ((ut = thread_alloc(w)) == NULL)
		return (EAGAIN);
	err = EAGAIN;
	if (ut->ts_spare == NULL && (ut->ts_spare = ult__ts_alloc()) == NULL)
		goto fail;
	ut->stack = stack != NULL ? user_stack(stack, stack_size)
				  : ult__stack_get(w, size);
	if (ut->stack == NULL)
		goto fail;
	if ((err = ult__tls_get(w, ut, fn, arg)) != 0) {
		ult__stack_put(w, ut->stack);
		goto fail;
	}
	self = ult__self_ut();
	held = self != NULL ? ult__clock_hold(w) : 0;
	thread_setup(ut, a, fn, arg);
	/* Its creation is its first wakeup (run-queue delay, the trace). */
	ut->twake = 1;
	ut->tseen = 0;
	ut->rq_ns = held ? w->clk_ns : ult__fastclock_now();
	ULT_USDT(spawn, self != NULL ? self->id : 0, ut->id, 0);
	if (ULT_UNLIKELY(ULT_PLD(&ult__trace_on)))
		ult__trace_spawn(self, ut);
	if (w != NULL)
		ULT_ST_REL(&w->nspawned, ULT_LD(&w->nspawned) + 1);
	else
		ULT_ADD(&ult__rt.nspawned_foreign, 1);
	if (t != NULL)
		*t = ut;

	if (self == NULL) {
		s->fork(NULL, &ut->td);
		ULT_ST_REL(&ut->lstate, UT_ALIVE);
		thread_lock(&ut->td);
		spawn_attrs(&ut->td, a);
		s->add(&ut->td, SRQ_BORING);
		return (0);
	}
	thread_lock(&self->td);
	s->fork(&self->td, &ut->td);
	/* The child's lock is the creator's run queue: already held. */
	ULT_ST_REL(&ut->lstate, UT_ALIVE);
	spawn_attrs(&ut->td, a);
	s->add(&ut->td,
	    SRQ_SYNC | SRQ_HOLDTD |
		(ULT_LD(&ult__rt.child_first) ? SRQ_FORKING : 0));
	if (child_runs_first(&self->td, &ut->td, a != NULL ? a->cpu : -1)) {
		s->rem(&ut->td);
		ult__mi_switch(self, SW_INVOL | SW_PREEMPT | SWT_CHILDFIRST,
		    ut);
	} else
		thread_unlock(&ut->td);
	ult__clock_drop(held);
	ult__userret();
	return (0);
fail:
	thread_free(ut);
	return (err);
}

/*
 * A fork child's thread as a uthread (fork.c): the struct the forking
 * uthread had in the parent, when there was one (mutexes it holds name
 * it as their owner), made like new on the caller's stack and block.
 * Not queued yet: ult__thread_adopt_add does that, once nothing runs on
 * them.
 */
struct ult_thread *
ult__thread_adopt_make(struct ult_thread *reuse, const struct ult_attr *a,
    void *arg, void *stack, size_t size, void *tls)
{
	struct ult_thread *ut = reuse;

	if (ut == NULL && (ut = thread_alloc(NULL)) == NULL)
		return (NULL);
	if (reuse != NULL) {
		atomic_init(&ut->lstate, UT_FREE);
		ut->td.td_lock = zombie_lock_of(ut);
		ut->free_next = NULL;
	}
	if ((ut->ts_spare == NULL &&
		(ut->ts_spare = ult__ts_alloc()) == NULL) ||
	    (ut->stack = user_stack(stack, size)) == NULL) {
		if (reuse == NULL)
			thread_free(ut);
		return (NULL);
	}
	ut->tls = tls;
	ut->tls_w = NULL;
	thread_setup(ut, a, NULL, arg);
	ut->sigmask = ult__os_sigmask_get();
	ut->twake = 1;
	ut->tseen = 0;
	ut->rq_ns = ult__fastclock_now();
	ULT_ADD(&ult__rt.nspawned_foreign, 1);
	return (ut);
}

void
ult__thread_adopt_add(struct ult_thread *ut, const struct ult_attr *a)
{
	const struct sched_ops *s = ult__rt.sched;

	s->fork(NULL, &ut->td);
	ULT_ST_REL(&ut->lstate, UT_ALIVE);
	thread_lock(&ut->td);
	spawn_attrs(&ut->td, a);
	s->add(&ut->td, SRQ_BORING);
}

/* The parent's threads are not here: their structs are leaked with the
 * slab's chunks (the forking uthread's is adopted, fork.c). */
static void
threads_fork_child(void)
{
	for (int i = 0; i < ZOMBIE_LOCKS; i++)
		mtx_init(&zombie_locks[i].m, "zombie");
	mtx_init(&slab_lock, "thread slab");
	slab_chunks = NULL;
	free_head = free_tail = NULL;
}

ult_thread_t *
ult_self(void)
{
	return (ult__self_ut());
}

int
ult_cpu(void)
{
	struct ult__worker *w = ult__worker_self();

	return (w != NULL && w->curthread != &w->idle ? w->id : -1);
}

void
ult_exit(void *ret)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut == NULL)
		pthread_exit(ret);
	ut->ret = ret;
	ult__tls_exit(ut);
	ult__exit_switch(ut);
}

/*
 * Lock t's join channel if t may still be joined or detached; otherwise
 * return why not (ESRCH: already joined, EINVAL: detached or being
 * joined) with nothing locked.
 */
static int
claim_lock(struct ult_thread *t)
{
	int err = 0;

	ult__sleepq_lock(t);
	if (ULT_LD_ACQ(&t->lstate) == UT_FREE)
		err = ESRCH;
	else if (t->detached || t->joining)
		err = EINVAL;
	if (err != 0)
		ult__sleepq_release(t);
	return (err);
}

int
ult_join(ult_thread_t *t, void **ret)
{
	struct ult_thread *self = ult__self_ut();
	struct ult__waiter w;
	int err;

	if (!ult__running())
		return (ENXIO);
	if (t == NULL)
		return (EINVAL);
	if (t == self)
		return (EDEADLK);
	if ((err = claim_lock(t)) != 0)
		return (err);
	t->joining = 1;
	while (ULT_LD_ACQ(&t->lstate) != UT_ZOMBIE) {
		ult__waiter_self(&w);
		ult__sleepq_add(t, &w, "join");
		ult__sleepq_wait(t, &w, 0);
		ult__sleepq_lock(t);
	}
	ult__sleepq_release(t);
	if (ret != NULL)
		*ret = t->ret;
	if (self != NULL) {
		/* sched_exit: the child's run time is charged to its reaper. */
		thread_lock(&self->td);
		ult__rt.sched->exit(&self->td, &t->td);
		thread_unlock(&self->td);
	}
	thread_release(t);
	ult__userret();
	return (0);
}

int
ult_detach(ult_thread_t *t)
{
	int zombie, err;

	if (!ult__running())
		return (ENXIO);
	if (t == NULL)
		return (EINVAL);
	if ((err = claim_lock(t)) != 0)
		return (err);
	t->detached = 1;
	zombie = ULT_LD_ACQ(&t->lstate) == UT_ZOMBIE;
	ult__sleepq_release(t);
	if (zombie)
		thread_release(t);
	return (0);
}

static const struct sched_tunable threads_tunables[] = {
    {"ult.child_runs_first", &ult__rt.child_first, 0, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct ult__subsys ult__threads_subsys = {.name = "threads",
    .fini = ult__thread_slab_fini,
    .fork_child = threads_fork_child,
    .tunables = threads_tunables};
