/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-uthread TLS (DESIGN.md section 10): errno, __thread variables and
 * libc's per-thread state belong to the uthread wherever it runs.  Every
 * test runs under ult.chaos_migrate, which moves a uthread to the next
 * worker at each of its voluntary switches, on 2 and then 4 workers, and
 * writes what it checks plainly (errno = x; ult_yield(); errno == x), as
 * a program would.  Each of them fails with ULT_TLS=worker, where
 * uthreads share their worker's TLS (run one by hand that way to see it);
 * where per-uthread TLS is not available they skip.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <locale.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_test.h"
#include "rt_tls.h"

static const int tls_workers[] = {2, 4};
#define NRUNS ((int)(sizeof(tls_workers) / sizeof(tls_workers[0])))

/* ---- errno across every kind of voluntary switch ---- */

#define ERR_THREADS 16
#define ERR_ROUNDS (200 / TEST_SCALE)

static ult_mutex_t err_m = ULT_MUTEX_INITIALIZER;
static ult_cond_t err_c = ULT_COND_INITIALIZER;
static int err_turn;
static atomic_long err_bad, err_moves;

static void *
errno_body(void *arg)
{
	int id = (int)(intptr_t)arg, base = 1000 + 10 * id, *kept = &errno;

	for (int i = 0; i < ERR_ROUNDS; i++) {
		errno = base;
		ult_yield();
		if (errno != base || *kept != base)
			atomic_fetch_add(&err_bad, 1);
		/* A contended mutex: its holder yields while it holds it. */
		errno = base + 1;
		ult_mutex_lock(&err_m);
		if (errno != base + 1)
			atomic_fetch_add(&err_bad, 1);
		errno = base + 2;
		ult_yield();
		ult_mutex_unlock(&err_m);
		if (errno != base + 2)
			atomic_fetch_add(&err_bad, 1);
		/* A condition variable: the threads take turns. */
		ult_mutex_lock(&err_m);
		errno = base + 3;
		while (err_turn % ERR_THREADS != id)
			ult_cond_wait(&err_c, &err_m);
		if (errno != base + 3)
			atomic_fetch_add(&err_bad, 1);
		err_turn++;
		ult_cond_broadcast(&err_c);
		ult_mutex_unlock(&err_m);
		errno = base + 4;
		ult_sleep_ns(1000);
		if (errno != base + 4 || *kept != base + 4)
			atomic_fetch_add(&err_bad, 1);
	}
	atomic_fetch_add(&err_moves, (long)rt_info(NULL).nmigrations);
	return (NULL);
}

void
test_tls_errno(void)
{
	for (int r = 0; r < NRUNS; r++) {
		tls_begin(tls_workers[r]);
		atomic_store(&err_bad, 0);
		atomic_store(&err_moves, 0);
		err_turn = 0;
		tls_spawn_join(ERR_THREADS, errno_body);
		fprintf(stderr, "%d workers: %ld migrations, %ld bad errno\n",
		    tls_workers[r], atomic_load(&err_moves),
		    atomic_load(&err_bad));
		CHECK(atomic_load(&err_moves) >= ERR_THREADS * ERR_ROUNDS);
		CHECK_EQ(atomic_load(&err_bad), 0);
		tls_end();
	}
}

/* ---- __thread variables ---- */

#define CTR_THREADS 24
#define CTR_ROUNDS (300 / TEST_SCALE)

static __thread long tl_counter;
static __thread long tl_seven = 7;
static __thread char tl_name[32];
static atomic_long ctr_bad;

static void *
counter_body(void *arg)
{
	int id = (int)(intptr_t)arg;
	long *kept = &tl_counter;
	char want[32];

	/* A new uthread starts from the images, whoever ran before. */
	if (tl_seven != 7 || tl_counter != 0 || tl_name[0] != '\0')
		atomic_fetch_add(&ctr_bad, 1);
	tl_seven = id;
	snprintf(want, sizeof(want), "uthread %d", id);
	snprintf(tl_name, sizeof(tl_name), "%s", want);
	for (int i = 0; i < CTR_ROUNDS; i++) {
		tl_counter++;
		ult_yield();
		if (*kept != i + 1 || tl_seven != id ||
		    strcmp(tl_name, want) != 0)
			atomic_fetch_add(&ctr_bad, 1);
	}
	if (tl_counter != CTR_ROUNDS)
		atomic_fetch_add(&ctr_bad, 1);
	return (NULL);
}

