#!/bin/sh
# scripts/cfibench/run.sh: libdw's CFI (dwarf_getcfi_elf, dwarf_cfi_addrframe)
# against collector/ingest/cfi_learn.c over the objects of the comparison in
# cfi_learn.c's header (those this machine has): rules, time, memory.  Builds
# into build/cfibench; about 10 s on 2 cores.
set -e
cd "$(dirname "$0")"
PROBE=$(cd ../.. && pwd)
make -s PROBE="$PROBE"
B=$PROBE/build/cfibench
# A static executable linked by gold: no .eh_frame_hdr, and .eh_frame typed
# SHT_X86_64_UNWIND instead of PROGBITS.
[ -x "$B/hello_static_gold" ] || ! command -v ld.gold >/dev/null ||
	gcc -O2 -static -fuse-ld=gold hello.c -o "$B/hello_static_gold"
L=/usr/lib/x86_64-linux-gnu
set --
for f in $L/libc.so.6 $L/libstdc++.so.6 /usr/bin/python3.11 /usr/bin/perl $L/libgtk-3.so.0 \
	/lib64/ld-linux-x86-64.so.2 "$PROBE/build/tests/gt_leaf_static" "$B/hello_static_gold" \
	$L/libc++.so.1 $L/libLLVM-15.so.1; do
	[ -e "$f" ] && set -- "$@" "$f"
done
exec "$B/cfibench" -x 3 "$@"
