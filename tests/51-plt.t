#!/bin/sh
# PLT entries are named as objdump names them (tests/test_symat.c asks the
# symbolizer): NAME@plt for a JUMP_SLOT, and for an IRELATIVE slot (an
# ifunc's, objdump's *ABS*+0xADDR@plt) a symbol at ADDR.  Each entry's
# relocation is read from the entry itself: libc.so.6's entries are not in
# .rela.plt's order (its first is for relocation 52), and named by that
# order they were named after the wrong functions.  Checked on libc.so.6,
# a PIE program, and one with IBT's .plt.sec where the linker makes one.
. "$(dirname "$0")/lib.sh"
command -v objdump >/dev/null 2>&1 || skip_all "no objdump (Debian binutils)"
command -v readelf >/dev/null 2>&1 || skip_all "no readelf (Debian binutils)"
plan 4

# The symbols at each address of FILE and of its debug file (build-id), "ADDR NAME".
syms_of() {
	readelf -sW --dyn-syms "$1" 2>/dev/null
	bid=$(readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	dbg=/usr/lib/debug/.build-id/$(printf %s "$bid" | cut -c1-2)/$(printf %s "$bid" | cut -c3-).debug
	[ -n "$bid" ] && [ -f "$dbg" ] && readelf -sW "$dbg" 2>/dev/null
}

# check LABEL FILE: every entry objdump names, named alike; 0 when so.
check() {
	objdump -d -j .plt -j .plt.sec "$2" 2>/dev/null |
		sed -n 's/^0*\([0-9a-f]*\) <\(.*\)@plt>:$/\1 \2/p' >"$T/want"
	syms_of "$2" | awk '$2 ~ /^[0-9a-f]+$/ && NF >= 8 { a = $2; sub(/^0+/, "", a); n = $8; sub(/@.*/, "", n); print a, n }' >"$T/syms"
	# shellcheck disable=SC2046
	"$GT/test_symat" "$2" $(awk '{ print $1 }' "$T/want") >"$T/got"
	awk -v syms="$T/syms" '
		BEGIN { while ((getline l < syms) > 0) { split(l, f, " "); at[f[1] " " f[2]] = 1 } }
		NR == FNR { want[$1] = $2; next }
		{ n++; w = want[$1]; g = $2
		  if (w ~ /^\*ABS\*\+0x/) {
			a = substr(w, 9); sub(/^0+/, "", a); s = g; sub(/@plt$/, "", s)
			good = g ~ /@plt$/ && ((a " " s) in at)
		  } else
			good = g == w "@plt"
		  if (!good) { bad++; if (bad <= 3) printf "%s: objdump %s, probe %s; ", $1, w, g }
		  if (w ~ /^\*ABS\*/) abs++ }
		END { printf "%d entries (%d ifunc slots), %d named otherwise\n", n, abs, bad
		      exit !(n > 0 && bad == 0) }' "$T/want" "$T/got" >"$T/res"
	st=$?
	ok $st "$1: PLT entries named as objdump names them: $(cat "$T/res")"
}

libc=$(ldd "$GT/gt_leaf" | awk '$1 == "libc.so.6" { print $3 }')
check "libc.so.6" "$libc"
check "gt_leaf (PIE)" "$GT/gt_leaf"

printf '#include <stdio.h>\n#include <string.h>\nint main(int c, char **v) { char b[64]; strcpy(b, v[0]); puts(b); printf("%%zu\\n", strlen(b)); return c > 5; }\n' >"$T/plt.c"
if cc -O1 -fcf-protection=full -Wl,-z,ibtplt -o "$T/ibt" "$T/plt.c" 2>/dev/null &&
	readelf -SW "$T/ibt" | grep -q '\.plt\.sec'; then
	check "IBT program (.plt.sec)" "$T/ibt"
else
	skip "the linker makes no .plt.sec here (-z ibtplt)"
fi
# A lazy .plt with no .plt.sec, from a program built -z lazy.
if cc -O1 -fcf-protection=none -Wl,-z,lazy -o "$T/lazy" "$T/plt.c" 2>/dev/null; then
	check "program built -z lazy" "$T/lazy"
else
	skip "cc cannot build with -z lazy"
fi