static void *
counter_rounds(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++)
		tls_spawn_join(CTR_THREADS, counter_body);
	return (NULL);
}

void
test_tls_thread_vars(void)
{
	ult_thread_t *t;

	for (int r = 0; r < NRUNS; r++) {
		tls_begin(tls_workers[r]);
		atomic_store(&ctr_bad, 0);
		tls_spawn_join(CTR_THREADS, counter_body);
		/* From a uthread, twice: spawns there take the blocks its
		 * worker has just got back, reset. */
		CHECK_EQ(ult_spawn(&t, NULL, counter_rounds, NULL), 0);
		CHECK_EQ(ult_join(t, NULL), 0);
		CHECK_EQ(atomic_load(&ctr_bad), 0);
		tls_end();
	}
}

/*
 * ---- libc's per-thread state ----
 * What glibc really keeps per thread: the locale of uselocale, the
 * buffers of strerror and strsignal for unknown numbers and of
 * inet_ntoa, the dlerror message, pthread keys.  (strtok, rand and
 * friends are plain statics in glibc, shared by every thread.)
 */

#define LIBC_THREADS 16
#define LIBC_ROUNDS (100 / TEST_SCALE)

static pthread_key_t libc_key;
static atomic_int libc_key_dtors;
static atomic_long libc_bad;
static locale_t loc_utf8, loc_c;

static void
libc_key_dtor(void *v)
{
	(void)v;
	atomic_fetch_add(&libc_key_dtors, 1);
}

static void
libc_check(int ok)
{
	if (!ok)
		atomic_fetch_add(&libc_bad, 1);
}

static void *
libc_body(void *arg)
{
	int id = (int)(intptr_t)arg, slot;
	char want_err[64], want_sig[64], want_ip[32], path[64];
	const char *err, *sig, *ip, *msg;
	struct in_addr a;
	size_t mbmax = id % 2 ? 6 : 1;

	uselocale(id % 2 ? loc_utf8 : loc_c);
	CHECK_EQ(pthread_setspecific(libc_key, &slot), 0);
	snprintf(want_err, sizeof(want_err), "Unknown error %d", 5000 + id);
	snprintf(want_sig, sizeof(want_sig), "Unknown signal %d", 200 + id);
	a.s_addr = htonl(0x0a000000u + (unsigned)id);
	snprintf(want_ip, sizeof(want_ip), "10.0.0.%d", id);
	snprintf(path, sizeof(path), "/nonexistent/ult-tls-%d.so", id);
	for (int i = 0; i < LIBC_ROUNDS; i++) {
		err = strerror(5000 + id);
		sig = strsignal(200 + id);
		ip = inet_ntoa(a);
		libc_check(dlopen(path, RTLD_NOW) == NULL);
		ult_yield();
		libc_check(MB_CUR_MAX == mbmax);
		libc_check(strcmp(err, want_err) == 0);
		libc_check(strcmp(sig, want_sig) == 0);
		libc_check(strcmp(ip, want_ip) == 0);
		libc_check(pthread_getspecific(libc_key) == &slot);
		msg = dlerror();
		libc_check(msg != NULL && strstr(msg, path) != NULL);
		ult_yield();
	}
	uselocale(LC_GLOBAL_LOCALE);
	return (NULL);
}

void
test_tls_libc_state(void)
{
	loc_utf8 = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	loc_c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	CHECK(loc_utf8 != (locale_t)0 && loc_c != (locale_t)0);
	CHECK_EQ(pthread_key_create(&libc_key, libc_key_dtor), 0);
	for (int r = 0; r < NRUNS; r++) {
		tls_begin(tls_workers[r]);
		atomic_store(&libc_bad, 0);
		atomic_store(&libc_key_dtors, 0);
		tls_spawn_join(LIBC_THREADS, libc_body);
		fprintf(stderr, "%d workers: %ld bad, %d key destructors\n",
		    tls_workers[r], atomic_load(&libc_bad),
		    atomic_load(&libc_key_dtors));
		CHECK_EQ(atomic_load(&libc_bad), 0);
		/* Run at each uthread's exit, not at its worker's. */
		CHECK_EQ(atomic_load(&libc_key_dtors), LIBC_THREADS);
		tls_end();
	}
	pthread_key_delete(libc_key);
	freelocale(loc_utf8);
	freelocale(loc_c);
}

