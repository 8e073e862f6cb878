/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/subr_turnstile.c. */
/*
 * Turnstiles: see turnstile.h for the model and the lock order.
 *
 * Every field of a turnstile is touched only with its ts_lock held, and
 * ts_lock is never re-initialised after allocation: a waker may still hold
 * it for a moment after handing the turnstile to a woken thread as its new
 * spare, and that thread's next use of it starts by taking the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../arch/cpu.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "sleepq.h"
#include "turnstile.h"

#define TC_TABLESIZE 128

struct ult__turnstile {
	struct mtx ts_lock;
	struct ult__list ts_hash;	/* on its chain while in use */
	struct ult__list ts_blocked[2]; /* waiters, best priority first */
	struct ult__list ts_pending;	/* woken, not yet resumed */
	struct ult__list ts_free;	/* the other waiters' spares */
	struct ult__list ts_link; /* on a ts_free, or its owner's contested */
	const void *ts_obj;
	struct ult_thread *ts_owner; /* whose contested list it is on */
	int ts_count[2];
	atomic_int ts_bestpri; /* head priority; read under contested_lock */
	struct ts_chunk *ts_chunk; /* where it was made; set once */
};

struct ts_chain {
	struct mtx lock;
	struct ult__list list;
} ULT_ALIGNED_CL;

static struct ts_chain chains[TC_TABLESIZE];
static pthread_once_t ts_once = PTHREAD_ONCE_INIT;
static atomic_int ts_ready; /* after ts_once: skips its call */
static pthread_key_t foreign_spare_key;

/*
 * Turnstiles are never freed while uthreads may exist (as FreeBSD's come
 * from a type-stable zone): a thread lock read just before its thread was
 * woken may still point into one.  They are made in mapped chunks and
 * freed to a pool, from which they are allocated again; a foreign
 * thread's spare goes back to it when the thread exits.
 *
 * At ult_shutdown no uthread is left to hold such a stale pointer, so
 * ult__ts_reclaim unmaps every chunk none of whose turnstiles is in use,
 * which gives back the memory of many threads (malloc would have kept
 * the fragmented heap).  In use means out of the pool: a foreign thread's
 * spare, or one lent to a lock; those chunks stay, since foreign threads
 * may go on using sync objects without the runtime.
 */
#define TS_CHUNK_BYTES (64u * 1024)

struct ts_chunk {
	struct ts_chunk *next;
	size_t nused; /* turnstiles out of the pool */
	size_t nmade; /* ts[0..nmade) have been made */
	struct ult__turnstile ts[];
};

#define TS_CHUNK_TURNSTILES                           \
	((TS_CHUNK_BYTES - sizeof(struct ts_chunk)) / \
	    sizeof(struct ult__turnstile))

static struct mtx pool_lock = MTX_INITIALIZER("turnstile pool");
static struct ult__list pool = {&pool, &pool};
static struct ts_chunk *ts_chunks; /* the newest, being made, first */

static void
foreign_spare_dtor(void *p)
{
	ult__ts_free(p);
}

static void
ts_init_once(void)
{
	for (int i = 0; i < TC_TABLESIZE; i++) {
		mtx_init(&chains[i].lock, "turnstile chain");
		ult__list_init(&chains[i].list);
	}
	if (pthread_key_create(&foreign_spare_key, foreign_spare_dtor) != 0)
		abort();
	ULT_ST_REL(&ts_ready, 1);
}

void
ult__ts_fork_child(void)
{
	if (!ULT_LD_ACQ(&ts_ready))
		return;
	for (int i = 0; i < TC_TABLESIZE; i++) {
		mtx_init(&chains[i].lock, "turnstile chain");
		ult__list_init(&chains[i].list);
	}
	mtx_init(&pool_lock, "turnstile pool");
	ult__list_init(&pool);
	ts_chunks = NULL;
}

static inline void
ts_init(void)
{
	if (ULT_UNLIKELY(!ULT_LD_ACQ(&ts_ready)))
		pthread_once(&ts_once, ts_init_once);
}

static struct ts_chain *
chain_of(const void *obj)
{
	uintptr_t a = (uintptr_t)obj;

	return (&chains[((a >> 6) ^ (a >> 13)) % TC_TABLESIZE]);
}

