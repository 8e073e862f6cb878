/* SPDX-License-Identifier: BSD-2-Clause */
// Boost.Fiber peer for the ult benchmark suite (runtime name "boost").
//
// Measures the cases of the suite contract with Boost.Fiber on ONE kernel
// thread (the default round_robin scheduler; no work_stealing): micro
// (yield, create_join, mutex_handoff, condvar_prodcons, skynet, skynet_10k,
// thread_ring), make (the mkdag DAG, -j4 and -j16, a fiber per task) and
// latency hogs=0 (hogs=N is skipped: fibers are cooperative, a spinning hog
// never gives the thread back).
//
// Usage: boost-peer [--quick] [--data DIR] [--exp micro|make|latency|all]
//
// stdout carries only "R<TAB>exp<TAB>case<TAB>boost<TAB>metric<TAB>value"
// lines; explanations go to stderr.  Every case checks its result and the
// program exits 1 on a failed check.
//
// Build: g++ -O2 -std=c++17 fiber.cpp -lboost_fiber -lboost_context -lpthread
#include <boost/fiber/all.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace bf = boost::fibers;
using clk = std::chrono::steady_clock;

static const char *const rt_name = "boost";
static bool quick;
static int rounds = 5;
static std::string data_dir;

static void
logf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

[[noreturn]] static void
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("boost peer: FAILED: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

// One contract line; whole numbers print without decimals.
static void
result(const char *exp, const std::string &cs, const char *metric, double v)
{
	if (v == std::trunc(v) && std::fabs(v) < 1e15)
		printf("R\t%s\t%s\t%s\t%s\t%.0f\n", exp, cs.c_str(), rt_name,
		    metric, v);
	else
		printf("R\t%s\t%s\t%s\t%s\t%.3f\n", exp, cs.c_str(), rt_name,
		    metric, v);
	fflush(stdout);
}

static double
ns_since(clk::time_point t0)
{
	return (
	    std::chrono::duration<double, std::nano>(clk::now() - t0).count());
}

static double
median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return (v[v.size() / 2]);
}

static double
median_of(const std::function<double()> &f)
{
	std::vector<double> v;

	for (int i = 0; i < rounds; i++)
		v.push_back(f());
	return (median(v));
}

// ---- calibrated busy work ----

static volatile uint64_t sink = 1;
static double iters_per_us;

