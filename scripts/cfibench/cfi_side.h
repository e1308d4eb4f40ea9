#ifndef CFI_SIDE_H
#define CFI_SIDE_H
#include <stdint.h>
#include <sys/types.h>
#include "ingest/cfi_learn.h"
const void *cb_image(const struct cfi_map *m, pid_t pid);
uint64_t cb_image_rule(const void *im, uint64_t vaddr);
#endif
