# numaguard: build, test, install.
#   make            library, CLI and (when Slurm headers exist) the SPANK plugin
#   make deps       install the missing Debian packages (root; `make check` and
#                   `make demo` run it first: DEPS=demo is the demo's smaller set)
#   make test-fast  the quick loop, as any user: unit, CLI, layers, docs and
#                   drawing checks (no root, no apt, no daemons)
#   make check      install missing Debian packages, build, run every test
#   make demo       private local Slurm with the plugin, real srun jobs
#   make install    PREFIX, BINDIR, LIBDIR, INCLUDEDIR, DESTDIR and
#                   SLURM_PLUGIN_DIR honoured; `make uninstall` removes it
#   CPPFLAGS, CFLAGS and LDFLAGS from the environment are honoured
#                   (Debian's hardening flags, FORTIFY included)
#   make SAN=1 ...  build with ASan+UBSan into build-san/

CC      ?= cc
CFLAGS  ?= -O2 -g
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=
SLURM_INCLUDE ?= /usr/include
SLURM_PLUGIN_DIR ?= $(firstword $(wildcard /usr/lib/*-linux-gnu/slurm-wlm /usr/lib64/slurm /usr/lib/slurm /usr/local/lib/slurm) $(PREFIX)/lib/slurm)

ifeq ($(SAN),1)
BUILD   ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD   ?= build
SANFLAGS =
endif

# lib/include: the public headers, all the adapters (spank/, tools/) see.
# -Ilib adds the library's private headers (lib/private/*.h, included as
# "private/<name>.h"): only for library sources, unit tests and the test
# build of the plugin (NG_PRIVATE below).
NG_CFLAGS = -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC -Ilib/include $(SANFLAGS)
NG_PRIVATE = -Ilib
# Nothing of numaguard calls libnuma (memory policies go through syscall());
# only the test helpers and tests do, to read back what was applied.
NG_LIBS   = -lhwloc -ldl
NG_TEST_LIBS = $(NG_LIBS) -lnuma
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)

# One folder per module (docs/design.md has the layers).
LIB_SRCS   := $(sort $(wildcard lib/*/*.c))
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TOOL_SRCS  := $(sort $(wildcard tools/*.c))
TOOL_OBJS  := $(TOOL_SRCS:%.c=$(BUILD)/%.o)
# spank/faults.c belongs only to the test build of the plugin (below).
SPANK_SRCS := $(sort $(filter-out spank/faults.c,$(wildcard spank/*.c)))
SPANK_OBJS := $(SPANK_SRCS:%.c=$(BUILD)/%.o)
FAULT_OBJS := $(SPANK_SRCS:%.c=$(BUILD)/faults/%.o) $(BUILD)/faults/spank/faults.o
# Unit tests mirror the modules: tests/unit/<module>/test_*.c, one binary
# each in $(BUILD)/tests/ (test names are unique across modules).
TEST_SRCS  := $(sort $(wildcard tests/unit/*/test_*.c))
TEST_BINS  := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRCS))))
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/%)

HAVE_SPANK := $(if $(and $(SPANK_SRCS),$(wildcard $(SLURM_INCLUDE)/slurm/spank.h)),1,)

TARGETS := $(BUILD)/libnumaguard.a $(BUILD)/numaguard
ifeq ($(HAVE_SPANK),1)
TARGETS += $(BUILD)/numaguard.so
endif

.PHONY: all deps deps-demo check test test-fast tests demo install uninstall clean bench check-vm check-layers
all: $(TARGETS)