struct ult__turnstile *
ult__ts_alloc(void)
{
	struct ult__turnstile *ts;
	struct ult__list *n;
	struct ts_chunk *c;

	mtx_lock_spin(&pool_lock);
	if ((n = ult__list_first(&pool)) != NULL) {
		ult__list_remove(n);
		ts = ULT_CONTAINER_OF(n, struct ult__turnstile, ts_link);
	} else {
		c = ts_chunks;
		if (c == NULL || c->nmade == TS_CHUNK_TURNSTILES) {
			c = ult__os_map(TS_CHUNK_BYTES, 0);
			if (c == NULL) {
				mtx_unlock_spin(&pool_lock);
				return (NULL);
			}
			c->next = ts_chunks;
			ts_chunks = c;
		}
		ts = &c->ts[c->nmade++]; /* zero-filled */
		ts->ts_chunk = c;
		mtx_init(&ts->ts_lock, "turnstile");
		ult__list_init(&ts->ts_link);
		ult__list_init(&ts->ts_hash);
	}
	ts->ts_chunk->nused++;
	mtx_unlock_spin(&pool_lock);
	return (ts);
}

void
ult__ts_free(struct ult__turnstile *ts)
{
	if (ts == NULL)
		return;
	/* Wait out a waker that handed it over and still holds it. */
	mtx_lock_spin(&ts->ts_lock);
	mtx_unlock_spin(&ts->ts_lock);
	mtx_lock_spin(&pool_lock);
	ult__list_insert_tail(&pool, &ts->ts_link);
	ts->ts_chunk->nused--;
	mtx_unlock_spin(&pool_lock);
}

void
ult__ts_reclaim(void)
{
	struct ult__list *n, *next;
	struct ts_chunk **pc, *c;

	mtx_lock_spin(&pool_lock);
	for (n = pool.next; n != &pool; n = next) {
		next = n->next;
		if (ULT_CONTAINER_OF(n, struct ult__turnstile, ts_link)
			->ts_chunk->nused == 0)
			ult__list_remove(n);
	}
	for (pc = &ts_chunks; (c = *pc) != NULL;) {
		if (c->nused == 0) {
			*pc = c->next;
			munmap(c, TS_CHUNK_BYTES);
		} else
			pc = &c->next;
	}
	mtx_unlock_spin(&pool_lock);
}

int
ult__ts_prepare(void)
{
	struct ult__turnstile *ts;

	ts_init();
	if (ult__self_ut() != NULL)
		return (0); /* uthreads get theirs at spawn */
	if (pthread_getspecific(foreign_spare_key) != NULL)
		return (0);
	if ((ts = ult__ts_alloc()) == NULL)
		return (ENOMEM);
	if (pthread_setspecific(foreign_spare_key, ts) != 0) {
		ult__ts_free(ts);
		return (ENOMEM);
	}
	return (0);
}

static struct ult__turnstile *
spare_take(struct ult__waiter *w)
{
	struct ult__turnstile *ts;

	if (w->ut != NULL) {
		ts = w->ut->ts_spare;
		w->ut->ts_spare = NULL;
	} else {
		ts = pthread_getspecific(foreign_spare_key);
		pthread_setspecific(foreign_spare_key, NULL);
	}
	return (ts);
}

static void
spare_put(struct ult__waiter *w)
{
	if (w->ut != NULL)
		w->ut->ts_spare = w->spare;
	else
		pthread_setspecific(foreign_spare_key, w->spare);
}

struct ult__turnstile *
ult__ts_lookup(const void *obj)
{
	struct ts_chain *tc = chain_of(obj);
	struct ult__list *n;

	ts_init();
	mtx_lock_spin(&tc->lock);
	ULT_LIST_FOREACH (n, &tc->list) {
		struct ult__turnstile *ts =
		    ULT_CONTAINER_OF(n, struct ult__turnstile, ts_hash);

		if (ts->ts_obj == obj) {
			mtx_lock_spin(&ts->ts_lock);
			return (ts);
		}
	}
	return (NULL);
}

void
ult__ts_release(const void *obj, struct ult__turnstile *ts)
{
	if (ts != NULL)
		mtx_unlock_spin(&ts->ts_lock);
	mtx_unlock_spin(&chain_of(obj)->lock);
}

struct ult__waiter *
ult__ts_head(struct ult__turnstile *ts, int queue)
{
	struct ult__list *n = ult__list_first(&ts->ts_blocked[queue]);

	return (n ? ULT_CONTAINER_OF(n, struct ult__waiter, link) : NULL);
}

