/*
 * wire_frames.h - frames the C tests and test programs build
 * (include/probe/wire.h's encoders): one HELLO for them all.
 */
#ifndef PROBE_TEST_WIRE_FRAMES_H
#define PROBE_TEST_WIRE_FRAMES_H

#include "probe/wire.h"

/* A process sampling cpu-clock at 999 Hz, started at start_ns, no arguments. */
static inline void test_put_hello(struct probe_wbuf *w, uint32_t pid, uint32_t ppid,
				  uint64_t start_ns, const char *exe, const char *comm)
{
	size_t at = probe_frame_begin(w, PROBE_F_HELLO, pid);
	probe_put_u32(w, PROBE_WIRE_VERSION);
	probe_put_u32(w, ppid);
	probe_put_u32(w, 1);            /* PERF_TYPE_SOFTWARE, cpu-clock */
	probe_put_u64(w, 0);
	probe_put_u8(w, 1);
	probe_put_u64(w, 999);
	probe_put_u64(w, start_ns);
	probe_put_str(w, "cpu-clock");
	probe_put_str(w, exe);
	probe_put_str(w, comm);
	probe_put_u16(w, 0);
	probe_frame_end(w, at);
}

#endif