/*
 * ---- stdio ----
 * Many uthreads write records to one FILE, each record in two pieces
 * under ftrylockfile, with a yield in between: a FILE lock is owned by a
 * thread (THREAD_SELF) and recursive, so with shared TLS another uthread
 * that runs on the owner's worker "gets" the lock and writes into the
 * middle of the record.  Every lock is taken with trylock: a uthread that
 * blocked on a FILE lock would block its whole worker.
 */

#define IO_THREADS 16
#define IO_RECORDS (40 / TEST_SCALE)

static FILE *io_file;

static void
io_lock(void)
{
	while (ftrylockfile(io_file) != 0)
		ult_yield();
}

static void *
stdio_body(void *arg)
{
	int id = (int)(intptr_t)arg;
	char buf[64];

	for (int i = 0; i < IO_RECORDS; i++) {
		io_lock();
		snprintf(buf, sizeof(buf), "<%d:%d", id, i);
		fputs_unlocked(buf, io_file);
		ult_yield();
		snprintf(buf, sizeof(buf), ":%d:%d>\n", id, i);
		fputs_unlocked(buf, io_file);
		funlockfile(io_file);
		/* fprintf locks again, recursively. */
		io_lock();
		fprintf(io_file, "line %d %d\n", id, i);
		funlockfile(io_file);
		ult_yield();
	}
	return (NULL);
}

void
test_tls_stdio(void)
{
	int seen[IO_THREADS][2], bad = 0;
	char line[128];

	for (int r = 0; r < NRUNS; r++) {
		tls_begin(tls_workers[r]);
		CHECK((io_file = tmpfile()) != NULL);
		tls_spawn_join(IO_THREADS, stdio_body);
		tls_end();
		/* Shared TLS also loses count of the recursion, leaving the
		 * FILE locked (a lock would hang here). */
		CHECK_EQ(ftrylockfile(io_file), 0);
		funlockfile(io_file);
		memset(seen, 0, sizeof(seen));
		rewind(io_file);
		while (fgets(line, sizeof(line), io_file) != NULL) {
			int a, b, c, d;
			char end;

			if (sscanf(line, "<%d:%d:%d:%d%c", &a, &b, &c, &d,
				&end) == 5 &&
			    end == '>' && a == c && b == d && a >= 0 &&
			    a < IO_THREADS)
				seen[a][0]++;
			else if (sscanf(line, "line %d %d", &a, &b) == 2 &&
			    a >= 0 && a < IO_THREADS)
				seen[a][1]++;
			else
				bad++;
		}
		fclose(io_file);
		fprintf(stderr, "%d workers: %d torn lines\n", tls_workers[r],
		    bad);
		CHECK_EQ(bad, 0);
		for (int i = 0; i < IO_THREADS; i++) {
			CHECK_EQ(seen[i][0], IO_RECORDS);
			CHECK_EQ(seen[i][1], IO_RECORDS);
		}
	}
}

/*
 * ---- fork and exec from a uthread ----
 * The child's only thread runs on the block of the uthread that forked,
 * so it sees that uthread's TLS; it must be able to allocate and exec.
 */

#define FORK_THREADS 4

static __thread int fk_value;
static atomic_int fk_ok;

static void *
fork_body(void *arg)
{
	int id = (int)(intptr_t)arg, st;
	pid_t p;

	fk_value = 100 + id;
	errno = 200 + id;
	for (int i = 0; i < 8; i++)
		ult_yield(); /* the others set theirs meanwhile */
	p = fork();
	if (p == 0) {
		char *m = malloc(1000);

		if (fk_value != 100 + id || errno != 200 + id || m == NULL ||
		    gettid() != getpid() || ult_self() != NULL)
			_exit(1);
		free(m);
		execl("/bin/sh", "sh", "-c", "exit 3", (char *)NULL);
		_exit(2);
	}
	if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 3 && fk_value == 100 + id)
		atomic_fetch_add(&fk_ok, 1);
	return (NULL);
}

void
test_tls_fork_exec(void)
{
	for (int r = 0; r < NRUNS; r++) {
		tls_begin(tls_workers[r]);
		atomic_store(&fk_ok, 0);
		fflush(NULL);
		tls_spawn_join(FORK_THREADS, fork_body);
		CHECK_EQ(atomic_load(&fk_ok), FORK_THREADS);
		tls_end();
	}
}

/*
 * ---- a library with thread-local data, loaded after uthreads exist ----
 * Its TLS is allocated in each thread block when first touched and freed
 * when the uthread dies.
 */

