/*
 * hashtab.h - include this instead of <uthash.h> in every collector file.
 *
 * Contract: all uthash tables of the collector use the same hash function
 * (a table must be hashed identically wherever it is touched) and the same
 * out-of-memory policy as util.h (one message, exit 1).
 *
 * Why not uthash's default (Jenkins, byte at a time): stack keys are up to
 * 256 x 8 bytes and a report hashes one per sample, so a word-at-a-time
 * multiply-xor hash keeps a million-sample report well under a second.
 */
#ifndef PROBE_HASHTAB_H
#define PROBE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

static inline uint64_t probe_hash_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline unsigned probe_hash_bytes(const void *key, size_t n)
{
	const unsigned char *p = (const unsigned char *)key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ probe_hash_mix(w)) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, p, n);
		h = (h ^ probe_hash_mix(w ^ ((uint64_t)n << 56))) * 0x9e3779b97f4a7c15ull;
	}
	return (unsigned)(probe_hash_mix(h) >> 32);
}

#define HASH_FUNCTION(keyptr, keylen, hashv) \
	((hashv) = probe_hash_bytes((keyptr), (size_t)(keylen)))
#define uthash_fatal(msg) probe_oom()

#include <uthash.h>

#endif
