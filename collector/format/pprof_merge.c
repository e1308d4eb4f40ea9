/*
 * pprof_merge.c - several pprof profiles as one: pprof_merge.h says what.
 * Each body is unpacked (protobuf-c), renumbered in place, and the merged
 * profile points at their messages while it is packed; then they are freed.
 */
#include "format/pprof_merge.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util.h"

typedef Perftools__Profiles__Profile PProfile;

/* A body's protobuf: gunzipped when it is gzip; NULL (said) when not read. */
static uint8_t *gunzip(const uint8_t *b, size_t len, size_t *outlen)
{
	if (len < 2 || b[0] != 0x1f || b[1] != 0x8b) {
		uint8_t *copy = xmalloc(len ? len : 1);
		memcpy(copy, b, len);
		*outlen = len;
		return copy;
	}
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		probe_err("cannot read a pprof profile: zlib %s", zlibVersion());
		return NULL;
	}
	size_t cap = len * 4 + 4096, n = 0;
	uint8_t *out = xmalloc(cap);
	int r = Z_OK;
	z.next_in = (Bytef *)(uintptr_t)b;
	z.avail_in = (uInt)len;
	while (r == Z_OK) {
		if (n == cap)
			out = xgrow(out, &cap, cap + 1, 1);
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n > (1u << 30) ? 1u << 30 : cap - n);
		r = inflate(&z, Z_NO_FLUSH);
		n = (size_t)(z.next_out - out);
	}
	inflateEnd(&z);
	if (r != Z_STREAM_END) {
		probe_err("cannot read a pprof profile: its gzip stream is %s",
			  r == Z_BUF_ERROR ? "cut short" : "damaged");
		free(out);
		return NULL;
	}
	*outlen = n;
	return out;
}

static const char *str_of(const PProfile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "";
}

/* The same sample types as the first, in the same order. */
static int same_types(const PProfile *a, const PProfile *b)
{
	if (a->n_sample_type != b->n_sample_type)
		return 0;
	for (size_t i = 0; i < a->n_sample_type; i++)
		if (strcmp(str_of(a, a->sample_type[i]->type), str_of(b, b->sample_type[i]->type)) ||
		    strcmp(str_of(a, a->sample_type[i]->unit), str_of(b, b->sample_type[i]->unit)))
			return 0;
	return 1;
}

/* Offsets of one profile's ids and strings in the merged one. */
struct shift {
	int64_t str;            /* its string k (k > 0) becomes k + str */
	uint64_t mapping, location, function;
};

static int64_t s_at(const struct shift *o, int64_t k)
{
	return k > 0 ? k + o->str : 0;
}

static uint64_t id_at(uint64_t id, uint64_t off)
{
	return id ? id + off : 0;
}

/* p's strings and ids, renumbered in place by o. */
static void renumber(PProfile *p, const struct shift *o)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];
		for (size_t j = 0; j < s->n_location_id; j++)
			s->location_id[j] = id_at(s->location_id[j], o->location);
		for (size_t j = 0; j < s->n_label; j++) {
			s->label[j]->key = s_at(o, s->label[j]->key);
			s->label[j]->str = s_at(o, s->label[j]->str);
			s->label[j]->num_unit = s_at(o, s->label[j]->num_unit);
		}
	}
	for (size_t i = 0; i < p->n_mapping; i++) {
		Perftools__Profiles__Mapping *m = p->mapping[i];
		m->id = id_at(m->id, o->mapping);
		m->filename = s_at(o, m->filename);
		m->build_id = s_at(o, m->build_id);
	}
	for (size_t i = 0; i < p->n_location; i++) {
		Perftools__Profiles__Location *l = p->location[i];
		l->id = id_at(l->id, o->location);
		l->mapping_id = id_at(l->mapping_id, o->mapping);
		for (size_t j = 0; j < l->n_line; j++)
			l->line[j]->function_id = id_at(l->line[j]->function_id, o->function);
	}
	for (size_t i = 0; i < p->n_function; i++) {
		Perftools__Profiles__Function *f = p->function[i];
		f->id = id_at(f->id, o->function);
		f->name = s_at(o, f->name);
		f->system_name = s_at(o, f->system_name);
		f->filename = s_at(o, f->filename);
	}
}

