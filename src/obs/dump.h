/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trace, the report and the segment of a process that a signal ends
 * (dump.c).
 */
#ifndef ULT_OBS_DUMP_H
#define ULT_OBS_DUMP_H

/* From ult_init's configuration: ULT_DUMP_SIGNAL absent, or a signal the
 * runtime may take (else EINVAL). */
int ult__dump_configure(void);
/* From ult_init once the trace, the report and the segment are set up;
 * 0 or an errno. */
int ult__dump_start(void);
/* From ult_shutdown or a failed ult_init: the program's dispositions
 * back, the helper gone.  Harmless when not started. */
void ult__dump_stop(void);

struct ult__subsys;
extern const struct ult__subsys ult__dump_subsys;

#endif