// A dependent multiply-add chain; the empty asm keeps it from being folded.
static void
spin(int64_t iters)
{
	uint64_t x = sink | 1;

	for (int64_t i = 0; i < iters; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

// Fastest of several trials: a shared machine can only slow a trial down.
static void
calibrate(void)
{
	const int64_t n = 2000000;
	double best = 0;

	if (iters_per_us > 0)
		return;
	spin(n);
	for (int i = 0; i < 7; i++) {
		clk::time_point t0 = clk::now();
		spin(n);
		double r = (double)n / (ns_since(t0) / 1e3);
		best = std::max(best, r);
	}
	iters_per_us = best;
	logf("busy loop: %.1f iterations/us (fastest of 7 trials)", best);
}

static void
busy_us(double us)
{
	spin((int64_t)(us * iters_per_us));
}

// ---- micro ----

static double
yield_round(long n)
{
	clk::time_point t0 = clk::now();
	auto body = [n] {
		for (long i = 0; i < n; i++)
			boost::this_fiber::yield();
	};
	bf::fiber a(body), b(body);

	a.join();
	b.join();
	return (ns_since(t0) / (2.0 * (double)n));
}

static void
empty_fn()
{}

static double
create_join_round(long n)
{
	clk::time_point t0 = clk::now();

	for (long i = 0; i < n; i++) {
		bf::fiber f(empty_fn);
		f.join();
	}
	return (ns_since(t0) / (double)n);
}

static double
mutex_handoff_round(long n)
{
	bf::mutex mu;
	bf::condition_variable cv;
	int turn = 0;
	clk::time_point t0 = clk::now();
	auto body = [&](int me) {
		for (long i = 0; i < n / 2; i++) {
			std::unique_lock<bf::mutex> lk(mu);
			while (turn != me)
				cv.wait(lk);
			turn = 1 - me;
			cv.notify_one();
		}
	};
	bf::fiber a(body, 0), b(body, 1);

	a.join();
	b.join();
	double ns = ns_since(t0);
	if (turn != 0)
		fail("mutex_handoff: turn %d after %ld handoffs", turn, n);
	return (ns / (double)(n / 2 * 2));
}

static double
condvar_prodcons_round(long n)
{
	constexpr int QSLOTS = 64;
	bf::mutex mu;
	bf::condition_variable not_full, not_empty;
	int64_t buf[QSLOTS];
	int head = 0, tail = 0, count = 0;
	int64_t sum = 0;
	clk::time_point t0 = clk::now();
	bf::fiber prod([&] {
		for (long i = 0; i < n; i++) {
			std::unique_lock<bf::mutex> lk(mu);
			while (count == QSLOTS)
				not_full.wait(lk);
			buf[tail] = i;
			tail = (tail + 1) % QSLOTS;
			count++;
			not_empty.notify_one();
		}
	});
	bf::fiber cons([&] {
		int64_t s = 0;
		for (long i = 0; i < n; i++) {
			int64_t v;
			{
				std::unique_lock<bf::mutex> lk(mu);
				while (count == 0)
					not_empty.wait(lk);
				v = buf[head];
				head = (head + 1) % QSLOTS;
				count--;
				not_full.notify_one();
			}
			s += v;
		}
		sum = s;
	});

	prod.join();
	cons.join();
	double ns = ns_since(t0);
	int64_t want = (int64_t)n * (n - 1) / 2;
	if (sum != want)
		fail("condvar_prodcons: sum %" PRId64 ", want %" PRId64, sum,
		    want);
	return (ns / (double)n);
}

// skynet in the shape of Boost's own performance/fiber/skynet_join.cpp: a
// fiber per node on an 8 KiB fixedsize_stack, launch::dispatch (the child
// runs at once), parents join their 10 children.  With the default
// launch::post and 128 KiB stacks the FIFO ready queue keeps every node
// alive at once.  Either way Boost frees a finished fiber only when its
// dispatcher fiber next runs, so RSS still grows with the tree.
static bf::fixedsize_stack sky_stack(
    2 * boost::context::stack_traits::page_size());

static void
skynet(uint64_t &out, uint64_t num, uint64_t size)
{
	if (size == 1) {
		out = num;
		return;
	}
	uint64_t r[10];
	bf::fiber f[10];
	uint64_t sum = 0;

	for (int i = 0; i < 10; i++)
		f[i] = bf::fiber(bf::launch::dispatch, std::allocator_arg,
		    sky_stack, skynet, std::ref(r[i]),
		    num + (uint64_t)i * (size / 10), size / 10);
	for (int i = 0; i < 10; i++) {
		f[i].join();
		sum += r[i];
	}
	out = sum;
}

// Each round runs in a forked child so that ru_maxrss is that of a process
// doing only skynet (plus the pages it shares with the parent at fork).
static void
skynet_round(uint64_t leaves, double *ms, long *rss_kib)
{
	int fds[2], status;
	struct rusage ru;
	char buf[128];
	ssize_t got = 0, k;

	if (pipe(fds) != 0)
		fail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		uint64_t sum = 0;
		clk::time_point t0 = clk::now();
		bf::fiber root(std::allocator_arg, sky_stack, skynet,
		    std::ref(sum), (uint64_t)0, leaves);

		root.join();
		int len = snprintf(buf, sizeof(buf), "%.3f %" PRIu64 "\n",
		    ns_since(t0) / 1e6, sum);
		if (write(fds[1], buf, (size_t)len) != len)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	while ((k = read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += k;
	buf[got] = '\0';
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fail("skynet child failed");
	uint64_t sum;
	if (sscanf(buf, "%lf %" SCNu64, ms, &sum) != 2)
		fail("skynet child output '%s'", buf);
	if (sum != leaves * (leaves - 1) / 2)
		fail("skynet %" PRIu64 ": sum %" PRIu64 ", want %" PRIu64,
		    leaves, sum, leaves * (leaves - 1) / 2);
	*rss_kib = ru.ru_maxrss;
}

static void
bench_skynet(const char *cs, uint64_t leaves)
{
	std::vector<double> ms;
	long maxrss = 0;

	for (int i = 0; i < rounds; i++) {
		double m;
		long rss;

		skynet_round(leaves, &m, &rss);
		ms.push_back(m);
		maxrss = std::max(maxrss, rss);
	}
	result("micro", cs, "ms", median(ms));
	result("micro", cs, "peak_rss_MiB", (double)maxrss / 1024.0);
}

static constexpr int RING = 503;

static double
thread_ring_round(long n, int *res)
{
	std::vector<bf::unbuffered_channel<long> *> ch;
	bf::buffered_channel<int> done(2);
	std::vector<bf::fiber> fs;

	for (int i = 0; i < RING; i++)
		ch.push_back(new bf::unbuffered_channel<long>());
	for (int i = 0; i < RING; i++)
		fs.emplace_back([&, i] {
			long t;
			while (
			    ch[i]->pop(t) == bf::channel_op_status::success) {
				if (t == 0)
					done.push(i + 1);
				else
					ch[(i + 1) % RING]->push(t - 1);
			}
		});
	clk::time_point t0 = clk::now();
	ch[0]->push(n);
	if (done.pop(*res) != bf::channel_op_status::success)
		fail("thread_ring: no result");
	double ns = ns_since(t0);
	for (auto *c : ch)
		c->close();
	for (auto &f : fs)
		f.join();
	for (auto *c : ch)
		delete c;
	return (ns / (double)n);
}

static void
run_micro(void)
{
	long n_yield = 1000000, n_create = 100000, n_hand = 100000,
	     n_pc = 1000000, n_ring = 1000000;
	uint64_t sky = 1000000;

	if (quick) {
		n_yield = 100000;
		n_create = 10000;
		n_hand = 10000;
		n_pc = 100000;
		n_ring = 1000;
		sky = 100000;
	}
	logf("boost micro: Boost %d.%d, every case on ONE kernel thread "
	     "(round_robin scheduler, no work_stealing), default stacks "
	     "(fixedsize_stack, %zu KiB); median of %d rounds",
	    BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000,
	    boost::context::stack_traits::default_size() / 1024, rounds);

	logf("yield: 2 fibers, this_fiber::yield x %ld each", n_yield);
	result("micro", "yield", "ns/op",
	    median_of([&] { return (yield_round(n_yield)); }));

	logf("create_join: fiber(empty) + join, x %ld (after 1000 warm-up)",
	    n_create);
	create_join_round(1000);
	result("micro", "create_join", "ns/op",
	    median_of([&] { return (create_join_round(n_create)); }));

	logf("mutex_handoff: fibers::mutex + condition_variable, turn "
	     "variable, %ld handoffs",
	    n_hand);
	result("micro", "mutex_handoff", "ns/op",
	    median_of([&] { return (mutex_handoff_round(n_hand)); }));

	logf("condvar_prodcons: 64-slot queue, fibers::mutex + 2 "
	     "condition_variable, %ld items",
	    n_pc);
	result("micro", "condvar_prodcons", "ns/item",
	    median_of([&] { return (condvar_prodcons_round(n_pc)); }));

	logf("skynet: %" PRIu64 " leaves, a fiber per node joined by its "
	     "parent, launch::dispatch, 8 KiB fixedsize_stack (as Boost's own "
	     "skynet_join.cpp; finished fibers are freed only when the "
	     "dispatcher fiber runs, so RSS grows with the tree); each round "
	     "in a forked child: ms = "
	     "child's timer, peak_rss_MiB = max over rounds of the child's "
	     "ru_maxrss (includes the parent's pages present at fork)",
	    sky);
	bench_skynet("skynet", sky);
	logf("skynet_10k: 10000 leaves, same method");
	bench_skynet("skynet_10k", 10000);

	logf("thread_ring: %d fibers, unbuffered_channel each, %ld passes",
	    RING, n_ring);
	int want = (int)(n_ring % RING) + 1, got = 0;
	double ns = median_of([&] {
		double v = thread_ring_round(n_ring, &got);
		if (got != want)
			fail("thread_ring: result %d, want %d", got, want);
		return (v);
	});
	result("micro", "thread_ring", "ns/op", ns);
	result("micro", "thread_ring", "result", got);
}

// ---- make (mkdag) ----

struct splitmix64 {
	uint64_t s;
	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		return (z ^ (z >> 31));
	}
	double unit()
	{
		return ((double)(next() >> 11) * 0x1.0p-53);
	}
};

struct mtask {
	double busy;		// microseconds of calibrated busy work
	bool sleep;		// then a 50 us sleep (the "I/O")
	int ndeps;		// prerequisites
	std::vector<int> users; // tasks waiting for this one
};

struct dag {
	std::vector<mtask> depend, all;
	double crit_us = 0, work_us = 0;
};

static dag
build_dag(int D, int F)
{
	splitmix64 rng{42};
	dag g;
	int nf = D * F;
	std::vector<double> comp(nf);
	double max_dep = 0, max_dir = 0;

	for (int i = 0; i < nf; i++) {
		double dep = 50 + 150 * rng.unit();
		double u1 = rng.unit(), u2 = rng.unit();
		if (u1 <= 0)
			u1 = 0x1.0p-53;
		double z =
		    std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
		comp[i] = std::min(2000 * std::exp(z), 200000.0);
		g.depend.push_back(mtask{dep, false, 0, {}});
		max_dep = std::max(max_dep, dep);
		g.work_us += dep;
	}
	// Stage all in make order: dir d's compiles, its archive; link last.
	int link = nf + D;
	for (int d = 0; d < D; d++) {
		int arch = (int)g.all.size() + F;
		double max_c = 0;
		for (int f = 0; f < F; f++) {
			double c = comp[d * F + f];
			g.all.push_back(mtask{c, true, 0, {arch}});
			max_c = std::max(max_c, c + 50);
			g.work_us += c + 50;
		}
		g.all.push_back(mtask{1000, false, F, {link}});
		max_dir = std::max(max_dir, max_c + 1000);
		g.work_us += 1000;
	}
	g.all.push_back(mtask{5000, false, D, {}});
	g.work_us += 5000;
	g.crit_us = max_dep + max_dir + 5000;
	return (g);
}

// The make-like executor: take a job token, then start the first task in
// make order whose prerequisites are done, on a fresh (detached) fiber that
// returns its token and reports completion when it ends.
static int
execute(const std::vector<mtask> &tasks, int j)
{
	int n = (int)tasks.size(), first = 0, ran = 0, tokens = j;
	std::vector<int> ndeps(n);
	std::vector<bool> started(n, false);
	std::deque<int> done;
	bf::mutex mu;
	bf::condition_variable cv_token, cv_done;

	for (int i = 0; i < n; i++)
		ndeps[i] = tasks[i].ndeps;
	auto complete = [&](int id) {
		ran++;
		for (int u : tasks[id].users)
			ndeps[u]--;
	};
	auto pick = [&]() {
		while (first < n && started[first])
			first++;
		for (int i = first; i < n; i++)
			if (!started[i] && ndeps[i] == 0)
				return (i);
		return (-1);
	};
	std::unique_lock<bf::mutex> lk(mu);
	for (int nstarted = 0; nstarted < n; nstarted++) {
		while (tokens == 0)
			cv_token.wait(lk);
		tokens--;
		for (; !done.empty(); done.pop_front())
			complete(done.front());
		int idx;
		while ((idx = pick()) < 0) {
			while (done.empty())
				cv_done.wait(lk);
			for (; !done.empty(); done.pop_front())
				complete(done.front());
		}
		started[idx] = true;
		bf::fiber([&, idx] {
			busy_us(tasks[idx].busy);
			if (tasks[idx].sleep)
				boost::this_fiber::sleep_for(
				    std::chrono::microseconds(50));
			std::lock_guard<bf::mutex> g(mu);
			tokens++;
			done.push_back(idx);
			cv_token.notify_one();
			cv_done.notify_one();
		}).detach();
	}
	while (ran < n) {
		while (done.empty())
			cv_done.wait(lk);
		for (; !done.empty(); done.pop_front())
			complete(done.front());
	}
	return (ran);
}

static double
tv(const struct timeval &t)
{
	return ((double)t.tv_sec + (double)t.tv_usec / 1e6);
}

static void
run_make(void)
{
	int D = quick ? 8 : 50, F = quick ? 10 : 40;

	calibrate();
	dag g = build_dag(D, F);
	int ntasks = (int)(g.depend.size() + g.all.size());
	logf("make: mkdag D=%d F=%d, %d tasks (depend %zu, all %zu); total "
	     "busy+sleep work %.3f s, serial critical path %.3f s; a fiber "
	     "per task on ONE kernel thread (round_robin), a fiber "
	     "mutex+condvar counting semaphore of J job tokens, make-order "
	     "pick of the first ready task",
	    D, F, ntasks, g.depend.size(), g.all.size(), g.work_us / 1e6,
	    g.crit_us / 1e6);
	for (int j : {4, 16}) {
		struct rusage r0, r1;

		getrusage(RUSAGE_SELF, &r0);
		clk::time_point t0 = clk::now();
		int ran = execute(g.depend, j);
		ran += execute(g.all, j);
		double real = ns_since(t0) / 1e9;
		getrusage(RUSAGE_SELF, &r1);
		if (ran != ntasks)
			fail("make j%d: ran %d tasks, want %d", j, ran, ntasks);
		std::string cs = "j" + std::to_string(j);
		result("make", cs, "real_s", real);
		result("make", cs, "user_s", tv(r1.ru_utime) - tv(r0.ru_utime));
		result("make", cs, "sys_s", tv(r1.ru_stime) - tv(r0.ru_stime));
		result("make", cs, "tasks/s", ntasks / real);
	}
}

// ---- latency (schbench-like), hogs=0 only ----

static constexpr int LAT_WORKERS = 4;

static double
pct(const std::vector<double> &s, double p)
{
	long i = (long)std::ceil(p * (double)s.size()) - 1;

	return (s[(size_t)std::max(i, 0L)]);
}

static void
run_latency(void)
{
	int nrounds = quick ? 100 : 2000;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	calibrate();
	logf("latency: 1 message fiber (this_fiber::sleep_for 1 ms), %d "
	     "worker fibers on their own channels, 50 us busy each, %d "
	     "rounds, all on ONE kernel thread: the workers of a round run "
	     "one after another, so worker k's latency includes the k-1 "
	     "busy periods before it",
	    LAT_WORKERS, nrounds);
	fprintf(stderr,
	    "skip: boost latency hogs=%ld: fibers are cooperative; a "
	    "spinning hog never yields, so the message fiber would never run "
	    "again\n",
	    ncpu);
	std::vector<bf::buffered_channel<clk::time_point> *> ch;
	bf::buffered_channel<int> done(8);
	std::vector<double> lat;
	std::vector<bf::fiber> ws;

	for (int i = 0; i < LAT_WORKERS; i++)
		ch.push_back(new bf::buffered_channel<clk::time_point>(2));
	for (int i = 0; i < LAT_WORKERS; i++)
		ws.emplace_back([&, i] {
			clk::time_point t0;
			while (
			    ch[i]->pop(t0) == bf::channel_op_status::success) {
				lat.push_back(ns_since(t0) / 1e3);
				busy_us(50);
				done.push(i);
			}
		});
	bf::fiber msg([&] {
		for (int r = 0; r < nrounds; r++) {
			boost::this_fiber::sleep_for(
			    std::chrono::milliseconds(1));
			clk::time_point t0 = clk::now();
			for (auto *c : ch)
				c->push(t0);
			for (int i = 0; i < LAT_WORKERS; i++) {
				int w;
				done.pop(w);
			}
		}
		for (auto *c : ch)
			c->close();
	});
	msg.join();
	for (auto &w : ws)
		w.join();
	for (auto *c : ch)
		delete c;
	if (lat.size() != (size_t)nrounds * LAT_WORKERS)
		fail("latency: %zu samples, want %d", lat.size(),
		    nrounds * LAT_WORKERS);
	std::sort(lat.begin(), lat.end());
	result("latency", "hogs=0", "p50_us", pct(lat, 0.50));
	result("latency", "hogs=0", "p99_us", pct(lat, 0.99));
	result("latency", "hogs=0", "p999_us", pct(lat, 0.999));
	result("latency", "hogs=0", "max_us", lat.back());
	if (!data_dir.empty()) {
		std::string path = data_dir + "/latency-boost-hogs=0.dat";
		FILE *f = fopen(path.c_str(), "w");
		if (f == NULL)
			fail("%s: %s", path.c_str(), strerror(errno));
		fprintf(f,
		    "# wakeup latency CDF: %s hogs=0, %zu samples\n"
		    "# latency_us fraction\n",
		    rt_name, lat.size());
		for (size_t i = 0; i < lat.size(); i++)
			fprintf(f, "%.3f %.6f\n", lat[i],
			    (double)(i + 1) / (double)lat.size());
		if (fclose(f) != 0)
			fail("%s: %s", path.c_str(), strerror(errno));
		logf("wrote %s", path.c_str());
	}
}

static void
usage(const char *prog)
{
	fprintf(stderr,
	    "usage: %s [--quick] [--data DIR] [--exp micro|make|latency|all]\n",
	    prog);
	exit(2);
}

int
main(int argc, char **argv)
{
	std::string exp = "all";

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] == '-' && a[1] == '-')
			a++; // accept -opt and --opt, like Go's flag package
		if (strcmp(a, "-quick") == 0)
			quick = true;
		else if (strcmp(a, "-data") == 0 && i + 1 < argc)
			data_dir = argv[++i];
		else if (strcmp(a, "-exp") == 0 && i + 1 < argc)
			exp = argv[++i];
		else
			usage(argv[0]);
	}
	if (quick)
		rounds = 3;
	bool m = exp == "all" || exp == "micro";
	bool mk = exp == "all" || exp == "make";
	bool l = exp == "all" || exp == "latency";
	if (!m && !mk && !l)
		usage(argv[0]);
	if (!data_dir.empty() && l) {
		std::error_code ec;
		std::filesystem::create_directories(data_dir, ec);
		if (ec)
			fail("%s: %s", data_dir.c_str(), ec.message().c_str());
	}
	if (m)
		run_micro();
	if (mk)
		run_make();
	if (l)
		run_latency();
	return (0);
}
