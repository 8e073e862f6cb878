/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A memcached client for the drop-in's tests and benchmark: plain
 * sockets, one kernel thread per connection, the text protocol.
 *
 *   mcclient port                      print a free TCP port on 127.0.0.1
 *   mcclient ready PORT                exit 0 if 127.0.0.1:PORT accepts
 *   mcclient check PORT CONNS OPS      set/get/incr/delete on CONNS
 *                                      connections at once, every reply
 *                                      checked; exit 1 on the first wrong one
 *   mcclient lat PORT CONNS REQS CASE RUNTIME
 *                                      REQS set+get pairs per connection,
 *                                      each request timed; prints contract
 *                                      lines (bench/README.md) for
 *                                      experiment dropin
 *
 * Every mode first waits (up to 20 s) for the server to accept, so a
 * script can start memcached and run the client right away.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#define VALMAX 1024

struct conn {
	int fd;
	char buf[8192];
	size_t off, len;
};

struct job {
	pthread_t tid;
	int id;
	long ops;
	double *lat; /* lat mode: one figure per request, microseconds */
	long nlat;
	int failed;
};

static int port;
static long nops;
static int mode_lat;

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "mcclient: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e6 + ts.tv_nsec / 1e3);
}

static int
dial(int p)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(p);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return (-1);
	}
	/* Requests are small and each waits for its reply. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return (fd);
}

/* The server was just started: give it time to bind. */
static void
wait_ready(void)
{
	for (int i = 0; i < 2000; i++) {
		int fd = dial(port);

		if (fd >= 0) {
			close(fd);
			return;
		}
		usleep(10000);
	}
	die("nothing accepts on 127.0.0.1:%d after 20 s", port);
}

static int
send_all(struct conn *c, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(c->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return (-1);
		p += w;
		n -= (size_t)w;
	}
	return (0);
}

static int
fill(struct conn *c)
{
	ssize_t r;

	if (c->off > 0) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len == sizeof(c->buf))
		return (-1);
	do
		r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return (-1);
	c->len += (size_t)r;
	return (0);
}

/* One reply line without its CRLF, into line (NUL-terminated). */
static int
get_line(struct conn *c, char *line, size_t max)
{
	for (;;) {
		for (size_t i = c->off; i + 1 < c->len; i++) {
			if (c->buf[i] == '\r' && c->buf[i + 1] == '\n') {
				size_t n = i - c->off;

				if (n >= max)
					return (-1);
				memcpy(line, c->buf + c->off, n);
				line[n] = '\0';
				c->off = i + 2;
				return (0);
			}
		}
		if (fill(c) != 0)
			return (-1);
	}
}

static int
get_bytes(struct conn *c, char *dst, size_t n)
{
	while (c->len - c->off < n)
		if (fill(c) != 0)
			return (-1);
	memcpy(dst, c->buf + c->off, n);
	c->off += n;
	return (0);
}

/* A deterministic value whose length and bytes depend on (id, j). */
static size_t
make_value(char *v, int id, long j)
{
	size_t n = (size_t)((j * 37 + id * 11) % 500) + 1;

	for (size_t i = 0; i < n; i++)
		v[i] = (char)('a' + (i + (size_t)j + (size_t)id) % 26);
	return (n);
}

#define FAIL(...)                                                         \
	do {                                                              \
		fprintf(stderr, "mcclient: conn %d op %ld: ", jb->id, j); \
		fprintf(stderr, __VA_ARGS__);                             \
		fprintf(stderr, "\n");                                    \
		jb->failed = 1;                                           \
		return (NULL);                                            \
	} while (0)

static int
cmd_expect(struct conn *c, const char *cmd, size_t n, const char *want,
    char *got, size_t gotmax)
{
	if (send_all(c, cmd, n) != 0 || get_line(c, got, gotmax) != 0)
		return (-1);
	return (strcmp(got, want) == 0 ? 0 : 1);
}

static int
do_set(struct conn *c, const char *key, const char *v, size_t n, char *got)
{
	char cmd[VALMAX + 128];
	int h = snprintf(cmd, sizeof(cmd), "set %s 0 0 %zu\r\n", key, n);

	memcpy(cmd + h, v, n);
	memcpy(cmd + h + n, "\r\n", 2);
	return (cmd_expect(c, cmd, (size_t)h + n + 2, "STORED", got, 256));
}

