/*
 * demangle.h - C++ and Rust (legacy and v0) names as people read them.
 *
 * Contract: probe_demangle() returns a malloc'd demangled name, or NULL
 * when the name is not mangled (or is broken).  Rust hashes are left out,
 * as perf and rustc-demangle's alternate form show them.  It is libiberty's
 * demangler (binutils', gdb's and perf's), linked statically.
 * probe_demangle_short() is the same name without the function's parameter
 * list and qualifiers (const, &&, "[clone .cold]"), templates and scopes
 * kept: what perf report shows unless -v (libiberty without DMGL_PARAMS),
 * e.g. "std::vector<int, std::allocator<int> >::push_back",
 * "main::{lambda(int)#1}::operator()".
 */
#ifndef PROBE_DEMANGLE_H
#define PROBE_DEMANGLE_H

char *probe_demangle(const char *name);
char *probe_demangle_short(const char *name);

#endif
