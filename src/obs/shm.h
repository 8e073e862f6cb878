/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The statistics segment for ult-top (shm.c, shm_layout.h).
 */
#ifndef ULT_CORE_SHM_H
#define ULT_CORE_SHM_H

/* From ult_init's configuration: ULT_SHM is absent or 0 (no segment) or 1
 * (else EINVAL). */
int ult__shm_configure(void);
/* From ult_init once everything runs; never fails (see shm.c). */
void ult__shm_start(void);
/* From ult_shutdown or a failed ult_init, before the threads go away. */
void ult__shm_stop(void);
/* At process exit with the runtime up: remove the segment's name. */
void ult__shm_exit(void);
/* A segment is kept. */
int ult__shm_active(void);

struct ult__subsys;
extern const struct ult__subsys ult__shm_subsys;

#endif
