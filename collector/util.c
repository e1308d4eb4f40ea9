/* util.c - see util.h. */
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void probe_oom(void)
{
	static const char msg[] = "probe: out of memory\n";
	/* write(2), not stdio: stdio itself may need memory. */
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		probe_oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		probe_oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		probe_oom();
	return p;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			probe_oom();
		c *= 2;
	}
	if (c > SIZE_MAX / elem)
		probe_oom();
	p = xrealloc(p, c * elem);
	*cap = c;
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		probe_oom();
	return s;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	/* One fprintf per line so that lines from several writers stay whole. */
	char *body = NULL;
	if (vasprintf(&body, fmt, ap) < 0)
		probe_oom();
	fprintf(stderr, "probe: %s%s\n", prefix, body);
	free(body);
}

void probe_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int probe_no_warnings;

void probe_warn(const char *fmt, ...)
{
	va_list ap;
	if (probe_no_warnings)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void probe_info(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_percent(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == '%')
		end++;
	if (*end || !isfinite(v) || v < 0 || v > 100)
		return -1;
	*out = v;
	return 0;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

void human_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, len, "%.0f KiB", bytes / 1024.0);
	else if (bytes < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
}

char *printable_dup(const char *s)
{
	char *d = xstrdup(s);
	for (unsigned char *p = (unsigned char *)d; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	return d;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
