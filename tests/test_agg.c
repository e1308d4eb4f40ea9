/*
 * test_agg.c - the collector's tables and decoder fast paths:
 *   - mappings that overlap over time (a library unloaded and another loaded
 *     in its place): each sample resolves against what was mapped when it
 *     arrived (aggregate.c generations);
 *   - the decoder's word-at-a-time varint skipping accepts and rejects
 *     exactly what the byte-at-a-time reader does (random frames);
 *   - stacks interned by their encoding still intern by their frames;
 *   - Rust (legacy) and C++ demangling.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/aggregate.h"
#include "probe/wire.h"
#include "symbols/demangle.h"
#include "symbols/symbols.h"
#include "tap.h"
#include "data/wire_decode.h"
#include "wire_frames.h"

static uint8_t buf[1 << 16];
static struct probe_wbuf w;

static void hello(uint32_t pid)
{
	test_put_hello(&w, pid, 1, 0, "/bin/app", "app");
}

static void map(uint32_t pid, uint64_t start, uint64_t end, const char *path)
{
	size_t at = probe_frame_begin(&w, PROBE_F_MAP, pid);
	probe_put_u64(&w, start);
	probe_put_u64(&w, end);
	probe_put_u64(&w, 0);
	probe_put_u64(&w, 0);
	probe_put_u8(&w, 0);
	probe_put_str(&w, path);
	probe_frame_end(&w, at);
}

/* One SAMPLES frame of n samples at addr (a two-frame stack), tid 7. */
static void samples(uint32_t pid, uint64_t addr, unsigned n)
{
	size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, pid);
	probe_put_u64(&w, 1000);
	probe_put_uv(&w, n);
	for (unsigned i = 0; i < n; i++) {
		probe_put_uv(&w, 7);
		probe_put_uv(&w, i);
		probe_put_uv(&w, 1000);
		probe_put_uv(&w, 0);
		probe_put_uv(&w, 2);
		probe_put_sv(&w, (int64_t)addr);
		probe_put_sv(&w, 0x100);
	}
	probe_frame_end(&w, at);
}

static struct agg *aggregate(const uint8_t *p, size_t n)
{
	struct agg *a = agg_new();
	struct probe_stream s;
	struct probe_scratch sc;
	struct probe_msg m;
	const uint8_t *f;
	size_t flen;
	char err[PROBE_ERR_MAX];
	probe_stream_init(&s);
	probe_scratch_init(&sc);
	probe_stream_feed(&s, p, n);
	while (probe_stream_next(&s, &f, &flen, err) == 1)
		if (probe_decode_frame(f, flen, &m, &sc, err) == 0)
			agg_add(a, &m);
	probe_stream_free(&s);
	probe_scratch_free(&sc);
	agg_finish(a);
	return a;
}

/* Samples counted at addr resolving to a map with this path. */
static uint64_t samples_in(const struct agg *a, uint64_t addr, const char *path)
{
	uint64_t n = 0;
	const struct agg_count *c = agg_counts(a);
	for (size_t i = 0; i < agg_ncounts(a); i++) {
		uint32_t nf;
		const uint64_t *fr = agg_stack(a, c[i].stack, &nf);
		if (!nf || fr[0] != addr)
			continue;
		const struct agg_map *m = agg_find_map(a, c[i].image, c[i].gen, addr);
		if (m ? (path && strcmp(m->path, path) == 0) : !path)
			n += c[i].samples;
	}
	return n;
}

