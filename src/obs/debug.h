/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_OBS_DEBUG_H
#define ULT_OBS_DEBUG_H

/* debug.c: the hang report, written to fd. */
void ult__debug_dump(int fd);

#endif