/* get: 0 and the value in v/vn, 1 for a miss, -1 for a broken reply. */
static int
do_get(struct conn *c, const char *key, char *v, size_t *vn, char *got)
{
	char cmd[128], want[160];
	unsigned long n;
	int h = snprintf(cmd, sizeof(cmd), "get %s\r\n", key);

	if (send_all(c, cmd, (size_t)h) != 0 || get_line(c, got, 256) != 0)
		return (-1);
	if (strcmp(got, "END") == 0)
		return (1);
	snprintf(want, sizeof(want), "VALUE %s 0 ", key);
	if (strncmp(got, want, strlen(want)) != 0)
		return (-1);
	n = strtoul(got + strlen(want), NULL, 10);
	if (n > VALMAX || get_bytes(c, v, n + 2) != 0 ||
	    memcmp(v + n, "\r\n", 2) != 0 || get_line(c, got, 256) != 0 ||
	    strcmp(got, "END") != 0)
		return (-1);
	*vn = n;
	return (0);
}

static void *
check_conn(void *arg)
{
	struct job *jb = arg;
	struct conn c = {.fd = dial(port)};
	char key[64], ckey[64], v[VALMAX], r[VALMAX + 2], got[256], cmd[128];
	unsigned long long sum = 0;
	size_t n, rn;
	long j = 0;
	int h;

	if (c.fd < 0)
		FAIL("connect: %s", strerror(errno));
	snprintf(ckey, sizeof(ckey), "ctr%d", jb->id);
	if (do_set(&c, ckey, "0", 1, got) != 0)
		FAIL("set %s: '%s'", ckey, got);
	for (j = 0; j < jb->ops; j++) {
		snprintf(key, sizeof(key), "k%d_%ld", jb->id, j % 16);
		n = make_value(v, jb->id, j);
		if (do_set(&c, key, v, n, got) != 0)
			FAIL("set %s: '%s'", key, got);
		if (do_get(&c, key, r, &rn, got) != 0)
			FAIL("get %s: '%s'", key, got);
		if (rn != n || memcmp(r, v, n) != 0)
			FAIL("get %s: %zu bytes, not the %zu stored", key, rn,
			    n);
		/* Every connection counts on the shared key too. */
		h = snprintf(cmd, sizeof(cmd), "incr shared 1\r\n");
		if (send_all(&c, cmd, (size_t)h) != 0 ||
		    get_line(&c, got, sizeof(got)) != 0 ||
		    strtoull(got, NULL, 10) == 0)
			FAIL("incr shared: '%s'", got);
		sum += (unsigned long long)j;
		h = snprintf(cmd, sizeof(cmd), "incr %s %ld\r\n", ckey, j);
		if (send_all(&c, cmd, (size_t)h) != 0 ||
		    get_line(&c, got, sizeof(got)) != 0)
			FAIL("incr %s: no reply", ckey);
		if (strtoull(got, NULL, 10) != sum)
			FAIL("incr %s: '%s', expected %llu", ckey, got, sum);
		if (j % 3 == 0) {
			h = snprintf(cmd, sizeof(cmd), "delete %s\r\n", key);
			if (cmd_expect(&c, cmd, (size_t)h, "DELETED", got,
				sizeof(got)) != 0)
				FAIL("delete %s: '%s'", key, got);
			if (do_get(&c, key, r, &rn, got) != 1)
				FAIL("get %s after delete: '%s'", key, got);
			if (cmd_expect(&c, cmd, (size_t)h, "NOT_FOUND", got,
				sizeof(got)) != 0)
				FAIL("second delete %s: '%s'", key, got);
		}
	}
	close(c.fd);
	return (NULL);
}

static void *
lat_conn(void *arg)
{
	struct job *jb = arg;
	struct conn c = {.fd = dial(port)};
	char key[64], v[VALMAX], r[VALMAX + 2], got[256];
	size_t n = 32, rn;
	long j = 0, warm = jb->ops / 10;

	if (c.fd < 0)
		FAIL("connect: %s", strerror(errno));
	snprintf(key, sizeof(key), "lat%d", jb->id);
	memset(v, 'x', n);
	for (j = -warm; j < jb->ops; j++) {
		double t0 = now_us(), t1, t2;

		v[0] = (char)('a' + (j & 15));
		if (do_set(&c, key, v, n, got) != 0)
			FAIL("set %s: '%s'", key, got);
		t1 = now_us();
		if (do_get(&c, key, r, &rn, got) != 0 || rn != n ||
		    memcmp(r, v, n) != 0)
			FAIL("get %s: '%s'", key, got);
		t2 = now_us();
		if (j >= 0) {
			jb->lat[jb->nlat++] = t1 - t0;
			jb->lat[jb->nlat++] = t2 - t1;
		}
	}
	close(c.fd);
	return (NULL);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Nearest rank, as bench/work.h does it. */
static double
pct(const double *s, long n, double p)
{
	long k = (long)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (s[k - 1]);
}

static int
free_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		die("bind 127.0.0.1:0: %s", strerror(errno));
	close(fd);
	return (ntohs(sa.sin_port));
}

