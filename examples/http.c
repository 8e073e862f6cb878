/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http: request parsing and the responses, for examples/httpd.c and the
 * benchmark's servers; see http.h.
 */
#include "http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static const char root_page[] =
    "Hello from httpd: every connection is one uthread, which sleeps in "
    "ult_read between requests.\n";
static const char not_found_page[] = "not found\n";
static const char bad_page[] = "bad request\n";
static const char method_page[] = "only GET and HEAD\n";

const size_t HTTP_ROOT_LEN = sizeof(root_page) - 1;

/* No response is longer, so one always fits when this much of out[] is
 * free. */
#define RESPONSE_MAX 512

struct request {
	int minor;		 /* HTTP/1.minor */
	int head;		 /* HEAD: headers only */
	int status;		 /* what the answer will be */
	int hosts;		 /* Host headers seen */
	int close, keepalive;	 /* Connection tokens seen */
	int have_length;	 /* a Content-Length was given */
	unsigned long long body; /* its value */
};

void
http_init(struct http_conn *c)
{
	c->inlen = 0;
	c->outlen = 0;
	c->skip = 0;
	c->closing = 0;
}

/* RFC 9110's tchar: what a method or a header name is made of. */
static int
is_tchar(int ch)
{
	return ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') ||
	    (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL));
}

static int
is_token(const char *s, size_t n)
{
	if (n == 0)
		return (0);
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return (0);
	return (1);
}

static int
equals(const char *s, size_t n, const char *lit)
{
	return (n == strlen(lit) && strncasecmp(s, lit, n) == 0);
}

/*
 * The next line of [*p, end), without its LF or CRLF; 0 when no line
 * ends there.  Bare LF is accepted, as RFC 9112 allows a recipient to.
 */
static int
next_line(const char **p, const char *end, const char **line, size_t *len)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (nl == NULL)
		return (0);
	*line = *p;
	*len = (size_t)(nl - *p);
	if (*len > 0 && nl[-1] == '\r')
		(*len)--;
	*p = nl + 1;
	return (1);
}

/*
 * Where the header block that starts at s ends (just past its empty
 * line), or 0 if it has not all arrived yet.
 */
static size_t
header_end(const char *s, size_t n)
{
	const char *p = s, *end = s + n, *line;
	size_t len;

	while (next_line(&p, end, &line, &len))
		if (len == 0)
			return ((size_t)(p - s));
	return (0);
}

/* "METHOD SP target SP HTTP/1.x"; 0 if it is not that. */
static int
parse_request_line(const char *s, size_t n, struct request *r)
{
	const char *end = s + n, *sp1, *target, *sp2, *v, *query;
	size_t pathlen;
	int root;

	sp1 = memchr(s, ' ', n);
	if (sp1 == NULL || !is_token(s, (size_t)(sp1 - s)))
		return (0);
	target = sp1 + 1;
	sp2 = memchr(target, ' ', (size_t)(end - target));
	if (sp2 == NULL || sp2 == target)
		return (0);
	for (const char *t = target; t < sp2; t++)
		if ((unsigned char)*t <= ' ' || *t == 0x7f)
			return (0);
	v = sp2 + 1;
	if (end - v != 8 || memcmp(v, "HTTP/1.", 7) != 0 || v[7] < '0' ||
	    v[7] > '9')
		return (0);
	r->minor = v[7] - '0';

	/* The page is the path; a query does not change it. */
	pathlen = (size_t)(sp2 - target);
	query = memchr(target, '?', pathlen);
	if (query != NULL)
		pathlen = (size_t)(query - target);
	root = pathlen == 1 && target[0] == '/';
	if (sp1 - s == 3 && memcmp(s, "GET", 3) == 0)
		r->status = root ? 200 : 404;
	else if (sp1 - s == 4 && memcmp(s, "HEAD", 4) == 0) {
		r->status = root ? 200 : 404;
		r->head = 1;
	} else
		r->status = 405;
	return (1);
}

/* The comma-separated tokens of a Connection header. */
static void
parse_connection(const char *v, size_t n, struct request *r)
{
	const char *end = v + n;

	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *stop = comma != NULL ? comma : end;
		const char *a = v, *b = stop;

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (equals(a, (size_t)(b - a), "close"))
			r->close = 1;
		else if (equals(a, (size_t)(b - a), "keep-alive"))
			r->keepalive = 1;
		v = stop + 1;
	}
}

/* One "name: value" line; 0 if it is malformed or a header this server
 * cannot honour. */
static int
parse_header(const char *s, size_t n, struct request *r)
{
	const char *colon = memchr(s, ':', n), *v, *end = s + n;
	size_t namelen;

	/* A name must touch its colon, and a line starting with white space
	 * (obsolete folding) has no name: both are errors in RFC 9112. */
	if (colon == NULL || !is_token(s, (size_t)(colon - s)))
		return (0);
	namelen = (size_t)(colon - s);
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;

	if (equals(s, namelen, "host"))
		r->hosts++;
	else if (equals(s, namelen, "connection"))
		parse_connection(v, (size_t)(end - v), r);
	else if (equals(s, namelen, "content-length")) {
		unsigned long long len = 0;

		if (v == end)
			return (0);
		for (const char *d = v; d < end; d++) {
			if (*d < '0' || *d > '9' || len > (~0ULL - 9) / 10)
				return (0);
			len = len * 10 + (unsigned)(*d - '0');
		}
		/* Two different lengths: the body's end is unknown. */
		if (r->have_length && r->body != len)
			return (0);
		r->have_length = 1;
		r->body = len;
	} else if (equals(s, namelen, "transfer-encoding")) {
		/* A chunked body would have to be parsed to find where the
		 * next request starts; this server does not read bodies. */
		return (0);
	}
	return (1);
}

