/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Raw futexes through libc's syscall(): waits and their errors (EAGAIN,
 * ETIMEDOUT on relative and absolute timeouts on both clocks, EINVAL),
 * wake counts, bitsets, requeues, FUTEX_WAKE_OP, more waiters than
 * workers, a ping-pong stress in which a lost wake hangs, and wakes that
 * cross between threads ult runs and threads it does not (a timer's
 * SIGEV_THREAD helper, which glibc starts itself).  Counts printed are
 * made deterministic by waking until the wanted number woke.
 */
#include "conf.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static long
fx(atomic_uint *a, int op, uint32_t val, const struct timespec *ts,
    atomic_uint *a2, uint32_t val3)
{
	return (syscall(SYS_futex, a, op, val, ts, a2, val3));
}

/* The error of a futex call: 0 when it returned >= 0. */
static int
fxerr(long r)
{
	return (r >= 0 ? 0 : errno);
}

/* Wake until n waiters of a woke, one call at a time. */
static long
wake_n(atomic_uint *a, int op, int n, uint32_t bits)
{
	long got = 0, r;

	while (got < n) {
		r = fx(a, op, (uint32_t)(n - got), NULL, NULL, bits);
		if (r < 0)
			return (-1);
		got += r;
		if (r == 0)
			usleep(1000);
	}
	return (got);
}

/* Waiters: wait on word while it is 0, count a wakeup returning 0. */
struct wt {
	atomic_uint *word;
	uint32_t bits;
	atomic_int *arrived, *woken;
	int me_woken;
};

static void *
waiter(void *arg)
{
	struct wt *w = arg;

	atomic_fetch_add(w->arrived, 1);
	while (atomic_load(w->word) == 0) {
		long r = fx(w->word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0,
		    NULL, NULL, w->bits);

		if (r == 0) {
			w->me_woken = 1;
			atomic_fetch_add(w->woken, 1);
			break;
		}
	}
	return (NULL);
}

static void
until_eq(atomic_int *v, int n)
{
	while (atomic_load(v) != n)
		usleep(1000);
}

static void
errors_and_timeouts(void)
{
	atomic_uint w = 5;
	struct timespec rel = {0, 20000000}, bad = {0, 1000000000}, abs;

	conf_err("WAIT on a different value",
	    fxerr(fx(&w, FUTEX_WAIT, 4, NULL, NULL, 0)), EAGAIN);
	conf_err("WAIT relative timeout",
	    fxerr(fx(&w, FUTEX_WAIT_PRIVATE, 5, &rel, NULL, 0)), ETIMEDOUT);
	conf_err("WAIT shared relative timeout",
	    fxerr(fx(&w, FUTEX_WAIT, 5, &rel, NULL, 0)), ETIMEDOUT);
	abs = conf_ts_add(conf_now(CLOCK_MONOTONIC), 20);
	conf_err("WAIT_BITSET monotonic deadline",
	    fxerr(fx(&w, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 5, &abs, NULL,
		FUTEX_BITSET_MATCH_ANY)),
	    ETIMEDOUT);
	abs = conf_ts_add(conf_now(CLOCK_REALTIME), 20);
	conf_err("WAIT_BITSET realtime deadline",
	    fxerr(fx(&w, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 5, &abs,
		NULL, FUTEX_BITSET_MATCH_ANY)),
	    ETIMEDOUT);
	abs = conf_ts_add(conf_now(CLOCK_MONOTONIC), -1000);
	conf_err("WAIT_BITSET past deadline",
	    fxerr(fx(&w, FUTEX_WAIT_BITSET, 5, &abs, NULL, 1)), ETIMEDOUT);
	conf_err("WAIT_BITSET past deadline, other value",
	    fxerr(fx(&w, FUTEX_WAIT_BITSET, 4, &abs, NULL, 1)), EAGAIN);
	conf_err("WAIT_BITSET bitset 0",
	    fxerr(fx(&w, FUTEX_WAIT_BITSET, 5, NULL, NULL, 0)), EINVAL);
	conf_err("WAKE_BITSET bitset 0",
	    fxerr(fx(&w, FUTEX_WAKE_BITSET, 1, NULL, NULL, 0)), EINVAL);
	conf_err("WAIT bad timespec",
	    fxerr(fx(&w, FUTEX_WAIT, 5, &bad, NULL, 0)), EINVAL);
	conf_err("WAKE with REALTIME flag",
	    fxerr(fx(&w, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, NULL, 0)),
	    ENOSYS);
	conf_err("WAIT misaligned",
	    fxerr(fx((atomic_uint *)((char *)&w + 1), FUTEX_WAIT, 5, NULL, NULL,
		0)),
	    EINVAL);
	conf_long("WAKE nobody", fx(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0),
	    0);
	conf_ok("getpid passes through", syscall(SYS_getpid) == getpid());
}

