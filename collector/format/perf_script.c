/*
 * perf_script.c - the text `perf script` prints for a recording with call
 * graphs, for the tools that read that: FlameGraph's stackcollapse-perf.pl,
 * speedscope's "linux perf" importer, the Firefox Profiler, Hotspot.
 *
 * Contract:
 *   - Every sample, in time order, as `perf script -F comm,pid,tid,time,
 *     period,event,ip,sym,symoff,dso` prints it (perf 6.5's widths):
 *       "COMM %7u/%-7u %12s: %10PERIOD EVENT: \n"   (sic: a space ends it)
 *     then one line per frame, leaf first, then an empty line:
 *       "\t%16x SYMBOL+0xOFF (MODULE PATH)\n"
 *   - --event inuse: each allocation still in use at the end, at the time
 *     it was made, its EVENT "inuse".
 *   - COMM is the thread's name (else the process's; leading spaces
 *     dropped, which the readers' "^(\S.+?)\s+(\d+)" could not take), TIME
 *     seconds.microseconds of the recording's clock (CLOCK_MONOTONIC), PERIOD
 *     the sample's weight as recorded, EVENT the event's name with ":u" when
 *     none of that process's samples is in the kernel (probe samples user
 *     space only unless PROBE_KERNEL=1; perf says ":u" for that).
 *   - The address is the ELF address (runtime address - load bias), as perf
 *     prints it and `addr2line -e MODULE` takes it; a return address less 1
 *     (inside its call instruction, where probe names it), as perf prints
 *     DWARF call graphs; where no map covers it ([unknown], the kernel), the
 *     address itself.
 *   - SYMBOL+0xOFF: the function the symbol table names and the address's
 *     offset in it; a function only DWARF names has no +0xOFF; an address
 *     nothing names is "[unknown]", as perf prints it (probe report's
 *     module+0xOFFSET is that address and module); the kernel's frames are
 *     named from /proc/kallsyms ("read_zero ([kernel.kallsyms])", a
 *     module's "([name])"), or "[unknown] ([kernel.kallsyms])" where it
 *     shows no addresses.
 *   - Inline frames (unless --no-inline), as perf script shows them by
 *     default: the same address, the inlined function's name with the offset
 *     in the containing function, and "(inlined)" for the module.
 *   - Paths are printed as they are, as perf does; a module path with a space
 *     in it does not match the readers' "\((\S*)\)", which skip that frame.
 * A stack keeps at most RESOLVE_MAX_FRAMES frames, inline frames dropped
 * first, as resolve_stack() does; libprobe's own frames are left out, and a
 * sample taken wholly in them is one frame "[probe] ([probe])", as the
 * other formats show it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "util.h"

#define INLINED_SUFFIX " [inlined]"


/* The thread's name as the header's first field: no leading space, never "". */
static const char *comm_field(const struct agg *a, uint32_t image, uint32_t tid)
{
	const char *n = report_thread_name(a, image, tid);
	while (*n == ' ')
		n++;
	return *n ? n : "?";
}

static int is_kernel(const struct loc *l)
{
	return l->kernel;
}

/*
 * kernel[image]: 1 when a sample of the image has a kernel frame (then the
 * event had no ":u").  Resolving here costs nothing later: it is cached.
 */
static uint8_t *kernel_images(const struct report_ctx *c)
{
	const struct agg *a = c->agg;
	uint8_t *kernel = xcalloc(agg_nimages(a) ? agg_nimages(a) : 1, 1);
	const struct agg_count *counts = agg_counts(a);
	for (size_t i = 0; i < agg_ncounts(a); i++) {
		uint32_t n;
		const uint64_t *addrs = agg_stack(a, counts[i].stack, &n);
		for (uint32_t j = 0; j < n && !kernel[counts[i].image]; j++) {
			const struct rframe *f;
			uint32_t m = resolve_addr(c->res, counts[i].image, counts[i].gen, addrs[j],
						  resolve_is_return(addrs, j), &f);
			kernel[counts[i].image] = is_kernel(resolver_loc(c->res, f[m - 1].loc));
		}
	}
	return kernel;
}

static void print_header(const struct report_ctx *c, const struct agg_sample *sm,
			 const struct agg_count *k, const uint8_t *kernel, FILE *out)
{
	const struct agg_image *im = agg_image(c->agg, k->image);
	uint32_t n;
	const uint64_t *addrs = agg_stack(c->agg, k->stack, &n);
	/* --off-cpu: a wait is an "off-cpu" sample, its period in ns. */
	int off = n > 0 && addrs[0] == AGG_FRAME_OFFCPU;
	const char *ev = off ? "off-cpu" : agg_inuse_shown(c->agg) ? "inuse" :
			 im->event_name[0] ? im->event_name : "unknown";
	char time[48];
	snprintf(time, sizeof(time), "%" PRIu64 ".%06" PRIu64, sm->time / 1000000000u,
		 sm->time % 1000000000u / 1000u);
	fprintf(out, "%s %7u/%-7u %12s: %10" PRIu64 " %s%s: \n",
		comm_field(c->agg, k->image, k->tid), im->pid, k->tid, time, sm->weight,
		ev, kernel[k->image] || off ? "" : ":u");
}

