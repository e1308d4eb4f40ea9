/*
 * report.c - `probe report`: options, reading a recording through the one
 * decoder (wire_decode.h), then one of the formats (report_fmt.h).
 *
 * The file is read through the same frame splitter as a live socket, a
 * buffer at a time: memory is bounded by the tables, not the file size.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregate.h"
#include "cmdopt.h"
#include "format.h"
#include "outfile.h"
#include "resolve.h"
#include "symbols.h"
#include "util.h"
#include "wire_decode.h"

void report_usage(FILE *out)
{
	fprintf(out,
		"usage: probe report [-i] FILE [--format FORMAT] [-o OUT] [--tree]\n"
		"                    [--sort KEYS] [--lines] [--percent-limit PCT]\n"
		"                    [--no-demangle] [--no-inline] [--stdio]\n"
		"                    [--title TEXT] [--width PX] [--inverted]\n"
		"\n"
		"Show a recording made by probe record (default FILE: probe.data).\n"
		"\n"
		"  -i, --input FILE       the recording (\"-\": standard input)\n"
		"  --format FORMAT        one of:\n");
	for (unsigned i = 0; format_at(i); i++)
		fprintf(out, "                           %-12s %s\n", format_at(i)->name,
			format_at(i)->help);
	fprintf(out,
		"  -o, --output OUT       write the report to OUT (made whole, then\n"
		"                         renamed into place) instead of standard output\n"
		"  --tree                 same as --format tree\n"
		"  -s, --sort KEYS        text rows grouped by a comma list of pid, tid,\n"
		"                         comm (thread name), exe, sym, dso, srcline\n"
		"                         (default sym,dso)\n"
		"  --lines                flat profile by source line (file:line, from\n"
		"                         DWARF; [module] where there is none): the same\n"
		"                         as --sort srcline,sym\n"
		"  -M, --no-demangle      show C++ and Rust names as they are in the binary\n"
		"  --no-inline            no inline frames (by default functions inlined at\n"
		"                         a sampled address are frames of their own, shown\n"
		"                         as NAME [inlined], where DWARF describes them)\n"
		"  --percent-limit PCT    hide rows (tree: nodes) under PCT %% of the total\n"
		"                         (default 0 for text, 0.5 for the tree)\n"
		"  --stdio                accepted for perf compatibility (always stdio)\n"
		"  --title TEXT           a picture's title\n"
		"  --width PX             a picture's width in pixels (default 1200)\n"
		"  --inverted             a picture upside down: leaves at the root (icicle)\n"
		"  -h, --help             this help\n"
		"\n"
		"Shares are by event weight (the sampling period), like perf's period.\n"
		"Names come from the files the recording names, checked against their\n"
		"recorded build-ids: .symtab, separate debug files (/usr/lib/debug),\n"
		"MiniDebugInfo, .dynsym; an address nothing names is module+0xOFFSET.\n");
}

#define usage_error(...) cmd_usage_error("report", __VA_ARGS__)

static int parse_keys(const char *s, struct report_opts *o)
{
	o->nkeys = 0;
	const char *p = s;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		enum sort_key k = sort_key_parse(p, len);
		if (k == KEY_COUNT || o->nkeys == REPORT_MAX_KEYS)
			return -1;
		for (int i = 0; i < o->nkeys; i++)
			if (o->keys[i] == k)
				return -1;
		o->keys[o->nkeys++] = k;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

/*
 * Damaged recordings (a flipped byte, a short write on a full disk and
 * later appends) are read as a log is: what does not decode is skipped a
 * byte at a time until a frame decodes again (while skipping, only a frame
 * of a known type with flags 0 is taken for one), and the reader reports
 * the damaged parts once at the end.  The stream's offsets are the file's.
 */
struct damage {
	uint64_t regions, bytes, first;
	uint64_t frames;        /* frames read, in all */
	int in;                 /* skipping now */
};

static void skip_byte(struct probe_stream *s, struct damage *d, uint64_t at)
{
	if (!d->in) {
		d->in = 1;
		if (!d->regions++)
			d->first = at;
	}
	d->bytes++;
	s->off++;
	s->consumed++;
}

static int plausible(const uint8_t *f)
{
	unsigned type = (unsigned)f[4] | (unsigned)f[5] << 8;
	return type > 0 && type < PROBE_F_TYPE_MAX && type != PROBE_F_SYNC &&
	       f[6] == 0 && f[7] == 0;
}