/* 16 waiters (more than workers), woken 3, then 13. */
static void
wake_counts(void)
{
	enum {
		N = 16
	};
	static struct wt ws[N];
	pthread_t t[N];
	atomic_uint word = 0;
	atomic_int arrived = 0, woken = 0;

	for (int i = 0; i < N; i++) {
		ws[i] = (struct wt){&word, FUTEX_BITSET_MATCH_ANY, &arrived,
		    &woken, 0};
		conf_create(&t[i], NULL, waiter, &ws[i]);
	}
	until_eq(&arrived, N);
	conf_long("wake 3 of 16", wake_n(&word, FUTEX_WAKE_PRIVATE, 3, 0), 3);
	until_eq(&woken, 3);
	conf_long("woken after 3", atomic_load(&woken), 3);
	conf_long("wake 13 more", wake_n(&word, FUTEX_WAKE_PRIVATE, 13, 0), 13);
	for (int i = 0; i < N; i++)
		conf_join(t[i]);
	conf_long("woken in all", atomic_load(&woken), N);
}

static void
bitsets(void)
{
	struct wt ws[2];
	pthread_t t[2];
	atomic_uint word = 0;
	atomic_int arrived = 0, woken = 0;

	for (int i = 0; i < 2; i++) {
		ws[i] = (struct wt){&word, 1u << i, &arrived, &woken, 0};
		conf_create(&t[i], NULL, waiter, &ws[i]);
	}
	until_eq(&arrived, 2);
	conf_long("WAKE_BITSET 2",
	    wake_n(&word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, 2), 1);
	conf_join(t[1]);
	conf_long("bitset 2 woke, bitset 1 did not",
	    ws[1].me_woken * 10 + ws[0].me_woken, 10);
	conf_long("WAKE_BITSET 1",
	    wake_n(&word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, 1, 1), 1);
	conf_join(t[0]);
}

/* 4 waiters on a: requeue 2 to b one at a time, wake 1 on a, then b's 2,
 * then a's last: each wake reaches only where they wait. */
static void
requeue(void)
{
	enum {
		N = 4
	};
	struct wt ws[N];
	pthread_t t[N];
	atomic_uint a = 0, b = 0;
	atomic_int arrived = 0, woken = 0;
	long moved = 0, r;

	for (int i = 0; i < N; i++) {
		ws[i] = (struct wt){&a, FUTEX_BITSET_MATCH_ANY, &arrived,
		    &woken, 0};
		conf_create(&t[i], NULL, waiter, &ws[i]);
	}
	until_eq(&arrived, N);
	conf_err("CMP_REQUEUE on a changed value",
	    fxerr(fx(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)1L, &b, 7)),
	    EAGAIN);
	conf_err("CMP_REQUEUE negative count",
	    fxerr(fx(&a, FUTEX_CMP_REQUEUE_PRIVATE, (uint32_t)-1, (void *)1L,
		&b, 0)),
	    EINVAL);
	while (moved < 1) {
		r = fx(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)1L, &b, 0);
		moved += r > 0 ? r : 0;
		if (r <= 0)
			usleep(1000);
	}
	while (moved < 2) {
		r = fx(&a, FUTEX_REQUEUE_PRIVATE, 0, (void *)1L, &b, 0);
		moved += r > 0 ? r : 0;
		if (r <= 0)
			usleep(1000);
	}
	conf_long("requeued to b", moved, 2);
	conf_long("wake 1 on a", wake_n(&a, FUTEX_WAKE_PRIVATE, 1, 0), 1);
	until_eq(&woken, 1);
	conf_long("wake 2 on b", wake_n(&b, FUTEX_WAKE_PRIVATE, 2, 0), 2);
	until_eq(&woken, 3);
	conf_long("nothing left on b",
	    fx(&b, FUTEX_WAKE_PRIVATE, 9, NULL, NULL, 0), 0);
	conf_long("wake the last on a", wake_n(&a, FUTEX_WAKE_PRIVATE, 1, 0),
	    1);
	for (int i = 0; i < N; i++)
		conf_join(t[i]);
	conf_long("woken in all", atomic_load(&woken), N);
}

