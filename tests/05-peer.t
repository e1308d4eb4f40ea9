#!/bin/sh
# peer_pid_ok: a HELLO's pid against the kernel's word (tests/test_peer.c),
# children being reaped included.
. "$(dirname "$0")/lib.sh"
exec "$GT/test_peer"