int
ult__ts_count(struct ult__turnstile *ts, int queue)
{
	return (ts->ts_count[queue]);
}

static void
update_bestpri(struct ult__turnstile *ts)
{
	int best = PRI_MAX;

	for (int q = 0; q < 2; q++) {
		struct ult__waiter *w = ult__ts_head(ts, q);

		if (w != NULL && w->pri < best)
			best = w->pri;
	}
	ULT_ST(&ts->ts_bestpri, best);
}

/*
 * Priority order, FIFO among equals; a waiter that was woken and lost the
 * lock to a running thread goes back ahead of its equals, so it does not
 * lose its turn.
 */
static void
insert_waiter(struct ult__turnstile *ts, int queue, struct ult__waiter *w)
{
	struct ult__list *h = &ts->ts_blocked[queue], *n;
	int requeued = w->flags & WF_REQUEUED;

	MTX_ASSERT_OWNED(&ts->ts_lock);
	ULT_LIST_FOREACH (n, h) {
		struct ult__waiter *o =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		if (o->pri > w->pri || (requeued && o->pri == w->pri))
			break;
	}
	ult__list_insert_tail(n, &w->link); /* before n */
	ts->ts_count[queue]++;
	update_bestpri(ts);
}

static int
queue_of(struct ult__turnstile *ts, struct ult__waiter *w)
{
	struct ult__list *n;

	ULT_LIST_FOREACH (n, &ts->ts_blocked[TS_SHARED_QUEUE])
		if (n == &w->link)
			return (TS_SHARED_QUEUE);
	return (TS_EXCLUSIVE_QUEUE);
}

static void
remove_waiter(struct ult__turnstile *ts, int queue, struct ult__waiter *w)
{
	MTX_ASSERT_OWNED(&ts->ts_lock);
	MPASS(ts->ts_count[queue] > 0);
	ult__list_remove(&w->link);
	ts->ts_count[queue]--;
	update_bestpri(ts);
}

/* The lock owner of a turnstile changes (ts locked). */
static struct ult_thread *
set_owner(struct ult__turnstile *ts, struct ult_thread *ut)
{
	struct ult_thread *old = ts->ts_owner;

	MTX_ASSERT_OWNED(&ts->ts_lock);
	if (old == ut)
		return (NULL);
	if (old != NULL) {
		mtx_lock_spin(&old->contested_lock);
		ult__list_remove(&ts->ts_link);
		/* Relaxed: written under contested_lock; see
		 * contested_best for the lock-free read of 0. */
		ULT_SUB(&old->ncontested, 1);
		mtx_unlock_spin(&old->contested_lock);
	}
	ts->ts_owner = ut;
	if (ut != NULL) {
		mtx_lock_spin(&ut->contested_lock);
		ult__list_insert_tail(&ut->contested, &ts->ts_link);
		/* seq_cst: pairs with contested_best's load, which must
		 * not miss an owner that gained a waiter before it looked. */
		ULT_ADD_SC(&ut->ncontested, 1);
		mtx_unlock_spin(&ut->contested_lock);
	}
	return (old);
}

/*
 * Lend pri to td (locked) if it needs it.  A uthread returns to its own
 * code holding locks, where userret would drop a sleep boost and, with
 * it, any lend that did not look needed while the boost was better; so a
 * lend is recorded (TDF_BORROWING) whenever pri beats the thread's user
 * priority, keeping the better of boost and lend until the unlend.
 * Returns 0 if td needed nothing.
 */
static int
lend_to(struct thread *td, int pri)
{
	THREAD_LOCK_ASSERT(td);
	if (pri >= td->td_priority && pri >= td->td_user_pri)
		return (0);
	ult__rt.sched->lend_prio(td,
	    pri < td->td_priority ? pri : td->td_priority);
	return (1);
}

/*
 * A thread's lock is its own (a run queue's, or the ts_lock of a
 * turnstile further down a chain), unless it is one of the two we hold:
 * that only happens for a cycle of owners, a deadlock in the program,
 * which propagation must not turn into a hang of the worker.
 *
 * Nor may it wait for the lock without bound: when two waiters close a
 * cycle at once, each walk holds its own turnstile's lock and reaches for
 * the other's, and neither sees its own.  So the lock is tried: spun on,
 * then napped on in short naps (a long sleep here would keep the walker's
 * worker off its queue, and the handoff would run that queue elsewhere,
 * before the lend), and a walk that has not got it in LEND_WAIT_NS gives
 * up the lend (NULL).  Outside a cycle that costs only a lend not made
 * while a worker holding that lock was kept off its CPU that long.
 */
