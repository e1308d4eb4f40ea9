/*
 * peer.h - what the kernel vouches for about a connected process, and
 * doing things on its behalf with no more than its own rights.
 *
 * Why: root's `probe agent` serves users who do not trust each other.
 * Whatever a process says (its pid, the files it maps, the addresses of
 * its frames) is believed only as far as the kernel confirms it, so that
 * a user learns through probe nothing they could not read themselves.
 *
 * Contract:
 *   - peer_init() takes the connection's credentials (SO_PEERCRED: pid,
 *     uid, gid; SO_PEERGROUPS: its groups), as the kernel has them in our
 *     namespaces.  A peer is "untrusted" when its uid is not ours: only
 *     root's agent takes such connections, and only then are its MAPs
 *     checked (a peer of our own uid could read all we read).  Whether
 *     it lives in another mount namespace is noted too (foreign_mnt).
 *   - peer_pid_ok() is 1 when wire_pid is the pid the process has in its
 *     own PID namespace (the last NSpid of /proc/PID/status): a HELLO
 *     cannot claim another process's pid; 0 when it is not; -1 when it
 *     cannot be told (the process is gone, and wire_pid is not its pid).
 *   - peer_open() opens path as the process sees it (through
 *     /proc/PID/root, with no magic link followed; no symlink at all with
 *     PEER_NOSYMLINKS), with the peer's file-system uid, gid and groups
 *     when it is untrusted (setfsuid on this thread only): what the peer
 *     could not open, we do not.  With PEER_OWNED the file must be a
 *     regular file of the peer's uid.  Where the process's root cannot be
 *     reached (it has ended) and it is in our PID namespace, path as we
 *     see it, the same way.  -1 with errno.
 *   - peer_map_check() checks a MAP of an untrusted peer: the process
 *     maps a file at start (/proc/PID/maps read as the peer, again when
 *     start is not in the copy kept), path opened as the peer is that
 *     file (device and inode), and it returns the file's own GNU build-id
 *     (*bid_len 0: none).  1 verified, 0 not (why, for a message).  While
 *     the uid's budget for this second is spent, MAPs are not verified.
 *   - Budgets (bs), per uid and per second: PEER_READ_NS of checking
 *     MAPs (PEER_READ_ALL_NS for all uids), and PEER_MAP_BYTES of perf
 *     maps read (peer_budget_bytes grants up to want): what one user's
 *     processes can cost the collector.  A peer of our own uid has none.
 *   - peer_open_proc() opens /proc/PID/NAME with the peer's file-system
 *     ids (maps, mem: the kernel checks them as it would the user's own,
 *     so a pid that now runs a setuid program, or any process the user
 *     could not trace, is not read); peer_fopen_proc() as a FILE.
 *   - peer_kallsyms_ok() is 1 when the process could read kernel symbol
 *     addresses itself, by the kernel's rule for /proc/kallsyms
 *     (kallsyms_show_value: kptr_restrict 0 and perf_event_paranoid <= 1,
 *     or kptr_restrict <= 1 and CAP_SYSLOG); for an untrusted peer by the
 *     first rule alone (what a pid runs may change behind its socket).
 *   - peer_free() frees what peer_init and peer_map_check kept.
 */
#ifndef PROBE_PEER_H
#define PROBE_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hashtab.h"

#include "probe/wire.h"

#define PEER_GROUPS_MAX 256

#define PEER_NOSYMLINKS 0x1
#define PEER_OWNED 0x2

#define PEER_READ_NS (50ull * 1000000)           /* a uid's, per second */
#define PEER_READ_ALL_NS (200ull * 1000000)      /* everyone's, per second */
#define PEER_MAP_BYTES (4ull << 20)              /* perf map bytes, a uid's */

struct peer_budget {
	uid_t uid;
	uint64_t second;        /* which second of CLOCK_MONOTONIC it counts */
	uint64_t spent_ns, bytes;
	UT_hash_handle hh;
};

struct peer_budgets {
	struct peer_budget *byuid;
	struct peer_budget all;
	uint64_t denied;        /* MAPs not checked for want of time */
	uint64_t denied_bytes;  /* perf map reads cut for want of bytes */
};

struct peer_vma {
	uint64_t lo, hi;
	uint64_t dev, ino;      /* makedev(major, minor) as /proc/PID/maps says */
};

struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int untrusted;
	int foreign_mnt;        /* in another mount namespace than ours */
	int ngroups;            /* -1: unknown (no groups are used) */
	gid_t groups[PEER_GROUPS_MAX];
	struct peer_vma *vmas;  /* its file mappings, last read */
	size_t nvmas, vcap;
};

int peer_init(struct peer *p, int fd, pid_t pid, uid_t uid);
int peer_pid_ok(const struct peer *p, uint32_t wire_pid);
int peer_open(const struct peer *p, int same_pidns, const char *path, int flags);
int peer_map_check(struct peer *p, struct peer_budgets *b, int same_pidns, uint64_t start,
		   const char *path, uint8_t bid[PROBE_BUILD_ID_MAX], size_t *bid_len,
		   const char **why);
void peer_budgets_free(struct peer_budgets *b);
size_t peer_budget_bytes(struct peer_budgets *bs, const struct peer *p, size_t want);
int peer_kallsyms_ok(const struct peer *p);
int peer_open_proc(const struct peer *p, const char *name);
FILE *peer_fopen_proc(const struct peer *p, const char *name);
void peer_free(struct peer *p);

#endif
