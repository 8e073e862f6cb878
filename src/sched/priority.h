/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/sys/priority.h. */
/*
 * The priority space of FreeBSD 14/15 (sys/sys/priority.h), which ULE-C
 * was tuned for.  Lower numbers are more important.
 */
#ifndef ULT_SCHED_PRIORITY_H
#define ULT_SCHED_PRIORITY_H

#define PRI_MIN (0)
#define PRI_MAX (255)

#define PRI_MIN_ITHD (PRI_MIN)
#define PRI_MAX_ITHD (PRI_MIN_REALTIME - 1)
#define PRI_MIN_REALTIME (16)
#define PRI_MAX_REALTIME (PRI_MIN_KERN - 1)
#define PRI_MIN_KERN (48)
#define PRI_MAX_KERN (PRI_MIN_TIMESHARE - 1)
#define PRI_MIN_TIMESHARE (88)
#define PRI_MAX_TIMESHARE (PRI_MIN_IDLE - 1)
#define PRI_MIN_IDLE (224)
#define PRI_MAX_IDLE (PRI_MAX)

#define PUSER (PRI_MIN_TIMESHARE)
/* Kernel sleep priorities (sys/priority.h): a socket wait, a plain one. */
#define PSOCK (PRI_MIN_KERN + 24)
#define PWAIT (PRI_MIN_KERN + 28)
/* ult: or'ed into sleep()'s priority, it applies whatever
 * kern.sched.static_boost says (waits for I/O, DESIGN.md section 7.2). */
#define PRI_SLEEP_BOOST 0x100
#define PRI_SLEEP_MASK 0xff

/* Scheduling classes (td_pri_class). */
#define PRI_ITHD 1
#define PRI_REALTIME 2
#define PRI_TIMESHARE 3
#define PRI_IDLE 4
#define PRI_FIFO_BIT 8
#define PRI_FIFO (PRI_FIFO_BIT | PRI_REALTIME)
#define PRI_BASE(c) ((c) & ~PRI_FIFO_BIT)
#define PRI_IS_REALTIME(c) (PRI_BASE(c) == PRI_REALTIME)

/* Nice range (sys/resource.h). */
#define PRIO_MIN (-20)
#define PRIO_MAX (20)

/* rtprio/idprio levels. */
#define RTP_PRIO_MIN 0
#define RTP_PRIO_MAX 31

#endif
