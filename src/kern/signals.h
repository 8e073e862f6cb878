/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's signals (signals.c): the alternate stacks of the workers,
 * handler chaining, and each uthread's signal mask.
 */
#ifndef ULT_KERN_SIGNALS_H
#define ULT_KERN_SIGNALS_H

#include <signal.h>
#include <stdint.h>

struct ult__worker;

/* A uthread's signal state (struct ult_thread's part). */
struct ult__sig_part {
	uint64_t sigmask; /* (s) its signal mask, the kernel's bits: its
			     worker's while it runs (ult__sigmask_load) */
	stack_t altstack; /* (s) what sigaltstack was told (signals.c);
			     the kernel keeps its worker's */
};

#define ULT__ALTSTACK_SIZE (64u * 1024)
int ult__signals_init(void);
/* Call the handler that old describes for sig, if it is one (not
 * SIG_DFL or SIG_IGN); 1 if it was called. */
int ult__sig_chain(const struct sigaction *old, int sig, siginfo_t *si,
    void *uc);
void ult__signals_fini(void);
int ult__altstack_setup(struct ult__worker *w);
int ult__altstack_install(struct ult__worker *w);
void ult__altstack_uninstall(void);
void ult__altstack_teardown(struct ult__worker *w);

/* The pthread drop-in's mask change for the caller (see sigmask.h). */
void ult__sigmask_set(int how, const uint64_t *set, uint64_t *old);

#endif