/* The largest id of the n messages of v (0: none). */
#define MAX_ID(v, n) ({ uint64_t m_ = 0;                                     \
	for (size_t i_ = 0; i_ < (n); i_++)                                  \
		if ((v)[i_]->id > m_)                                         \
			m_ = (v)[i_]->id;                                     \
	m_; })

/* Append n pointers of src to *dst (of *len). */
#define APPEND(dst, len, src, n) do {                                       \
	(dst) = xrealloc((dst), ((len) + (n) + 1) * sizeof(*(dst)));          \
	memcpy((dst) + (len), (src), (n) * sizeof(*(dst)));                   \
	(len) += (n);                                                       \
} while (0)

/* q, renumbered after what m holds, into m (pointing at q's messages). */
static void take(PProfile *m, PProfile *q, int first)
{
	struct shift o = {
		.str = first ? 0 : (int64_t)m->n_string_table - 1,
		.mapping = MAX_ID(m->mapping, m->n_mapping),
		.location = MAX_ID(m->location, m->n_location),
		.function = MAX_ID(m->function, m->n_function),
	};
	renumber(q, &o);
	APPEND(m->sample, m->n_sample, q->sample, q->n_sample);
	APPEND(m->mapping, m->n_mapping, q->mapping, q->n_mapping);
	APPEND(m->location, m->n_location, q->location, q->n_location);
	APPEND(m->function, m->n_function, q->function, q->n_function);
	if (first)
		APPEND(m->string_table, m->n_string_table, q->string_table, q->n_string_table);
	else if (q->n_string_table > 1)
		APPEND(m->string_table, m->n_string_table, q->string_table + 1,
		       q->n_string_table - 1);
	int64_t end = q->time_nanos + q->duration_nanos, mend = m->time_nanos + m->duration_nanos;
	if (first || (q->time_nanos && q->time_nanos < m->time_nanos))
		m->time_nanos = q->time_nanos;
	m->duration_nanos = (end > mend ? end : mend) - m->time_nanos;
}

/* The first's header: its types, period, frames, comments, as they are. */
static void header(PProfile *m, const PProfile *q)
{
	m->n_sample_type = q->n_sample_type;
	m->sample_type = q->sample_type;
	m->period_type = q->period_type;
	m->period = q->period;
	m->drop_frames = q->drop_frames;
	m->keep_frames = q->keep_frames;
	m->n_comment = q->n_comment;
	m->comment = q->comment;
	m->default_sample_type = q->default_sample_type;
}

static PProfile *unpack_one(const uint8_t *body, size_t len)
{
	size_t n = 0;
	uint8_t *raw = gunzip(body, len, &n);
	if (!raw)
		return NULL;
	PProfile *p = perftools__profiles__profile__unpack(NULL, n, raw);
	free(raw);
	/* profile.proto: string_table[0] is "", always. */
	if (p && p->n_string_table > 0 && !p->string_table[0][0])
		return p;
	probe_err("cannot read a pprof profile: it is not profile.proto's Profile");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	return NULL;
}

/* Every body unpacked into in[], all of the first's sample types: 0, or -1. */
static int unpack_all(uint8_t *const *bodies, const size_t *lens, size_t n, PProfile **in)
{
	for (size_t i = 0; i < n; i++) {
		if (!(in[i] = unpack_one(bodies[i], lens[i])))
			return -1;
		if (i && !same_types(in[0], in[i])) {
			probe_err("cannot merge pprof profiles of different sample types");
			return -1;
		}
	}
	return n ? 0 : -1;
}

/* mem_write's writer: the merged profile, gzipped. */
static int write_merged(void *m, FILE *f)
{
	return pprof_gzip(m, f);
}

int pprof_merge(uint8_t *const *bodies, const size_t *lens, size_t n, uint8_t **out,
		size_t *outlen)
{
	PProfile **in = xcalloc(n ? n : 1, sizeof(*in)), m;
	perftools__profiles__profile__init(&m);
	int rc = unpack_all(bodies, lens, n, in);
	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			take(&m, in[i], i == 0);
		header(&m, in[0]);
		rc = mem_write(write_merged, &m, out, outlen);
	}
	free(m.sample);         /* arrays of ours, of in[]'s messages */
	free(m.mapping);
	free(m.location);
	free(m.function);
	free(m.string_table);
	for (size_t i = 0; i < n; i++)
		if (in[i])
			perftools__profiles__profile__free_unpacked(in[i], NULL);
	free(in);
	return rc;
}