#define LEND_SPINS 256
#define LEND_NAP_NS 20000ull
#define LEND_WAIT_NS 10000000ull

static struct mtx *
lock_owner(struct thread *td, struct mtx *held1, struct mtx *held2)
{
	unsigned spins = 0, tries = 0;
	uint64_t since = 0, now;

	for (;;) {
		struct mtx *m = ULT_LD_ACQ(&td->td_lock);

		if (m == &blocked_lock) {
			ult__spin_backoff(&spins);
			continue;
		}
		if (m == held1 || m == held2)
			return (NULL);
		/* An owner asleep on a sleep queue (FreeBSD panics here: a
		 * sleeping thread owns a non-sleepable lock).  Its chain lock
		 * ranks before ours, so it is not taken: the sleeper picks
		 * up the lend when it wakes (ult__ts_wake_lend). */
		if (ult__sleepq_is_chain_lock(m))
			return (NULL);
		if (mtx_trylock_spin(m)) {
			if (ULT_LD_ACQ(&td->td_lock) ==
			    m) /* see thread_lock() */
				return (m);
			mtx_unlock_spin(m);
			continue;
		}
		if (++tries < LEND_SPINS) {
			ult__cpu_relax();
			continue;
		}
		now = ult__now();
		if (since == 0)
			since = now;
		else if (now - since > LEND_WAIT_NS)
			return (NULL);
		ult__nap_ns(LEND_NAP_NS);
	}
}

/*
 * Lend pri along the owner chain starting at top (locked).  Holds top
 * throughout and at most one more ts_lock at a time, always further down
 * the chain, so concurrent walks take locks in one order.
 */
static void
propagate(struct ult__turnstile *top, int pri)
{
	struct ult__turnstile *ts = top;

	MTX_ASSERT_OWNED(&top->ts_lock);
	for (;;) {
		struct ult_thread *o = ts->ts_owner;
		struct ult__turnstile *nts;
		struct ult__waiter *ow;
		struct thread *td;
		struct mtx *m;
		int q;

		if (o == NULL)
			break;
		td = &o->td;
		if ((m = lock_owner(td, &top->ts_lock, &ts->ts_lock)) == NULL)
			break;
		if (!lend_to(td, pri)) {
			mtx_unlock_spin(m);
			break;
		}
		if (!TD_ON_LOCK(td)) {
			/* Running or queued: the lend requeued it, maybe on
			 * another CPU, whose lock is now td's.  Asleep: it
			 * keeps the lend for when it wakes. */
			thread_unlock(td);
			break;
		}
		/* Blocked on nts, whose lock is m: re-sort it there. */
		nts = o->ts_blocked;
		ow = o->ts_waiter;
		MPASS(nts != NULL && m == &nts->ts_lock && ow->ts == nts);
		q = queue_of(nts, ow);
		remove_waiter(nts, q, ow);
		ow->pri = pri;
		insert_waiter(nts, q, ow);
		if (ts != top)
			mtx_unlock_spin(&ts->ts_lock);
		ts = nts;
	}
	if (ts != top)
		mtx_unlock_spin(&ts->ts_lock);
}

/* The best priority the waiters of ut's locks need (contested_lock). */
static int
contested_best(struct ult_thread *ut)
{
	struct ult__list *n;
	int pri = PRI_MAX;

	/* Most threads own no contested lock: every wakeup asks.  A count
	 * of 0 read here orders this look before a concurrent insertion,
	 * as taking the lock first would. */
	if (ULT_LD_SC(&ut->ncontested) == 0) /* pairs with turnstile_own */
		return (pri);
	mtx_lock_spin(&ut->contested_lock);
	ULT_LIST_FOREACH (n, &ut->contested) {
		int p =
		    ULT_LD(&ULT_CONTAINER_OF(n, struct ult__turnstile, ts_link)
				->ts_bestpri);

		if (p < pri)
			pri = p;
	}
	mtx_unlock_spin(&ut->contested_lock);
	return (pri);
}

void
ult__ts_wake_lend(struct ult_thread *ut)
{
	int pri = contested_best(ut);

	lend_to(&ut->td, pri);
}