# A build on a machine without the build dependencies stops before the
# compiler does, with one line naming the command that installs them (not
# for the goals that install them or need no compiler here). The headers
# are asked of the compiler itself; NG_NEEDS overrides the list (tests).
NG_NO_BUILD_GOALS := deps deps-demo demo check clean check-fresh check-releases uninstall
NG_NEEDS ?= hwloc.h$(if $(filter test test-fast tests check-vm,$(MAKECMDGOALS)), numa.h)
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NG_NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
NG_MISSING := $(strip $(foreach h,$(NG_NEEDS),$(if $(shell printf '\043include <%s>\n' '$(h)' | \
    $(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1 && echo y),,$(h))))
ifneq ($(NG_MISSING),)
$(error numaguard cannot build: $(strip $(NG_MISSING)) not found by $(CC); run 'make deps' as root (it installs the Debian packages), then make again)
endif
endif

PUBLIC_HEADERS := lib/include/numaguard.h $(sort $(wildcard lib/include/numaguard/*.h))
HEADERS := $(PUBLIC_HEADERS) $(wildcard lib/private/*.h spank/*.h tools/*.h)

# Library objects see the private headers; adapters see only lib/include.
$(BUILD)/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NG_CFLAGS) $(NG_PRIVATE) -c $< -o $@

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NG_CFLAGS) -I$(SLURM_INCLUDE) -c $< -o $@

$(BUILD)/libnumaguard.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/numaguard: $(TOOL_OBJS) $(BUILD)/libnumaguard.a
	$(CC) $(CFLAGS) $(LDFLAGS_ALL) -o $@ $(TOOL_OBJS) $(BUILD)/libnumaguard.a $(NG_LIBS)

# The plugin links the library in (no shared libnumaguard to install) and
# exports only the SPANK symbols (spank/numaguard.map). Linked against the
# archive (built -fPIC), so only the objects the plugin's calls reach are
# in it: the doctor (lib/doctor: forks, runs nvidia-smi and slurmd), the
# pictures (lib/draw) and check's inspection (lib/inspect) are the CLI's
# and never run inside slurmstepd (t-symbols checks that they are absent).
$(BUILD)/numaguard.so: $(SPANK_OBJS) $(BUILD)/libnumaguard.a spank/numaguard.map
	$(CC) $(CFLAGS) $(LDFLAGS_ALL) -shared -Wl,--version-script=spank/numaguard.map \
	    -o $@ $(SPANK_OBJS) $(BUILD)/libnumaguard.a $(NG_LIBS)

# The test build of the plugin: the same sources plus spank/faults.c, with
# -DNG_FAULT_INJECTION (the admin's test_fault=POINT). Loaded only by the
# fault suites (tests/hardening/t-faults.sh, tests/slurm/t-slurm-spank.sh);
# never installed. Its objects have their own directory (a shorter stem
# than $(BUILD)/%.o, so make picks this rule for them).
$(BUILD)/faults/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NG_CFLAGS) $(NG_PRIVATE) -DNG_FAULT_INJECTION -I$(SLURM_INCLUDE) -c $< -o $@

$(BUILD)/numaguard-faults.so: $(FAULT_OBJS) $(BUILD)/libnumaguard.a spank/numaguard.map
	$(CC) $(CFLAGS) $(LDFLAGS_ALL) -shared -Wl,--version-script=spank/numaguard.map \
	    -o $@ $(FAULT_OBJS) $(BUILD)/libnumaguard.a $(NG_LIBS)

# Unit tests see the private headers (they test the internals) and, for
# the plugin's pure parts (spank/), the Slurm headers.
define unit_test_rule
$(BUILD)/tests/$(basename $(notdir $(1))): $(1) tests/unit/tap.h tests/unit/corpus.h $$(HEADERS) $$(BUILD)/libnumaguard.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) $$(CFLAGS) $$(NG_CFLAGS) $$(NG_PRIVATE) -Itests/unit -I$$(SLURM_INCLUDE) -o $$@ $$< $$(BUILD)/libnumaguard.a $$(NG_TEST_LIBS) $$(LDFLAGS_ALL)
endef
$(foreach t,$(TEST_SRCS),$(eval $(call unit_test_rule,$(t))))

$(BUILD)/tests/%: tests/helpers/%.c $(wildcard tests/helpers/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NG_CFLAGS) -o $@ $< $(NG_TEST_LIBS) $(LDFLAGS_ALL)

# Helpers named omp_*.c are OpenMP programs (libgomp), not numaguard users.
$(BUILD)/tests/omp_%: tests/helpers/omp_%.c $(wildcard tests/helpers/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(NG_CFLAGS) -fopenmp -pthread -o $@ $< $(LDFLAGS_ALL)

tests: $(TEST_BINS) $(HELPER_BINS) $(if $(HAVE_SPANK),$(BUILD)/numaguard-faults.so)

# Debian packages (tests/install-deps.sh): `make check`'s whole set, or
# with DEPS=demo only what `make demo` needs. The one apt step.
DEPS ?= check
deps:
	@sh tests/install-deps.sh $(DEPS)

deps-demo:
	@$(MAKE) --no-print-directory deps DEPS=demo

# The README's test command: set-up, build, every test, "N passed, N failed".
check: deps
	@echo "numaguard check: build"
	@$(MAKE) --no-print-directory all tests
	@BUILD=$(BUILD) sh tests/run-all.sh

test: all tests
	@BUILD=$(BUILD) sh tests/run-all.sh

# The quick loop: build, then the suites that need no root, no apt and no
# daemons (a suite skips a part whose tool is missing; NG_FAST=1 leaves
# t-draw's Chromium renders and valgrind runs to make check).
# docs/testing.md, "make test-fast".
NG_FAST_TESTS = test_ t-cli t-layers t-complexity t-tables t-docs t-draw t-make
test-fast: all tests
	@BUILD=$(BUILD) NG_FAST=1 NG_TESTS="$(NG_FAST_TESTS)" sh tests/run-all.sh

# The README's first command: phases 1 and 2 here, 3 and 4 in tests/demo.sh.
demo:
	@echo "numaguard demo [1/4] Debian packages: Slurm, munge, hwloc, a C compiler (tests/install-deps.sh demo)"
	@$(MAKE) --no-print-directory deps DEPS=demo
	@echo "numaguard demo [2/4] build numaguard"
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) sh tests/demo.sh

# The layer check alone (also part of `make check`: tests/layers/t-layers.sh):
# prints the layer table, then fails on a folder of lib/ the table does not
# rank, any circle between source files, a call from a lower layer to a
# higher one, an adapter using an internal function, or a library global
# that is neither ng_* API nor ngi_*; then t-layers-scratch.sh shows in a
# scratch copy that a call routed gpu -> lib/zzz -> plan fails it; then
# t-complexity.sh: no function above cyclomatic 25 (pmccabe).
check-layers: all
	@BUILD=$(BUILD) sh tests/layers/t-layers.sh && BUILD=$(BUILD) sh tests/layers/t-layers-scratch.sh && \
	    sh tests/layers/t-complexity.sh

# The multi-NUMA VM proof (also part of `make check` via tests/vm/t-vm.sh).
check-vm: deps
	@$(MAKE) --no-print-directory all tests
	@BUILD=$(BUILD) NG_TESTS=t-vm sh tests/run-all.sh

install: all install-man install-pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)
	install -m 755 $(BUILD)/numaguard $(DESTDIR)$(BINDIR)/numaguard
	install -m 755 tools/numaguard-healthcheck $(DESTDIR)$(BINDIR)/numaguard-healthcheck
	install -d $(DESTDIR)$(INCLUDEDIR)/numaguard
	install -m 644 lib/include/numaguard.h $(DESTDIR)$(INCLUDEDIR)/numaguard.h
	install -m 644 $(filter-out lib/include/numaguard.h,$(PUBLIC_HEADERS)) $(DESTDIR)$(INCLUDEDIR)/numaguard/
	install -m 644 $(BUILD)/libnumaguard.a $(DESTDIR)$(LIBDIR)/libnumaguard.a
ifeq ($(HAVE_SPANK),1)
	install -d $(DESTDIR)$(SLURM_PLUGIN_DIR)
	install -m 755 $(BUILD)/numaguard.so $(DESTDIR)$(SLURM_PLUGIN_DIR)/numaguard.so
endif

# Same variables as install; removes only the files install put there.
uninstall: uninstall-man uninstall-pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/numaguard
	rm -f $(DESTDIR)$(BINDIR)/numaguard $(DESTDIR)$(BINDIR)/numaguard-healthcheck \
	    $(DESTDIR)$(INCLUDEDIR)/numaguard.h \
	    $(DESTDIR)$(LIBDIR)/libnumaguard.a $(DESTDIR)$(SLURM_PLUGIN_DIR)/numaguard.so

clean:
	rm -rf build build-san

# Further targets (fuzz, bench, soak, packaging, ...) live in mk/*.mk, one
# file per concern.
-include $(sort $(wildcard mk/*.mk))