/* Every whole frame buffered in s into a, skipping what does not decode. */
static uint64_t take_frames(struct probe_stream *s, struct probe_scratch *sc,
			    struct agg *a, struct damage *d)
{
	uint64_t taken = 0;
	char err[PROBE_ERR_MAX];
	struct probe_msg m;
	for (;;) {
		uint64_t at = s->consumed;
		size_t off = s->off;
		const uint8_t *f;
		size_t flen;
		int r = probe_stream_next(s, &f, &flen, err);
		if (r == 0)
			return taken;
		if (r == 1 && (!d->in || plausible(f)) &&
		    probe_decode_frame(f, flen, &m, sc, err) == 0) {
			d->in = 0;
			agg_add(a, &m);
			taken++;
			continue;
		}
		/* Back to the bad frame's first byte, then one further. */
		if (r == 1) {
			s->off = off;
			s->consumed = at;
		}
		skip_byte(s, d, at);
	}
}

/* The whole stream of one file into a; 0, or -1 after a message. */
static int read_frames(const char *file, int fd, struct agg *a)
{
	char err[PROBE_ERR_MAX];
	uint8_t hdr[PROBE_FILE_HDR];
	size_t have = 0;
	while (have < sizeof(hdr)) {
		ssize_t n = read(fd, hdr + have, sizeof(hdr) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			probe_err("%s: cannot read: %s", file, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have == 0) {
		probe_err("%s: empty file, not a probe recording", file);
		return -1;
	}
	if (have < sizeof(hdr) && memcmp(hdr, PROBE_FILE_MAGIC, have < 8 ? have : 8) == 0) {
		probe_err("%s: only %zu bytes, too short for a probe recording", file, have);
		return -1;
	}
	uint32_t version;
	if (probe_file_header_check(hdr, have, &version, err) < 0) {
		probe_err("%s: %s", file, err);
		return -1;
	}

	struct probe_stream s;
	struct probe_scratch sc;
	if (probe_stream_init(&s) < 0 || probe_scratch_init(&sc) < 0)
		probe_oom();
	s.consumed = PROBE_FILE_HDR;    /* so the decoder's offsets are file offsets */
	s.crc = version == PROBE_FILE_VERSION;
	struct damage d = { 0 };
	int rc = 0;
	for (;;) {
		size_t avail;
		uint8_t *space = probe_stream_space(&s, &avail);
		ssize_t n = avail ? read(fd, space, avail) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			probe_err("%s: cannot read: %s", file, strerror(errno));
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		probe_stream_commit(&s, (size_t)n);
		d.frames += take_frames(&s, &sc, a, &d);
	}
	/*
	 * At the end, a frame that wants more bytes than are left is a last
	 * frame cut short, or damage with good frames after it: look for them
	 * in a copy of what is left (frames found are kept; if none is, it was
	 * a truncated tail).
	 */
	size_t tail = probe_stream_pending(&s);
	uint64_t tail_at = s.consumed;
	if (rc == 0 && tail >= PROBE_FRAME_HDR) {
		struct probe_stream t;
		struct damage dd = d;
		uint64_t taken = 0;
		if (probe_stream_init(&t) < 0)
			probe_oom();
		t.consumed = s.consumed;
		t.crc = s.crc;
		probe_stream_feed(&t, s.buf + s.off, tail);
		/* What is at the front wants more than is left: not a frame. */
		while (probe_stream_pending(&t) >= PROBE_FRAME_HDR) {
			skip_byte(&t, &dd, t.consumed);
			taken += take_frames(&t, &sc, a, &dd);
		}
		if (taken) {
			d = dd;
			d.frames += taken;
			tail = probe_stream_pending(&t);
			tail_at = t.consumed;
		}
		probe_stream_free(&t);
	}
	if (rc == 0 && d.regions && !d.frames) {
		probe_err("%s: not one frame of it can be read (%" PRIu64 " bytes after the "
			  "header are damaged or not a probe stream)", file, d.bytes);
		rc = -1;
	} else if (d.regions)
		probe_warn("%s: %" PRIu64 " damaged part%s of the recording (%" PRIu64
			   " bytes in all, the first at byte %" PRIu64 ") could not be read; "
			   "skipped to the next intact frame, and reporting the rest",
			   file, d.regions, d.regions == 1 ? "" : "s", d.bytes, d.first);
	if (rc == 0 && tail)
		probe_warn("%s: the recording is truncated: its last frame is cut short "
			   "(%zu bytes at byte %" PRIu64 " ignored); reporting what precedes it",
			   file, tail, tail_at);
	probe_stream_free(&s);
	probe_scratch_free(&sc);
	return rc;
}

struct agg *report_load(const char *file, int keep_samples)
{
	int fd;
	if (strcmp(file, "-") == 0) {
		fd = 0;
	} else {
		/* O_NONBLOCK: a FIFO named by mistake must not hang the open. */
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			probe_err("%s: cannot open: %s", file, strerror(errno));
			return NULL;
		}
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			probe_err("%s: is a directory, not a probe recording", file);
			close(fd);
			return NULL;
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	struct agg *a = agg_new();
	if (keep_samples)
		agg_keep_samples(a);
	int rc = read_frames(file, fd, a);
	if (fd != 0)
		close(fd);
	if (rc < 0) {
		agg_free(a);
		return NULL;
	}
	agg_finish(a);
	const struct agg_totals *t = agg_totals(a);
	if (t->frames_orphan)
		probe_warn("%s: %" PRIu64 " process%s sent frames before its HELLO; "
			   "shown as [pid N]", file, t->frames_orphan,
			   t->frames_orphan == 1 ? "" : "es");
	return a;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "tree", no_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "percent-limit", required_argument, NULL, 'p' },
		{ "stdio", no_argument, NULL, 'S' },
		{ "lines", no_argument, NULL, 'L' },
		{ "no-demangle", no_argument, NULL, 'M' },
		{ "demangle", no_argument, NULL, 'D' },
		{ "no-inline", no_argument, NULL, 'N' },
		{ "inline", no_argument, NULL, 'I' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 'T' },
		{ "width", required_argument, NULL, 'W' },
		{ "inverted", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts o = { .file = NULL, .format = format_find("text") };
	o.keys[0] = KEY_SYM;
	o.keys[1] = KEY_DSO;
	o.nkeys = 2;
	o.resolve.demangle = 1;
	o.resolve.inline_frames = 1;
	int c;
	opterr = 0;
	optind = 1;
	uint64_t width;
	while ((c = getopt_long(argc, argv, ":i:s:o:hM", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.file = optarg;
			break;
		case 'f':
			if (!(o.format = format_find(optarg)))
				return usage_error("unknown format '%s' (use %s)", optarg,
						   format_names());
			break;
		case 't':
			o.format = format_find("tree");
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'T':
			o.title = optarg;
			break;
		case 'W':
			if (parse_u64(optarg, &width) < 0 || width < 100 || width > 100000)
				return usage_error("bad --width '%s': use a number of pixels "
						   "from 100 to 100000", optarg);
			o.width = (unsigned)width;
			break;
		case 'V':
			o.inverted = 1;
			break;
		case 's':
			if (parse_keys(optarg, &o) < 0)
				return usage_error("bad --sort '%s': use a comma list of distinct "
						   "pid, tid, comm, exe, sym, dso, srcline", optarg);
			break;
		case 'L':
			o.keys[0] = KEY_SRCLINE;
			o.keys[1] = KEY_SYM;
			o.nkeys = 2;
			o.format = format_find("text");
			break;
		case 'M':
			o.resolve.demangle = 0;
			break;
		case 'D':
			o.resolve.demangle = 1;
			break;
		case 'N':
			o.resolve.inline_frames = 0;
			break;
		case 'I':
			o.resolve.inline_frames = 1;
			break;
		case 'p':
			if (parse_percent(optarg, &o.percent_limit) < 0)
				return usage_error("bad --percent-limit '%s': use a number from 0 to 100",
						   optarg);
			o.percent_limit_set = 1;
			break;
		case 'S':
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			return cmd_bad_option("report", c, argv);
		}
	}
	if (optind < argc) {
		if (o.file || optind + 1 < argc)
			return usage_error("one recording at a time (extra '%s')",
					   argv[o.file ? optind : optind + 1]);
		o.file = argv[optind];
	}
	if (!o.file)
		o.file = "probe.data";
	if (o.format->binary && !o.output && isatty(1))
		return usage_error("--format %s is binary: give -o FILE, or pipe it",
				   o.format->name);

	struct agg *a = report_load(o.file, o.format->samples);
	if (!a)
		return 1;
	if (agg_totals(a)->samples == 0) {
		char *f = printable_dup(o.file);
		probe_warn("%s: no samples in this recording", f);
		free(f);
	}
	struct symcache *sc = symcache_new();
	struct resolver *res = resolver_new(a, sc, &o.resolve);
	struct report_ctx ctx;
	report_ctx_init(&ctx, &o, a, res);
	struct outfile of;
	int rc = outfile_open(&of, o.output);
	if (rc == 0) {
		rc = o.format->write(&ctx, of.f);
		rc = outfile_close(&of, rc);
	}
	resolver_free(res);
	symcache_free(sc);
	agg_free(a);
	return rc < 0 ? 1 : 0;
}
