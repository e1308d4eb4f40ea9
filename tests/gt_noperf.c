/*
 * gt_noperf - run a command where perf_event_open is refused, as in a
 * container's default seccomp profile: installs a seccomp filter (raw BPF,
 * no library) that makes perf_event_open fail with the given errno, then
 * execs the command.
 *   gt_noperf EACCES|EPERM|ENOSYS CMD [ARG...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: gt_noperf EACCES|EPERM|ENOSYS CMD [ARG...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "EACCES"))
		err = EACCES;
	else if (!strcmp(argv[1], "EPERM"))
		err = EPERM;
	else if (!strcmp(argv[1], "ENOSYS"))
		err = ENOSYS;
	else {
		fprintf(stderr, "gt_noperf: unknown errno %s\n", argv[1]);
		return 2;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof f[0], .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("gt_noperf: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("gt_noperf: exec");
	return 127;
}
