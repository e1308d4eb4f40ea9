/* spawn.c - see spawn.h. */
#include "session/spawn.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

extern char **environ;

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char *find_libprobe(void)
{
	const char *env = getenv("PROBE_LIBPROBE");
	char *found = NULL;
	if (env && *env) {
		if (!is_file(env)) {
			probe_err("PROBE_LIBPROBE=%s: no such file; point it at libprobe.so "
				  "or unset it", env);
			return NULL;
		}
		found = realpath(env, NULL);
		if (!found)
			probe_oom();
	} else {
		char *self = realpath("/proc/self/exe", NULL);
		if (self) {
			char *slash = strrchr(self, '/');
			if (slash)
				*slash = '\0';
			char *a = xasprintf("%s/libprobe.so", self);
			char *b = xasprintf("%s/../lib/probe/libprobe.so", self);
			if (is_file(a))
				found = realpath(a, NULL);
			else if (is_file(b))
				found = realpath(b, NULL);
			if (!found) {
				probe_err("cannot find libprobe.so: looked for %s and %s; "
					  "build it (make) or set PROBE_LIBPROBE", a, b);
			}
			free(a);
			free(b);
			free(self);
		} else {
			probe_err("cannot find libprobe.so (/proc/self/exe: %s); set "
				  "PROBE_LIBPROBE", strerror(errno));
		}
		if (!found)
			return NULL;
	}
	/* The dynamic loader splits LD_PRELOAD at spaces and colons. */
	if (strpbrk(found, " :\t\n")) {
		probe_err("the path of libprobe.so (%s) contains a space or a colon, "
			  "which LD_PRELOAD cannot carry; install it elsewhere", found);
		free(found);
		return NULL;
	}
	return found;
}

char *find_libprobe_for(int offcpu, int alloc)
{
	char *lib = find_libprobe();
	if (!lib || (!offcpu && !alloc))
		return lib;
	char *slash = strrchr(lib, '/');
	const char *name = offcpu && alloc ? "libprobe-offcpu-alloc.so" :
			   offcpu ? "libprobe-offcpu.so" : "libprobe-alloc.so";
	char *off = xasprintf("%.*s/%s", (int)(slash - lib), lib, name);
	if (!is_file(off)) {
		probe_err("%s needs %s beside %s, which is not there: build it (make) "
			  "or install it there", offcpu && alloc ? "--off-cpu with --alloc" :
			  offcpu ? "--off-cpu" : "--alloc", name, lib);
		free(off);
		off = NULL;
	}
	free(lib);
	return off;
}

static int env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* PROBE_EVENT_MORE=TYPE:CONFIG:CONFIG1:CONFIG2:MOD:NAME;... (config.c) */
static char *more_events(const struct child_settings *s)
{
	char *v = xstrdup("PROBE_EVENT_MORE=");
	for (unsigned i = 0; i < s->nmore; i++) {
		const struct event_spec *m = &s->more[i];
		char *n = xasprintf("%s%s%" PRIu32 ":0x%" PRIx64 ":0x%" PRIx64 ":0x%" PRIx64
				    ":%s:%s", v, i ? ";" : "", m->type, m->config,
				    m->config1, m->config2, m->modifier, m->name);
		free(v);
		v = n;
	}
	return v;
}

char **child_environ(const struct child_settings *s)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **env = xcalloc(n + 15, sizeof(*env)); /* ours (14 at most), NULL */
	size_t k = 0;
	const char *preload = NULL;
	for (size_t i = 0; i < n; i++) {
		const char *e = environ[i];
		if (env_is(e, "LD_PRELOAD")) {
			preload = e + strlen("LD_PRELOAD=");
			continue;
		}
		if (env_is(e, "PROBE_SOCKET") || env_is(e, "PROBE_EVENT") ||
		    env_is(e, "PROBE_FREQ") || env_is(e, "PROBE_PERIOD") ||
		    env_is(e, "PROBE_EVENT_ATTR") || env_is(e, "PROBE_EVENT_MODIFIER") ||
		    env_is(e, "PROBE_RING_PAGES") || env_is(e, "PROBE_NO_INHERIT") ||
	    env_is(e, "PROBE_EVENT_MORE") || env_is(e, "PROBE_OFFCPU") ||
		    env_is(e, "PROBE_ALLOC") || env_is(e, "PROBE_ALLOC_ONLY") ||
		    env_is(e, "PROBE_COMMAND") ||
		    (s->timer && env_is(e, "PROBE_TIMER")))
			continue;
		env[k++] = xstrdup(e);
	}
	if (preload && *preload)
		env[k++] = xasprintf("LD_PRELOAD=%s %s", s->libprobe, preload);
	else
		env[k++] = xasprintf("LD_PRELOAD=%s", s->libprobe);
	env[k++] = xasprintf("PROBE_SOCKET=%s", s->socket);
	env[k++] = xstrdup("PROBE_COMMAND=1");         /* it starts at once (preload/lazy.c) */
	env[k++] = xasprintf("PROBE_EVENT=%s", s->event);
	env[k++] = xasprintf("%s=%" PRIu64, s->use_period ? "PROBE_PERIOD" : "PROBE_FREQ",
			     s->value);
	if (s->ev && s->ev->has_attr)
		env[k++] = xasprintf("PROBE_EVENT_ATTR=%" PRIu32 ":0x%" PRIx64 ":0x%" PRIx64
				     ":0x%" PRIx64, s->ev->type, s->ev->config,
				     s->ev->config1, s->ev->config2);
	if (s->ev && s->ev->modifier[0])
		env[k++] = xasprintf("PROBE_EVENT_MODIFIER=%s", s->ev->modifier);
	if (s->nmore)
		env[k++] = more_events(s);
	if (s->ring_pages)
		env[k++] = xasprintf("PROBE_RING_PAGES=%u", s->ring_pages);
	if (s->no_inherit)
		env[k++] = xstrdup("PROBE_NO_INHERIT=1");
	if (s->offcpu)
		env[k++] = xstrdup("PROBE_OFFCPU=1");
	if (s->timer)
		env[k++] = xstrdup("PROBE_TIMER=1");
	if (s->alloc)
		env[k++] = xasprintf("PROBE_ALLOC=%" PRIu64, s->alloc);
	if (s->alloc_only)
		env[k++] = xstrdup("PROBE_ALLOC_ONLY=1");
	env[k] = NULL;
	return env;
}

