#!/bin/sh
# The .eh_frame reader that groups stripped code into functions
# (collector/symbols/ehframe.c) on sections built byte by byte, forged ones
# too (tests/test_ehframe.c).
. "$(dirname "$0")/lib.sh"
exec "$GT/test_ehframe"
