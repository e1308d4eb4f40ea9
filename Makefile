# probe - one Makefile for libprobe.so, the probe command and the tests.
#
#   make            build everything under $(BUILD)/
#   make run        install missing Debian packages, build, profile the demo
#   make test       the same set-up, then the whole suite through prove
#   make sanitize   build and test under -fsanitize=address,undefined
#   make bench      scripts/bench
#   make fuzz       libFuzzer (clang) on the report path and the symbolizer,
#                   FUZZ_SECONDS (600) each
#   make install PREFIX=/usr/local DESTDIR=

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
SAN     ?=

PKG_CONFIG ?= pkg-config
DW_CFLAGS  := $(shell $(PKG_CONFIG) --cflags libdw libelf 2>/dev/null)
DW_LIBS    := $(shell $(PKG_CONFIG) --libs libdw libelf zlib libzstd 2>/dev/null)
# libiberty (the demangler): Debian ships it as a static archive only.
DW_LIBS    += -liberty
# probe annotate's disassembler (annotate/disasm.h says why capstone).
DW_LIBS    += $(shell $(PKG_CONFIG) --libs capstone 2>/dev/null)
UNW_CFLAGS := $(shell $(PKG_CONFIG) --cflags libunwind 2>/dev/null)
# --format pprof: profile.proto compiled by protoc-c at build time into
# $(GEN) (never committed), linked with libprotobuf-c.
PB_CFLAGS  := $(shell $(PKG_CONFIG) --cflags libprotobuf-c 2>/dev/null)
PB_LIBS    := $(shell $(PKG_CONFIG) --libs libprotobuf-c 2>/dev/null)
PPROF_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
# probe agent: libmicrohttpd serves profiles, libcurl pushes them.  Their
# headers only: the agent loads them when it needs them (agent/netlib.h).
NET_CFLAGS := $(shell $(PKG_CONFIG) --cflags libmicrohttpd libcurl 2>/dev/null)
NET_LIBS   := -lpthread -ldl

WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SAN) -Iinclude -D_GNU_SOURCE
# libprobe.so: hidden by default, only the version script's symbols exported.
# No sanitizer here: it is preloaded into programs that are not built with one
# (make sanitize preloads libasan itself; see tests/lib.sh).
PRELOAD_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -Iinclude -D_GNU_SOURCE \
	-fPIC -fvisibility=hidden -ftls-model=initial-exec $(UNW_CFLAGS)
GT_CFLAGS = -std=gnu11 $(WARN) -O2 -g -fomit-frame-pointer -D_GNU_SOURCE

PRELOAD_SRC   := $(wildcard preload/*.c)
# collector/: the commands in cmd/ (as perf's builtin-*.c), one folder per
# stage below them; includes name their folder ("symbols/resolve.h").
COLLECTOR_DIRS := collector $(patsubst %/,%,$(wildcard collector/*/))
GEN            := $(BUILD)/gen
PPROF_GEN_C    := $(GEN)/profile.pb-c.c
# The flame graph's style sheets and scripts, files embedded as C arrays.
FLAME_ASSETS   := flame_css=collector/flame/assets/flame.css \
	flame_js_core=collector/flame/assets/core.js flame_js_svg=collector/flame/assets/svg.js \
	flame_css_html=collector/flame/assets/page.css flame_js_html=collector/flame/assets/page.js
