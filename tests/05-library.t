#!/bin/sh
# libprobe.so exports only what it interposes and brings no library that
# could change how the program resolves its own symbols (libunwind's
# _Unwind_* and backtrace are loaded RTLD_LOCAL at run time instead).
# libprobe-offcpu.so (--off-cpu) exports the same, libc's blocking calls and
# the calls that wake waiters (pthread_mutex_unlock, pthread_cond_signal and
# _broadcast: timed when they wake one, the waker is often preempted there).
# libprobe-alloc.so and libprobe-offcpu-alloc.so (--alloc) export their
# base's symbols and the allocator's entries (preload/alloc.exports) only.
. "$(dirname "$0")/lib.sh"
plan 7
exports=$(nm -D --defined-only "$LIBPROBE" | awk '{ print $3 }' | sort | tr '\n' ' ')
diag "exports: $exports"
bad=$(nm -D --defined-only "$LIBPROBE" | awk '{ print $3 }' |
	grep -Ev '^(pthread_create|dlopen|dlclose|dl_iterate_phdr|fork|vfork|exec[lv].*|fexecve|pipe2|sigaction|signal|bsd_signal|sysv_signal|sigset|sigprocmask|pthread_sigmask|exit|_exit|_Exit|pthread_exit|close|close_range|closefrom|dup2|dup3|posix_spawn.*|system|setitimer|timer_create|setuid|seteuid|setreuid|setresuid)$')
is "$bad" "" "no exported symbol beyond the interposed functions"
off=$(nm -D --defined-only "${LIBPROBE%/*}/libprobe-offcpu.so" | awk '{ print $3 }' |
	grep -Ev '^(sleep|usleep|nanosleep|clock_nanosleep|poll|ppoll|select|pselect|epoll_wait|epoll_pwait|read|readv|pread|pread64|write|writev|recv|recvfrom|recvmsg|send|sendto|sendmsg|accept|accept4|connect|fsync|fdatasync|flock|wait|waitpid|wait4|waitid|sigwait|sigwaitinfo|sigtimedwait|sigsuspend|pause|pthread_cond_wait|pthread_cond_timedwait|pthread_cond_clockwait|pthread_join|pthread_mutex_lock|pthread_rwlock_rdlock|pthread_rwlock_wrlock|sem_wait|pthread_mutex_timedlock|sem_timedwait|pthread_mutex_unlock|pthread_cond_signal|pthread_cond_broadcast)$' |
	sort | tr '\n' ' ')
is "$off" "$exports" "libprobe-offcpu.so: libprobe.so's exports and the blocking calls, nothing else"
# with_alloc LIB BASE: LIB's exports less the allocator's, against BASE's.
alloc_re="^($(grep -v '^#' "$ROOT/preload/alloc.exports" | tr '\n' '|' | sed 's/|$//'))\$"
with_alloc() {
	a=$(nm -D --defined-only "${LIBPROBE%/*}/$1" | awk '{ print $3 }' | grep -Ev "$alloc_re" | sort | tr '\n' ' ')
	b=$(nm -D --defined-only "${LIBPROBE%/*}/$2" | awk '{ print $3 }' | sort | tr '\n' ' ')
	n=$(nm -D --defined-only "${LIBPROBE%/*}/$1" | awk '{ print $3 }' | grep -Ec "$alloc_re")
	[ "$a" = "$b" ] && [ "$n" -eq "$(grep -vc '^#' "$ROOT/preload/alloc.exports")" ]
	ok $? "$1: $2's exports and the $n allocator entries, nothing else"
}
with_alloc libprobe-alloc.so libprobe.so
with_alloc libprobe-offcpu-alloc.so libprobe-offcpu.so
nm -D --defined-only "$LIBPROBE" | grep -q '_Unwind_'; is "$?" 1 "no _Unwind_* defined"
ldd "$LIBPROBE" | grep -q 'libunwind'; is "$?" 1 "libunwind is not a link-time dependency"
out=$(LD_PRELOAD="$LIBPROBE" PROBE_OUTPUT="$T/x.probe" "$GT/gt_leaf" 1 2>/dev/null)
is "$out" "checksum 1" "a preloaded program still runs"
done_testing
