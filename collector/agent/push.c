/*
 * push.c - see push.h.
 *
 * One mutex guards the queue and the figures; the loop only appends under
 * it (no I/O), the thread takes the oldest profile, sends it without the
 * lock, and removes it when it is done with it.
 */
#include "agent/push.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/netlib.h"
#include "util.h"

struct item {
	char *query;
	uint8_t *body;
	size_t len;
	unsigned tries;
	struct item *next;
};

struct pusher {
	char *base;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *head, *tail;
	int stop;
	uint64_t deadline;      /* CLOCK_MONOTONIC ns, once stopping */
	int failing;            /* said so; say when it works again */
	struct item *busy;      /* being sent: the loop leaves it alone */
	size_t cap;             /* bytes the queue may hold */
	struct push_stats st;
	CURL *curl;
};

static void item_free(struct item *it)
{
	free(it->query);
	free(it->body);
	free(it);
}

/*
 * Under mu: drop the oldest until len more bytes fit; not the one the
 * thread is sending (busy: it reads its body without the lock).
 */
static void make_room(struct pusher *p, size_t len)
{
	while (p->st.queue_bytes + len > p->cap) {
		struct item *prev = NULL, *it = p->head;
		if (it && it == p->busy) {
			prev = it;
			it = it->next;
		}
		if (!it)
			return;
		if (prev)
			prev->next = it->next;
		else
			p->head = it->next;
		if (p->tail == it)
			p->tail = prev;
		p->st.queue_bytes -= it->len;
		p->st.queue_len--;
		p->st.dropped_full++;
		item_free(it);
	}
}

void push_add(struct pusher *p, char *query, uint8_t *body, size_t len)
{
	struct item *it = xcalloc(1, sizeof(*it));
	it->query = query;
	it->body = body;
	it->len = len;
	pthread_mutex_lock(&p->mu);
	make_room(p, len);
	if (p->tail)
		p->tail->next = it;
	else
		p->head = it;
	p->tail = it;
	p->st.queue_bytes += len;
	p->st.queue_len++;
	p->st.queued++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* libcurl's progress callback: a stop past its deadline aborts. */
static int on_progress(void *cls, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct pusher *p = cls;
	return __atomic_load_n(&p->deadline, __ATOMIC_RELAXED) &&
	       now_ns() >= __atomic_load_n(&p->deadline, __ATOMIC_RELAXED);
}

static size_t discard(char *ptr, size_t size, size_t n, void *cls)
{
	return size * n;
}

/* Send it: 0 done, 1 try again later, -1 refused for good; why in err. */
static int send_one(struct pusher *p, const struct item *it, char *err, size_t ecap)
{
	char *url = xasprintf("%s/ingest?%s", p->base, it->query);
	struct curl_slist *hdr = NET(curl_slist_append)(NULL,
							"Content-Type: application/octet-stream");
	CURL *c = p->curl;
	NET(curl_easy_reset)(c);
	NET(curl_easy_setopt)(c, CURLOPT_URL, url);
	NET(curl_easy_setopt)(c, CURLOPT_POST, 1L);
	NET(curl_easy_setopt)(c, CURLOPT_POSTFIELDS, (const char *)it->body);
	NET(curl_easy_setopt)(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	NET(curl_easy_setopt)(c, CURLOPT_HTTPHEADER, hdr);
	NET(curl_easy_setopt)(c, CURLOPT_USERAGENT, "probe-agent/" PROBE_VERSION);
	NET(curl_easy_setopt)(c, CURLOPT_TIMEOUT_MS, (long)PUSH_TIMEOUT_MS);
	NET(curl_easy_setopt)(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	NET(curl_easy_setopt)(c, CURLOPT_NOSIGNAL, 1L);
	NET(curl_easy_setopt)(c, CURLOPT_WRITEFUNCTION, discard);
	NET(curl_easy_setopt)(c, CURLOPT_NOPROGRESS, 0L);
	NET(curl_easy_setopt)(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	NET(curl_easy_setopt)(c, CURLOPT_XFERINFODATA, p);
	CURLcode rc = NET(curl_easy_perform)(c);
	long code = 0;
	NET(curl_easy_getinfo)(c, CURLINFO_RESPONSE_CODE, &code);
	NET(curl_slist_free_all)(hdr);
	free(url);
	if (rc != CURLE_OK) {
		snprintf(err, ecap, "%s", NET(curl_easy_strerror)(rc));
		return 1;
	}
	if (code >= 200 && code < 300)
		return 0;
	snprintf(err, ecap, "HTTP %ld", code);
	return code == 429 || code >= 500 ? 1 : -1;
}

/* Under mu: sleep secs seconds, or until a stop. */
static void nap(struct pusher *p, uint64_t secs)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)secs;
	while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu, &ts) != ETIMEDOUT)
		;
}