static void test_generations(void)
{
	probe_wbuf_init(&w, buf, sizeof(buf));
	hello(10);
	samples(10, 0x9500, 2);             /* before its MAP: the later one */
	map(10, 0x1000, 0x2000, "/lib/a.so");
	map(10, 0x9000, 0xa000, "/lib/late.so");
	samples(10, 0x1500, 3);             /* a.so */
	map(10, 0x1000, 0x2000, "/lib/a.so");       /* repeated: nothing new */
	samples(10, 0x1500, 1);             /* still a.so */
	map(10, 0x1000, 0x1800, "/lib/b.so");       /* a.so unloaded, b.so there */
	samples(10, 0x1500, 4);             /* b.so */
	samples(10, 0x1900, 5);             /* past b.so: a.so's is the only map */
	map(10, 0x1000, 0x2000, "/lib/a.so");       /* a.so again */
	samples(10, 0x1500, 6);             /* a.so */
	samples(10, 0x3000, 1);             /* no map at all */
	struct agg *a = aggregate(buf, w.len);
	ok(w.ok, "test stream encoded (%zu bytes)", w.len);
	const struct agg_image *im = agg_image(a, 0);
	is_int(im ? im->gen : 99, 2, "two MAPs overlapped a different mapping: generation 2");
	is_int(im ? im->nmaps : 0, 4, "every mapping kept, the repeated one once");
	is_int(samples_in(a, 0x1500, "/lib/a.so"), 3 + 1 + 6, "a.so's samples, before and after b.so");
	is_int(samples_in(a, 0x1500, "/lib/b.so"), 4, "b.so's samples only while it was mapped");
	is_int(samples_in(a, 0x1900, "/lib/a.so"), 5, "beyond b.so's end: a.so's mapping");
	is_int(samples_in(a, 0x9500, "/lib/late.so"), 2, "a sample before its MAP: the MAP that came later");
	is_int(samples_in(a, 0x3000, NULL), 1, "an address in no map: no map, sample kept");
	is_int(agg_totals(a)->samples, 22, "no sample dropped");
	agg_free(a);
}

static void jit(uint32_t pid, uint64_t start, uint64_t size, const char *name)
{
	size_t at = probe_frame_begin(&w, PROBE_F_JIT, pid);
	probe_put_u64(&w, start);
	probe_put_u64(&w, size);
	probe_put_u8(&w, PROBE_JIT_PERFMAP);
	probe_put_str(&w, name);
	probe_frame_end(&w, at);
}

/* JIT names: by the order they came, an object's own names first. */
static void test_jit(void)
{
	probe_wbuf_init(&w, buf, sizeof(buf));
	hello(11);
	map(11, 0x1000, 0x2000, "/bin/node");
	samples(11, 0x7010, 2);             /* before its name was read: the first name */
	jit(11, 0x7000, 0x100, "JS:*f");
	samples(11, 0x7010, 3);             /* JS:*f */
	jit(11, 0x7000, 0x80, "JS:*g");     /* f's code freed, g's there */
	samples(11, 0x7010, 4);             /* JS:*g */
	samples(11, 0x70a0, 1);             /* past g: f's is the only name */
	jit(11, 0x7000, 0x80, "JS:*g");     /* the same again: nothing new */
	jit(11, 0x1800, 0x10, "Builtin:X"); /* in node's own code: its names win */
	samples(11, 0x1808, 5);
	struct agg *a = aggregate(buf, w.len);
	ok(w.ok, "JIT stream encoded (%zu bytes)", w.len);
	const struct agg_image *im = agg_image(a, 0);
	is_int(im ? im->gen : 99, 1, "one JIT name over another: generation 1");
	is_int(samples_in(a, 0x7010, "JS:*f"), 2 + 3, "f's samples, and those before any name");
	is_int(samples_in(a, 0x7010, "JS:*g"), 4, "g's samples, after its name");
	is_int(samples_in(a, 0x70a0, "JS:*f"), 1, "beyond g's end: f's name");
	is_int(samples_in(a, 0x1808, "/bin/node"), 5, "a JIT name over an object's code is not taken");
	agg_free(a);
}

/* Stacks interned by encoding: a non-minimal varint is the same stack. */
static void test_encodings(void)
{
	probe_wbuf_init(&w, buf, sizeof(buf));
	hello(11);
	samples(11, 0x4000, 1);
	size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, 11);
	probe_put_u64(&w, 1000);
	probe_put_uv(&w, 1);
	probe_put_uv(&w, 7);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, 1000);
	probe_put_uv(&w, 0);
	probe_put_uv(&w, 2);
	probe_put_sv(&w, 0x4000);
	/* 0x100 zig-zagged is 0x200: 0x80 0x04, here padded to 0x80 0x84 0x00 */
	probe_put_u8(&w, 0x80);
	probe_put_u8(&w, 0x84);
	probe_put_u8(&w, 0x00);
	probe_frame_end(&w, at);
	struct agg *a = aggregate(buf, w.len);
	is_int(agg_nstacks(a), 1, "one stack for two encodings of the same frames");
	is_int(agg_ncounts(a), 1, "counted together");
	agg_free(a);
}