/* One frame's name as perf shows it: no " [inlined]" (the module says so). */
static void print_sym(const struct loc *l, const struct rwhere *w, FILE *out)
{
	size_t len = strlen(l->sym), sl = strlen(INLINED_SUFFIX);
	if (!l->named && !l->offcpu && !l->truncated) {
		fputs("[unknown]", out);
		return;
	}
	if (l->inlined && len > sl && strcmp(l->sym + len - sl, INLINED_SUFFIX) == 0)
		len -= sl;
	fwrite(l->sym, 1, len, out);
	if (w->has_symoff)
		fprintf(out, "+0x%" PRIx64, w->symoff);
}

/* The frames of one address: its inline frames, then its function. */
static void print_frames(const struct report_ctx *c, const struct rframe *f, uint32_t from,
			 uint32_t m, const struct rwhere *w, FILE *out)
{
	for (uint32_t j = from; j < m; j++) {
		const struct loc *l = resolver_loc(c->res, f[j].loc);
		fprintf(out, "\t%16" PRIx64 " ", w->vaddr);
		print_sym(l, w, out);
		if (l->inlined)
			fputs(" (inlined)\n", out);
		else if (is_kernel(l))
			fprintf(out, " (%s)\n", l->named ? l->dso_path : "[kernel.kallsyms]");
		else
			fprintf(out, " (%s)\n", l->dso_path);
	}
}

/* One sample's call chain, leaf first. */
static void print_chain(const struct report_ctx *c, const struct agg_count *k, FILE *out)
{
	uint32_t n;
	const uint64_t *addrs = agg_stack(c->agg, k->stack, &n);
	if (n > PROBE_MAX_FRAMES)
		n = PROBE_MAX_FRAMES;
	uint32_t used = 0, hidden = 0;
	for (uint32_t i = 0; i < n; i++)
		hidden += (uint32_t)resolve_hidden(c->res, k->image, k->gen, addrs[i],
						   resolve_is_return(addrs, i));
	if (n > 0 && hidden == n) {
		/* All in libprobe: one [probe] frame, as the other formats. */
		fprintf(out, "\t%16" PRIx64 " [probe] ([probe])\n", addrs[0]);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct rframe *f;
		const struct rsrc *src;
		struct rwhere w;
		/* libprobe's frames (resolve.h) are left out. */
		if (resolve_hidden(c->res, k->image, k->gen, addrs[i],
				   resolve_is_return(addrs, i)))
			continue;
		uint32_t m = resolve_addr_where(c->res, k->image, k->gen, addrs[i],
						resolve_is_return(addrs, i),
						&f, &src, &w);
		/* Room for these and one frame for each address left. */
		uint32_t room = RESOLVE_MAX_FRAMES - used - (n - i - 1);
		uint32_t from = m > room ? m - 1 : 0;   /* only the containing function */
		print_frames(c, f, from, m, &w, out);
		used += m - from;
	}
}

/*
 * Most samples repeat a stack seen before: each count row's chain is made
 * into text once (printing it frame by frame was 3/4 of the time: 13 s for
 * 1 M samples of 24 frames), up to CHAINS_MAX bytes of text in all; past
 * that, rows not kept are printed frame by frame.
 */
#define CHAINS_MAX (64u << 20)

struct chains {
	char **text;            /* per count row, or NULL */
	size_t *len;
	size_t bytes;
};

static void write_chain(const struct report_ctx *c, struct chains *ch, uint32_t row, FILE *out)
{
	const struct agg_count *k = &agg_counts(c->agg)[row];
	if (!ch->text[row] && ch->bytes < CHAINS_MAX) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		if (m) {
			print_chain(c, k, m);
			if (fclose(m) == 0) {
				ch->text[row] = buf;
				ch->len[row] = len;
				ch->bytes += len;
			} else {
				free(buf);
			}
		}
	}
	if (ch->text[row])
		fwrite(ch->text[row], 1, ch->len[row], out);
	else
		print_chain(c, k, out);
}

int report_perf_script(const struct report_ctx *c, FILE *out)
{
	const struct agg *a = c->agg;
	uint8_t *kernel = kernel_images(c);
	const struct agg_sample *sm = agg_samples(a);
	const struct agg_count *counts = agg_counts(a);
	size_t ncounts = agg_ncounts(a);
	struct chains ch = {
		.text = xcalloc(ncounts ? ncounts : 1, sizeof(*ch.text)),
		.len = xcalloc(ncounts ? ncounts : 1, sizeof(*ch.len)),
	};
	for (size_t i = 0; i < agg_nsamples(a); i++) {
		/* --event inuse: the allocations not freed by the end alone. */
		if (sm[i].count >= ncounts || (agg_inuse_shown(a) && sm[i].freed))
			continue;
		print_header(c, &sm[i], &counts[sm[i].count], kernel, out);
		write_chain(c, &ch, sm[i].count, out);
		fputc('\n', out);
	}
	for (size_t i = 0; i < ncounts; i++)
		free(ch.text[i]);
	free(ch.text);
	free(ch.len);
	free(kernel);
	return 0;
}
