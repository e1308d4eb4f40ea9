#!/bin/sh
# Recordings of version 3 written and read back, damaged, and the decoder's
# bounds on their frames (tests/test_recpack.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_recpack"
