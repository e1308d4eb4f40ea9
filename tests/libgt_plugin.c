/*
 * libgt_plugin - the plugin gt_plugin loads: built three times
 * (-DPLUGIN=a, b, c) into libgt_plugin_{a,b,c}.so, -O2 -fomit-frame-pointer.
 * Its work is done in a *static* function (hot_a, hot_b, hot_c): only the
 * plugin's .symtab names it, never .dynsym, so a profile that names it read
 * the file's own symbol table, for an object that is gone by the end.
 */
#include "gt_work.h"

#ifndef PLUGIN
#define PLUGIN a
#endif
#define CAT_(x, y) x##y
#define CAT(x, y) CAT_(x, y)
#define HOT CAT(hot_, PLUGIN)

GT_KEEP static void HOT(void) { GT_SPIN(1, 1.25); }

/* The one exported entry point: run UNITS units of work. */
void plugin_run(long units)
{
	for (long i = 0; i < units; i++)
		HOT();
}
