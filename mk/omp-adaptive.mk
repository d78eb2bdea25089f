# --omp-guard=adaptive (issue 27): the governor of OpenMP teams,
# libnumaguard-omp.so (preload/), preloaded into tasks. Included by the top
# Makefile (-include mk/*.mk). docs/omp-adaptive.md.
#
#   make (all)       builds $(BUILD)/libnumaguard-omp.so beside the library
#   make install     installs it as $(LIBDIR)/numaguard/libnumaguard-omp.so (a
#                    private directory: no SONAME, not for linking), the path
#                    compiled into the library (ng_omp_preload_path): the
#                    plugin preloads nothing from anywhere else
#   make tests       the OpenMP probes of its tests, gcc (libgomp) and
#                    clang (libomp) builds: $(BUILD)/tests/omp_teams,
#                    $(BUILD)/tests/clang/omp_teams (and omp_pool, omp_args)
#
# The governor links libc alone (-ldl -pthread: glibc 2.34+ has them in
# libc), exports only the OpenMP entry points it interposes
# ($(BUILD)/numaguard-omp.map from preload/numaguard-omp.map; t-omp-adaptive checks) and is built with the same
# flags as everything else, SAN=1 included.

NG_OMP_PRELOAD := $(LIBDIR)/numaguard/libnumaguard-omp.so
OMP_SRCS := $(sort $(wildcard preload/*.c))
OMP_SO   := $(BUILD)/libnumaguard-omp.so
OMP_CLANG ?= $(firstword $(shell command -v clang clang-14 clang-16 clang-19 2>/dev/null) clang)

# The installed path, compiled into the library: nothing else is preloaded.
# A stamp holding it rebuilds preload.o (and what links it) when LIBDIR
# changes between `make` and `make install LIBDIR=...`.
NG_OMP_STAMP := $(BUILD)/omp-preload.path
$(shell mkdir -p $(BUILD) && { echo '$(NG_OMP_PRELOAD)' | cmp -s - $(NG_OMP_STAMP) || \
    echo '$(NG_OMP_PRELOAD)' >$(NG_OMP_STAMP); })
$(BUILD)/lib/task/preload.o: NG_CFLAGS += -DNG_OMP_PRELOAD_PATH='"$(NG_OMP_PRELOAD)"'
$(BUILD)/faults/lib/task/preload.o: NG_CFLAGS += -DNG_OMP_PRELOAD_PATH='"$(NG_OMP_PRELOAD)"'
$(BUILD)/lib/task/preload.o $(BUILD)/faults/lib/task/preload.o: $(NG_OMP_STAMP)

# The entry stub of libomp's variadic __kmpc_fork_call, where this
# compiler's architecture has one (preload/kmp_stub_x86_64.S,
# kmp_stub_aarch64.S; none elsewhere: libomp's regions are then not
# governed and the governor says so once per process).
OMP_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null)))
OMP_STUB := $(wildcard preload/kmp_stub_$(OMP_ARCH).S)
# This architecture's version script: the common list, plus the stub's
# entry point where there is one.
OMP_MAP  := $(BUILD)/numaguard-omp.map
$(OMP_MAP): preload/numaguard-omp.map $(OMP_STUB)
	@mkdir -p $(dir $@)
	sed '$(if $(OMP_STUB),s/^\( *\)__kmpc_fork_call_if;/\1__kmpc_fork_call;\n&/)' $< >$@

# -fvisibility=hidden: only what the map lists (NGO_EXPORT) is exported.
$(OMP_SO): $(OMP_SRCS) $(OMP_STUB) preload/gov.h lib/include/numaguard/omp_marks.h preload/gnu_property.h $(OMP_MAP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC \
	    -fvisibility=hidden $(SANFLAGS) -shared -Wl,--version-script=$(OMP_MAP) \
	    -Wl,-z,defs -o $@ $(OMP_SRCS) $(OMP_STUB) $(LDFLAGS) -ldl -pthread

all: $(OMP_SO)

# clang -fopenmp links LLVM's libomp (Debian's libomp-dev).
$(BUILD)/tests/clang/omp_%: tests/helpers/omp_%.c $(wildcard tests/helpers/*.h)
	@mkdir -p $(dir $@)
	$(OMP_CLANG) -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -pthread -o $@ $<

tests: $(BUILD)/tests/clang/omp_teams $(BUILD)/tests/clang/omp_pool $(BUILD)/tests/clang/omp_args

# The governor's stub unwound without libomp's own frame in the way
# (tests/omp/kmp_mini.c says why): a clang -fopenmp program linked
# against a one-thread runtime with libomp's entry points.
$(BUILD)/tests/kmp_mini/libkmpmini.so: tests/omp/kmp_mini.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -fPIC -shared -o $@ $<
$(BUILD)/tests/kmp_mini/kmp_unwind: tests/omp/kmp_unwind.c tests/helpers/unwind_via.h \
    $(BUILD)/tests/kmp_mini/libkmpmini.so
	$(OMP_CLANG) -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-command-line-argument -fopenmp -c -o $@.o $<
	$(OMP_CLANG) -o $@ $@.o -L$(dir $@) -lkmpmini -Wl,-rpath,'$$ORIGIN' -ldl

tests: $(BUILD)/tests/kmp_mini/kmp_unwind

.PHONY: install-omp uninstall-omp
install: install-omp
uninstall: uninstall-omp
install-omp: $(OMP_SO)
	install -d $(DESTDIR)$(LIBDIR)/numaguard
	install -m 644 $(OMP_SO) $(DESTDIR)$(NG_OMP_PRELOAD)

uninstall-omp:
	rm -f $(DESTDIR)$(NG_OMP_PRELOAD)
	-rmdir $(DESTDIR)$(LIBDIR)/numaguard 2>/dev/null

# tests/omp/part.c as two shared libraries, one per runtime (two_runtimes.py).
$(BUILD)/tests/omp/libpart_gomp.so: tests/omp/part.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -fPIC -shared -fopenmp -o $@ $<

$(BUILD)/tests/omp/libpart_omp.so: tests/omp/part.c
	@mkdir -p $(dir $@)
	$(OMP_CLANG) -O2 -g -std=c11 -Wall -Wextra -Werror -fPIC -shared -fopenmp -o $@ $<

tests: $(BUILD)/tests/clang/omp_fork $(BUILD)/tests/omp/libpart_gomp.so $(BUILD)/tests/omp/libpart_omp.so

# make check-mkl: t-omp-adaptive's MKL cases with Debian's non-free MKL,
# fetched into a cache (tests/omp/mkl.sh); not part of make check or CI.
.PHONY: check-mkl
check-mkl: all tests
	BUILD=$(BUILD) bash tests/omp/mkl.sh
