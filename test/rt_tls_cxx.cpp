/* SPDX-License-Identifier: BSD-2-Clause */
// Per-uthread TLS seen from C++: the exception being handled is the
// uthread's own, also across yields (and migrations) inside the catch
// block and through a rethrow, and thread_local objects are per uthread
// and destroyed when it exits.  Under ult.chaos_migrate on 2 and 4
// workers, as the C tests in rt_tls.c; skipped where per-uthread TLS is
// not in force, failing with ULT_TLS=worker.  A program of its own (the
// runner is C): `ult_test_tls_cxx`, once per policy (ULT_POLICY).
#include <atomic>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "rt_tls.h"

namespace {

struct Err {
	long id;
	int round;
};

std::atomic<long> bad{0}, dtors{0};

struct Tracked {
	long id = -1;
	~Tracked()
	{
		dtors++;
	}
};

thread_local Tracked tracked;
thread_local int rounds_done;

constexpr int threads = 64;
constexpr int rounds = 40 / TEST_SCALE;

void
check(bool ok)
{
	if (!ok)
		bad++;
}

void *
body(void *arg)
{
	long id = reinterpret_cast<long>(arg);

	tracked.id = id;
	for (int i = 0; i < rounds; i++) {
		std::string want =
		    "uthread " + std::to_string(id) + " " + std::to_string(i);
		try {
			if (i % 2)
				throw std::runtime_error(want);
			throw Err{id, i};
		} catch (const std::runtime_error &e) {
			ult_yield();
			check(want == e.what());
			try {
				throw; // the exception this uthread handles
			} catch (const std::runtime_error &again) {
				ult_yield();
				check(&again == &e && want == again.what());
			}
			ult_yield();
			check(want == e.what());
		} catch (const Err &e) {
			std::exception_ptr p = std::current_exception();

			ult_yield();
			check(e.id == id && e.round == i);
			try {
				std::rethrow_exception(p);
			} catch (const Err &again) {
				ult_yield();
				check(again.id == id && again.round == i);
			}
		}
		check(std::uncaught_exceptions() == 0);
		check(std::current_exception() == nullptr);
		rounds_done++;
		ult_yield();
	}
	check(tracked.id == id && rounds_done == rounds);
	return nullptr;
}

} // namespace

int
main()
{
	static const int workers[] = {2, 4};
	ult_thread_t *t[threads];

	for (int n : workers) {
		tls_begin(n);
		bad = 0;
		dtors = 0;
		for (long i = 0; i < threads; i++)
			CHECK_EQ(ult_spawn(&t[i], nullptr, body,
				     reinterpret_cast<void *>(i)),
			    0);
		for (int i = 0; i < threads; i++)
			CHECK_EQ(ult_join(t[i], nullptr), 0);
		std::fprintf(stderr, "%d workers: %ld bad, %ld destructors\n",
		    n, bad.load(), dtors.load());
		CHECK_EQ(bad.load(), 0);
		// At each uthread's exit, not at its worker's.
		CHECK_EQ(dtors.load(), threads);
		tls_end();
	}
	std::printf("ok tls_cxx\n");
	return 0;
}
