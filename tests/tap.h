/*
 * tap.h - a minimal TAP producer for probe's C tests (run under prove).
 *
 *   plan(n); ok(cond, "name %d", x); is_int(got, want, "name"); ... done();
 * done() returns the exit status: 0 when every test passed and the plan
 * was met, 1 otherwise.
 */
#ifndef PROBE_TAP_H
#define PROBE_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_planned, tap_run, tap_failed;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

static inline int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

#define is_int(got, want, ...)                                             \
	do {                                                               \
		long long g_ = (long long)(got), w_ = (long long)(want);   \
		if (!ok(g_ == w_, __VA_ARGS__))                            \
			diag("  got %lld, expected %lld", g_, w_);         \
	} while (0)

static inline int done(void)
{
	if (tap_run != tap_planned)
		diag("planned %d tests but ran %d", tap_planned, tap_run);
	return tap_failed || tap_run != tap_planned;
}

#endif /* PROBE_TAP_H */
