/*
 * pprof_merge.h - several pprof profiles (gzipped profile.proto) as one:
 * what probe agent answers for /debug/pprof/heap without seconds when
 * several processes stream allocations.
 *
 * Contract:
 *   - pprof_merge() reads each body (gzip, or bare protobuf), and writes
 *     one gzipped profile holding every sample of each, with its labels
 *     (pid among them: whose it is); each profile's mappings, locations
 *     and functions are renumbered after those of the ones before it, and
 *     its strings appended to the string table after them.  The first
 *     profile gives the sample types, default type, period, drop/keep
 *     frames and comments; time_nanos is the earliest, duration_nanos
 *     reaches the latest end.
 *   - All must have the sample types of the first (type and unit, in
 *     order): else -1, as for a body that cannot be read, with a message.
 *   - *out is malloc'd, for the caller to free.
 * pprof_gzip() is pprof.c's writer: prof, gzipped, onto out.
 */
#ifndef PROBE_PPROF_MERGE_H
#define PROBE_PPROF_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.pb-c.h"

int pprof_gzip(const Perftools__Profiles__Profile *prof, FILE *out);
int pprof_merge(uint8_t *const *bodies, const size_t *lens, size_t n, uint8_t **out,
		size_t *outlen);

#endif