FLAME_GEN_C    := $(GEN)/flame_assets.c
COLLECTOR_INC  := -Icollector -I$(GEN) $(PB_CFLAGS)
COLLECTOR_SRC := $(wildcard $(addsuffix /*.c,$(COLLECTOR_DIRS)))
PRELOAD_OBJ   := $(PRELOAD_SRC:%.c=$(BUILD)/%.o)
# libprobe.so has everything but the wait wrappers; libprobe-offcpu.so,
# which --off-cpu preloads instead, has them too (preload/waits.c): a
# program profiled without --off-cpu keeps its own read, poll, locks...
# libprobe-alloc.so (--alloc) has the allocator's wrappers (preload/
# alloc.c) too, libprobe-offcpu-alloc.so both.
PRELOAD_BASE_OBJ := $(filter-out $(BUILD)/preload/waits.o $(BUILD)/preload/alloc.o,$(PRELOAD_OBJ))
PRELOAD_OFFCPU_OBJ := $(filter-out $(BUILD)/preload/alloc.o,$(PRELOAD_OBJ))
PRELOAD_ALLOC_OBJ := $(filter-out $(BUILD)/preload/waits.o,$(PRELOAD_OBJ))
COLLECTOR_OBJ := $(COLLECTOR_SRC:%.c=$(BUILD)/%.o) $(PPROF_GEN_C:.c=.o) $(FLAME_GEN_C:.c=.o)
# Everything of the collector but main(), for unit tests.
COLLECTOR_LIB := $(filter-out $(BUILD)/collector/main.o,$(COLLECTOR_OBJ))

GT_SRC    := $(wildcard tests/gt_*.c)
GT_BIN    := $(GT_SRC:tests/%.c=$(BUILD)/tests/%)
UNIT_SRC  := $(wildcard tests/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/%.c=$(BUILD)/tests/%)
DEMO_BIN  := $(BUILD)/demo
BENCH_SENDER := $(BUILD)/bench_sender
BENCH_SPIN   := $(BUILD)/bench_spin
# scripts/bench --stdio, --threads-rss, --kill: what a thread of libprobe's
# own costs the program (single-thread fast paths, memory, SIGKILL);
# --wake: what a block and wake costs under --off-cpu; --alloc: what an
# allocation costs under --alloc.
BENCH_PROGS  := $(BUILD)/bench_stdio $(BUILD)/bench_threads $(BUILD)/bench_kill \
	$(BUILD)/bench_wake $(BUILD)/bench_alloc $(BUILD)/bench_passthru.so \
	$(BUILD)/bench_floor.so

LIBPROBE := $(BUILD)/libprobe.so
LIBPROBE_OFFCPU := $(BUILD)/libprobe-offcpu.so
LIBPROBE_ALLOC := $(BUILD)/libprobe-alloc.so
LIBPROBE_OFFCPU_ALLOC := $(BUILD)/libprobe-offcpu-alloc.so
LIBPROBES := $(LIBPROBE) $(LIBPROBE_OFFCPU) $(LIBPROBE_ALLOC) $(LIBPROBE_OFFCPU_ALLOC)
PROBE    := $(BUILD)/probe

# Without the Debian packages, say which command installs them rather than
# fail in the compiler (make run, make test and make deps install them).
HAVE_DEPS := $(if $(and $(wildcard /usr/include/uthash.h),$(wildcard /usr/include/libiberty/demangle.h),$(wildcard $(PPROF_PROTO)),$(shell command -v protoc-c)),$(shell $(PKG_CONFIG) --exists libdw libelf libunwind zlib libzstd libprotobuf-c libmicrohttpd libcurl capstone 2>/dev/null && echo yes))

ifeq ($(HAVE_DEPS),)
ifeq ($(filter deps run test check sanitize bench fuzz clean,$(MAKECMDGOALS)),)
$(shell scripts/install-deps --check >&2)
$(error missing build dependencies: run 'make deps' as root (scripts/install-deps))
endif
endif

.PHONY: all deps run test check sanitize bench fuzz install clean
all: $(LIBPROBES) $(PROBE) $(GT_BIN) $(UNIT_BIN) $(DEMO_BIN) $(BENCH_SENDER) $(BENCH_SPIN) $(BENCH_PROGS)

deps:
	@scripts/install-deps

$(BUILD)/preload/%.o: preload/%.c $(wildcard preload/*.h) $(wildcard include/probe/*.h)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/collector/%.o: collector/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(COLLECTOR_INC) $(DW_CFLAGS) $(NET_CFLAGS) -MMD -MP -c -o $@ $<

# The generated header must exist before the file that includes it is
# compiled the first time (-MMD knows it only from then on).
$(PPROF_GEN_C): $(PPROF_PROTO)
	@mkdir -p $(@D)
	protoc-c --proto_path=$(<D) --c_out=$(@D) $<
$(GEN)/profile.pb-c.h: $(PPROF_GEN_C) ;
# What includes the generated header (pprof_merge.h does too) waits for it.
$(BUILD)/collector/format/pprof.o $(BUILD)/collector/format/pprof_merge.o \
	$(BUILD)/collector/agent/httpd.o: $(GEN)/profile.pb-c.h

$(FLAME_GEN_C): $(foreach a,$(FLAME_ASSETS),$(lastword $(subst =, ,$(a)))) scripts/embed
	@mkdir -p $(@D)
	scripts/embed $@ $(FLAME_ASSETS)

$(GEN)/%.o: $(GEN)/%.c
	$(CC) $(ALL_CFLAGS) -I$(GEN) $(PB_CFLAGS) -c -o $@ $<

$(LIBPROBE): $(PRELOAD_BASE_OBJ) preload/libprobe.map
	$(CC) -shared -o $@ $(PRELOAD_BASE_OBJ) -Wl,--version-script=preload/libprobe.map \
		-Wl,-z,now -Wl,-z,noexecstack -ldl -lpthread

$(LIBPROBE_OFFCPU): $(PRELOAD_OFFCPU_OBJ) preload/libprobe-offcpu.map
	$(CC) -shared -o $@ $(PRELOAD_OFFCPU_OBJ) -Wl,--version-script=preload/libprobe-offcpu.map \
		-Wl,-z,now -Wl,-z,noexecstack -ldl -lpthread

# A map with alloc.exports' names added to the global list of another.
$(BUILD)/libprobe-alloc.map: preload/libprobe.map preload/alloc.exports
	@mkdir -p $(@D)
	{ sed '/^[[:space:]]*local:/,$$d' $<; sed -n 's/^\([a-z_]*\)$$/\t\t\1;/p' preload/alloc.exports; \
	  sed -n '/^[[:space:]]*local:/,$$p' $<; } >$@
$(BUILD)/libprobe-offcpu-alloc.map: preload/libprobe-offcpu.map preload/alloc.exports
	@mkdir -p $(@D)
	{ sed '/^[[:space:]]*local:/,$$d' $<; sed -n 's/^\([a-z_]*\)$$/\t\t\1;/p' preload/alloc.exports; \
	  sed -n '/^[[:space:]]*local:/,$$p' $<; } >$@

$(LIBPROBE_ALLOC): $(PRELOAD_ALLOC_OBJ) $(BUILD)/libprobe-alloc.map
	$(CC) -shared -o $@ $(PRELOAD_ALLOC_OBJ) -Wl,--version-script=$(BUILD)/libprobe-alloc.map \
		-Wl,-z,now -Wl,-z,noexecstack -ldl -lpthread

$(LIBPROBE_OFFCPU_ALLOC): $(PRELOAD_OBJ) $(BUILD)/libprobe-offcpu-alloc.map
	$(CC) -shared -o $@ $(PRELOAD_OBJ) -Wl,--version-script=$(BUILD)/libprobe-offcpu-alloc.map \
		-Wl,-z,now -Wl,-z,noexecstack -ldl -lpthread

# The man pages, made from each command's -h (scripts/gen-man): probe help
# CMD shows them, from beside the binary (build/man) or where installed.
MAN_CMDS := record report annotate top diff list agent
MANPAGES := $(BUILD)/man/probe.1 $(patsubst %,$(BUILD)/man/probe-%.1,$(MAN_CMDS))
all: $(MANPAGES)
$(BUILD)/man/probe.1: $(PROBE) scripts/gen-man
	@mkdir -p $(@D)
	scripts/gen-man $(PROBE) "" >$@.tmp && mv $@.tmp $@
$(BUILD)/man/probe-%.1: $(PROBE) scripts/gen-man
	@mkdir -p $(@D)
	scripts/gen-man $(PROBE) $* >$@.tmp && mv $@.tmp $@

$(PROBE): $(COLLECTOR_OBJ)
	$(CC) $(SAN) -o $@ $(COLLECTOR_OBJ) $(DW_LIBS) $(PB_LIBS) $(NET_LIBS) -lncursesw -lm

$(BUILD)/tests/gt_%: tests/gt_%.c
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -o $@ $< -lpthread -lm

# gt_leaf statically linked: sampled from outside (tests/46-outside.t).
$(BUILD)/tests/gt_leaf_static: tests/gt_leaf.c tests/gt_work.h
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -static -o $@ $< -lm

# A hostile client speaks the wire protocol itself (tests/97-trust.t).
$(BUILD)/tests/gt_liar: tests/gt_liar.c tests/wire_frames.h $(wildcard include/probe/*.h)
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -Iinclude -o $@ $<

$(BUILD)/tests/test_%: tests/test_%.c tests/tap.h tests/wire_frames.h $(COLLECTOR_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DW_CFLAGS) $(COLLECTOR_INC) -o $@ $< $(COLLECTOR_LIB) $(DW_LIBS) $(PB_LIBS) $(NET_LIBS) -lncursesw -lm
# test_perfring checks the kernel's frame-pointer callchains of its child.
$(BUILD)/tests/test_perfring: ALL_CFLAGS += -fno-omit-frame-pointer

$(DEMO_BIN): scripts/demo.c
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -o $@ $< -lpthread -lm

$(BENCH_SENDER): scripts/bench_sender.c $(wildcard include/probe/*.h)
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -Iinclude -o $@ $<

$(BENCH_SPIN): scripts/bench_spin.c tests/gt_work.h
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -o $@ $< -lpthread

$(BUILD)/bench_passthru.so: scripts/bench_passthru.c
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

$(BUILD)/bench_floor.so: scripts/bench_floor.c
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $<

$(BUILD)/bench_%: scripts/bench_%.c tests/gt_work.h
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -o $@ $< -lpthread

-include $(PRELOAD_OBJ:.o=.d) $(COLLECTOR_OBJ:.o=.d)

# Test programs that the gt_%/test_% rules do not cover (symbols: plugins,
# C++, MiniDebugInfo; the synthetic recording of scripts/bench --report).
CXX ?= g++
TEST_EXTRA := $(BUILD)/tests/libgt_plugin_a.so $(BUILD)/tests/libgt_plugin_b.so \
	$(BUILD)/tests/libgt_plugin_c.so $(BUILD)/tests/gt_cxx \
	$(BUILD)/tests/gt_minidebug $(BUILD)/tests/gen_recording $(BUILD)/tests/gt_leaf_static \
	$(BUILD)/tests/libgt_dlvia.so
all: $(TEST_EXTRA)

$(BUILD)/tests/libgt_dlvia.so: tests/libgt_dlvia.c
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/tests/libgt_plugin_%.so: tests/libgt_plugin.c tests/gt_work.h
	@mkdir -p $(@D)
	$(CC) $(GT_CFLAGS) -shared -fPIC -DPLUGIN=$* -o $@ $<

$(BUILD)/tests/gt_cxx: tests/gt_cxx.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $<

$(BUILD)/tests/gt_minidebug: tests/gt_leaf.c tests/gt_work.h tests/mkminidebug.sh
	@mkdir -p $(@D)
	sh tests/mkminidebug.sh "$(CC) $(GT_CFLAGS)" $< $@

$(BUILD)/tests/gen_recording: tests/gen_recording.c $(wildcard include/probe/*.h) $(COLLECTOR_LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(COLLECTOR_INC) -o $@ $< $(COLLECTOR_LIB) $(DW_LIBS) $(PB_LIBS) $(NET_LIBS) -lncursesw -lm -ldl

# C++ allocations, two threads (tests/23-alloc.t).
all: $(BUILD)/tests/gt_newdel
$(BUILD)/tests/gt_newdel: tests/gt_newdel.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $< -lpthread

# C++ names as the text reports show them (tests/78-report-text.t).
all: $(BUILD)/tests/gt_cxxnames
$(BUILD)/tests/gt_cxxnames: tests/gt_cxxnames.cc tests/gt_work.h
	@mkdir -p $(@D)
	$(CXX) -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $<

# Fault-matrix programs (tests/6x-*.t) that the gt_% rule does not cover:
# C++ exceptions across a linked and a dlopen'ed shared object.
CXX ?= g++
GT_CXXFLAGS = -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror
FAULT_EXTRA := $(BUILD)/tests/gt_throw $(BUILD)/tests/libgt_thrower.so \
	$(BUILD)/tests/libgt_thrower_plugin.so
all: $(FAULT_EXTRA)

$(BUILD)/tests/libgt_thrower.so: tests/libgt_thrower.cc tests/gt_work.h
	@mkdir -p $(@D)
	$(CXX) $(GT_CXXFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/tests/libgt_thrower_plugin.so: tests/libgt_thrower.cc tests/gt_work.h
	@mkdir -p $(@D)
	$(CXX) $(GT_CXXFLAGS) -shared -fPIC -DPLUGIN -o $@ $<

$(BUILD)/tests/gt_throw: tests/gt_throw.cc $(BUILD)/tests/libgt_thrower.so
	@mkdir -p $(@D)
	$(CXX) $(GT_CXXFLAGS) -o $@ $< -L$(BUILD)/tests -lgt_thrower \
		-Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# Quiet while it builds (errors still show): the profile is what run is for.
run: deps
	@echo "probe: building (make all; a minute on 2 cores the first time)"
	@$(MAKE) -s --no-print-directory all
	$(PROBE) record -o $(BUILD)/demo.probe -- $(DEMO_BIN)
	$(PROBE) report $(BUILD)/demo.probe
	$(PROBE) report --tree --percent-limit 2 $(BUILD)/demo.probe
	$(PROBE) report --format svg -o $(BUILD)/demo.svg $(BUILD)/demo.probe
	@echo "probe: the demo's flame graph is $(abspath $(BUILD))/demo.svg: open it in a browser;"
	@echo "probe: the command is $(abspath $(PROBE)) (export PATH=$(abspath $(BUILD)):\$$PATH, or make install)"

test: deps
	@$(MAKE) --no-print-directory all
	PROBE_BUILD=$(BUILD) prove -f tests/

check: test

sanitize: deps
	@$(MAKE) --no-print-directory BUILD=build-san SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" all
	PROBE_BUILD=build-san PROBE_SANITIZE=1 prove -f tests/

bench:
	@scripts/install-deps --bench
	@$(MAKE) --no-print-directory all
	scripts/bench

# Fuzzing: every collector module but main.c, instrumented, with one target
# a harness (fuzz/); seed corpora of real recordings and objects.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS = -std=gnu11 $(WARN) -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -Iinclude $(COLLECTOR_INC) -D_GNU_SOURCE $(DW_CFLAGS) $(NET_CFLAGS)
FUZZ_SRC := $(filter-out collector/main.c,$(COLLECTOR_SRC)) $(PPROF_GEN_C) $(FLAME_GEN_C)

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_io.h $(FUZZ_SRC) $(wildcard $(addsuffix /*.h,$(COLLECTOR_DIRS)) include/probe/*.h)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC) $(DW_LIBS) $(PB_LIBS) $(NET_LIBS) -lncursesw -lm

fuzz: deps
	@$(MAKE) --no-print-directory all $(FUZZ_BUILD)/fuzz_report $(FUZZ_BUILD)/fuzz_elf
	scripts/fuzz-corpus $(BUILD) $(FUZZ_BUILD)/corpus
	@# -entropic=0: with the recordings' 30,000 features, entropic's
	@# bookkeeping took two thirds of the time (100 runs/s, 300 without)
	$(FUZZ_BUILD)/fuzz_report -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-entropic=0 $(FUZZ_BUILD)/corpus/report
	$(FUZZ_BUILD)/fuzz_elf -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		$(FUZZ_BUILD)/corpus/elf

install: $(LIBPROBES) $(PROBE) $(MANPAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/probe
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 $(MANPAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 scripts/probe.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/probe
	install -m 0755 $(PROBE) $(DESTDIR)$(PREFIX)/bin/probe
	install -m 0644 $(LIBPROBE) $(DESTDIR)$(PREFIX)/lib/probe/libprobe.so
	install -m 0644 $(LIBPROBE_OFFCPU) $(DESTDIR)$(PREFIX)/lib/probe/libprobe-offcpu.so
	install -m 0644 $(LIBPROBE_ALLOC) $(DESTDIR)$(PREFIX)/lib/probe/libprobe-alloc.so
	install -m 0644 $(LIBPROBE_OFFCPU_ALLOC) $(DESTDIR)$(PREFIX)/lib/probe/libprobe-offcpu-alloc.so
	install -d $(DESTDIR)$(PREFIX)/share/probe
	install -m 0644 scripts/probe-agent.service $(DESTDIR)$(PREFIX)/share/probe/probe-agent.service

clean:
	rm -rf build build-san build-fuzz
