/* util.c - see util.h. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int mem_write(int (*write)(void *arg, FILE *f), void *arg, uint8_t **out, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f) {
		probe_err("cannot build a profile in memory: %s", strerror(errno));
		return -1;
	}
	int rc = write(arg, f);
	if (fclose(f) != 0 && rc == 0) {
		probe_err("cannot build a profile in memory: %s", strerror(errno));
		rc = -1;
	}
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*out = (uint8_t *)buf;
	*len = n;
	return 0;
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

/* The code point of a valid UTF-8 sequence at s, and its length; 0 if none. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;
	uint32_t v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		lo = c == 0xe0 ? 0xa0 : 0x80;   /* no overlong forms */
		hi = c == 0xed ? 0x9f : 0xbf;   /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;   /* nothing past U+10FFFF */
	} else {
		return 0;                       /* continuation, 0xc0, 0xc1, 0xf5+ */
	}
	for (size_t i = 1; i < len; i++) {
		unsigned b = s[i];              /* a NUL ends the loop: not 0x80+ */
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
			return 0;
		v = v << 6 | (b & 0x3f);
	}
	*cp = v;
	return len;
}

size_t printable_next(const char *s, uint32_t *cp)
{
	size_t len = utf8_decode((const unsigned char *)s, cp);
	if (len == 0) {
		*cp = PRINTABLE_REPL_CP;
		return 1;
	}
	if (*cp < 0x20 || (*cp >= 0x7f && *cp < 0xa0) || *cp == 0xfffe || *cp == 0xffff)
		*cp = PRINTABLE_REPL_CP;
	return len;
}

size_t utf8_encode(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t printable_copy(char *dst, size_t cap, const char *s, size_t max_chars)
{
	size_t o = 0, n = 0;
	while (*s && (!max_chars || n < max_chars)) {
		uint32_t cp;
		size_t in = printable_next(s, &cp);
		char enc[4];
		size_t k = utf8_encode(cp, enc);
		if (o + k >= cap)
			break;
		memcpy(dst + o, enc, k);
		o += k;
		s += in;
		n++;
	}
	dst[o] = '\0';
	return n;
}

/* Each input byte becomes at most 3 (U+FFFD for a stray byte). */
char *printable_dup(const char *s)
{
	size_t n = strlen(s);
	if (n > (SIZE_MAX - 1) / 3)
		probe_oom();
	char *d = xmalloc(3 * n + 1);
	printable_copy(d, 3 * n + 1, s, 0);
	return d;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int own_vdso(const uint8_t **image, size_t *len)
{
	static const uint8_t *vdso;
	static size_t vdso_len;
	static int done;
	if (!done) {
		done = 1;
		FILE *f = fopen("/proc/self/maps", "re");
		char line[512];
		unsigned long long lo, hi;
		while (f && !vdso && fgets(line, sizeof line, f))
			if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
			    lo < hi) {
				vdso = (const uint8_t *)(uintptr_t)lo;
				vdso_len = (size_t)(hi - lo);
			}
		if (f)
			fclose(f);
	}
	*image = vdso;
	*len = vdso_len;
	return vdso ? 0 : -1;
}

int open_regular(const char *path)
{
	int pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	struct stat st;
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(pfd);
		errno = EINVAL;
		return -1;
	}
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	int err = errno;
	close(pfd);
	errno = err;
	return fd;
}
