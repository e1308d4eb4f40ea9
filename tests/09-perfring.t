#!/bin/sh
# perf events on another process, read from outside: its samples with
# callchains, registers and stack copies, its exit (collector/outside/
# perfring.c; tests/test_perfring.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_perfring"
