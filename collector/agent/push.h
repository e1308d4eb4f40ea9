/*
 * push.h - `probe agent --push`: profiles sent to Pyroscope's HTTP ingest
 * API (POST BASE/ingest?name=SERVICE{labels}&from=&until=&format=pprof)
 * by a thread of their own (libcurl), so that a slow or absent backend
 * never holds up the agent's loop.
 *
 * Contract:
 *   - push_start() takes the backend's base URL (http:// or https://) and
 *     the most bytes of profiles to keep waiting (0: PUSH_QUEUE_BYTES);
 *     NULL after one "probe:" message.
 *   - push_add() queues one profile (the query string and the body, both
 *     taken over).  Past the queue's bytes the oldest profiles are
 *     dropped, and counted.
 *   - The thread sends them in order.  A request that fails (no answer in
 *     PUSH_TIMEOUT_MS, a connection refused, 429 or 5xx) is tried again
 *     after 1, 2, 4... s (at most PUSH_BACKOFF_MAX_S), at most PUSH_TRIES
 *     times; another 4xx is dropped at once (it would fail again).  One
 *     line on stderr when pushing starts to fail and one when it works
 *     again, not one per request.
 *   - push_stop() sends what is queued for at most wait_ms, then gives up
 *     on the rest (counted) and joins the thread; the figures stay
 *     readable until push_free().
 */
#ifndef PROBE_AGENT_PUSH_H
#define PROBE_AGENT_PUSH_H

#include <stddef.h>
#include <stdint.h>

#define PUSH_QUEUE_BYTES (32u << 20)
#define PUSH_TIMEOUT_MS 10000
#define PUSH_TRIES 5
#define PUSH_BACKOFF_MAX_S 30

struct push_stats {
	uint64_t queued, sent, failed_tries;
	uint64_t dropped_full, dropped_refused, gave_up, unsent_at_stop;
	size_t queue_bytes, queue_len;
};

struct pusher;

struct pusher *push_start(const char *base_url, size_t queue_bytes);
void push_add(struct pusher *p, char *query, uint8_t *body, size_t len);
void push_stats(struct pusher *p, struct push_stats *out);
void push_stop(struct pusher *p, int wait_ms);
void push_free(struct pusher *p);

#endif
