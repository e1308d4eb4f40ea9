#!/bin/sh
# mkminidebug.sh 'CC FLAGS' SRC OUT - build SRC into OUT the way Fedora and
# Debian's MiniDebugInfo (debugedit/dh_strip) do: fully stripped, with an
# xz-compressed ELF in .gnu_debugdata whose .symtab holds the function
# symbols that .dynsym lacks (static functions included).
set -eu
cc=$1 src=$2 out=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/probe-minidebug.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
$cc -o "$tmp/full" "$src"
nm -D "$tmp/full" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dynsyms"
nm "$tmp/full" --format=posix --defined-only |
	awk '$2 == "T" || $2 == "t" || $2 == "W" || $2 == "w" { print $1 }' | sort >"$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
objcopy --only-keep-debug "$tmp/full" "$tmp/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini"
xz -q "$tmp/mini"
strip --strip-all --remove-section=.comment -o "$tmp/stripped" "$tmp/full"
objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" "$out"