/* The reference: byte-at-a-time LEB128 as wire.h documents it. */
static int ref_uv(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *p = *pp;
	for (unsigned shift = 0;; shift += 7) {
		if (p >= end || shift > 63)
			return -1;
		uint8_t c = *p++;
		if (shift == 63 && (c & 0x7e))
			return -1;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* Does a SAMPLES body of count samples validate, by the reference? */
static int ref_valid(const uint8_t *p, const uint8_t *end, uint64_t count)
{
	for (uint64_t s = 0; s < count; s++) {
		uint64_t v[5];
		for (int i = 0; i < 5; i++)
			if (ref_uv(&p, end, &v[i]) < 0)
				return 0;
		if (v[0] > UINT32_MAX || v[3] > UINT32_MAX || v[4] == 0 || v[4] > PROBE_MAX_FRAMES)
			return 0;
		for (uint64_t i = 0; i < v[4]; i++) {
			uint64_t d;
			if (ref_uv(&p, end, &d) < 0)
				return 0;
		}
	}
	return p == end;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_skip_fuzz(void)
{
	struct probe_scratch sc;
	struct probe_msg m;
	char err[PROBE_ERR_MAX];
	probe_scratch_init(&sc);
	int agree = 1, valid_seen = 0, invalid_seen = 0;
	uint64_t walked_ok = 1;
	for (int iter = 0; iter < 20000 && agree; iter++) {
		probe_wbuf_init(&w, buf, sizeof(buf));
		size_t at = probe_frame_begin(&w, PROBE_F_SAMPLES, 1);
		probe_put_u64(&w, 0);
		uint64_t count = 1 + rnd() % 3;
		probe_put_uv(&w, count);
		size_t body = w.len;
		for (uint64_t s = 0; s < count; s++) {
			probe_put_uv(&w, rnd() % 5);
			probe_put_uv(&w, rnd() % 300);
			probe_put_uv(&w, rnd());
			probe_put_uv(&w, 0);
			unsigned n = 1 + (unsigned)(rnd() % 12);
			probe_put_uv(&w, n);
			for (unsigned i = 0; i < n; i++) {
				/* All lengths of varints, long ones included. */
				unsigned bits = (unsigned)(rnd() % 65);
				uint64_t v = bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
				probe_put_uv(&w, v);
			}
		}
		size_t nbytes = w.len - body;
		/* Mutate a few bytes of the body (or none). */
		unsigned muts = (unsigned)(rnd() % 4);
		for (unsigned k = 0; k < muts && nbytes; k++) {
			size_t off = body + rnd() % nbytes;
			switch (rnd() % 3) {
			case 0: buf[off] |= 0x80; break;
			case 1: buf[off] &= 0x7f; break;
			default: buf[off] = (uint8_t)rnd(); break;
			}
		}
		probe_frame_end(&w, at);
		int want = ref_valid(buf + body, buf + w.len, count);
		int got = probe_decode_frame(buf, w.len, &m, &sc, err) == 0;
		if (want != got) {
			agree = 0;
			diag("iteration %d: reference says %d, decoder %d (%s)", iter, want, got,
			     got ? "" : err);
		}
		if (got) {
			/* Walking it must see every sample and decode the same frames. */
			struct probe_msg m2 = m;
			struct probe_sample_raw r;
			struct probe_sample s;
			uint64_t fr[PROBE_MAX_FRAMES];
			uint64_t k = 0;
			while (probe_samples_next_raw(&m, &r)) {
				if (!probe_samples_next(&m2, &s) || s.tid != r.tid ||
				    s.nframes != r.nframes ||
				    probe_sample_frames(&r, fr) != s.nframes ||
				    memcmp(fr, s.frames, s.nframes * sizeof(fr[0])) != 0)
					walked_ok = 0;
				k++;
			}
			if (k != count)
				walked_ok = 0;
		}
		valid_seen += want;
		invalid_seen += !want;
	}
	ok(agree, "word-at-a-time validation agrees with the byte reader on 20000 frames "
	   "(%d valid, %d invalid)", valid_seen, invalid_seen);
	ok(walked_ok && valid_seen > 1000 && invalid_seen > 1000,
	   "raw walking finds the same samples and frames as probe_samples_next");
	probe_scratch_free(&sc);
}

static void test_demangle(void)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
		{ "_ZN5hello4main17h1f2e3d4c5b6a7988E", "hello::main" },
		{ "_ZN57_$LT$std..io..stdio..Stdout$u20$as$u20$std..io..Write$GT$5write17h2b1e6d9d1d9c6f0aE",
		  "<std::io::stdio::Stdout as std::io::Write>::write" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h8e8a7d6b5c4f3e2dE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal" },
		{ "_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
		  "<str>::trim_start_matches::<&str>" },
		{ "_RINvMs0_NtNtNtCsjrHSEGnQ3l9_3std12backtrace_rs9symbolize5gimliNtB6_5Cache11with_globalNCNvB6_7resolves_0EBc_",
		  "<std::backtrace_rs::symbolize::gimli::Cache>::with_global::<std::backtrace_rs::symbolize::gimli::resolve::{closure#1}>" },
		{ "_ZN2gt3AccIdE4spinEl", "gt::Acc<double>::spin(long)" },
		{ "_Z3fooi", "foo(int)" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = probe_demangle(cases[i].in);
		ok(d && strcmp(d, cases[i].want) == 0, "demangle %s -> %s", cases[i].in,
		   d ? d : "(null)");
		free(d);
	}
	ok(probe_demangle("main") == NULL, "a C name is left alone");
	ok(probe_demangle("_ZN3foo") == NULL, "a broken mangled name is left alone");
}

/* Without parameter lists, as perf report shows names (but with -v). */
static void test_demangle_short(void)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "_ZN2gt3AccIdE4spinEl", "gt::Acc<double>::spin" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back" },
		{ "_ZNKR1S1fEv", "S::f" },                                     /* const & */
		{ "_ZZL2stiENKUliE_clEi", "st(int)::{lambda(int)#1}::operator()" },
		{ "_ZNK1SclEi", "S::operator()" },
		{ "_ZStltIcSt11char_traitsIcESaIcEEbRKNSt7__cxx1112basic_stringIT_T0_T1_EESA_",
		  "std::operator< <char, std::char_traits<char>, std::allocator<char> >" },
		{ "_Z3fooi.cold", "foo" },                                     /* [clone .cold] */
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = probe_demangle_short(cases[i].in);
		ok(d && strcmp(d, cases[i].want) == 0, "short %s -> %s", cases[i].in,
		   d ? d : "(null)");
		free(d);
	}
	ok(probe_demangle_short("main") == NULL, "a C name is left alone");
}

/* Where names come from, for the test programs in DIR (argv[1]). */
static void test_sources(const char *dir)
{
	struct symcache *c = symcache_new();
	char path[4096];
	snprintf(path, sizeof(path), "%s/gt_minidebug", dir);
	struct symobj *o = symcache_get(c, path, NULL, 0);
	ok((symobj_sources(o) & SYMSRC_MINIDEBUG) && !(symobj_sources(o) & SYMSRC_SYMTAB) &&
	   symobj_count(o) >= 3,
	   "gt_minidebug: names from MiniDebugInfo (sources 0x%x, %zu symbols)",
	   symobj_sources(o), symobj_count(o));
	snprintf(path, sizeof(path), "%s/gt_inline", dir);
	o = symcache_get(c, path, NULL, 0);
	ok((symobj_sources(o) & (SYMSRC_SYMTAB | SYMSRC_DWARF)) == (SYMSRC_SYMTAB | SYMSRC_DWARF),
	   "gt_inline: .symtab and DWARF (sources 0x%x)", symobj_sources(o));
	ok(symcache_get(c, path, NULL, 0) == o, "an object is loaded once");
	symcache_free(c);
}

int main(int argc, char **argv)
{
	plan(9 + 6 + 2 + 2 + 11 + 9 + (argc > 1 ? 3 : 0));
	test_generations();
	test_jit();
	test_encodings();
	test_skip_fuzz();
	test_demangle();
	test_demangle_short();
	if (argc > 1)
		test_sources(argv[1]);
	return done();
}
