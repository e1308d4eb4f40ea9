/*
 * gt_jit: a program that generates machine code at run time, as a JIT
 * does, and names it in its own perf map (/tmp/perf-PID.map).
 *
 *   gt_jit [MS_A [MS_B]]     (CPU ms of each phase; default 1000 and 1000)
 *
 * Phase A: run_jit (C, no frame pointer, unwound by its CFI) calls two
 * generated functions with frame-pointer prologues and no CFI, in turn:
 * jit_spin_a, a loop, and jit_call, which calls native_work (C, no frame
 * pointer) back.  Phase B writes other code at jit_spin_a's address, names
 * it jit_spin_b in the map (the runtime reused the address), and runs it
 * alone.  A profiler that names each address by the map's last word calls
 * all of A's spinning jit_spin_b.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

typedef uint64_t (*spin_fn)(uint64_t n);
typedef uint64_t (*call_fn)(uint64_t (*fn)(uint64_t), uint64_t n);

static const uint8_t spin_code[] = {
	0x55,                   /* push rbp */
	0x48, 0x89, 0xe5,       /* mov rbp, rsp */
	0x48, 0x89, 0xf8,       /* mov rax, rdi */
	0x48, 0xff, 0xc8,       /* 1: dec rax */
	0x75, 0xfb,             /* jnz 1b */
	0x5d,                   /* pop rbp */
	0xc3,                   /* ret */
};

/* A different body at the same address in phase B (one more instruction). */
static const uint8_t spin_code_b[] = {
	0x55,                   /* push rbp */
	0x48, 0x89, 0xe5,       /* mov rbp, rsp */
	0x48, 0x89, 0xf8,       /* mov rax, rdi */
	0x90,                   /* 1: nop */
	0x48, 0xff, 0xc8,       /* dec rax */
	0x75, 0xfa,             /* jnz 1b */
	0x5d,                   /* pop rbp */
	0xc3,                   /* ret */
};

static const uint8_t call_code[] = {
	0x55,                   /* push rbp */
	0x48, 0x89, 0xe5,       /* mov rbp, rsp */
	0x48, 0x89, 0xf8,       /* mov rax, rdi */
	0x48, 0x89, 0xf7,       /* mov rdi, rsi */
	0xff, 0xd0,             /* call rax */
	0x5d,                   /* pop rbp */
	0xc3,                   /* ret */
};

#define CALL_AT 64

static FILE *perf_map;

static void name_code(const void *at, size_t size, const char *name)
{
	fprintf(perf_map, "%lx %zx %s\n", (unsigned long)(uintptr_t)at, size, name);
	fflush(perf_map);
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static uint64_t native_work(uint64_t n)
{
	volatile uint64_t x = 0;
	for (uint64_t i = 0; i < n; i++)
		x += i ^ (x >> 3);
	return x;
}

/* Compiled without a frame pointer: its callers are found by its CFI. */
__attribute__((noinline)) static uint64_t run_jit(uint8_t *code, double ms, int phase_b)
{
	spin_fn spin = (spin_fn)(void *)code;
	call_fn call = (call_fn)(void *)(code + CALL_AT);
	double end = cpu_ms() + ms;
	uint64_t sum = 0;

	while (cpu_ms() < end) {
		sum += spin(2000000);
		if (!phase_b)
			sum += call(native_work, 1000000);
	}
	return sum;
}

static void write_code(uint8_t *code, const uint8_t *spin, size_t nspin)
{
	if (mprotect(code, PAGE, PROT_READ | PROT_WRITE) < 0) {
		perror("gt_jit: mprotect");
		exit(1);
	}
	memcpy(code, spin, nspin);
	memcpy(code + CALL_AT, call_code, sizeof call_code);
	if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) < 0) {
		perror("gt_jit: mprotect");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double ms_a = argc > 1 ? atof(argv[1]) : 1000, ms_b = argc > 2 ? atof(argv[2]) : 1000;
	char path[64];

	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	perf_map = fopen(path, "w");
	if (!perf_map) {
		perror(path);
		return 1;
	}
	uint8_t *code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("gt_jit: mmap");
		return 1;
	}
	write_code(code, spin_code, sizeof spin_code);
	name_code(code, sizeof spin_code, "jit_spin_a");
	name_code(code + CALL_AT, sizeof call_code, "jit_call");
	uint64_t s = run_jit(code, ms_a, 0);

	write_code(code, spin_code_b, sizeof spin_code_b);
	name_code(code, sizeof spin_code_b, "jit_spin_b");
	s += run_jit(code, ms_b, 1);
	fclose(perf_map);
	printf("gt_jit: %s\n", s ? "done" : "zero");
	return 0;
}