/* The best priority the waiters of ut's other locks still need. */
static void
unlend(struct ult_thread *ut)
{
	struct thread *td = &ut->td;
	int pri;

	/* Under the thread lock, so a lend made meanwhile is not lost. */
	thread_lock(td);
	pri = contested_best(ut);
	if ((td->td_flags & TDF_BORROWING) || pri < td->td_priority)
		ult__rt.sched->unlend_prio(td, pri);
	thread_unlock(td);
}

/* A new owner starts with the best waiter's priority (turnstile_claim). */
static void
lend_owner(struct ult_thread *ut, int pri)
{
	struct thread *td = &ut->td;

	thread_lock(td);
	lend_to(td, pri);
	thread_unlock(td);
}

/* Make a woken waiter run again (ts locked; w unlinked).  A new owner
 * first receives lend, the best priority still waiting, while its thread
 * lock is still our ts_lock. */
static void
resume(struct ult__waiter *w, int lend)
{
	struct thread *td;

	if (w->ut == NULL) {
		ult__waiter_wake_foreign(w);
		return;
	}
	td = &w->ut->td;
	thread_lock_block_wait(td);
	MPASS(TD_ON_LOCK(td) &&
	    ULT_LD(&td->td_lock) == &w->ut->ts_blocked->ts_lock);
	w->ut->ts_blocked = NULL;
	w->ut->ts_waiter = NULL;
	lend_to(td, lend);
	TD_CLR_LOCK(td);
	if (TD_CAN_RUN(td)) {
		int held = ult__clock_hold(ult__tls_worker);

		ult__became_runnable(w->ut);
		ult__rt.sched->add(td, SRQ_HOLD | ult__wake_flags());
		ult__clock_drop(held);
	}
}

/* A waiter leaves ts (chain and ts locked): give it a spare turnstile; if
 * it was the last one, ts itself, which leaves its chain and its owner. */
static struct ult_thread *
give_spare(struct ult__turnstile *ts, struct ult__waiter *w)
{
	struct ult__list *n = ult__list_first(&ts->ts_free);

	if (n != NULL) {
		ult__list_remove(n);
		w->spare = ULT_CONTAINER_OF(n, struct ult__turnstile, ts_link);
		return (NULL);
	}
	w->spare = ts;
	ult__list_remove(&ts->ts_hash);
	return (set_owner(ts, NULL));
}

/* Chain and ts locked, w queued on ts: it leaves with result, resumed;
 * returns the owner, whose lend may have come from w. */
static struct ult_thread *
leave(struct ult__turnstile *ts, struct ult__waiter *w, int result)
{
	struct ult_thread *owner = ts->ts_owner;

	remove_waiter(ts, queue_of(ts, w), w);
	w->result = result;
	w->ts = NULL;
	give_spare(ts, w);
	if (w->ut != NULL)
		resume(w, PRI_MAX);
	return (owner);
}

/*
 * Timeout: take w off its turnstile unless a waker got there first.
 * Returns 1 if it was removed (and resumed, for a uthread).
 */
static int
abandon(struct ult__waiter *w)
{
	struct ts_chain *tc = chain_of(w->wchan);
	struct ult__turnstile *ts;
	struct ult_thread *owner;

	mtx_lock_spin(&tc->lock);
	/* w->ts changes under the chain lock; NULL once w was woken, after
	 * which its turnstile may belong to someone else. */
	if ((ts = w->ts) == NULL) {
		mtx_unlock_spin(&tc->lock);
		return (0);
	}
	mtx_lock_spin(&ts->ts_lock);
	owner = leave(ts, w, ETIMEDOUT);
	mtx_unlock_spin(&ts->ts_lock);
	mtx_unlock_spin(&tc->lock);
	/* Outside the turnstile locks: the owner may be asleep, and its
	 * thread lock then a sleep-queue chain, which ranks before them. */
	if (owner != NULL)
		unlend(owner);
	return (1);
}

static void
ts_timeout(void *arg)
{
	struct ult_thread *ut = arg;

	abandon(ULT_LD_ACQ(&ut->slp_waiter));
}

