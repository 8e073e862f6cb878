/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult-top: a live view of a running ult process, from the statistics
 * segment its runtime keeps (/dev/shm/ult-<pid>) when started with
 * ULT_SHM=1: no signal, no ptrace, nothing else asked of the program.
 *
 *   ult-top [-b] [-n frames] [-d seconds] PID
 *   ult-top --help
 *
 * -b: batch mode (frames one after another, no screen control), for
 * scripts; -n: stop after that many frames; -d: seconds between frames
 * (default 1).  Interactive, q quits.  %CPU is the share of a CPU each
 * uthread used since the last snapshot shown (for the first frame, the
 * one before it); a uthread new since then shows the policy's estimate.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "obs/shm_layout.h"
#include "ult.h"

static const struct ult_shm *seg;
static int segfd = -1;
static sigjmp_buf seg_gone; /* a read of the mapping past the file's end */
static struct ult_shm snap, prev;
static int have_prev;
static struct termios saved_tty;
static int tty_raw;

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: ult-top [-b] [-n frames] [-d seconds] PID\n");
	if (status == 0)
		printf(
		    "Shows the workers and uthreads of a running ult process "
		    "started with\n"
		    "ULT_SHM=1.  -b: batch mode; -n: stop after that many "
		    "frames; -d: seconds\n"
		    "between frames (0.1..3600, default 1).  "
		    "Interactive, q quits.\n");
	exit(status);
}

static void
tty_restore(void)
{
	if (tty_raw) {
		tcsetattr(0, TCSANOW, &saved_tty);
		tty_raw = 0;
	}
}

static void
on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(seg_gone, 1);
}

static void __attribute__((noreturn)) truncated(void)
{
	fprintf(stderr,
	    "ult-top: the segment was truncated under ult-top "
	    "(not the runtime's doing)\n");
	exit(1);
}

/* The segment is a file anybody can have made or can change: it is used
 * only if it is a regular file of the process's own user, of the layout's
 * size, and every read of it is checked (take). */
static int
attach(int pid)
{
	char path[64], proc[32];
	struct stat st, pst;
	struct sigaction sa;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/ult-%d", pid);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		fprintf(stderr,
		    "ult-top: %s: %s (is %d a running ult process started "
		    "with ULT_SHM=1?)\n",
		    path, strerror(errno), pid);
		return (-1);
	}
	snprintf(proc, sizeof(proc), "/proc/%d", pid);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != (off_t)sizeof(struct ult_shm)) {
		fprintf(stderr,
		    "ult-top: %s: not a ult statistics segment (%lld bytes, "
		    "expected %zu)\n",
		    path, (long long)st.st_size, sizeof(struct ult_shm));
		close(fd);
		return (-1);
	}
	if (stat(proc, &pst) == 0 && pst.st_uid != st.st_uid) {
		fprintf(stderr,
		    "ult-top: %s: owned by uid %ld, but process %d runs as "
		    "uid %ld: not its segment\n",
		    path, (long)st.st_uid, pid, (long)pst.st_uid);
		close(fd);
		return (-1);
	}
	seg = mmap(NULL, sizeof(struct ult_shm), PROT_READ, MAP_SHARED, fd, 0);
	if (seg == MAP_FAILED) {
		perror("ult-top: mmap");
		close(fd);
		return (-1);
	}
	segfd = fd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(seg_gone, 1) != 0)
		truncated();
	if (seg->magic != ULT_SHM_MAGIC || seg->version != ULT_SHM_VERSION ||
	    seg->size != sizeof(struct ult_shm)) {
		fprintf(stderr,
		    "ult-top: %s: a segment of another ult version (%u)\n",
		    path, seg->version);
		return (-1);
	}
	return (0);
}

/* What a snapshot says is only trusted within the layout's bounds. */
static void
sanitize(struct ult_shm *m)
{
	if (m->nthreads > ULT_SHM_THREADS)
		m->nthreads = ULT_SHM_THREADS;
	if (m->nworkers < 0 || m->nworkers > ULT_SHM_CPUS)
		m->nworkers = m->nworkers < 0 ? 0 : ULT_SHM_CPUS;
	if (m->ncpu < 0 || m->ncpu > m->nworkers)
		m->ncpu = m->nworkers;
	m->policy[sizeof(m->policy) - 1] = '\0';
	for (uint32_t i = 0; i < m->nthreads; i++) {
		m->threads[i].name[sizeof(m->threads[i].name) - 1] = '\0';
		m->threads[i].wchan[sizeof(m->threads[i].wchan) - 1] = '\0';
	}
}

/* A consistent copy, between two equal even sequence numbers, of a
 * snapshot newer than the last one shown (the runtime makes two a
 * second). */
