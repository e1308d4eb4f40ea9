/*
 * load.h - a recording read back into the tables probe report and probe
 * diff show.
 *
 * Contract: recording_load() reads file ("-": standard input) through
 * recfile.h's reader and aggregates it (aggregate.h), finished; with its
 * samples one by one if keep_samples (agg_samples()); counting only the
 * samples of the event named event (NULL: all).  memory_mib bounds what
 * the tables take (0: no bound): without a bound a recording of random
 * deep stacks, every one distinct, needed 11.5 GB for its first 100 MB
 * (each distinct address a location of its own, about 1 KiB resolved,
 * 256 of them a sample).  NULL after a "probe: FILE: ..." message; what
 * the bound left out, and frames before a HELLO, are warned of.
 */
#ifndef PROBE_LOAD_H
#define PROBE_LOAD_H

#include <stdint.h>

#include "data/aggregate.h"

#define LOAD_MEMORY_MIB 1024    /* the default bound (report's --max-memory) */

struct agg *recording_load(const char *file, int keep_samples, const char *event,
			   uint64_t memory_mib);

#endif
