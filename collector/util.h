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
 *   - Text from outside (function names from ELF files and perf maps,
 *     thread and process names, paths, argv, all of a recording) is made
 *     printable where it comes in (printable_dup), and whatever writes text
 *     out reads it through printable_next: every output is valid UTF-8
 *     without control characters, so none can carry a terminal escape
 *     sequence (ESC, or C1's CSI 0x9b, raw or as UTF-8) or break its own
 *     line format.  What is replaced, by U+FFFD (PRINTABLE_REPL): C0
 *     controls (tab and newline too), DEL, C1 controls (U+0080-U+009F),
 *     the noncharacters U+FFFE and U+FFFF (XML forbids them), and each byte
 *     that does not start valid UTF-8 (overlong forms, surrogates, past
 *     U+10FFFF, sequences cut short, stray continuation bytes).  Valid
 *     UTF-8 text (Japanese names, C++'s, emoji) is kept byte for byte.
 */
#ifndef PROBE_UTIL_H
#define PROBE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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
/*
 * A path opened for reading only if it leads to a regular file: resolved
 * once with O_PATH (which opens nothing: a FIFO or a device a recording or
 * a process names is not opened, and opening some devices does things),
 * then opened through that very file.  The fd, or -1 (errno set).
 */
int open_regular(const char *path);
/*
 * The collector's own vDSO, mapped for the life of the process: the
 * kernel's image, the same in every process of this kernel (its names and
 * frame rules are read here for theirs).  0, or -1 where none is found.
 */
int own_vdso(const uint8_t **image, size_t *len);
/* A finite number 0..100 ("5", "0.5", "2%"); 0 on success, -1 otherwise. */
int parse_percent(const char *s, double *out);

/* The part after the last '/', or the whole string. */
const char *path_basename(const char *path);
/*
 * What write(arg, f) writes to a FILE, into a malloc'd buffer (*out, *len):
 * 0, or -1 after one message (write's own -1 is taken as said).
 */
int mem_write(int (*write)(void *arg, FILE *f), void *arg, uint8_t **out, size_t *len);
/* "345 KiB", "1.2 MiB", "812 B" into buf. */
void human_size(uint64_t bytes, char *buf, size_t len);
/* What replaces an unprintable character (see the contract), and its code point. */
#define PRINTABLE_REPL "\xef\xbf\xbd"
#define PRINTABLE_REPL_CP 0xfffdu
/*
 * The character at s (not at its NUL) as text output shows it: its length
 * in bytes (1 to 4), and in *cp its code point, or PRINTABLE_REPL_CP for
 * what the contract replaces (an invalid byte: that one byte).
 */
size_t printable_next(const char *s, uint32_t *cp);
/* The UTF-8 bytes of code point cp (at most 4) into out; returns how many. */
size_t utf8_encode(uint32_t cp, char *out);
/* A copy of s (malloc'ed) with what the contract replaces replaced. */
char *printable_dup(const char *s);
/*
 * The same into dst (cap >= 1 bytes, always NUL-terminated), whole
 * characters only: at most max_chars of them (0: no limit), and what fits.
 * Returns the characters written (for padding to a width).
 */
size_t printable_copy(char *dst, size_t cap, const char *s, size_t max_chars);

/* a + b, or UINT64_MAX when that overflows (weights are untrusted input). */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

#endif
