/*
 * cfi_side.c - probe's cfi_learn.c, compiled unmodified (included whole,
 * with the Makefile's flags), plus two wrappers that reach its static
 * image_rule() for the interpreter-only timing.  Build: see Makefile.
 */
#include "ingest/cfi_learn.c"

#include "cfi_side.h"

/* The object's image as cfi_learn cached it (after a cfi_rule_at). */
const void *cb_image(const struct cfi_map *m, pid_t pid)
{
	struct file *f = file_get(m, pid);
	return f ? &f->im : NULL;
}

uint64_t cb_image_rule(const void *im, uint64_t vaddr)
{
	return image_rule(im, vaddr);
}
