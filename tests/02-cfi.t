#!/bin/sh
# The collector's frame-rule learner on a real program and on damaged
# copies of it (tests/test_cfi.c).
. "$(dirname "$0")/lib.sh"
f=$(nm "$GT/gt_recurse" | awk '$3 == "descend" || $3 == "bottom" || $3 == "main" { printf "%s ", $1 }')
# And the rules of its lazy-binding PLT (a CFA expression).
PLT=$(readelf -SW "$GT/gt_recurse" | awk '$2 == ".plt" { print $4 }') exec "$GT/test_cfi" "$GT/gt_recurse" $f
