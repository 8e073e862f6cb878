/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's fast clock, read on every context switch for run-time
 * accounting and ULE's ticks.  clock_gettime() through the vDSO costs
 * ~20 ns on a VM; an invariant TSC read with a multiplier costs less than
 * half.  The clock thread calibrates the multiplier against
 * CLOCK_MONOTONIC once 20 ms have passed and re-anchors it as it runs;
 * until then, and on CPUs without an invariant TSC, this is just
 * ult__now().  Readers use a seqlock; values may step back by a few
 * nanoseconds at a re-anchor, which callers tolerate (mach_ticks() is
 * made monotonic separately, and accounting clamps negative deltas).
 */
#include <stdio.h>
#include <string.h>

#include "../../arch/cpu.h"
#include "os.h"

#define CAL_MIN_NS 20000000u /* first calibration after 20 ms */
#define ANCHOR_NS 50000000u  /* re-anchor every 50 ms */

static struct {
	atomic_uint seq;
	_Atomic uint64_t tsc0, ns0, mult; /* ns = ns0 + (tsc-tsc0)*mult>>32 */
	int usable;
	uint64_t cal_tsc, cal_ns; /* first sample: a long base for the rate */
} fc;

static int
tsc_invariant(void)
{
#ifdef ULT_CPU_CYCLES_CONSTANT
	return (1);
#else
	char line[4096];
	int c = 0, n = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f == NULL)
		return (0);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		c = strstr(line, " constant_tsc") != NULL;
		n = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return (c && n);
#endif
}

/* Once per process: the calibration outlives ult_shutdown/ult_init. */
void
ult__fastclock_init(void)
{
	static int done;
	uint64_t tsc;

	if (done)
		return;
	done = 1;
	fc.usable = ult__cpu_cycles(&tsc) && tsc_invariant();
	fc.cal_ns = ult__now();
	ult__cpu_cycles(&fc.cal_tsc);
}

/* Called by the clock thread only (the single writer). */
void
ult__fastclock_update(void)
{
	uint64_t tsc, ns, mult;

	if (!fc.usable)
		return;
	ult__cpu_cycles(&tsc);
	ns = ult__now();
	if (ns - fc.cal_ns < CAL_MIN_NS || tsc <= fc.cal_tsc)
		return;
	if (ULT_LD(&fc.mult) != 0 && ns - ULT_LD(&fc.ns0) < ANCHOR_NS)
		return;
	mult = (uint64_t)(((unsigned __int128)(ns - fc.cal_ns) << 32) /
	    (tsc - fc.cal_tsc));
	/* The odd count must be visible before any of the new words.  An
	 * acq_rel increment does not order the stores after it: on x86-64 the
	 * locked add did; on AArch64 its store half (stlxr) may be seen after
	 * them, and a reader could mix new words with an old even count. */
	(void)ULT_ADD(&fc.seq, 1);
	ULT_FENCE_REL();
	ULT_ST(&fc.tsc0, tsc);
	ULT_ST(&fc.ns0, ns);
	ULT_ST(&fc.mult, mult);
	atomic_fetch_add_explicit(&fc.seq, 1, memory_order_release);
}

uint64_t
ult__fastclock_now(void)
{
	uint64_t tsc, tsc0, ns0, mult;
	unsigned s;

	do {
		s = ULT_LD_ACQ(&fc.seq);
		tsc0 = ULT_LD(&fc.tsc0);
		ns0 = ULT_LD(&fc.ns0);
		mult = ULT_LD(&fc.mult);
		ULT_FENCE_ACQ();
	} while ((s & 1) || s != ULT_LD(&fc.seq));
	if (mult == 0 || !ult__cpu_cycles(&tsc) || tsc < tsc0)
		return (ult__now());
	return (
	    ns0 + (uint64_t)(((unsigned __int128)(tsc - tsc0) * mult) >> 32));
}
