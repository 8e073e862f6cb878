/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the idea of FreeBSD's sys/kern/subr_witness.c. */
/*
 * The lock checker (witness.h; DESIGN.md "The lock checker").
 *
 * Locks held through libc.  preempt_shim.c counts them (nopreempt) for
 * preemption; with the checker on it also names the first few.  A
 * uthread that waits while it holds one is the hang a newcomer meets
 * first: another uthread on the same worker that takes the lock blocks
 * the worker's kernel thread in libc, and if the holder is queued on that
 * worker nothing ever releases it.  Reported at the switch, once per lock
 * and wait message.
 *
 * Lock order.  FreeBSD's witness orders lock classes; ult's locks have no
 * classes or names, so the graph's nodes are lock instances (by address)
 * in a bounded table, and its edges "A was held when B was taken" a
 * bitmap.  Taking B while holding A adds A -> B unless B already reaches A,
 * which is a reversal: reported once per pair, with the call sites that
 * made the first order and the one taking the second.  A destroyed lock
 * leaves the graph; a lock freed without ult_*_destroy stays, and memory
 * reused for another lock inherits its edges (a false report is possible
 * then: destroy locks before freeing them).  When the table is full, new
 * locks are not checked (said once).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sched/sched.h"
#include "../util/lock.h"
#include "subsys.h"
#include "uthread.h"
#include "witness.h"
#include "worker.h"

int ult__witness_on;

#define WIT_NODES 1024
#define WIT_WORDS (WIT_NODES / 64)
#define WIT_EDGES 4096 /* edges whose call sites are kept */
#define WIT_SEEN 256   /* (lock, wmesg) pairs reported for libc locks */
#define WIT_TOMB ((const void *)1)

struct wit_edge {
	int from, to; /* node indexes + 1; 0: free */
	const void *site_from, *site_to;
	int reported;
};

static struct {
	struct mtx lock;
	const void *node[WIT_NODES]; /* NULL free, WIT_TOMB deleted */
	uint64_t adj[WIT_NODES][WIT_WORDS];
	struct wit_edge edge[WIT_EDGES];
	int full_said;
	/* BFS scratch, under lock */
	uint64_t seen[WIT_WORDS];
	int queue[WIT_NODES];
} g = {.lock = MTX_INITIALIZER("witness")};

static uintptr_t _Atomic libc_seen[WIT_SEEN];
static atomic_uint_fast64_t nreports;

static const char *
kind_name(int kind)
{
	switch (kind) {
	case WIT_PTHREAD_MUTEX:
		return ("pthread mutex (or mtx_t, std::mutex)");
	case WIT_PTHREAD_RWLOCK:
		return ("pthread rwlock");
	case WIT_PTHREAD_SPIN:
		return ("pthread spinlock");
	case WIT_FILE:
		return ("FILE lock (flockfile)");
	case WIT_ULT_MUTEX:
		return ("ult_mutex");
	case WIT_ULT_RWLOCK:
		return ("ult_rwlock");
	}
	return ("lock");
}

/* No stdio: a report may come with a thread lock held, or from inside a
 * flockfile region. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (n > 0 && write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

/* On in debug builds, and where ULT_WITNESS says so; read once, before
 * any uthread runs. */
static int
witness_configure(const struct ult_config *cfg)
{
	long v;
	int r;

	(void)cfg;
	if ((r = ult__env_long("ULT_WITNESS", &v)) < 0 ||
	    (r == 0 && v != 0 && v != 1))
		return (EINVAL);
#ifdef ULT_INVARIANTS
	ult__witness_on = r != 0 || v == 1;
#else
	ult__witness_on = r == 0 && v == 1;
#endif
	return (0);
}

static long
witness_get(void)
{
	return (ult__witness_on);
}

