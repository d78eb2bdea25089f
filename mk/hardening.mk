# Hardening: libFuzzer targets, sanitizer/valgrind suites, fault matrix, soak.
# Included by the top Makefile (-include mk/*.mk). See docs/hardening.md.
#
#   make fuzz                 every fuzzer for FUZZ_SECONDS (default 300) each,
#                             FUZZ_JOBS at a time; new inputs go to
#                             $(FUZZ_BUILD)/corpus/<target>, crashes to
#                             $(FUZZ_BUILD)/crashes/
#   make fuzz-build           only build the fuzzers into $(FUZZ_BUILD)
#   make fuzz-one FUZZ_TARGET=fuzz_policy   one fuzzer (same variables)
#   make hardening            t-fuzz, t-sanitizers, t-valgrind, t-faults (what
#                             `make check` runs of them), with TAP output
#   make faults               only the fault matrix through real srun
#   make soak                 500 sequential sruns + concurrent steps under the
#                             test cluster (tests/hardening/soak.sh)
#   make fuzz-clean           remove $(FUZZ_BUILD) and $(BUILD)-fuzz
#
# The fuzzers need clang with its fuzzer runtime (Debian 12: clang-14 and
# libclang-rt-14-dev). The library objects are compiled again by clang with
# coverage + ASan + UBSan; the gcc build in $(BUILD) is not touched.

FUZZ_CC      ?= $(firstword $(shell command -v clang clang-14 clang-15 clang-16 2>/dev/null) clang)
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Library code is compiled without -Werror here: a clang-only warning in a
# file someone else owns must not hide the fuzzers (gcc's -Werror build
# still guards those files).
FUZZ_CFLAGS   = -g -O1 -std=c11 -Wall -Wextra -D_GNU_SOURCE -fPIC -Ilib/include -Ilib -Ispank \
                -I$(SLURM_INCLUDE) $(FUZZ_SAN)
FUZZ_TARGETS := $(sort $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c))))
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)
# The library, plus the plugin's pure argument parser (no Slurm symbols).
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/spank/config.o

.PHONY: fuzz fuzz-build fuzz-one fuzz-clean hardening soak faults
# Keep the objects: they are only reached through the pattern rules.
.SECONDARY: $(FUZZ_LIB_OBJS)

# Every library header is a prerequisite: a fuzz object is rebuilt after any
# header edit (it used to list two of them).
$(FUZZ_BUILD)/lib/%.o: lib/%.c $(PUBLIC_HEADERS) $(wildcard lib/private/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/spank/config.o: spank/config.c spank/ng_spank.h $(PUBLIC_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# Our own targets do build with -Werror.
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Werror -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS) $(NG_LIBS)

# Pre-screen helper of fuzz_topology_xml: bare hwloc, no sanitizer (gcc).
$(FUZZ_BUILD)/hwloc_check: tests/fuzz/hwloc_check.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $< -lhwloc

fuzz-build: $(FUZZ_BINS) $(FUZZ_BUILD)/hwloc_check

fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) sh tests/fuzz/run-fuzzers.sh $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

fuzz-one: $(FUZZ_BUILD)/$(FUZZ_TARGET)
	@FUZZ_BUILD=$(FUZZ_BUILD) sh tests/fuzz/run-fuzzers.sh $(FUZZ_SECONDS) 1 $(FUZZ_TARGET)

hardening:
	@for t in t-fuzz t-sanitizers t-valgrind t-faults; do \
	    NG_TESTS=$$t BUILD=$(BUILD) sh tests/run-all.sh || exit 1; done

faults: all tests
	@BUILD=$(BUILD) sh tests/hardening/t-faults.sh

fuzz-clean:
	rm -rf $(FUZZ_BUILD) $(BUILD)-fuzz

soak: all tests
	@BUILD=$(BUILD) sh tests/hardening/soak.sh
