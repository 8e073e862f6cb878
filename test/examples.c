/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The example servers as a client sees them: start one, read the port
 * from its "listening on 127.0.0.1:PORT" line, talk to it over loopback
 * from several connections at once, and kill it.
 *   examples echo PATH       random bytes come back unchanged
 *   examples httpd PATH      keep-alive requests, pipelined ones, a 404,
 *                            and a 400 that closes the connection
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...)                                          \
	do {                                               \
		fprintf(stderr, "examples: " __VA_ARGS__); \
		fputc('\n', stderr);                       \
		exit(1);                                   \
	} while (0)

static pid_t child;

/* Run path with args, its stdout and stderr to a pipe; returns the port
 * of its "listening on" line. */
static int
start(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	char buf[512], *p;
	size_t len = 0;
	int pfd[2];

	if (pipe(pfd) != 0)
		FAIL("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	if (posix_spawn(&child, argv[0], &fa, NULL, argv, NULL) != 0)
		FAIL("cannot start %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	while ((p = strstr(buf, "127.0.0.1:")) == NULL ||
	    strchr(p, '\n') == NULL) {
		ssize_t n = read(pfd[0], buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			FAIL("%s exited before it listened", argv[0]);
		len += (size_t)n;
		buf[len] = '\0';
	}
	/* Its later output goes nowhere; it must not block on a full pipe. */
	if (fork() == 0) {
		while (read(pfd[0], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(pfd[0]);
	return (atoi(p + strlen("127.0.0.1:")));
}

static void
stop(void)
{
	int st;

	kill(child, SIGKILL);
	waitpid(child, &st, 0);
}

static int
dial(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		FAIL("connect: %s", strerror(errno));
	return (fd);
}

static void
send_all(int fd, const void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w =
		    send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);

		if (w <= 0)
			FAIL("send: %s", strerror(errno));
		off += (size_t)w;
	}
}

/* Read until `want' bytes or EOF; returns the count. */
static size_t
recv_upto(int fd, char *p, size_t want)
{
	size_t got = 0;
	ssize_t r;

	while (got < want && (r = recv(fd, p + got, want - got, 0)) > 0)
		got += (size_t)r;
	return (got);
}

/* ---- echo ---- */

static int port;

static void *
echo_client(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u | 1;
	static __thread char out[65536], in[65536];
	int fd = dial(port);

	for (int round = 0; round < 20; round++) {
		size_t n = 1 + (size_t)rand_r(&seed) % sizeof(out);

		for (size_t i = 0; i < n; i++)
			out[i] = (char)rand_r(&seed);
		send_all(fd, out, n);
		if (recv_upto(fd, in, n) != n || memcmp(in, out, n) != 0)
			FAIL("echo: round %d of %zu bytes came back wrong",
			    round, n);
	}
	close(fd);
	return (NULL);
}

static void
test_echo(const char *path)
{
	char *argv[] = {(char *)path, "0", "2", NULL};
	pthread_t t[16];

	port = start(argv);
	for (int i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, echo_client, (void *)(uintptr_t)i);
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	stop();
}

/* ---- httpd ---- */

/* Read one response: its status and, by Content-Length, its body. */
static int
response(int fd, char *buf, size_t cap, size_t *used)
{
	char *end, *cl;
	int status;
	size_t hdr, body;

	for (;;) {
		buf[*used] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL)
			break;
		ssize_t r = recv(fd, buf + *used, cap - 1 - *used, 0);

		if (r <= 0)
			return (-1);
		*used += (size_t)r;
	}
	hdr = (size_t)(end - buf) + 4;
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		FAIL("httpd: not a status line: %.40s", buf);
	cl = strstr(buf, "Content-Length: ");
	body = cl != NULL && cl < end ? (size_t)atol(cl + 16) : 0;
	while (*used < hdr + body) {
		ssize_t r = recv(fd, buf + *used, cap - 1 - *used, 0);

		if (r <= 0)
			FAIL("httpd: body cut short");
		*used += (size_t)r;
	}
	memmove(buf, buf + hdr + body, *used - hdr - body);
	*used -= hdr + body;
	return (status);
}

static void *
http_client(void *arg)
{
	static const char get[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
	char buf[8192];
	size_t used = 0;
	int fd = dial(port);

	(void)arg;
	/* Keep-alive, one at a time, then ten pipelined in one send. */
	for (int i = 0; i < 50; i++) {
		send_all(fd, get, sizeof(get) - 1);
		if (response(fd, buf, sizeof(buf), &used) != 200)
			FAIL("httpd: request %d not 200", i);
	}
	{
		char many[10 * sizeof(get)];

		for (int i = 0; i < 10; i++)
			memcpy(many + i * (sizeof(get) - 1), get,
			    sizeof(get) - 1);
		send_all(fd, many, 10 * (sizeof(get) - 1));
		for (int i = 0; i < 10; i++)
			if (response(fd, buf, sizeof(buf), &used) != 200)
				FAIL("httpd: pipelined request %d not 200", i);
	}
	send_all(fd, "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n", 35);
	if (response(fd, buf, sizeof(buf), &used) != 404)
		FAIL("httpd: unknown path not 404");
	send_all(fd, "garbage\r\n\r\n", 11);
	if (response(fd, buf, sizeof(buf), &used) != 400)
		FAIL("httpd: garbage not 400");
	if (recv(fd, buf, sizeof(buf), 0) != 0)
		FAIL("httpd: connection open after a 400");
	close(fd);
	return (NULL);
}

static void
test_httpd(const char *path)
{
	char *argv[] = {(char *)path, "--port", "0", "--workers", "2", NULL};
	pthread_t t[16];

	port = start(argv);
	for (int i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, http_client, NULL);
	for (int i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	stop();
}

int
main(int argc, char **argv)
{
	if (argc != 3)
		FAIL("usage: examples echo|httpd PATH");
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "echo") == 0)
		test_echo(argv[2]);
	else if (strcmp(argv[1], "httpd") == 0)
		test_httpd(argv[2]);
	else
		FAIL("unknown example %s", argv[1]);
	printf("ok: %s\n", argv[1]);
	return (0);
}