static const struct sched_tunable witness_tunables[] = {
    {"ult.witness", NULL, 0, 0, witness_get, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

static void
witness_fork_child(void)
{
	mtx_init(&g.lock, "witness");
}

const struct ult__subsys ult__witness_subsys = {.name = "witness",
    .configure = witness_configure,
    .fork_child = witness_fork_child,
    .tunables = witness_tunables};

uint64_t
ult__witness_nreports(void)
{
	return (ULT_LD(&nreports));
}

void
ult__witness_thread_init(struct ult_thread *ut)
{
	ut->wit_nlibc = 0;
	ut->wit_nheld = 0;
}

void
ult__witness_libc_hold(struct ult_thread *ut, int kind, const void *lock)
{
	int n = ut->wit_nlibc++;

	if (n < WIT_NLIBC)
		ut->wit_libc[n] =
		    (struct ult__wit_lock){.lock = lock, .kind = kind};
}

/* Remove lock from a list of n recorded (of which at most max named);
 * returns the new count.  An unknown lock (taken before the checker or
 * the uthread, or past the array) takes the count down all the same. */
static int
list_drop(struct ult__wit_lock *l, int n, int max, const void *lock)
{
	int named = n < max ? n : max;

	if (n == 0)
		return (0);
	for (int i = named - 1; i >= 0; i--) {
		if (l[i].lock == lock) {
			memmove(&l[i], &l[i + 1],
			    (size_t)(named - 1 - i) * sizeof(l[0]));
			return (n - 1);
		}
	}
	return (n > max ? n - 1 : n);
}

void
ult__witness_libc_drop(struct ult_thread *ut, const void *lock)
{
	ut->wit_nlibc = list_drop(ut->wit_libc, ut->wit_nlibc, WIT_NLIBC, lock);
}

static int
first_report(uintptr_t key)
{
	uintptr_t h = (key ^ (key >> 17)) * 0x9e3779b97f4a7c15u;

	for (unsigned i = 0; i < WIT_SEEN; i++) {
		uintptr_t _Atomic *s = &libc_seen[(h + i) % WIT_SEEN];
		uintptr_t v = 0;

		if (atomic_compare_exchange_strong(s, &v, key))
			return (1);
		if (v == key)
			return (0);
	}
	return (0); /* the table is full: enough said */
}

static const char *
wait_name(struct ult_thread *ut, int flags)
{
	const char *m;

	switch (flags & SW_TYPE_MASK) {
	case SWT_RELINQUISH:
		return ("yield");
	case SWT_BIND:
		return ("bind");
	case SWT_SLEEPQ:
	case SWT_TURNSTILE:
		m = ULT_LD(&ut->wmesg);
		return (m != NULL ? m : "?");
	}
	return ("switch");
}

void
ult__witness_switch(struct ult_thread *ut, int flags)
{
	int n = ULT_LD(&ut->nopreempt), named;
	const char *wmesg;
	const void *first;

	if (n <= 0 || (flags & SW_TYPE_MASK) == SWT_IDLE)
		return;
	wmesg = wait_name(ut, flags);
	named = ut->wit_nlibc < WIT_NLIBC ? ut->wit_nlibc : WIT_NLIBC;
	first = named > 0 ? ut->wit_libc[0].lock : NULL;
	if (!first_report((uintptr_t)first ^ (uintptr_t)wmesg))
		return;
	atomic_fetch_add(&nreports, 1);
	say("ult witness: uthread %llu \"%s\" waits (\"%s\") holding %d "
	    "lock%s taken through libc:\n",
	    (unsigned long long)ut->id, ut->name[0] != '\0' ? ut->name : "-",
	    wmesg, n, n == 1 ? "" : "s");
	for (int i = 0; i < named; i++)
		say("ult witness:   %s %p\n", kind_name(ut->wit_libc[i].kind),
		    ut->wit_libc[i].lock);
	if (n > named)
		say("ult witness:   (%d more not named)\n", n - named);
	say("ult witness:   a uthread that takes such a lock blocks its "
	    "worker's kernel thread until it is released: if the holder "
	    "waits to run on that worker, the process hangs.  Release it "
	    "first, or use ult_mutex_t.\n");
}

/* The graph (under g.lock). */

static int
node_find(const void *lock, int add)
{
	uintptr_t h = ((uintptr_t)lock >> 3) * 0x9e3779b97f4a7c15u;
	int tomb = -1;

	for (unsigned i = 0; i < WIT_NODES; i++) {
		int k = (int)((h + i) % WIT_NODES);

		if (g.node[k] == lock)
			return (k);
		if (g.node[k] == WIT_TOMB) {
			if (tomb < 0)
				tomb = k;
			continue;
		}
		if (g.node[k] == NULL) {
			if (!add)
				return (-1);
			if (tomb < 0)
				tomb = k;
			break;
		}
	}
	if (!add || tomb < 0) {
		if (add && !g.full_said) {
			g.full_said = 1;
			say("ult witness: more than %d locks: new ones are not "
			    "checked\n",
			    WIT_NODES);
		}
		return (-1);
	}
	g.node[tomb] = lock;
	return (tomb);
}

static int
has_edge(int a, int b)
{
	return ((g.adj[a][b / 64] >> (b % 64)) & 1);
}

/* Does a reach b along the edges? */
static int
reaches(int a, int b)
{
	int head = 0, tail = 0;

	memset(g.seen, 0, sizeof(g.seen));
	g.queue[tail++] = a;
	g.seen[a / 64] |= 1ull << (a % 64);
	while (head < tail) {
		int x = g.queue[head++];

		if (x == b)
			return (1);
		for (int w = 0; w < WIT_WORDS; w++) {
			uint64_t bits = g.adj[x][w] & ~g.seen[w];

			g.seen[w] |= bits;
			while (bits != 0) {
				int y = w * 64 + __builtin_ctzll(bits);

				bits &= bits - 1;
				g.queue[tail++] = y;
			}
		}
	}
	return (0);
}

static struct wit_edge *
edge_slot(int a, int b, int add)
{
	unsigned h = (unsigned)(a * 1031 + b) * 2654435761u;

	for (unsigned i = 0; i < WIT_EDGES; i++) {
		struct wit_edge *e = &g.edge[(h + i) % WIT_EDGES];

		if (e->from == a + 1 && e->to == b + 1)
			return (e);
		if (e->from == 0) {
			if (!add)
				return (NULL);
			e->from = a + 1;
			e->to = b + 1;
			return (e);
		}
	}
	return (NULL);
}

static void
site_name(const void *site, char *buf, size_t len)
{
	Dl_info di;

	if (site == NULL || dladdr(site, &di) == 0)
		snprintf(buf, len, "%p", site);
	else if (di.dli_sname != NULL)
		snprintf(buf, len, "%p (%s+%#lx)", site, di.dli_sname,
		    (unsigned long)((const char *)site -
			(const char *)di.dli_saddr));
	else /* a static function: the call's offset, as addr2line -e
		takes it (the byte before the return address) */
		snprintf(buf, len, "%p (%s+%#lx)", site,
		    di.dli_fname != NULL && strrchr(di.dli_fname, '/') != NULL
			? strrchr(di.dli_fname, '/') + 1
			: "?",
		    (unsigned long)((const char *)site - 1 -
			(const char *)di.dli_fbase));
}

struct reversal {
	const void *first, *second; /* established: first then second */
	const void *site_first, *site_second;
	const void *site_held, *site_now; /* now: second held, first taken */
	int kind_held, kind_now;
};

static void
report_reversal(struct ult_thread *ut, const struct reversal *r)
{
	char s1[128], s2[128], s3[128], s4[128];

	site_name(r->site_first, s1, sizeof(s1));
	site_name(r->site_second, s2, sizeof(s2));
	site_name(r->site_held, s3, sizeof(s3));
	site_name(r->site_now, s4, sizeof(s4));
	atomic_fetch_add(&nreports, 1);
	say("ult witness: lock order reversal in uthread %llu \"%s\":\n"
	    "ult witness:   established: %s %p (taken at %s)\n"
	    "ult witness:           then %s %p (taken at %s)\n"
	    "ult witness:   now:         %s %p (taken at %s)\n"
	    "ult witness:           then %s %p (taken at %s)\n",
	    (unsigned long long)ut->id, ut->name[0] != '\0' ? ut->name : "-",
	    kind_name(r->kind_now), r->first, s1, kind_name(r->kind_held),
	    r->second, s2, kind_name(r->kind_held), r->second, s3,
	    kind_name(r->kind_now), r->first, s4);
}

/* Check and record "each held lock, then lock"; a reversal to report
 * goes to *rev (one per acquisition is enough). */
static int
order(struct ult_thread *ut, int kind, const void *lock, const void *site,
    struct reversal *rev)
{
	int named = ut->wit_nheld < WIT_NHELD ? ut->wit_nheld : WIT_NHELD;
	int b, found = 0;

	mtx_lock_spin(&g.lock);
	if ((b = node_find(lock, 1)) < 0)
		goto out;
	for (int i = 0; i < named; i++) {
		const struct ult__wit_lock *h = &ut->wit_held[i];
		struct wit_edge *e, *back;
		int a = node_find(h->lock, 1);

		if (a < 0 || a == b || has_edge(a, b))
			continue;
		if (reaches(b, a)) {
			/* Report a pair once; the edge stays out, so a
			 * later acquisition finds it again: remember. */
			e = edge_slot(a, b, 1);
			if (e == NULL || e->reported || found)
				continue;
			e->reported = 1;
			back = edge_slot(b, a, 0);
			*rev = (struct reversal){.first = lock,
			    .second = h->lock,
			    .site_first = back != NULL ? back->site_from : NULL,
			    .site_second = back != NULL ? back->site_to : NULL,
			    .site_held = h->site,
			    .site_now = site,
			    .kind_held = h->kind,
			    .kind_now = kind};
			found = 1;
			continue;
		}
		g.adj[a][b / 64] |= 1ull << (b % 64);
		if ((e = edge_slot(a, b, 1)) != NULL) {
			e->site_from = h->site;
			e->site_to = site;
		}
	}
out:
	mtx_unlock_spin(&g.lock);
	return (found);
}

void
ult__witness_order(int kind, const void *lock, const void *site)
{
	struct ult_thread *ut = ult__self_ut();
	struct reversal rev;

	/* Foreign threads are not checked. */
	if (ut != NULL && ut->wit_nheld > 0 &&
	    order(ut, kind, lock, site, &rev))
		report_reversal(ut, &rev);
}

void
ult__witness_acquired(int kind, const void *lock, const void *site)
{
	struct ult_thread *ut = ult__self_ut();
	int n;

	if (ut == NULL)
		return;
	n = ut->wit_nheld++;
	if (n < WIT_NHELD)
		ut->wit_held[n] = (struct ult__wit_lock){.lock = lock,
		    .site = site,
		    .kind = kind};
}

void
ult__witness_released(const void *lock)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL)
		ut->wit_nheld =
		    list_drop(ut->wit_held, ut->wit_nheld, WIT_NHELD, lock);
}

void
ult__witness_destroyed(const void *lock)
{
	int k;

	mtx_lock_spin(&g.lock);
	if ((k = node_find(lock, 0)) >= 0) {
		g.node[k] = WIT_TOMB;
		memset(g.adj[k], 0, sizeof(g.adj[k]));
		for (int i = 0; i < WIT_NODES; i++)
			g.adj[i][k / 64] &= ~(1ull << (k % 64));
		/* Its edges' sites go too; the slots stay taken (a probe
		 * must not stop at them), named by no node. */
		for (int i = 0; i < WIT_EDGES; i++)
			if (g.edge[i].from == k + 1 || g.edge[i].to == k + 1)
				g.edge[i].from = g.edge[i].to = -1;
	}
	mtx_unlock_spin(&g.lock);
}
