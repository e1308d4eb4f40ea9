#!/bin/sh
# What stays in use of the sampled allocations, matched in either order
# (collector/data/inuse.c; tests/test_inuse.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_inuse"