static long
num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		die("bad %s '%s'", what, s);
	return (v);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: mcclient port\n"
	    "       mcclient ready PORT\n"
	    "       mcclient check PORT CONNS OPS\n"
	    "       mcclient lat PORT CONNS REQS CASE RUNTIME\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct job *jobs;
	struct conn c;
	char got[256];
	double t0, wall, *all;
	long nconn, total = 0;

	if (argc == 2 && strcmp(argv[1], "port") == 0) {
		printf("%d\n", free_port());
		return (0);
	}
	if (argc < 3)
		usage();
	port = (int)num(argv[2], 1, 65535, "port");
	if (strcmp(argv[1], "ready") == 0 && argc == 3) {
		int fd = dial(port);

		if (fd >= 0)
			close(fd);
		return (fd >= 0 ? 0 : 1);
	}
	if (strcmp(argv[1], "check") == 0 && argc == 5)
		mode_lat = 0;
	else if (strcmp(argv[1], "lat") == 0 && argc == 7)
		mode_lat = 1;
	else
		usage();
	nconn = num(argv[3], 1, 1024, "connection count");
	nops = num(argv[4], 1, 10000000, "operation count");
	wait_ready();

	c = (struct conn){.fd = dial(port)};
	if (c.fd < 0)
		die("connect: %s", strerror(errno));
	if (!mode_lat && do_set(&c, "shared", "0", 1, got) != 0)
		die("set shared: '%s'", got);

	if ((jobs = calloc((size_t)nconn, sizeof(*jobs))) == NULL)
		die("out of memory");
	t0 = now_us();
	for (long i = 0; i < nconn; i++) {
		jobs[i].id = (int)i;
		jobs[i].ops = nops;
		if (mode_lat &&
		    (jobs[i].lat = malloc(sizeof(double) * 2 * nops)) == NULL)
			die("out of memory");
		if (pthread_create(&jobs[i].tid, NULL,
			mode_lat ? lat_conn : check_conn, &jobs[i]) != 0)
			die("pthread_create failed");
	}
	for (long i = 0; i < nconn; i++) {
		pthread_join(jobs[i].tid, NULL);
		if (jobs[i].failed)
			exit(1);
		total += jobs[i].nlat;
	}
	wall = now_us() - t0;

	if (!mode_lat) {
		char r[VALMAX + 2];
		size_t rn;
		unsigned long long want = (unsigned long long)nconn * nops;

		if (do_get(&c, "shared", r, &rn, got) != 0)
			die("get shared: '%s'", got);
		r[rn] = '\0';
		if (strtoull(r, NULL, 10) != want)
			die("shared counter %s, expected %llu", r, want);
		fprintf(stderr,
		    "mcclient: %ld connections x %ld rounds checked, shared "
		    "counter %llu\n",
		    nconn, nops, want);
		return (0);
	}
	if ((all = malloc(sizeof(double) * (size_t)total)) == NULL)
		die("out of memory");
	total = 0;
	for (long i = 0; i < nconn; i++) {
		memcpy(all + total, jobs[i].lat,
		    sizeof(double) * (size_t)jobs[i].nlat);
		total += jobs[i].nlat;
	}
	qsort(all, (size_t)total, sizeof(double), cmp_double);
	printf("R\tdropin\t%s\t%s\treq/s\t%.0f\n", argv[5], argv[6],
	    (double)total / (wall / 1e6));
	printf("R\tdropin\t%s\t%s\tp50_us\t%.1f\n", argv[5], argv[6],
	    pct(all, total, 50));
	printf("R\tdropin\t%s\t%s\tp99_us\t%.1f\n", argv[5], argv[6],
	    pct(all, total, 99));
	printf("R\tdropin\t%s\t%s\tmax_us\t%.1f\n", argv[5], argv[6],
	    all[total - 1]);
	return (0);
}
