/*
 * scrub.h - an untrusted process's frames made safe to hand on: what they
 * say is kept only as far as the kernel confirms it (peer.h).
 *
 * Contract (each returns 0: m and the frame stay as they are; 1: m was
 * decoded anew from a rewritten frame, *f and *len point at it, a buffer
 * the caller frees once frame() is done with it; -1: it could not be
 * rewritten, drop it):
 *   - scrub_map(): a MAP of an untrusted peer whose file the process does
 *     not map, or its user could not open, becomes a MAP of "[unverified]"
 *     with no build-id (counted in ingest.unverified, said once a
 *     minute at most); one whose file has no GNU build-id becomes
 *     "[no build-id] PATH" (nothing would tie the path, opened again later,
 *     to the file checked now); otherwise it carries its file's own
 *     build-id, whatever it claimed.  With ingest.live_roots (the agent,
 *     which names frames while the processes live), the MAP of any process
 *     in another mount namespace names its file as /proc/PID/root/PATH:
 *     its own file, not the one at PATH in ours (the build-id, checked
 *     when it is read, makes sure it is the same).
 *   - scrub_samples(): for a peer that may not read kernel symbols itself
 *     (c->hide_kernel), each run of kernel addresses in a stack becomes
 *     one address that no kernel symbol covers, named "[kernel]".
 */
#ifndef PROBE_SCRUB_H
#define PROBE_SCRUB_H

#include <stddef.h>
#include <stdint.h>

#include "data/wire_decode.h"

struct ingest;
struct ingest_conn;

int scrub_map(struct ingest *in, struct ingest_conn *c, struct probe_msg *m,
	      const uint8_t **f, size_t *len);
int scrub_samples(struct ingest *in, struct ingest_conn *c, struct probe_msg *m,
		  const uint8_t **f, size_t *len);

#endif
