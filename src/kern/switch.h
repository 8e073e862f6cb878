/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The switch path (switch.c): mi_switch, the switch-in, the first and
 * last switches of a uthread, and errno across switches.
 */
#ifndef ULT_KERN_SWITCH_H
#define ULT_KERN_SWITCH_H

struct ult_thread;

/* switch.c */
/* errno, read and written out of line: for code that may switch between
 * two uses (with per-worker TLS &errno changes when a uthread migrates). */
int ult__errno(void);
void ult__set_errno(int e);
void ult__mi_switch(struct ult_thread *ut, int flags, struct ult_thread *hint);
void ult__exit_switch(struct ult_thread *ut) __attribute__((noreturn));
void ult__switch_finish(void);
void ult__userret(void);
void ult__thread_entry(void *arg);

#endif
