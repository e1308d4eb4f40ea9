/*
 * annot.h - probe top's 'a' view: the selected function annotated (annot.c).
 *
 * Contract: annot_open() shows loc's instructions and source lines with
 * their shares (annotate.h), scrolled near the hottest instruction;
 * annot_refresh() remakes the text from the samples so far, when more came
 * (draw calls it while the view shows); annot_key() takes the view's keys (arrows, pages,
 * Esc or 'a' closes it): 1 when it took ch.  view.c draws annot_lines.
 */
#ifndef PROBE_TOP_ANNOT_H
#define PROBE_TOP_ANNOT_H

#include "top/top_state.h"

void annot_open(struct top *t, uint32_t loc);
void annot_refresh(struct top *t);
void annot_close(struct top *t);
int annot_key(struct top *t, int ch, int page);

#endif