void free_environ(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

static struct sigaction xfsz_was;
static int xfsz_saved;

void spawn_ignore_xfsz(void)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	xfsz_saved = sigaction(SIGXFSZ, &ign, &xfsz_was) == 0;
}

/*
 * The child: held (reading the gate) until its parent says go, then the
 * exec; its errno goes back through the close-on-exec pipe when that fails.
 */
static void child_run(char *const argv[], char *const envp[], const sigset_t *mask,
		      int gate, int err)
{
	if (xfsz_saved)
		sigaction(SIGXFSZ, &xfsz_was, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (gate >= 0) {
		char go = 0;
		ssize_t k;
		do
			k = read(gate, &go, 1);
		while (k < 0 && errno == EINTR);
		if (k != 1)
			_exit(127);     /* the parent gave up: no command */
		close(gate);
	}
	execvpe(argv[0], argv, envp);
	int e = errno;
	ssize_t r = write(err, &e, sizeof(e));
	(void)r;
	_exit(127);
}

int spawn_held(char *const argv[], char *const envp[], const sigset_t *mask,
	       struct spawn_hold *h, int hold)
{
	int pfd[2], gfd[2] = { -1, -1 };
	h->pid = -1;
	h->gate = h->err = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0 || (hold && pipe2(gfd, O_CLOEXEC) < 0)) {
		probe_err("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		probe_err("cannot start %s: fork: %s", argv[0], strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		if (hold) {
			close(gfd[0]);
			close(gfd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (hold)
			close(gfd[1]);
		child_run(argv, envp, mask, gfd[0], pfd[1]);
	}
	close(pfd[1]);
	if (hold)
		close(gfd[0]);
	h->pid = pid;
	h->err = pfd[0];
	h->gate = gfd[1];
	return 0;
}

pid_t spawn_release(struct spawn_hold *h, char *const argv[], int *status)
{
	if (h->gate >= 0) {
		ssize_t k = write(h->gate, "", 1);
		(void)k;
		close(h->gate);
		h->gate = -1;
	}
	int e = 0;
	ssize_t r;
	do
		r = read(h->err, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(h->err);
	h->err = -1;
	if (r != (ssize_t)sizeof(e))
		return h->pid;  /* EOF: the exec succeeded and closed the pipe */
	/* The child has exited (or is about to): reap it. */
	int st;
	while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
		;
	char *name = printable_dup(argv[0]);
	if (e == ENOENT && !strchr(argv[0], '/'))
		probe_err("%s: command not found", name);
	else
		probe_err("%s: %s", name, strerror(e));
	free(name);
	*status = e == ENOENT ? 127 : 126;
	return -1;
}

pid_t spawn(char *const argv[], char *const envp[], const sigset_t *mask, int *status)
{
	struct spawn_hold h;
	if (spawn_held(argv, envp, mask, &h, 0) < 0) {
		*status = 1;
		return -1;
	}
	return spawn_release(&h, argv, status);
}

/* The file argv0 names, as execvp finds it (PATH), or NULL: malloc'd. */
char *spawn_which(const char *argv0)
{
	if (strchr(argv0, '/'))
		return access(argv0, X_OK) == 0 ? xstrdup(argv0) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; ) {
		const char *colon = strchrnul(p, ':');
		char *cand = xasprintf("%.*s%s%s", (int)(colon - p), p, colon > p ? "/" : "",
				       argv0);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!*colon)
			return NULL;
		p = colon + 1;
	}
}