static int
take(void)
{
	static uint32_t last;
	struct stat st;

	/* The file can shrink under the mapping (its owner can truncate
	 * it): a read past its end raises SIGBUS, which on_sigbus turns
	 * into the message. */
	if (sigsetjmp(seg_gone, 1) != 0)
		truncated();
	for (int tries = 0; tries < 2000; tries++) {
		uint32_t s;

		if (fstat(segfd, &st) != 0 ||
		    st.st_size < (off_t)sizeof(struct ult_shm))
			truncated();
		s = __atomic_load_n(&seg->seq, __ATOMIC_ACQUIRE);

		if ((s & 1) || s == last) {
			usleep(1000);
			continue;
		}
		memcpy(&snap, seg, sizeof(snap));
#if defined(__SANITIZE_THREAD__)
		__asm__ volatile("" ::: "memory"); /* TSan refuses fences */
#else
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
		if (__atomic_load_n(&seg->seq, __ATOMIC_RELAXED) == s &&
		    s != 0) {
			last = s;
			sanitize(&snap);
			return (0);
		}
		usleep(1000);
	}
	return (-1);
}

static const char *
state_name(int s)
{
	switch (s) {
	case ULT_STATE_RUNNING:
		return ("run");
	case ULT_STATE_RUNNABLE:
		return ("ready");
	case ULT_STATE_SLEEPING:
		return ("sleep");
	case ULT_STATE_FINISHED:
		return ("zombie");
	case ULT_STATE_BLOCKED:
		return ("kblock");
	default:
		return ("?");
	}
}

static const struct ult_shm_thread *
prev_thread(uint64_t id)
{
	for (uint32_t i = 0; have_prev && i < prev.nthreads; i++)
		if (prev.threads[i].id == id)
			return (&prev.threads[i]);
	return (NULL);
}

struct row {
	const struct ult_shm_thread *t;
	const struct ult_shm_wait *w;
	double pct;
};

static const struct ult_shm_thread *
shown_thread(uint64_t id, uint32_t *ix)
{
	for (uint32_t i = 0; i < snap.nthreads; i++)
		if (snap.threads[i].id == id) {
			*ix = i;
			return (&snap.threads[i]);
		}
	return (NULL);
}

/* Cycles of lock owners among the uthreads shown: deadlocks.  Each
 * uthread waits for at most one owner, so following owners from each
 * sleeper either ends or comes round; a cycle is printed once, from its
 * smallest index. */
static void
deadlocks(void)
{
	for (uint32_t i = 0; i < snap.nthreads; i++) {
		uint32_t j = i, steps = 0, min = i;
		const struct ult_shm_thread *t;

		do {
			if (snap.waits[j].owner_id == 0 ||
			    shown_thread(snap.waits[j].owner_id, &j) == NULL)
				break;
			if (j < min)
				min = j;
		} while (j != i && ++steps < snap.nthreads);
		if (j != i || snap.waits[i].owner_id == 0 || min != i)
			continue;
		printf("DEADLOCK:");
		do {
			t = &snap.threads[j];
			printf(" %llu %s (%s %#llx) ->",
			    (unsigned long long)t->id,
			    t->name[0] ? t->name : "-", t->wchan,
			    (unsigned long long)snap.waits[j].obj);
			(void)shown_thread(snap.waits[j].owner_id, &j);
		} while (j != i);
		printf(" %llu\n", (unsigned long long)snap.threads[i].id);
	}
}

static int
by_cpu(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->pct != y->pct)
		return (x->pct < y->pct ? 1 : -1);
	return (x->t->id < y->t->id ? -1 : x->t->id > y->t->id);
}