void
ult__ts_interrupt(struct ult_thread *ut)
{
	const void *obj = ULT_LD_SC(&ut->ts_intr_obj);
	struct ts_chain *tc;
	struct ult__turnstile *ts = NULL;
	struct ult_thread *owner = NULL;
	struct ult__list *n;

	/* obj is the lock, not the waiter on ut's stack: found again under
	 * the chain lock, ut's waiter is still queued or already gone. */
	if (obj == NULL)
		return;
	tc = chain_of(obj);
	mtx_lock_spin(&tc->lock);
	ULT_LIST_FOREACH (n, &tc->list) {
		struct ult__turnstile *t =
		    ULT_CONTAINER_OF(n, struct ult__turnstile, ts_hash);

		if (t->ts_obj == obj) {
			ts = t;
			break;
		}
	}
	if (ts != NULL) {
		struct ult__waiter *w = NULL;

		mtx_lock_spin(&ts->ts_lock);
		for (int q = 0; q < 2 && w == NULL; q++)
			ULT_LIST_FOREACH (n, &ts->ts_blocked[q])
				if (ULT_CONTAINER_OF(n, struct ult__waiter,
					link)
					->ut == ut) {
					w = ULT_CONTAINER_OF(n,
					    struct ult__waiter, link);
					break;
				}
		if (w != NULL && (ULT_LD(&ut->intr) & ULT__INTR_LOCK))
			owner = leave(ts, w, EINTR);
		mtx_unlock_spin(&ts->ts_lock);
	}
	mtx_unlock_spin(&tc->lock);
	if (owner != NULL)
		unlend(owner);
}

int
ult__ts_wait(const void *obj, struct ult__turnstile *ts, uintptr_t owner,
    int queue, struct ult__waiter *w, uint64_t deadline, const char *wmesg)
{
	struct ts_chain *tc = chain_of(obj);
	struct ult_thread *ut = w->ut, *old;
	struct ult__turnstile *spare;
	struct thread *td;

	/* Set before the timer: its expiry locks w's chain, which we hold,
	 * and so finds w queued or already gone. */
	w->wchan = obj;
	ULT_USDT(lock_contended, ut != NULL ? ut->id : 0, (uintptr_t)obj, 0);
	if (ULT_UNLIKELY(ULT_PLD(&ult__trace_on))) {
		struct ult_thread *o = ult__sync_id_thread(owner);

		ult__trace_emit(TEV_LOCK, 0, ut != NULL ? ut->id : 0,
		    (uintptr_t)obj, o != NULL ? o->id : 0, 0);
	}
	if (ut != NULL)
		ULT_ST(&ut->wmesg, wmesg);
	if (ut != NULL && (ULT_LD(&ut->intr) & ULT__INTR_LOCK)) {
		/* seq_cst, the Dekker pair with ult__sleepq_interrupt, as in
		 * ult__sleepq_wait: either it finds obj or this finds the
		 * mark. */
		ULT_ST_SC(&ut->ts_intr_obj, obj);
		if (ULT_XCHG_SC(&ut->intr_pending, 0)) {
			ULT_ST(&ut->ts_intr_obj, NULL);
			ult__ts_release(obj, ts);
			return (EINTR);
		}
	}
	if (deadline != 0 && ut != NULL) {
		ULT_ST_REL(&ut->slp_waiter, w);
		ult__timer_add(&ut->slp_timer, ut->td.td_oncpu, deadline,
		    ts_timeout, ut);
	}
	spare = spare_take(w);
	if (ts == NULL) {
		ts = spare;
		mtx_lock_spin(&ts->ts_lock);
		ts->ts_obj = obj;
		for (int q = 0; q < 2; q++) {
			ult__list_init(&ts->ts_blocked[q]);
			ts->ts_count[q] = 0;
		}
		ult__list_init(&ts->ts_pending);
		ult__list_init(&ts->ts_free);
		ts->ts_owner = NULL;
		ult__list_insert_tail(&tc->list, &ts->ts_hash);
	} else
		ult__list_insert_tail(&ts->ts_free, &spare->ts_link);
	old = set_owner(ts, ult__sync_id_thread(owner));
	w->ts = ts;
	insert_waiter(ts, queue, w);
	mtx_unlock_spin(&tc->lock);
	/* A stale owner (it released the lock) keeps a lend it no longer
	 * needs until its next unlend: taking its thread lock here could
	 * invert the lock order if it sleeps.  Mutexes and rwlocks never
	 * leave a stale owner on a turnstile with waiters. */
	(void)old;
	if (ut == NULL) {
		propagate(ts, ULT_LD(&ts->ts_bestpri));
		mtx_unlock_spin(&ts->ts_lock);
		if (ult__waiter_park_foreign(w, deadline) == ETIMEDOUT &&
		    !abandon(w))
			ult__waiter_park_foreign(w, 0); /* being woken now */
		spare_put(w);
		return (w->result);
	}
	td = &ut->td;
	ut->ts_blocked = ts;
	ut->ts_waiter = w;
	thread_lock(td);
	TD_SET_LOCK(td);
	thread_lock_set(td, &ts->ts_lock);
	propagate(ts, ULT_LD(&ts->ts_bestpri));
	ult__mi_switch(ut, SW_VOL | SWT_TURNSTILE, NULL);
	if (deadline != 0)
		ult__timer_cancel(&ut->slp_timer);
	if (ULT_LD(&ut->ts_intr_obj) != NULL) {
		ULT_ST(&ut->ts_intr_obj, NULL);
		if (w->result == EINTR)
			(void)ULT_XCHG_SC(&ut->intr_pending, 0);
	}
	spare_put(w);
	return (w->result);
}