static void
wake_op(void)
{
	struct wt ws[2];
	pthread_t t[2];
	atomic_uint a = 0, b = 5;
	atomic_int arrived = 0, woken = 0;
	long r;

	conf_long("WAKE_OP add, none waiting",
	    fx(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b,
		FUTEX_OP(FUTEX_OP_ADD, 3, FUTEX_OP_CMP_EQ, 5)),
	    0);
	conf_long("b after add 3", atomic_load(&b), 8);
	fx(&a, FUTEX_WAKE_OP, 1, (void *)1L, &b,
	    FUTEX_OP(FUTEX_OP_OR, 0x10, FUTEX_OP_CMP_EQ, 0));
	conf_long("b after or 0x10", atomic_load(&b), 0x18);
	fx(&a, FUTEX_WAKE_OP, 1, (void *)1L, &b,
	    FUTEX_OP(FUTEX_OP_ANDN, 8, FUTEX_OP_CMP_EQ, 0));
	conf_long("b after andn 8", atomic_load(&b), 0x10);
	fx(&a, FUTEX_WAKE_OP, 1, (void *)1L, &b,
	    FUTEX_OP(FUTEX_OP_XOR, 0x11, FUTEX_OP_CMP_EQ, 0));
	conf_long("b after xor 0x11", atomic_load(&b), 1);
	fx(&a, FUTEX_WAKE_OP, 1, (void *)1L, &b,
	    FUTEX_OP((FUTEX_OP_SET | FUTEX_OP_OPARG_SHIFT), 4, FUTEX_OP_CMP_EQ,
		0));
	conf_long("b after set 1<<4", atomic_load(&b), 16);
	conf_err("WAKE_OP bad op",
	    fxerr(fx(&a, FUTEX_WAKE_OP, 1, (void *)1L, &b, 7u << 28)), ENOSYS);

	/* One waiter on a, one on b (b is 0 while it waits). */
	atomic_store(&b, 0);
	ws[0] = (struct wt){&a, FUTEX_BITSET_MATCH_ANY, &arrived, &woken, 0};
	ws[1] = (struct wt){&b, FUTEX_BITSET_MATCH_ANY, &arrived, &woken, 0};
	for (int i = 0; i < 2; i++)
		conf_create(&t[i], NULL, waiter, &ws[i]);
	until_eq(&arrived, 2);
	/* Setting b to 0 again; old 0 < 0 is false: b's waiter stays. */
	r = 0;
	while (r < 1) {
		long k = fx(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b,
		    FUTEX_OP(FUTEX_OP_SET, 0, FUTEX_OP_CMP_LT, 0));

		r += k > 0 ? k : 0;
		if (k <= 0)
			usleep(1000);
	}
	conf_long("WAKE_OP, comparison false", r, 1);
	conf_join(t[0]);
	conf_long("b's waiter still waits", ws[1].me_woken, 0);
	r = 0;
	while (r < 1) {
		long k = fx(&a, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1L, &b,
		    FUTEX_OP(FUTEX_OP_SET, 0, FUTEX_OP_CMP_EQ, 0));

		r += k > 0 ? k : 0;
		if (k <= 0)
			usleep(1000);
	}
	conf_long("WAKE_OP, comparison true", r, 1);
	conf_join(t[1]);
	conf_long("woken in all", atomic_load(&woken), 2);
}

