#!/bin/sh
# A path swapped after its file was checked (a user's own directory):
# DWARF is read from the file the names came from, not from where the path
# leads later (tests/test_swap.c).
. "$(dirname "$0")/lib.sh"
printf 'int my_fn(int x) { return x * 7 + 1; }\n' >"$T/mine.c"
printf 'int TOPSECRET_fn(int x) { return x * 9 + 2; }\n' >"$T/secret.c"
cc -g -O0 -shared -fPIC -o "$T/mine.so" "$T/mine.c" &&
	cc -g -O0 -shared -fPIC -o "$T/secret.so" "$T/secret.c" ||
	skip_all "no C compiler to build the two objects"
addr=$(nm "$T/mine.so" | awk '$3 == "my_fn" { print $1 }')
exec "$GT/test_swap" "$T/mine.so" "$T/secret.so" "$addr"
