/*
 * netlib.h - libcurl and libmicrohttpd, loaded when probe agent first needs
 * them (--push, --http), not by every probe command.
 *
 * Why: linked, the two and what they bring (GnuTLS, Kerberos, LDAP, SSH,
 * RTMP, nghttp2, p11-kit... 28 libraries) took 6 to 7 ms of every probe
 * command's start, `probe record` of a short program included, which only
 * the agent uses.  Their headers give the types; the functions are called
 * through NET(name), found with dlsym once the library is loaded
 * (RTLD_LOCAL: nothing else resolves to them).
 *
 * Contract: netlib_curl() before any NET(curl_*), netlib_mhd() before any
 * NET(MHD_*); each returns 0, or -1 after one message saying what to
 * install (what: the option that needed it).  Normal context, the agent's
 * main thread.
 */
#ifndef PROBE_AGENT_NETLIB_H
#define PROBE_AGENT_NETLIB_H

#include <curl/curl.h>
#include <microhttpd.h>

#define NET_FN(f) __typeof__(f) *f
struct netlib {
	NET_FN(curl_global_init);
	NET_FN(curl_global_cleanup);
	NET_FN(curl_easy_init);
	NET_FN(curl_easy_cleanup);
	NET_FN(curl_easy_reset);
	NET_FN(curl_easy_setopt);
	NET_FN(curl_easy_perform);
	NET_FN(curl_easy_getinfo);
	NET_FN(curl_easy_strerror);
	NET_FN(curl_slist_append);
	NET_FN(curl_slist_free_all);
	NET_FN(MHD_start_daemon);
	NET_FN(MHD_stop_daemon);
	NET_FN(MHD_get_daemon_info);
	NET_FN(MHD_get_connection_info);
	NET_FN(MHD_lookup_connection_value);
	NET_FN(MHD_create_response_from_buffer);
	NET_FN(MHD_add_response_header);
	NET_FN(MHD_queue_response);
	NET_FN(MHD_destroy_response);
	NET_FN(MHD_suspend_connection);
	NET_FN(MHD_resume_connection);
	NET_FN(MHD_run);
	NET_FN(MHD_get_timeout);
};
#undef NET_FN

extern struct netlib netlib;
#define NET(f) (netlib.f)

int netlib_curl(const char *what);
int netlib_mhd(const char *what);

#endif
