/*
 * netlib.c - loading libcurl and libmicrohttpd when first needed: see
 * netlib.h.  The sonames are the ABI the headers describe (libcurl 4 since
 * 2006, libmicrohttpd 12 since 2014).
 */
#include "agent/netlib.h"

#include <dlfcn.h>
#include <stddef.h>

#include "util.h"

struct netlib netlib;

struct sym {
	const char *name;
	size_t at;              /* offsetof(struct netlib, its pointer) */
};

#define SYM(f) { #f, offsetof(struct netlib, f) }
static const struct sym curl_syms[] = {
	SYM(curl_global_init), SYM(curl_global_cleanup), SYM(curl_easy_init),
	SYM(curl_easy_cleanup), SYM(curl_easy_reset), SYM(curl_easy_setopt),
	SYM(curl_easy_perform), SYM(curl_easy_getinfo), SYM(curl_easy_strerror),
	SYM(curl_slist_append), SYM(curl_slist_free_all),
};
static const struct sym mhd_syms[] = {
	SYM(MHD_start_daemon), SYM(MHD_stop_daemon), SYM(MHD_get_daemon_info),
	SYM(MHD_get_connection_info), SYM(MHD_lookup_connection_value),
	SYM(MHD_create_response_from_buffer), SYM(MHD_add_response_header),
	SYM(MHD_queue_response), SYM(MHD_destroy_response),
	SYM(MHD_suspend_connection), SYM(MHD_resume_connection), SYM(MHD_run),
	SYM(MHD_get_timeout),
};
#undef SYM

/* 1 loaded, -1 failed (said), 0 not tried. */
static int load(const char *soname, const char *package, const struct sym *s,
		size_t n, int *state, const char *what)
{
	void *h;

	if (*state)
		return *state > 0 ? 0 : -1;
	*state = -1;
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		probe_err("%s needs %s (%s); install %s", what, soname,
			  e ? e : "not found", package);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		void *f = dlsym(h, s[i].name);

		if (!f) {
			probe_err("%s: %s has no %s (too old?); install %s", what,
				  soname, s[i].name, package);
			return -1;
		}
		*(void **)((char *)&netlib + s[i].at) = f;
	}
	*state = 1;
	return 0;
}

int netlib_curl(const char *what)
{
	static int state;

	return load("libcurl.so.4", "libcurl4", curl_syms,
		    sizeof curl_syms / sizeof curl_syms[0], &state, what);
}

int netlib_mhd(const char *what)
{
	static int state;

	return load("libmicrohttpd.so.12", "libmicrohttpd12", mhd_syms,
		    sizeof mhd_syms / sizeof mhd_syms[0], &state, what);
}
