/*
 * wire_int.h - what the decoder's two files share (wire_decode.c: the
 * stream and the frames every stream carries; wire_recorded.c: the frames
 * only recordings of version 3 hold).  Not for other users.
 */
#ifndef PROBE_WIRE_INT_H
#define PROBE_WIRE_INT_H

#include "data/wire_decode.h"
#include "probe/bytes.h"

/* A u16-length string copied into scratch, NUL-terminated ("" and bad set
   when it does not fit or holds a NUL). */
const char *wire_rd_str(struct probe_rd *r, struct probe_scratch *sc);
/* Pass over n varints, checking each; bad set when one does not end well. */
void wire_skip_varints(struct probe_rd *r, uint64_t n);

/* The bodies of STACK, STACKED (as SAMPLES), ZSTD and SYMTAB; 0, or -1
   with err (r->bad: the caller says what). */
int wire_dec_stack(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX]);
int wire_dec_stacked(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX]);
int wire_dec_zstd(struct probe_rd *r, struct probe_msg *m, char err[PROBE_ERR_MAX]);
int wire_dec_symtab(struct probe_rd *r, struct probe_msg *m, struct probe_scratch *sc,
		    char err[PROBE_ERR_MAX]);
/* probe_samples_next_raw() of a STACKED frame's samples. */
int wire_stacked_next(struct probe_msg *m, struct probe_sample_raw *out);

void wire_seterr(char err[PROBE_ERR_MAX], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
