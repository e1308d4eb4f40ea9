/*
 * strpool.h - string interning: equal strings get the same pointer, so
 * callers compare and hash names by pointer.
 *
 * Contract: strpool_intern() returns a pointer valid until strpool_free();
 * the input need not outlive the call.
 */
#ifndef PROBE_STRPOOL_H
#define PROBE_STRPOOL_H

struct strpool;

struct strpool *strpool_new(void);
void strpool_free(struct strpool *p);
const char *strpool_intern(struct strpool *p, const char *s);

#endif