/* Ping-pong on one word with a futex wait and wake on each turn: a wake
 * lost after the change would stop both. */
#define ROUNDS 20000
static atomic_uint turn;

static void *
player(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg, v;

	for (unsigned i = 0; i < ROUNDS; i++) {
		while ((v = atomic_load(&turn)) % 2 != me)
			fx(&turn, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
		if ((i * 7 + me) % 13 == 0)
			sched_yield();
		atomic_fetch_add(&turn, 1);
		fx(&turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return (NULL);
}

static void
ping_pong(void)
{
	pthread_t t[2];

	for (uintptr_t i = 0; i < 2; i++)
		conf_create(&t[i], NULL, player, (void *)i);
	for (int i = 0; i < 2; i++)
		conf_join(t[i]);
	conf_long("ping-pong turns", atomic_load(&turn), 2 * ROUNDS);
}

/* A thread ult does not run: a SIGEV_THREAD timer's.  It wakes a waiting
 * thread, then waits itself (in the kernel) for a thread's wake. */
static atomic_uint to_main, to_helper;
static atomic_int helper_saw;

static void
helper(union sigval sv)
{
	(void)sv;
	atomic_store(&to_main, 1);
	fx(&to_main, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	while (atomic_load(&to_helper) == 0)
		fx(&to_helper, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	atomic_store(&helper_saw, 1);
	fx(&to_main, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
foreign(void)
{
	struct sigevent sev;
	struct itimerspec its = {{0, 0}, {0, 10000000}};
	timer_t tm;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD;
	sev.sigev_notify_function = helper;
	conf_must("timer_create", timer_create(CLOCK_MONOTONIC, &sev, &tm));
	conf_must("timer_settime", timer_settime(tm, 0, &its, NULL));
	while (atomic_load(&to_main) == 0)
		fx(&to_main, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	conf_ok("woken by a foreign thread", 1);
	/* The helper waits in the kernel: wake until it has seen it. */
	atomic_store(&to_helper, 1);
	while (atomic_load(&helper_saw) == 0) {
		fx(&to_helper, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		usleep(1000);
	}
	conf_ok("a foreign waiter woken", 1);
	timer_delete(tm);
}

/* A wake by an inline system call, which no library sees: the waiter
 * still ends once the word has changed. */
static long
raw_wake(atomic_uint *a)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = 0;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long)SYS_futex), "D"(a),
			 "S"((long)FUTEX_WAKE_PRIVATE), "d"(1L), "r"(r10)
			 : "rcx", "r11", "memory");
	return (r);
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_futex;
	register long x0 __asm__("x0") = (long)a;
	register long x1 __asm__("x1") = FUTEX_WAKE_PRIVATE;
	register long x2 __asm__("x2") = 1;
	register long x3 __asm__("x3") = 0;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			 : "memory");
	return (x0);
#else
#error "an inline futex wake for this architecture"
#endif
}

static void
inline_wake(void)
{
	struct wt w;
	pthread_t t;
	atomic_uint word = 0;
	atomic_int arrived = 0, woken = 0;

	w = (struct wt){&word, FUTEX_BITSET_MATCH_ANY, &arrived, &woken, 0};
	conf_create(&t, NULL, waiter, &w);
	until_eq(&arrived, 1);
	usleep(5000);
	atomic_store(&word, 1);
	raw_wake(&word);
	conf_join(t);
	conf_ok("waiter ended after an inline wake", 1);
}

int
main(void)
{
	conf_begin("futex");
	errors_and_timeouts();
	wake_counts();
	bitsets();
	requeue();
	wake_op();
	ping_pong();
	foreign();
	inline_wake();
	return (conf_end());
}