static void
frame(int batch, int lines)
{
	static struct row rows[ULT_SHM_THREADS];
	double dt = have_prev && snap.snap_ns > prev.snap_ns
	    ? (double)(snap.snap_ns - prev.snap_ns)
	    : 0;
	time_t now = time(NULL);
	char clock[16];
	int shown = 0;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	if (!batch)
		fputs("\033[H\033[2J", stdout);
	printf("ult-top  pid %d  %s  %d workers%s  %u uthreads alive, %u "
	       "shown  %s\n\n",
	    snap.pid, snap.policy, snap.ncpu,
	    snap.nworkers > snap.ncpu ? " + spare" : "", snap.nalive,
	    snap.nthreads, clock);
	printf("%-6s %5s %6s %10s %8s %8s %8s %s\n", "WORKER", "LOAD", "IDLE%",
	    "SWITCH/s", "STEALS", "PREEMPT", "PARKS", "");
	for (int i = 0; i < snap.nworkers && i < ULT_SHM_CPUS; i++) {
		const struct ult_shm_cpu *c = &snap.cpus[i], *p = &prev.cpus[i];
		uint64_t idle = c->idle_ns, busy = c->busy_ns;
		double sw = 0;

		if (have_prev) {
			idle -= p->idle_ns;
			busy -= p->busy_ns;
			if (dt > 0)
				sw = (double)(c->switches - p->switches) * 1e9 /
				    dt;
		}
		printf("%-6d %5d %6.1f %10.0f %8llu %8llu %8llu %s\n", c->cpu,
		    c->load,
		    idle + busy ? 100.0 * (double)idle / (double)(idle + busy)
				: 100.0,
		    sw, (unsigned long long)c->steals,
		    (unsigned long long)c->preemptions,
		    (unsigned long long)c->parks,
		    c->spare	     ? "spare"
			: c->blocked ? "blocked in the kernel"
				     : "");
	}
	for (uint32_t i = 0; i < snap.nthreads; i++) {
		const struct ult_shm_thread *t = &snap.threads[i];
		const struct ult_shm_thread *p = prev_thread(t->id);

		rows[i].t = t;
		rows[i].w = &snap.waits[i];
		/* A running thread's runtime is read against a clock that
		 * may step back a little: never a negative share. */
		rows[i].pct = p != NULL && dt > 0
		    ? (t->runtime_ns > p->runtime_ns ? 100.0 *
				  (double)(t->runtime_ns - p->runtime_ns) / dt
						     : 0.0)
		    : t->pctcpu_x100 / 100.0;
	}
	qsort(rows, snap.nthreads, sizeof(rows[0]), by_cpu);
	printf("\n%8s %-20s %-6s %4s %4s %4s %5s %6s %10s %s\n", "ID", "NAME",
	    "STATE", "CPU", "PRI", "NICE", "SCORE", "%CPU", "TIME", "WCHAN");
	for (uint32_t i = 0; i < snap.nthreads; i++) {
		const struct ult_shm_thread *t = rows[i].t;
		char score[16];

		if (!batch && lines > 0 && shown >= lines - 8 - snap.nworkers)
			break;
		if (t->score >= 0)
			snprintf(score, sizeof(score), "%d", t->score);
		else
			strcpy(score, "-");
		printf("%8llu %-20.20s %-6s %4d %4d %4d %5s %6.1f %10.3f %s",
		    (unsigned long long)t->id, t->name[0] ? t->name : "-",
		    state_name(t->state), t->cpu, t->priority, t->nice, score,
		    rows[i].pct, (double)t->runtime_ns / 1e9, t->wchan);
		/* A lock's owner, when it is a uthread. */
		if (rows[i].w->owner_id != 0)
			printf(" %#llx owner %llu",
			    (unsigned long long)rows[i].w->obj,
			    (unsigned long long)rows[i].w->owner_id);
		putchar('\n');
		shown++;
	}
	deadlocks();
	if (batch)
		putchar('\n');
	fflush(stdout);
	prev = snap;
	have_prev = 1;
}

/* Wait up to ms for the next frame; 1 if q was typed. */
static int
wait_key(int ms, int batch)
{
	struct pollfd p = {0, POLLIN, 0};
	char c;

	if (batch || !tty_raw) {
		usleep((useconds_t)ms * 1000);
		return (0);
	}
	if (poll(&p, 1, ms) > 0 && read(0, &c, 1) == 1 &&
	    (c == 'q' || c == 'Q'))
		return (1);
	return (0);
}

int
main(int argc, char **argv)
{
	int batch = 0, frames = -1, opt, pid, lines = 0;
	double delay = 1.0;
	char *end;

	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

	while (
	    (opt = getopt_long(argc, argv, "hbn:d:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(0);
		case 'b':
			batch = 1;
			break;
		case 'n':
			frames = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || frames < 1)
				usage(2);
			break;
		case 'd':
			delay = strtod(optarg, &end);
			if (*end != '\0' || delay < 0.1 || delay > 3600)
				usage(2);
			break;
		default:
			usage(2);
		}
	}
	if (optind + 1 != argc)
		usage(2);
	pid = (int)strtol(argv[optind], &end, 10);
	if (*end != '\0' || pid <= 0)
		usage(2);
	if (attach(pid) != 0)
		return (1);
	if (!batch && isatty(0) && tcgetattr(0, &saved_tty) == 0) {
		struct termios raw = saved_tty;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(0, TCSANOW, &raw) == 0) {
			tty_raw = 1;
			atexit(tty_restore);
		}
	}
	if (!batch) {
		struct winsize ws;

		if (ioctl(1, TIOCGWINSZ, &ws) == 0)
			lines = ws.ws_row;
	}
	/* The snapshot there now may be half a second old: the first frame
	 * shows the next one, with rates measured against this one. */
	if (take() != 0) {
		fprintf(stderr,
		    "ult-top: no snapshot (is the process stopped?)\n");
		return (1);
	}
	prev = snap;
	have_prev = 1;
	for (int n = 0; frames < 0 || n < frames; n++) {
		if (kill(pid, 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "ult-top: process %d has exited\n",
			    pid);
			return (n > 0 ? 0 : 1);
		}
		if (take() != 0) {
			fprintf(stderr,
			    "ult-top: no consistent snapshot (is "
			    "the process stopped?)\n");
			return (1);
		}
		frame(batch, lines);
		if (frames >= 0 && n + 1 == frames)
			break;
		if (wait_key((int)(delay * 1000), batch))
			break;
	}
	return (0);
}