static void
respond(struct http_conn *c, int status, int head, int close, int minor)
{
	const char *reason, *page, *extra = "", *conn = "";
	int n;

	switch (status) {
	case 200:
		reason = "OK";
		page = root_page;
		break;
	case 404:
		reason = "Not Found";
		page = not_found_page;
		break;
	case 405:
		reason = "Method Not Allowed";
		page = method_page;
		extra = "Allow: GET, HEAD\r\n";
		break;
	default:
		status = 400;
		reason = "Bad Request";
		page = bad_page;
		break;
	}
	/* What the client is to expect when it is not the default: an
	 * HTTP/1.1 connection stays open unless told otherwise, a 1.0 one
	 * only when told so. */
	if (close)
		conn = "Connection: close\r\n";
	else if (minor == 0)
		conn = "Connection: keep-alive\r\n";
	n = snprintf(c->out + c->outlen, HTTP_OUT_MAX - c->outlen,
	    "HTTP/1.1 %d %s\r\n"
	    "Server: ult-httpd\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: %zu\r\n"
	    "%s%s\r\n"
	    "%s",
	    status, reason, strlen(page), extra, conn, head ? "" : page);
	c->outlen += (size_t)n;
	c->closing = close;
}

/* Answer the request whose header block is s[0..n). */
static void
answer(struct http_conn *c, const char *s, size_t n)
{
	struct request r = {0};
	const char *p = s, *end = s + n, *line;
	size_t len;

	if (!next_line(&p, end, &line, &len) ||
	    !parse_request_line(line, len, &r))
		goto bad;
	while (next_line(&p, end, &line, &len) && len > 0)
		if (!parse_header(line, len, &r))
			goto bad;
	/* HTTP/1.1 requires exactly one Host; 1.0 allows none. */
	if (r.hosts > 1 || (r.minor >= 1 && r.hosts == 0))
		goto bad;
	c->skip = r.body;
	respond(c, r.status, r.head, r.close || (r.minor == 0 && !r.keepalive),
	    r.minor);
	return;
bad:
	/* Where a bad request ends is unknown, so nothing after it can be
	 * parsed: answer and close. */
	respond(c, 400, 0, 1, 1);
}

enum http_next
http_serve(struct http_conn *c)
{
	size_t pos = 0, hdr;
	enum http_next next = HTTP_READ;

	while (!c->closing) {
		size_t k = c->inlen - pos;

		if (c->skip > 0) {
			if (k > c->skip)
				k = c->skip;
			pos += k;
			c->skip -= k;
			if (c->skip > 0)
				break;
		}
		/* RFC 9112 asks servers to ignore empty lines before a
		 * request (some clients send CRLF after a body). */
		while (pos < c->inlen &&
		    (c->in[pos] == '\r' || c->in[pos] == '\n'))
			pos++;
		if (pos == c->inlen)
			break;
		hdr = header_end(c->in + pos, c->inlen - pos);
		if (hdr == 0) {
			const char *p = c->in + pos, *line;
			size_t len;
			struct request r = {0};

			/* A request line that is already wrong is answered
			 * now, rather than after headers that may never
			 * come; one whose headers cannot fit, too. */
			if ((next_line(&p, c->in + c->inlen, &line, &len) &&
				!parse_request_line(line, len, &r)) ||
			    (pos == 0 && c->inlen == HTTP_IN_MAX)) {
				if (HTTP_OUT_MAX - c->outlen < RESPONSE_MAX) {
					next = HTTP_WRITE;
					break;
				}
				respond(c, 400, 0, 1, 1);
			}
			break;
		}
		if (HTTP_OUT_MAX - c->outlen < RESPONSE_MAX) {
			next = HTTP_WRITE;
			break;
		}
		answer(c, c->in + pos, hdr);
		pos += hdr;
	}
	memmove(c->in, c->in + pos, c->inlen - pos);
	c->inlen -= pos;
	return (c->closing ? HTTP_CLOSE : next);
}

int
http_listen(int port, int *bound)
{
	struct sockaddr_in sin = {
	    .sin_family = AF_INET,
	    .sin_port = htons((unsigned short)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sin);
	int fd, one = 1, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return (-1);
	/* A restarted server may bind while old connections linger in
	 * TIME_WAIT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return (-1);
	}
	*bound = ntohs(sin.sin_port);
	return (fd);
}

int
http_accept_retry(int err)
{
	return (err == EINTR || err == ECONNABORTED || err == EMFILE ||
	    err == ENFILE || err == ENOBUFS || err == ENOMEM || err == EPROTO ||
	    err == EPERM);
}
