#!/bin/sh
# A mapping's load bias read from the file, as a sampler from outside must
# find it (collector/outside/elfmap.c; tests/test_elfmap.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_elfmap"
