/* events.c - see events.h. */
#include "events.h"

#include <string.h>

static const char *const events[] = {
	/* software: always available */
	"cpu-clock", "task-clock", "page-faults", "faults", "minor-faults",
	"major-faults", "context-switches", "cs", "cpu-migrations", "migrations",
	"alignment-faults", "emulation-faults",
	/* hardware: where the machine (or VM) has a PMU */
	"cycles", "cpu-cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-instructions", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "idle-cycles-frontend",
	"stalled-cycles-backend", "idle-cycles-backend", "ref-cycles",
};

int event_known(const char *name)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (strcmp(events[i], name) == 0)
			return 1;
	return 0;
}

const char *event_list(void)
{
	return "cpu-clock, task-clock, page-faults, minor-faults, major-faults, "
	       "context-switches, cpu-migrations, cycles, instructions, "
	       "cache-references, cache-misses, branches, branch-misses, "
	       "bus-cycles, ref-cycles";
}
