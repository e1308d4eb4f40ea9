#!/bin/sh
# The wire decoder's unit tests (tests/test_wire.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_wire"