#define DSO_THREADS 8
#define DSO_CHURN (20000 / TEST_SCALE)

static ult_barrier_t dso_bar;
static int *(*dso_value)(void);
static char *(*dso_buf)(void);
static atomic_long dso_bad;

static void *
dso_body(void *arg)
{
	int id = (int)(intptr_t)arg;
	char want[32];

	ult_barrier_wait(&dso_bar); /* the library is loaded meanwhile */
	if (*dso_value() != 5)
		atomic_fetch_add(&dso_bad, 1);
	*dso_value() = id;
	snprintf(want, sizeof(want), "dso %d", id);
	snprintf(dso_buf(), 32, "%s", want);
	for (int i = 0; i < 50; i++) {
		ult_yield();
		if (*dso_value() != id || strcmp(dso_buf(), want) != 0)
			atomic_fetch_add(&dso_bad, 1);
	}
	return (NULL);
}

/* A new uthread's instance is new: the image, and zero. */
static void *
dso_touch(void *arg)
{
	if (*dso_value() != 5 || dso_buf()[0] != 0)
		atomic_fetch_add(&dso_bad, 1);
	*dso_value() = 6;
	dso_buf()[0] = 1;
	return (arg);
}

static void *
dso_churn(void *arg)
{
	for (long i = 0; i < DSO_CHURN; i++) {
		ult_thread_t *t;

		CHECK_EQ(ult_spawn(&t, NULL, dso_touch, NULL), 0);
		CHECK_EQ(ult_join(t, NULL), 0);
	}
	return (arg);
}

/* is_static: the library's TLS must have come from the static surplus
 * (TLS descriptors), which glibc initialises only in its own threads. */
static void
tls_dlopen(const char *path, int is_static)
{
	ult_thread_t *t[DSO_THREADS];
	size_t before, after;
	void *h;

	tls_begin(2);
	CHECK_EQ(ult_barrier_init(&dso_bar, DSO_THREADS + 1), 0);
	for (intptr_t i = 0; i < DSO_THREADS; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, dso_body, (void *)i), 0);
	h = dlopen(path, RTLD_NOW);
	if (h == NULL)
		fprintf(stderr, "dlopen: %s\n", dlerror());
	CHECK(h != NULL);
	*(void **)&dso_value = dlsym(h, "tls_dso_value_addr");
	*(void **)&dso_buf = dlsym(h, "tls_dso_buf_addr");
	CHECK(dso_value != NULL && dso_buf != NULL);
	if (is_static) {
		/* Within this thread's block: below the thread pointer
		 * (x86-64, TLS variant II) or above it (AArch64, variant I). */
		uintptr_t tp = (uintptr_t)__builtin_thread_pointer(),
			  v = (uintptr_t)dso_value();

#if defined(__aarch64__)
		CHECK(v > tp && v - tp < 65536);
#else
		CHECK(v < tp && tp - v < 65536);
#endif
	}
	*dso_value() = 99; /* this thread's own instance */
	ult_barrier_wait(&dso_bar);
	for (int i = 0; i < DSO_THREADS; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&dso_bad), 0);
	CHECK_EQ(*dso_value(), 99);
	/*
	 * Each uthread's 4 KiB of the library's TLS goes with it: kept, 20,000
	 * uthreads would keep 80 MiB.  The pools may still grow meanwhile, up
	 * to 64 thread blocks per worker.
	 */
	CHECK_EQ(ult_spawn(&t[0], NULL, dso_churn, NULL), 0);
	CHECK_EQ(ult_join(t[0], NULL), 0);
	before = mallinfo2().uordblks;
	CHECK_EQ(ult_spawn(&t[0], NULL, dso_churn, NULL), 0);
	CHECK_EQ(ult_join(t[0], NULL), 0);
	after = mallinfo2().uordblks;
	fprintf(stderr, "malloc in use %zu -> %zu bytes over %d uthreads\n",
	    before, after, DSO_CHURN);
	CHECK_EQ(atomic_load(&dso_bad), 0);
	CHECK(after < before + (size_t)DSO_CHURN * 4096 / 20);
	ult_barrier_destroy(&dso_bar);
	tls_end();
	dlclose(h);
}

void
test_tls_dlopen(void)
{
	tls_dlopen(ULT_TEST_TLS_DSO, 0);
}

void
test_tls_dlopen_static(void)
{
	tls_dlopen(ULT_TEST_TLS_DESC_DSO, 1);
}