static void
move_pending(struct ult__turnstile *ts, int queue, struct ult__waiter *w,
    int result)
{
	ult__list_remove(&w->link);
	ts->ts_count[queue]--;
	w->result = result;
	w->ts = NULL; /* gone from ts: a late timeout must not touch it */
	ult__list_insert_tail(&ts->ts_pending, &w->link);
}

void
ult__ts_signal(struct ult__turnstile *ts, int queue, int result)
{
	struct ult__waiter *w = ult__ts_head(ts, queue);

	if (w != NULL)
		move_pending(ts, queue, w, result);
	update_bestpri(ts);
}

void
ult__ts_broadcast(struct ult__turnstile *ts, int queue, int result)
{
	struct ult__waiter *w;

	while ((w = ult__ts_head(ts, queue)) != NULL)
		move_pending(ts, queue, w, result);
	update_bestpri(ts);
}

void
ult__ts_unpend(const void *obj, struct ult__turnstile *ts, uintptr_t newowner)
{
	struct ult_thread *nut = ult__sync_id_thread(newowner);
	struct ult_thread *old = ts->ts_owner;
	struct ult__list pending, *n;
	int left = ts->ts_count[0] + ts->ts_count[1];

	set_owner(ts, left ? nut : NULL);
	ult__list_init(&pending);
	while ((n = ult__list_first(&ts->ts_pending)) != NULL) {
		ult__list_remove(n);
		ult__list_insert_tail(&pending, n);
	}
	/* Hand out spares first: the last one may be ts itself. */
	ULT_LIST_FOREACH (n, &pending)
		give_spare(ts, ULT_CONTAINER_OF(n, struct ult__waiter, link));
	while ((n = ult__list_first(&pending)) != NULL) {
		struct ult__waiter *w =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		ult__list_remove(n);
		resume(w,
		    left && w->ut == nut ? ULT_LD(&ts->ts_bestpri) : PRI_MAX);
	}
	mtx_unlock_spin(&ts->ts_lock);
	mtx_unlock_spin(&chain_of(obj)->lock);
	/* The releaser (normally the caller, running): after the turnstile
	 * locks, in case it is not and its lock is a sleep queue's. */
	if (old != NULL && old != nut)
		unlend(old);
}

void
ult__ts_claim(const void *obj, uintptr_t self)
{
	struct ult_thread *ut = ult__sync_id_thread(self);
	struct ult__turnstile *ts = ult__ts_lookup(obj);
	struct ult_thread *old;

	if (ts == NULL) {
		ult__ts_release(obj, NULL);
		return;
	}
	old = set_owner(ts, ut);
	if (ut != NULL) /* the caller, running: its lock is a run queue's */
		lend_owner(ut, ULT_LD(&ts->ts_bestpri));
	ult__ts_release(obj, ts);
	if (old != NULL)
		unlend(old);
}

const void *
ult__ts_blocked_on(struct ult_thread *ut, uint64_t *owner_id)
{
	/* Turnstiles are never freed while uthreads exist, and an owner
	 * stays allocated while it owns a lock (a racy reader may see a
	 * recycled one: hang reports only). */
	struct ult__turnstile *ts = ut->ts_blocked;
	struct ult_thread *o;

	*owner_id = 0;
	if (ts == NULL)
		return (NULL);
	if ((o = ts->ts_owner) != NULL)
		*owner_id = o->id;
	return (ts->ts_obj);
}
