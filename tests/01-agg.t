#!/bin/sh
# The collector's tables, decoder fast paths and demanglers (tests/test_agg.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_agg" "$GT"
