/*
 * util.h - small helpers every collector module uses.
 *
 * Contract:
 *   - x*alloc never return NULL: running out of memory prints one
 *     "probe: out of memory" line and exits 1 (there is nothing sensible a
 *     profiler can do without memory, and callers stay simple).
 *   - probe_err/probe_warn print exactly one line on stderr, prefixed
 *     "probe: " (and "probe: warning: "); the caller says what happened and
 *     what to do.  probe_info: the same, for what a service logs (probe
 *     agent).
 *   - parse_* accept the whole string or fail: "12x", "", "-3" are errors.
 *   - printable_dup copies untrusted text (paths, thread names, argv from a
 *     recording) with control bytes replaced, so a report cannot carry
 *     terminal escape sequences or break its own line format.
 */
#ifndef PROBE_UTIL_H
#define PROBE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PROBE_VERSION
#define PROBE_VERSION "0.1.0"
#endif

__attribute__((noreturn)) void probe_oom(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow *p (an array of elem-sized items, capacity *cap) to hold need items. */
void *xgrow(void *p, size_t *cap, size_t need, size_t elem);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void probe_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void probe_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void probe_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set: probe_warn prints nothing (probe report -q); errors still print. */
extern int probe_no_warnings;

/* Decimal, no sign, no junk; 0 on success, -1 otherwise. */
int parse_u64(const char *s, uint64_t *out);
/* A finite number 0..100 ("5", "0.5", "2%"); 0 on success, -1 otherwise. */
int parse_percent(const char *s, double *out);

/* The part after the last '/', or the whole string. */
const char *path_basename(const char *path);
/* "345 KiB", "1.2 MiB", "812 B" into buf. */
void human_size(uint64_t bytes, char *buf, size_t len);
/* A copy with bytes < 0x20 and 0x7f replaced by '?'. */
char *printable_dup(const char *s);

/* a + b, or UINT64_MAX when that overflows (weights are untrusted input). */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

#endif
