/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syscall(SYS_futex, ...) under the drop-in (DESIGN.md section 14,
 * "Futexes").  libstdc++'s futures and C++20 waits, Rust's std, abseil
 * and many servers block with raw futexes through libc's syscall(); a
 * uthread that did so would take its worker into the kernel with it.
 * Here a uthread's FUTEX_WAIT sleeps on a ult sleep queue instead, and
 * every FUTEX_WAKE wakes those sleepers first and then the kernel's (a
 * thread that is not a uthread waits in the kernel as before).
 *
 * The table: waiters hash by address to buckets; a bucket's lock makes a
 * waiter's "compare the word, then queue" one step against a waker's
 * "take the waiters", so a wake issued after the word changed is never
 * lost (the kernel's guarantee).  Each waiter sleeps on a channel of its
 * own (its record), so a requeue moves the record between buckets and
 * leaves the sleep alone.  Lock order: bucket (the lower first), then the
 * sleep queue's chain.  A waker keeps the bucket locked until it has
 * resumed every waiter it took, and a waiter that stops sleeping for any
 * other reason (its deadline, an interruption, a recheck) takes the
 * bucket lock before it looks at its record: the record, on the waiter's
 * stack, lives until then.
 *
 * A wake the table never sees (an inline `syscall' instruction, another
 * process writing a shared mapping) would leave a sleeper for ever, so a
 * sleeper looks at its word again now and then (RECHECK_*): once the word
 * differs from the value it waited on it returns 0, a spurious wakeup,
 * which every futex user must accept.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dropin.h"
#include "runtime.h"

/* The kernel's futex call: every argument a long, as syscall() reads
 * them. */
static long
sys_futex(const void *a, long op, long val, long t, const void *a2, long v3)
{
	return (
	    ult__libc_syscall(SYS_futex, (long)a, op, val, t, (long)a2, v3));
}

/* How long a sleeper waits before it looks at its word again: doubling
 * from the first to the last, ns. */
#define RECHECK_FIRST_NS 2000000u
#define RECHECK_LAST_NS 128000000u

#define NBUCKET 256

struct fx_waiter {
	struct ult__list link; /* on its bucket */
	const uint32_t *addr;  /* (b) the bucket's lock */
	uint32_t bitset;
	int woken;		/* (b) a waker took it */
	int requeued;		/* (b) its value means nothing at addr now */
	struct fx_waiter *next; /* on a waker's list */
	struct ult__waiter w;
};

struct fx_bucket {
	struct mtx lock;
	atomic_int nwait; /* records queued: a waker that reads 0 skips */
	struct ult__list waiters;
} ULT_ALIGNED_CL;

static struct fx_bucket buckets[NBUCKET];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;
/* libc's: any thread may be first, a foreign one included. */
int ult__libc_pthread_once(pthread_once_t *o, void (*fn)(void));

static void
buckets_init(void)
{
	for (int i = 0; i < NBUCKET; i++) {
		mtx_init(&buckets[i].lock, "futex bucket");
		ult__list_init(&buckets[i].waiters);
	}
}

/* A fork child: the waiters are the parent's threads. */
void
ult__dropin_futex_fork_child(void)
{
	buckets_init();
}

static struct fx_bucket *
bucket_of(const uint32_t *addr)
{
	uintptr_t a = (uintptr_t)addr;

	return (&buckets[((a >> 2) ^ (a >> 12)) % NBUCKET]);
}

/* Lock one bucket, or two in address order. */
static void
lock2(struct fx_bucket *a, struct fx_bucket *b)
{
	if (b == NULL || a == b) {
		mtx_lock_spin(&a->lock);
	} else if (a < b) {
		mtx_lock_spin(&a->lock);
		mtx_lock_spin(&b->lock);
	} else {
		mtx_lock_spin(&b->lock);
		mtx_lock_spin(&a->lock);
	}
}

static void
unlock2(struct fx_bucket *a, struct fx_bucket *b)
{
	mtx_unlock_spin(&a->lock);
	if (b != NULL && b != a)
		mtx_unlock_spin(&b->lock);
}

static long
fail(int err)
{
	errno = err;
	return (-1);
}

/* Does anyone wait in b?  After the caller's change of the word. */
static int
pending(struct fx_bucket *b)
{
	ULT_FENCE(); /* pairs with the waiter's increment of nwait */
	return (ULT_LD(&b->nwait) != 0);
}

/* b locked: unlink up to max waiters of addr whose bitset meets bits onto
 * *list; the count taken. */
static int
take(struct fx_bucket *b, const uint32_t *addr, uint32_t bits, int max,
    struct fx_waiter **list)
{
	struct ult__list *n, *t;
	int k = 0;

	ULT_LIST_FOREACH_SAFE (n, t, &b->waiters) {
		struct fx_waiter *fw =
		    ULT_CONTAINER_OF(n, struct fx_waiter, link);

		if (k >= max)
			break;
		if (fw->addr != addr || (fw->bitset & bits) == 0)
			continue;
		ult__list_remove(&fw->link);
		(void)ULT_SUB(&b->nwait, 1);
		fw->woken = 1;
		fw->next = *list;
		*list = fw;
		k++;
	}
	return (k);
}

/* Buckets still locked: the record may go once its sleep is resumed. */
static void
resume_all(struct fx_waiter *list)
{
	while (list != NULL) {
		struct fx_waiter *fw = list;

		list = fw->next;
		ult__sleepq_lock(fw);
		ult__sleepq_signal(fw);
		ult__sleepq_release(fw);
	}
}

/* Wake up to max emulated waiters of addr (max >= 1); how many. */
static int
wake_table(const uint32_t *addr, uint32_t bits, int max)
{
	struct fx_bucket *b = bucket_of(addr);
	struct fx_waiter *list = NULL;
	int k;

	ult__libc_pthread_once(&buckets_once, buckets_init);
	if (!pending(b))
		return (0);
	mtx_lock_spin(&b->lock);
	k = take(b, addr, bits, max, &list);
	resume_all(list);
	mtx_unlock_spin(&b->lock);
	return (k);
}

/* The emulated wait of a uthread: 0, EAGAIN, ETIMEDOUT or EINTR. */
static int
wait_table(const uint32_t *addr, uint32_t val, uint32_t bits, uint64_t deadline)
{
	struct fx_bucket *b = bucket_of(addr);
	struct fx_waiter fw;
	uint64_t recheck = RECHECK_FIRST_NS, until, now;
	int r;

	ult__libc_pthread_once(&buckets_once, buckets_init);
	ult__waiter_self(&fw.w);
	fw.addr = addr;
	fw.bitset = bits;
	fw.woken = 0;
	fw.requeued = 0;
	fw.next = NULL;
	mtx_lock_spin(&b->lock);
	/* seq_cst, the Dekker pair of the kernel's futex: nwait is counted
	 * before the word is read, and a waker stores the word before it
	 * reads nwait (pending()), so either it sees this waiter or this
	 * sees its new value. */
	(void)ULT_ADD_SC(&b->nwait, 1);
	if (ULT_PLD_SC(addr) != val) {
		(void)ULT_SUB(&b->nwait, 1);
		mtx_unlock_spin(&b->lock);
		return (EAGAIN);
	}
	ult__list_insert_tail(&b->waiters, &fw.link);
	ult__dropin_intr_begin();
	for (;;) {
		now = ult__now();
		until = now + recheck;
		if (deadline != 0 && deadline < until)
			until = deadline;
		ult__sleepq_lock(&fw);
		ult__sleepq_add(&fw, &fw.w, "futex");
		mtx_unlock_spin(&b->lock);
		r = ult__sleepq_wait(&fw, &fw.w, until);
		if (r == 0)
			break; /* a waker's: it took the record */
		/* A requeue may have moved the record meanwhile; it moves it
		 * with both buckets locked. */
		for (;;) {
			const uint32_t *a = ULT_PLD_ACQ(&fw.addr);

			b = bucket_of(a);
			mtx_lock_spin(&b->lock);
			if (fw.addr == a)
				break;
			mtx_unlock_spin(&b->lock);
		}
		if (fw.woken) {
			r = 0;
		} else if (r == ETIMEDOUT &&
		    (deadline == 0 || ult__now() < deadline)) {
			/* seq_cst, as the kernel reads the word. */
			if (fw.requeued || ULT_PLD_SC(fw.addr) == val) {
				if (recheck < RECHECK_LAST_NS)
					recheck *= 2;
				/* Asleep again, b locked until then. */
				continue;
			}
			r = 0; /* the word moved: a wake we may not see */
		}
		if (!fw.woken) {
			ult__list_remove(&fw.link);
			(void)ULT_SUB(&b->nwait, 1);
		}
		mtx_unlock_spin(&b->lock);
		break;
	}
	ult__dropin_intr_end();
	ult__dropin_after_wait();
	return (r);
}

/* The requeue ops on the table: woken + moved, or -1 (EAGAIN). */
static int
requeue_table(const uint32_t *a1, const uint32_t *a2, int nwake, int nmove,
    int cmp, uint32_t val3, int *woken, int *moved)
{
	struct fx_bucket *b1 = bucket_of(a1), *b2 = bucket_of(a2);
	struct fx_waiter *list = NULL;
	struct ult__list *n, *t;

	ult__libc_pthread_once(&buckets_once, buckets_init);
	*woken = *moved = 0;
	lock2(b1, b2);
	/* seq_cst, as the kernel reads it: after the callers' stores of
	 * the word, under both bucket locks. */
	if (cmp && ULT_PLD_SC(a1) != val3) {
		unlock2(b1, b2);
		return (-1);
	}
	*woken = take(b1, a1, FUTEX_BITSET_MATCH_ANY, nwake, &list);
	ULT_LIST_FOREACH_SAFE (n, t, &b1->waiters) {
		struct fx_waiter *fw =
		    ULT_CONTAINER_OF(n, struct fx_waiter, link);

		if (*moved >= nmove)
			break;
		if (fw->addr != a1)
			continue;
		ult__list_remove(&fw->link);
		(void)ULT_SUB(&b1->nwait, 1);
		ULT_PST_REL(&fw->addr, a2);
		fw->requeued = 1;
		/* seq_cst: a waker of a2 must count it (pending). */
		(void)ULT_ADD_SC(&b2->nwait, 1);
		ult__list_insert_tail(&b2->waiters, &fw->link);
		(*moved)++;
	}
	resume_all(list);
	unlock2(b1, b2);
	return (0);
}

/* FUTEX_WAKE_OP's operation on *a2 and its comparison (futex(2)). */
static int
wake_op_apply(uint32_t *a2, uint32_t enc, int *cond)
{
	int op = (enc >> 28) & 7, cmp = (enc >> 24) & 15;
	int oparg = (int)(enc << 8) >> 20, cmparg = (int)(enc << 20) >> 20;
	uint32_t old, nv;

	if (enc & (FUTEX_OP_OPARG_SHIFT << 28))
		oparg = 1 << (oparg & 31);
	if (op > FUTEX_OP_XOR || cmp > FUTEX_OP_CMP_GE)
		return (ENOSYS);
	old = ULT_PLD(a2);
	do {
		switch (op) {
		case FUTEX_OP_SET:
			nv = (uint32_t)oparg;
			break;
		case FUTEX_OP_ADD:
			nv = old + (uint32_t)oparg;
			break;
		case FUTEX_OP_OR:
			nv = old | (uint32_t)oparg;
			break;
		case FUTEX_OP_ANDN:
			nv = old & ~(uint32_t)oparg;
			break;
		default:
			nv = old ^ (uint32_t)oparg;
			break;
		}
	} while (!ULT_PCAS(a2, &old, nv)); /* seq_cst, as the kernel's op */
	switch (cmp) {
	case FUTEX_OP_CMP_EQ:
		*cond = (int)old == cmparg;
		break;
	case FUTEX_OP_CMP_NE:
		*cond = (int)old != cmparg;
		break;
	case FUTEX_OP_CMP_LT:
		*cond = (int)old < cmparg;
		break;
	case FUTEX_OP_CMP_LE:
		*cond = (int)old <= cmparg;
		break;
	case FUTEX_OP_CMP_GT:
		*cond = (int)old > cmparg;
		break;
	default:
		*cond = (int)old >= cmparg;
		break;
	}
	return (0);
}

static long
wake_op(uint32_t *a1, int n1, int n2, uint32_t *a2, uint32_t enc, int priv)
{
	struct fx_bucket *b1 = bucket_of(a1), *b2 = bucket_of(a2);
	struct fx_waiter *list = NULL;
	int k1 = 0, k2 = 0, cond = 0, err;
	long r;

	ult__libc_pthread_once(&buckets_once, buckets_init);
	n1 = n1 <= 0 ? 1 : n1;
	n2 = n2 <= 0 ? 1 : n2;
	lock2(b1, b2);
	if ((err = wake_op_apply(a2, enc, &cond)) != 0) {
		unlock2(b1, b2);
		return (fail(err));
	}
	k1 = take(b1, a1, FUTEX_BITSET_MATCH_ANY, n1, &list);
	if (cond)
		k2 = take(b2, a2, FUTEX_BITSET_MATCH_ANY, n2, &list);
	resume_all(list);
	unlock2(b1, b2);
	/* The kernel's waiters: plain wakes, the operation is done. */
	if (k1 < n1 &&
	    (r = sys_futex(a1, FUTEX_WAKE | priv, n1 - k1, 0, NULL, 0)) > 0)
		k1 += (int)r;
	if (cond && k2 < n2 &&
	    (r = sys_futex(a2, FUTEX_WAKE | priv, n2 - k2, 0, NULL, 0)) > 0)
		k2 += (int)r;
	return (k1 + k2);
}

static int
bad_timespec(const struct timespec *ts)
{
	return (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000);
}

long
ult__dropin_futex(uint32_t *uaddr, int op, uint32_t val,
    const struct timespec *ts, uint32_t *uaddr2, uint32_t val3)
{
	int cmd = op & FUTEX_CMD_MASK, priv = op & FUTEX_PRIVATE_FLAG;
	int rt = (op & FUTEX_CLOCK_REALTIME) != 0, k, moved, err;
	long nval2 = (long)(uintptr_t)ts, r;
	uint64_t deadline = 0;

	if (((uintptr_t)uaddr & 3) != 0)
		return (fail(EINVAL));
	if (rt && cmd != FUTEX_WAIT && cmd != FUTEX_WAIT_BITSET)
		return (fail(ENOSYS));
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
		if (cmd == FUTEX_WAIT)
			val3 = FUTEX_BITSET_MATCH_ANY;
		if (val3 == 0)
			return (fail(EINVAL));
		/* Not a uthread: the kernel's wait, which wakes reach too. */
		if (ult__self_ut() == NULL)
			break;
		if (ts != NULL) {
			if (bad_timespec(ts))
				return (fail(EINVAL));
			err = cmd == FUTEX_WAIT
			    ? ult__dropin_after(ts, &deadline)
			    : ult__dropin_deadline(rt ? CLOCK_REALTIME
						      : CLOCK_MONOTONIC,
				  ts, &deadline);
			if (err != 0)
				return (fail(err));
			deadline = deadline ? deadline : 1;
		}
		err = wait_table(uaddr, val, val3, deadline);
		return (err != 0 ? fail(err) : 0);
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
		if (cmd == FUTEX_WAKE)
			val3 = FUTEX_BITSET_MATCH_ANY;
		if (val3 == 0)
			return (fail(EINVAL));
		k = wake_table(uaddr, val3, (int)val <= 0 ? 1 : (int)val);
		if (k >= ((int)val <= 0 ? 1 : (int)val))
			return (k);
		r = sys_futex(uaddr, op, (int)val - k, 0, NULL, val3);
		return (r > 0 ? k + r : k != 0 ? k : r);
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
		if ((int)val < 0 || nval2 < 0 || nval2 > INT_MAX)
			return (fail(EINVAL));
		if (requeue_table(uaddr, uaddr2, (int)val, (int)nval2,
			cmd == FUTEX_CMP_REQUEUE, val3, &k, &moved) != 0)
			return (fail(EAGAIN));
		r = sys_futex(uaddr, op, (int)val - k, nval2 - moved, uaddr2,
		    val3);
		return (r > 0 ? k + moved + r : k + moved != 0 ? k + moved : r);
	case FUTEX_WAKE_OP:
		return (
		    wake_op(uaddr, (int)val, (int)nval2, uaddr2, val3, priv));
	default:
		/* PI futexes and the rest: the kernel's, blocking the worker
		 * (the handoff of section 7.2 covers it). */
		break;
	}
	return (sys_futex(uaddr, op, val, (long)ts, uaddr2, val3));
}

long
syscall(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_futex)
		return (ult__dropin_futex((uint32_t *)a[0], (int)a[1],
		    (uint32_t)a[2], (const struct timespec *)a[3],
		    (uint32_t *)a[4], (uint32_t)a[5]));
	return (ult__libc_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}
