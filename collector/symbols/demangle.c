/*
 * demangle.c - see demangle.h.
 *
 * Why libiberty: it is what binutils, gdb and perf use, it reads C++ and
 * both Rust manglings, and Debian ships it (libiberty-dev).  It replaced
 * 700 lines of our own Rust demangler and a dlopen of libstdc++'s
 * __cxa_demangle; on 43,919 C++ names (libstdc++, LLVM, the tests) the
 * two agree on all but 6, where libiberty writes a call inside a decltype
 * with an extra pair of parentheses (as c++filt does).
 */
#include "symbols/demangle.h"

#include <libiberty/demangle.h>

static char *demangle(const char *name, int flags)
{
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* DMGL_AUTO: Rust first (its legacy names are valid C++ ones too). */
	return cplus_demangle(name, flags | DMGL_ANSI | DMGL_AUTO);
}

char *probe_demangle(const char *name)
{
	return demangle(name, DMGL_PARAMS);
}

char *probe_demangle_short(const char *name)
{
	/* Without DMGL_PARAMS libiberty leaves out the outermost function's
	   parameters and qualifiers alone: a lambda's or a local class's
	   enclosing function keeps its own, as perf shows them. */
	char *s = demangle(name, 0);
	return s ? s : probe_demangle(name);
}
