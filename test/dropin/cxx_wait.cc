/* SPDX-License-Identifier: BSD-2-Clause */
// C++ standard-library waits under the drop-in: std::async/std::future,
// C++20 std::latch, std::barrier, std::counting_semaphore and
// std::atomic::wait, which libstdc++ builds on raw futexes through libc's
// syscall().  More threads than ult-run's workers, so that a wait that
// held its worker would hang.  Prints a deterministic transcript.
#include <atomic>
#include <barrier>
#include <cstdio>
#include <future>
#include <latch>
#include <semaphore>
#include <thread>
#include <vector>

static int failures;

static void
check(const char *what, long got, long want)
{
	std::printf("cxx_wait: %s -> %ld\n", what, got);
	if (got != want) {
		std::printf("FAIL cxx_wait: %s: want %ld\n", what, want);
		failures++;
	}
}

static long
fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int
main()
{
	const int n = 12;
	std::setvbuf(stdout, nullptr, _IOLBF, 0);

	// Futures: the getter waits on the shared state's futex.
	std::vector<std::future<long>> fs;
	for (int i = 0; i < n; i++)
		fs.push_back(std::async(std::launch::async, fib, 15 + i % 4));
	long s = 0;
	for (auto &f : fs)
		s += f.get();
	check("async sum", s, 3 * (610 + 987 + 1597 + 2584));
	std::promise<int> p;
	auto sf = p.get_future().share();
	std::atomic<int> seen{0};
	std::vector<std::thread> ts;
	for (int i = 0; i < n; i++)
		ts.emplace_back([&] { seen += sf.get(); });
	p.set_value(2);
	for (auto &t : ts)
		t.join();
	ts.clear();
	check("shared_future seen", seen, 2 * n);

	// A latch and a barrier over n threads, several phases.
	std::latch start(n);
	std::atomic<int> phase_sum{0}, completions{0};
	std::barrier bar(n, [&]() noexcept { completions++; });
	for (int i = 0; i < n; i++)
		ts.emplace_back([&] {
			start.arrive_and_wait();
			for (int ph = 0; ph < 20; ph++) {
				phase_sum++;
				bar.arrive_and_wait();
			}
		});
	for (auto &t : ts)
		t.join();
	ts.clear();
	check("barrier phases", completions, 20);
	check("barrier arrivals", phase_sum, 20 * n);

	// A semaphore as a limit of 2 inside.
	std::counting_semaphore<16> sem(2);
	std::atomic<int> inside{0}, most{0};
	for (int i = 0; i < n; i++)
		ts.emplace_back([&] {
			for (int k = 0; k < 200; k++) {
				sem.acquire();
				int now = ++inside;
				int m = most;
				while (now > m &&
				    !most.compare_exchange_weak(m, now))
					;
				std::this_thread::yield();
				--inside;
				sem.release();
			}
		});
	for (auto &t : ts)
		t.join();
	ts.clear();
	check("semaphore: at most 2 inside", most <= 2, 1);

	// atomic::wait/notify ping-pong across n threads in a ring.
	std::atomic<int> token{0};
	for (int i = 0; i < n; i++)
		ts.emplace_back([&, i] {
			for (int r = 0; r < 100; r++) {
				int want = r * n + i, v;
				while ((v = token.load()) != want)
					token.wait(v);
				token.store(want + 1);
				token.notify_all();
			}
		});
	for (auto &t : ts)
		t.join();
	check("atomic wait ring", token, 100 * n);
	std::printf("cxx_wait: %s\n", failures ? "FAILED" : "all passed");
	return failures != 0;
}
