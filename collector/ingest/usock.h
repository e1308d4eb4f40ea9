/*
 * usock.h - the per-user socket directory and the collector's socket.
 *
 * Contract:
 *   - usock_dir() returns (malloc'd) $XDG_RUNTIME_DIR/probe when
 *     XDG_RUNTIME_DIR is set, absolute, a directory we own and can write, and
 *     short enough for a socket path; else /tmp/probe-UID.  It is created
 *     with mode 0700; if it exists it must be a real directory (not a
 *     symlink), owned by us, mode 0700, or we refuse (NULL, one message):
 *     anyone who can enter it could connect and feed us frames.
 *   - usock_listen() binds a non-blocking, close-on-exec listening socket at
 *     path, mode 0600, replacing a stale socket file of the same name.  It
 *     is SOCK_SEQPACKET: each record a process sends is whole frames, and
 *     records from its threads never interleave.
 *   - usock_peer() reads a connection's SO_PEERCRED (pid, uid).
 *   - usock_live() is 1 when something listens at path (another probe top
 *     or agent).
 */
#ifndef PROBE_USOCK_H
#define PROBE_USOCK_H

#include <sys/types.h>

char *usock_dir(void);
/* "DIR/record-PID.sock", malloc'd. */
char *usock_path(const char *dir, pid_t pid);
int usock_listen(const char *path);
int usock_peer(int fd, pid_t *pid, uid_t *uid);
int usock_live(const char *path);

#endif