/* Under mu: the head was sent, refused or given up on. */
static void pop(struct pusher *p)
{
	struct item *it = p->head;
	p->head = it->next;
	if (!p->head)
		p->tail = NULL;
	p->st.queue_bytes -= it->len;
	p->st.queue_len--;
	item_free(it);
}

static void *run(void *arg)
{
	struct pusher *p = arg;
	char err[CURL_ERROR_SIZE + 64];
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->head || (p->stop && now_ns() >= p->deadline))
			break;
		struct item *it = p->head;
		p->busy = it;
		pthread_mutex_unlock(&p->mu);
		int r = send_one(p, it, err, sizeof(err));
		pthread_mutex_lock(&p->mu);
		p->busy = NULL;
		if (r == 0) {
			if (p->failing)
				probe_warn("push: %s works again", p->base);
			p->failing = 0;
			p->st.sent++;
			pop(p);
			continue;
		}
		p->st.failed_tries++;
		if (!p->failing && r < 0)
			probe_warn("push: %s: %s: the backend refuses the profile; it is "
				   "dropped, and the next ones are tried", p->base, err);
		else if (!p->failing)
			probe_warn("push: %s: %s; trying again, and keeping at most %zu MiB of "
				   "profiles meanwhile", p->base, err, p->cap >> 20);
		p->failing = 1;
		if (r < 0 || ++it->tries >= PUSH_TRIES) {
			if (r < 0)
				p->st.dropped_refused++;
			else
				p->st.gave_up++;
			pop(p);
			continue;
		}
		if (!p->stop) {
			uint64_t s = 1ull << (it->tries - 1);
			nap(p, s > PUSH_BACKOFF_MAX_S ? PUSH_BACKOFF_MAX_S : s);
		}
	}
	while (p->head) {
		p->st.unsent_at_stop++;
		pop(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct pusher *push_start(const char *base_url, size_t queue_bytes)
{
	if (strncmp(base_url, "http://", 7) != 0 && strncmp(base_url, "https://", 8) != 0) {
		probe_err("--push %s: give the backend's URL, http://HOST:PORT", base_url);
		return NULL;
	}
	if (netlib_curl("--push") < 0)
		return NULL;
	if (NET(curl_global_init)(CURL_GLOBAL_DEFAULT) != 0) {
		probe_err("--push: libcurl could not start");
		return NULL;
	}
	struct pusher *p = xcalloc(1, sizeof(*p));
	p->base = xstrdup(base_url);
	p->cap = queue_bytes ? queue_bytes : PUSH_QUEUE_BYTES;
	size_t n = strlen(p->base);
	while (n > 0 && p->base[n - 1] == '/')
		p->base[--n] = 0;
	p->curl = NET(curl_easy_init)();
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	int e = p->curl ? pthread_create(&p->th, NULL, run, p) : ENOMEM;
	if (e != 0) {
		probe_err("--push: cannot start its thread: %s", strerror(e));
		if (p->curl)
			NET(curl_easy_cleanup)(p->curl);
		free(p->base);
		free(p);
		return NULL;
	}
	return p;
}

void push_stats(struct pusher *p, struct push_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	pthread_mutex_unlock(&p->mu);
}

void push_stop(struct pusher *p, int wait_ms)
{
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->deadline, now_ns() + (uint64_t)wait_ms * 1000000ull,
			 __ATOMIC_RELAXED);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
}

void push_free(struct pusher *p)
{
	if (!p)
		return;
	NET(curl_easy_cleanup)(p->curl);
	NET(curl_global_cleanup)();
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->base);
	free(p);
}
