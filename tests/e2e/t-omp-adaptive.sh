#!/bin/sh
# --omp-guard=adaptive, the governor of OpenMP teams (libnumaguard-omp.so,
# docs/omp-adaptive.md), outside Slurm: team sizes as each region reports
# them (omp_get_num_threads) under libgomp (gcc) and LLVM's libomp (clang);
# regions longer than the window (a caller counts while inside one and for
# the window after it ends); regions with many shared variables and
# unwinding through the governor's entry points (omp_args); hang
# tests under a time limit (numpy with OpenBLAS's pthreads and OpenMP
# builds in an 8-thread pool; a fork from a thread inside a region); two
# runtimes in one process; BLIS's pool (both Debian builds); a runtime
# linked in statically said once, and by numaguard check; what
# numaguard exec puts in the environment (LD_PRELOAD appended, never
# replaced; only a root-owned library); what the library exports; the
# governor built with ASan+UBSan. The budget is 2 cores throughout
# (NUMAGUARD_OMP_CORES=2, as exec exports on this 2-CPU machine).
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
GOV=$BUILD/libnumaguard-omp.so
[ -f "$GOV" ] || skip_all "$GOV not built (make all)"
[ -x "$BUILD/tests/omp_teams" ] && [ -x "$BUILD/tests/clang/omp_teams" ] ||
    skip_all "OpenMP probes not built (make tests: gcc and clang with libomp-dev)"
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_DYNAMIC OMP_MAX_ACTIVE_LEVELS LD_PRELOAD \
    NUMAGUARD_OMP_DEBUG OPENBLAS_NUM_THREADS
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# exec preloads only a governor in directories root's alone: this build's,
# or a copy of it and of numaguard where the build lies under /tmp
# (tests/lib/governor.sh). XNG, XGOV: that numaguard and its governor.
. tests/lib/governor.sh
. tests/lib/omp_args.sh
XDIR=$(ng_stage_governor "$BUILD")
[ -z "$XDIR" ] || [ "$XDIR" = "$(cd "$BUILD" && pwd)" ] || trap 'rm -rf "$T" "$XDIR"' EXIT
XNG=$XDIR/numaguard
XGOV=$XDIR/libnumaguard-omp.so
NOX="no directory root's alone holds this build's governor (not root, or a checkout under /tmp with no trusted /run, /var/lib or /root to copy it to)"
LIMIT=${NG_OMP_HANG_LIMIT:-120}
PY=/usr/bin/python3

# gov ARGS...: ARGS under the governor with a budget of 2 cores, bounded.
# A lone caller gets both cores only where others' load leaves them free;
# this machine's cores may be busy with other work, so each test that asserts
# a lone caller's 2 threads runs with NUMAGUARD_OMP_LOAD=0 (others' load not
# looked at). The load rule has its own tests, beside a spinning process.
gov() { LD_PRELOAD=$GOV NUMAGUARD_OMP_CORES=2 OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" "$@"; }
# lasts FILE: the last team of every caller, sorted and counted ("16x1").
lasts() { sed -n 's/^caller [0-9]* teams .* last \([0-9]*\) ones .*/\1/p' "$1" | sort | uniq -c |
    awk '{printf "%s%sx%s", sep, $1, $2; sep=" "}'; }
all_of() { sed -n 's/^all \([0-9-]*\) .*/\1/p' "$1"; }

for rt in gcc clang; do
    case $rt in gcc) P=$BUILD/tests/omp_teams; lib=libgomp ;; *) P=$BUILD/tests/clang/omp_teams; lib=libomp ;; esac
    NUMAGUARD_OMP_LOAD=0 gov "$P" 1 200 >"$T/one" 2>&1
    is "$(all_of "$T/one")" "2-2" "$lib: one caller: every one of its 200 regions gets both cores"
    # Threads that take turns (the main thread, then one worker after
    # another, never two at once: numpy's main thread and a 1-thread pool)
    # are one caller at a time: each keeps both cores, also in the 100 ms
    # after the one before it returned.
    NUMAGUARD_OMP_LOAD=0 gov "$P" 4 300 relay >"$T/relay" 2>&1
    is "$(lasts "$T/relay") $(all_of "$T/relay")" "4x2 2-2" \
        "$lib: 4 threads in turn after the main thread, 300 short regions each: every region gets both cores"
    # Callers count for the window after their last region: on a loaded
    # machine a thread not scheduled for 100 ms between two regions drops
    # out for a moment, so the steady state is asked with a 2 s window.
    NUMAGUARD_OMP_WINDOW_MS=2000 gov "$P" 16 200 >"$T/pool" 2>&1
    ones=$(sed -n 's/^ones \([0-9]*\) of .*/\1/p' "$T/pool")
    ok $([ "${ones:-0}" -ge 2880 ]; echo $?) \
        "$lib: 16 callers at once on 2 cores: teams of 1 ($ones of 3200 regions; >= 90%)"
    most=$(awk '/^caller / && $8 * 2 > 200 {n++} END {print n + 0}' "$T/pool")
    is "$most" 16 "$lib: ... every caller's team is 1 in most of its regions"
    OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" "$P" 16 50 >"$T/plain" 2>&1
    is "$(lasts "$T/plain")" "16x2" "$lib: without the governor the same callers get 2 each (what it changes)"
    # A count equal to the default (OMP_NUM_THREADS=2, the 2 cores) echoes
    # it: torch calls omp_set_num_threads(OMP_NUM_THREADS) in each of its
    # threads, scikit-learn passes omp_get_max_threads() as num_threads.
    # Governed like no request; a count below the default stays.
    for m in "setnum 2" clausemax; do
        NUMAGUARD_OMP_WINDOW_MS=2000 gov "$P" 8 100 $m >"$T/echo" 2>&1
        ones=$(sed -n 's/^ones \([0-9]*\) of .*/\1/p' "$T/echo")
        case $m in
            setnum*) what="omp_set_num_threads(2) in each (torch's pattern)" ;;
            *) what="num_threads(omp_get_max_threads() = $(sed -n 's/^clausemax //p' "$T/echo"), asked before they start) (scikit-learn's)" ;;
        esac
        ok $([ "${ones:-0}" -ge 720 ]; echo $?) \
            "$lib: 8 callers with $what on 2 cores: teams of 1 ($ones of 800 regions; >= 90%)"
    done
    gov "$P" 4 100 setnum 1 >"$T/set1" 2>&1
    is "$(all_of "$T/set1")" "1-1" "$lib: omp_set_num_threads(1), below the default: kept"
    # Below the default with more than 1: a budget of 4 cores, 4 callers
    # (their share: 1 each) that ask for 2.
    for m in "setnum 2" "clause 2"; do
        LD_PRELOAD=$GOV NUMAGUARD_OMP_CORES=4 OMP_NUM_THREADS=4 NUMAGUARD_OMP_WINDOW_MS=2000 \
            timeout -k 5 "$LIMIT" "$P" 4 100 $m >"$T/below" 2>&1
        case $m in setnum*) what="omp_set_num_threads(2)" ;; *) what="num_threads(2)" ;; esac
        is "$(all_of "$T/below")" "2-2" "$lib: 4 callers on 4 cores with $what, below the default of 4: kept (2 each, not their share of 1)"
    done
    LD_PRELOAD=$GOV NUMAGUARD_OMP_CORES=4 OMP_NUM_THREADS=4 NUMAGUARD_OMP_WINDOW_MS=2000 \
        timeout -k 5 "$LIMIT" "$P" 4 100 setnum 4 >"$T/set4" 2>&1
    is "$(all_of "$T/set4")" "1-1" "$lib: ... omp_set_num_threads(4), the default: their share, 1 each"

    # The pool's last caller (4 callers, then caller 0 alone for 1 s of
    # short regions) while another process spins on the cores: a team of
    # 2 would wait at each barrier for a partner the spinner holds, so it
    # keeps 1. NUMAGUARD_OMP_LOAD=0 (others' load not looked at) shows what
    # that changes: 2. Asserted on its last 0.5 s (the load is sampled
    # every 100 ms; busier cores only make a team of 1 more certain).
    sh -c 'while :; do :; done' &
    SPIN=$!
    # (20000 regions each: the pool runs well over the two windows that make
    # it a pool; a shorter overlap of callers is not one)
    gov "$P" 4 20000 tail 1000 >"$T/tail" 2>&1
    NUMAGUARD_OMP_LOAD=0 gov "$P" 4 20000 tail 1000 >"$T/tail0" 2>&1
    # One caller, never a pool (a program's first products before its pool
    # starts, or a single caller): the same.
    gov "$P" 1 200 tail 1000 >"$T/lone" 2>&1
    NUMAGUARD_OMP_LOAD=0 gov "$P" 1 200 tail 1000 >"$T/lone0" 2>&1
    kill "$SPIN"
    wait "$SPIN" 2>/dev/null
    set -- $(sed -n 's/^tail \([0-9]*\) ones \([0-9]*\) last \([0-9]*\)/\1 \2 \3/p' "$T/tail")
    ok $([ "${1:-0}" -gt 0 ] && [ $(($2 * 10)) -ge $(($1 * 9)) ] && [ "$3" = 1 ]; echo $?) \
        "$lib: the pool's last caller, another process spinning on the cores: teams of 1 ($2 of $1 regions, last ${3:-?})"
    is "$(sed -n 's/^tail .* last //p' "$T/tail0")" 2 "$lib: ... with NUMAGUARD_OMP_LOAD=0: 2"
    set -- $(sed -n 's/^tail \([0-9]*\) ones \([0-9]*\) last \([0-9]*\)/\1 \2 \3/p' "$T/lone")
    ok $([ "${1:-0}" -gt 0 ] && [ $(($2 * 10)) -ge $(($1 * 9)) ] && [ "$3" = 1 ]; echo $?) \
        "$lib: one caller that never had a pool, another process spinning on the cores: teams of 1 ($2 of $1 regions, last ${3:-?})"
    is "$(sed -n 's/^tail .* last //p' "$T/lone0")" 2 "$lib: ... with NUMAGUARD_OMP_LOAD=0: 2"
    gov "$P" 2 50 clause 8 >"$T/clause8" 2>&1
    is "$(all_of "$T/clause8")" "2-2" "$lib: num_threads(8) on 2 cores: lowered to the cores"
    gov "$P" 1 50 nested >"$T/nested" 2>&1
    is "$(all_of "$T/nested")" "1-1" "$lib: nested teams inside a 2-thread team on 2 cores: 1 each (would oversubscribe)"
    OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" "$P" 1 50 nested >"$T/nested0" 2>&1
    is "$(all_of "$T/nested0")" "2-2" "$lib: the same nest without the governor: 2 each"
    gov "$P" 8 100 maxthr >"$T/maxthr" 2>&1
    is "$(sed -n 's/^slots_missed //p' "$T/maxthr")" "0" \
        "$lib: work sized by omp_get_max_threads() in 8 callers: every slot done (the team is what it was told)"
    NUMAGUARD_OMP_DEBUG=1 gov "$P" 2 3 >"$T/debug" 2>&1
    like "$(cat "$T/debug")" "^numaguard-omp: \[[0-9]+:[0-9]+\] $lib __kmpc_fork_call: outermost|^numaguard-omp: \[[0-9]+:[0-9]+\] $lib GOMP_parallel: outermost" \
        "$lib: NUMAGUARD_OMP_DEBUG=1 prints each decision"
    like "$(cat "$T/debug")" "governing OpenMP teams: 2 cores \(from NUMAGUARD_OMP_CORES\), callers counted in their regions and 100 ms after" \
        "$lib: ... and the budget and window once"
    for w in 2000 0 60001 5x -1 ''; do
        NUMAGUARD_OMP_WINDOW_MS=$w NUMAGUARD_OMP_DEBUG=1 gov "$P" 1 1 >"$T/win" 2>&1
        want=100
        [ "$w" = 2000 ] && want=2000
        like "$(cat "$T/win")" "regions and $want ms after" \
            "$lib: NUMAGUARD_OMP_WINDOW_MS='$w': window $want ms"
    done

    # Regions longer than the window: a caller counts while it is inside
    # one, and for the window after it ENDS. Two callers, 6 regions of
    # 300 ms each, the second starting 150 ms later: 1 each once both
    # run (the first region of each may find the other not yet there);
    # then caller 0, alone 250 ms after the other's last region, gets 2.
    seqs() { sed -n 's/^seq \([0-9]*\) [0-9]* \(.*\)/\1:\2/p' "$1" | tr '\n' ' '; }
    # (NUMAGUARD_OMP_LOAD=0: caller 0 alone after a pool would otherwise
    # look at the load on this shared machine's cores; the tail tests
    # above show that.)
    for m in long longnest start; do
        NUMAGUARD_OMP_LOAD=0 gov "$P" 2 6 $m 300 >"$T/$m" 2>&1
        case $m in
            long) what="regions of 300 ms" ;;
            longnest) what="... each opening a nested region as it starts (its end is not the outermost's)" ;;
            start) what="... through GOMP_parallel_start/GOMP_parallel_end (GCC before 4.9)" ;;
        esac
        is "$(seqs "$T/$m")" "0:1 1 1 1 1 1:1 1 1 1 1 " \
            "$lib: 2 callers, $what: teams of 1 after their first regions ($(grep -c '^seq' "$T/$m") callers)"
        is "$(sed -n 's/^alone //p' "$T/$m")" 2 "$lib: ... then one caller alone, the other idle past the window: 2"
    done
    # The other caller idle 250 ms, inside a 1 s window: still counted.
    NUMAGUARD_OMP_WINDOW_MS=1000 gov "$P" 2 2 long 300 >"$T/win1000" 2>&1
    is "$(sed -n 's/^alone //p' "$T/win1000")" 1 \
        "$lib: NUMAGUARD_OMP_WINDOW_MS=1000: the caller alone 250 ms after the other's last region still shares: 1"
    OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" "$P" 2 6 long 300 >"$T/long0" 2>&1
    is "$(seqs "$T/long0")" "0:2 2 2 2 2 1:2 2 2 2 2 " \
        "$lib: the same long regions without the governor: 2 each (4 threads on 2 cores)"

    # Many shared variables (clang: each one more variadic argument of
    # __kmpc_fork_call, argc - 3 of them on the caller's stack), checked by
    # every team member, one caller (teams of 2) and 4 (teams of 1).
    A=$BUILD/tests/omp_args
    [ $rt = clang ] && A=$BUILD/tests/clang/omp_args
    NUMAGUARD_OMP_LOAD=0 ng_args_check "$A" "$lib" 100
    # From inside a region, the unwinder reaches the function that opened
    # it: for libomp through the governor's stub frame; for libgomp through
    # the runtime's own entry point, which the governor jumped to (its
    # frame is the region function's wrapper, below the runtime's: gdb's
    # backtrace next shows it).
    via="^unwind caller 1 via .*@libnumaguard-omp\.so"
    [ $rt = gcc ] && via="^unwind caller 1 via GOMP_parallel@libgomp\.so[.0-9]*\$"
    like "$(grep '^unwind' "$T/args1")" "$via" \
        "$lib: backtrace() inside a region reaches the caller's frame (through the governor's)"
    # A task reduction (GOMP_parallel_reductions: the runtime reads its
    # list from the region's data, which must reach it as the program's).
    if [ $rt = gcc ]; then
        NUMAGUARD_OMP_LOAD=0 gov "$BUILD/tests/omp_taskred" 20 >"$T/taskred" 2>&1
        is "$(cat "$T/taskred") rc $?" "taskred rounds 20 wrong 0 teams 2-2 rc 0" \
            "$lib: a region with a task reduction: every round's sum right, teams of 2"
    fi
    if command -v gdb >/dev/null; then
        timeout -k 5 "$LIMIT" gdb -nx -batch -ex 'set startup-with-shell off' \
            -ex "set environment LD_PRELOAD=$GOV" -ex 'set environment NUMAGUARD_OMP_CORES=2' \
            -ex 'break look' -ex run -ex bt -ex kill --args "$A" 1 1 >"$T/gdb" 2>&1
        # the governor's frame: "from .../libnumaguard-omp.so", or its
        # source file where the build kept debug information (gomp.c)
        order=$(awk '/^#[0-9]+ .*( from .*libnumaguard-omp\.so| at preload\/)/ {g = 1}
                     g && /^#[0-9]+ .* in main / {print "ok"}' "$T/gdb")
        is "$order" "ok" "$lib: gdb's backtrace inside a region: the governor's frame, then main"
        [ "$order" = ok ] || grep '^#' "$T/gdb" | sed 's/^/#   /'
    else
        skip 1 "gdb not installed"
    fi

    # A thread that calls pthread_exit inside the region it started: the
    # forced unwind crosses the governor's frame; counted while inside, it
    # is taken off as it exits (its key's destructor), not a window later.
    if [ $rt = clang ]; then
        NUMAGUARD_OMP_LOAD=0 gov "$A" 1 1 exit >"$T/exit" 2>&1
        rc=$?
        is "$(sed -n 's/^exit //p' "$T/exit") rc $rc" "during 1 after 2 rc 0" \
            "$lib: pthread_exit inside a region: the other caller gets 1 core while it is inside, 2 right after it exited"
    else
        skip 1 "libgomp aborts on pthread_exit inside a region by itself (free(): invalid pointer), governor or not"
    fi

    # A fork from a team member inside a region; the child runs a region.
    F=$BUILD/tests/omp_fork
    [ $rt = clang ] && F=$BUILD/tests/clang/omp_fork
    gov "$F" 4 50 >"$T/fork" 2>&1
    rc=$?
    ok $([ $rc -eq 0 ] && grep -q '^done' "$T/fork" && grep -q '^child teams [12] ' "$T/fork"; echo $?) \
        "$lib: fork from a thread inside a region: child and parent finish (rc $rc, limit ${LIMIT}s)"
    [ $rc -eq 0 ] || sed 's/^/#   /' "$T/fork" | tail -5
done

# What the clang probe passes: argc 8 and 20 (objdump of its calls).
argcs=$(ng_kmpc_argcs "$BUILD/tests/clang/omp_args")
like "$argcs" "0x14 .*0x8 " "the clang probe's regions call __kmpc_fork_call with 8 and 20 arguments ($argcs)"

# Several runtimes in one process, loaded RTLD_LOCAL as Python loads
# extension modules (a wheel's own libgomp copy, a clang-built library).
if [ -x $PY ] && [ -f "$BUILD/tests/omp/libpart_gomp.so" ]; then
    NUMAGUARD_OMP_LOAD=0 gov $PY tests/omp/two_runtimes.py "$BUILD/tests/omp/libpart_gomp.so" \
        "$BUILD/tests/omp/libpart_omp.so" 8 >"$T/two" 2>&1
    is "$(grep alone "$T/two" | tr '\n' ' ')" "gomp alone 2 omp alone 2 " \
        "two runtimes in one process: each library alone gets both cores"
    is "$(grep pool "$T/two" | tr '\n' ' ')" "gomp pool 1 1 1 1 1 1 1 1 omp pool 1 1 1 1 1 1 1 1 " \
        "... and 8 threads calling each share them (libgomp and libomp, both RTLD_LOCAL)"
else
    skip 2 "$PY or tests/omp/libpart_*.so missing"
fi

# OpenBLAS's idle server threads sleep after 2^20 cycles, not 2^28 (they
# would spin through a pool's time with its count set to 1): the governor
# sets OPENBLAS_THREAD_TIMEOUT=20 before numpy loads OpenBLAS; a value the
# task set is kept. Read back from OpenBLAS itself.
if [ -x $PY ] && [ -f "/usr/lib/$NG_MA/openblas-pthread/libopenblas.so.0" ]; then
    tmo='import numpy, ctypes; print(ctypes.CDLL("libopenblas.so.0").openblas_thread_timeout())'
    is "$(LD_LIBRARY_PATH=/usr/lib/$NG_MA/openblas-pthread gov $PY -c "$tmo" 2>&1)" 20 \
        "numpy's OpenBLAS under the governor: OPENBLAS_THREAD_TIMEOUT 20"
    is "$(OPENBLAS_THREAD_TIMEOUT=26 LD_LIBRARY_PATH=/usr/lib/$NG_MA/openblas-pthread gov $PY -c "$tmo" 2>&1)" 26 \
        "... a value the task set is kept (26)"
else
    skip 2 "$PY or libopenblas0-pthread missing"
fi

# BLIS's pool (Debian's libblis4-pthread and libblis4-openmp, 0.9 in
# Debian 12: one global count, bli_thread_set_num_threads): the count each
# call ran with, read back after it. A lone caller keeps 2, 8 callers at
# once get 1; with its loops sized one by one (BLIS_JC_NT) it is said once
# and left alone.
BL=/usr/lib/$NG_MA/libblis.so.4
if [ -e "$BL" ] && cc -O2 -std=c11 -D_GNU_SOURCE -o "$T/blas_pool" tests/omp/blas_pool.c "$BL" -pthread 2>"$T/blis.cc"; then
    for b in pthread openmp; do
        if [ ! -e "/usr/lib/$NG_MA/blis-$b/libblis.so.4" ]; then
            skip 3 "libblis4-$b not installed"
            continue
        fi
        LD_LIBRARY_PATH=/usr/lib/$NG_MA/blis-$b BLIS_NUM_THREADS=2 NUMAGUARD_OMP_WINDOW_MS=2000 \
            NUMAGUARD_OMP_LOAD=0 gov "$T/blas_pool" 8 50 >"$T/bl" 2>&1
        ones=$(sed -n 's/^pool .* ones \([0-9]*\) of .*/\1/p' "$T/bl")
        is "$(grep '^alone' "$T/bl")" "alone 2-2" "BLIS ($b build): a lone caller's calls run with both cores"
        ok $([ "${ones:-0}" -ge 360 ]; echo $?) \
            "BLIS ($b build): 8 callers at once on 2 cores: 1 thread per call ($ones of 400 calls; >= 90%)"
        LD_LIBRARY_PATH=/usr/lib/$NG_MA/blis-$b BLIS_NUM_THREADS=2 BLIS_JC_NT=2 \
            gov "$T/blas_pool" 2 5 >"$T/blw" 2>&1
        is "$(grep -c 'sizes its loops one by one' "$T/blw")" 1 \
            "BLIS ($b build) with BLIS_JC_NT=2: said once, not governed"
    done
    OMP_NUM_THREADS=2 BLIS_NUM_THREADS=2 LD_LIBRARY_PATH=/usr/lib/$NG_MA/blis-pthread \
        timeout -k 5 "$LIMIT" "$T/blas_pool" 8 20 >"$T/blp" 2>&1
    like "$(cat "$T/blp")" "pool 2-2" "BLIS without the governor: the same callers run 2 threads each (what it changes)"
else
    skip 7 "no $BL (libblis4-pthread, libblis4-openmp)"
fi

# MKL's pool (mkl_rt: mkl_set_num_threads_local, per thread), with both
# of its OpenMP layers (GNU: libgomp; INTEL: libiomp5, Debian's libomp).
# MKL is in Debian's non-free section: run where it is installed or
# fetched by `make check-mkl` (tests/omp/mkl.sh, NG_MKL_LIB), else
# skipped. MKL_DYNAMIC=FALSE: MKL runs each call with the count it has
# (its own dynamic choice would give 1 thread to some calls anyway).
# The counts read back (mkl_get_max_threads) and MKL's own report of the
# threads each call ran with (MKL_VERBOSE's NThr).
MK=${NG_MKL_LIB:-/usr/lib/$NG_MA/libmkl_rt.so}
MKD="LD_LIBRARY_PATH=$(dirname "$MK")"   # mkl_rt opens its layers by name, beside it
if [ -e "$MK" ] && cc -O2 -std=c11 -D_GNU_SOURCE -o "$T/mkl_pool" tests/omp/blas_pool.c "$MK" \
        -Wl,-rpath,"$(dirname "$MK")" -pthread 2>"$T/mkl.cc"; then
    for layer in GNU INTEL; do
        MKL_THREADING_LAYER=$layer MKL_DYNAMIC=FALSE NUMAGUARD_OMP_WINDOW_MS=2000 NUMAGUARD_OMP_LOAD=0 \
            gov env "$MKD" "$T/mkl_pool" 8 50 >"$T/mk" 2>&1
        ones=$(sed -n 's/^pool .* ones \([0-9]*\) of .*/\1/p' "$T/mk")
        is "$(grep '^alone' "$T/mk")" "alone 2-2" "MKL ($layer layer): a lone caller's calls run with both cores"
        ok $([ "${ones:-0}" -ge 360 ]; echo $?) \
            "MKL ($layer layer): 8 callers at once on 2 cores: 1 thread per call ($ones of 400 calls; >= 90%)"
        MKL_VERBOSE=1 MKL_THREADING_LAYER=$layer MKL_DYNAMIC=FALSE NUMAGUARD_OMP_WINDOW_MS=2000 \
            NUMAGUARD_OMP_LOAD=0 gov env "$MKD" "$T/mkl_pool" 8 20 >"$T/mkv" 2>&1
        n1=$(grep -c 'DGEMM.*NThr:1' "$T/mkv") n2=$(grep -c 'DGEMM.*NThr:2' "$T/mkv")
        ok $([ "$n2" -ge 20 ] && [ "$n2" -le 36 ] && [ "$n1" -ge 144 ]; echo $?) \
            "MKL ($layer layer) says so itself (MKL_VERBOSE): $n2 calls with 2 threads (the lone caller's 20, at most 16 more), $n1 with 1 (>= 90% of the pool's 160)"
    done
    MKL_DYNAMIC=FALSE OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" env "$MKD" "$T/mkl_pool" 8 20 >"$T/mkp" 2>&1
    like "$(cat "$T/mkp")" "pool 2-2" "MKL without the governor: the same callers run 2 threads each (what it changes)"
else
    skip 7 "no MKL ($MK): Debian's non-free libmkl-rt; make check-mkl fetches it"
fi

# A runtime linked in statically: said once, not governed, not guessed.
A=$(cc -print-file-name=libgomp.a)
if [ -f "$A" ] && cc -fopenmp -c tests/omp/part.c -fPIC -o "$T/part.o" 2>/dev/null &&
   printf 'int ng_part_teams(int);\nint main(void){return ng_part_teams(3) < 1;}\n' >"$T/m.c" &&
   cc -o "$T/static" "$T/m.c" "$T/part.o" "$A" -pthread -ldl 2>/dev/null; then
    gov "$T/static" >"$T/st.out" 2>&1
    ok $? "a program with libgomp.a linked in runs under the governor"
    is "$(grep -c 'linked in statically' "$T/st.out")" 1 "... which says once that its regions are not governed"
else
    skip 2 "no libgomp.a to link statically"
fi
# ... and numaguard check says it for the running task, once, in text and
# JSON (the governor's mark, numaguard/omp_marks.h); a task without such a
# runtime has none.
printf '#include <stdio.h>\n#include <unistd.h>\nint ng_part_teams(int);\nint main(void){int t = ng_part_teams(3); printf("ready %%d\\n", t); fflush(stdout); sleep(60); return t < 1;}\n' >"$T/mw.c"
if [ -n "$XDIR" ] && [ -f "$T/part.o" ] && cc -o "$T/static_wait" "$T/mw.c" "$T/part.o" "$A" -pthread -ldl 2>/dev/null; then
    PIDS=""
    start stw "$XNG" exec --numa-policy=none --omp-guard=adaptive -- "$T/static_wait"
    "$NG" check --pid "$PID_stw" >"$T/stw.txt" 2>&1
    "$NG" check --pid "$PID_stw" --json >"$T/stw.json" 2>&1
    is "$(grep -c 'warning: an OpenMP runtime linked in statically: the governor cannot govern its regions' "$T/stw.txt")" 1 \
        "check: the task with libgomp.a linked in under adaptive: 'an OpenMP runtime linked in statically', once"
    is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["processes"][0]; print(d["omp_ungoverned"], sum(w.startswith("an OpenMP runtime linked in statically") for w in d["warnings"]))' "$T/stw.json" 2>&1)" \
        "['static'] 1" "check --json: omp_ungoverned [\"static\"] and the warning once"
    kill "$PID_stw" 2>/dev/null
    wait "$PID_stw" 2>/dev/null
    cc -fopenmp -o "$T/dyn_wait" "$T/mw.c" "$T/part.o" -pthread 2>/dev/null
    start dyw "$XNG" exec --numa-policy=none --omp-guard=adaptive -- "$T/dyn_wait"
    "$NG" check --pid "$PID_dyw" --json >"$T/dyw.json" 2>&1
    is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["omp_ungoverned"])' "$T/dyw.json" 2>&1)" \
        "[]" "check --json: the same program linked against the shared libgomp: omp_ungoverned []"
    kill "$PID_dyw" 2>/dev/null
    wait "$PID_dyw" 2>/dev/null
else
    skip 3 "$NOX, or no libgomp.a to link statically"
fi

# A cgroup CPU quota of 1 core (v2 cpu.max, else v1 cpu.cfs_quota_us): the
# budget is lowered to it (a second thread in a team would only wait).
CG=""
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    CG=/sys/fs/cgroup/ng-omp-$$
    mkdir "$CG" 2>/dev/null && [ -f "$CG/cpu.max" ] && echo "100000 100000" >"$CG/cpu.max" 2>/dev/null || CG=""
elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    CG=/sys/fs/cgroup/cpu/ng-omp-$$
    mkdir "$CG" 2>/dev/null && echo 100000 >"$CG/cpu.cfs_period_us" 2>/dev/null &&
        echo 100000 >"$CG/cpu.cfs_quota_us" 2>/dev/null || CG=""
fi
if [ -n "$CG" ]; then
    NUMAGUARD_OMP_DEBUG=1 gov sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 1 50' sh "$CG" \
        "$BUILD/tests/omp_teams" >"$T/quota" 2>&1
    like "$(cat "$T/quota")" "governing OpenMP teams: 1 cores \(from NUMAGUARD_OMP_CORES, lowered to the cgroup's CPU quota\)" \
        "a cgroup CPU quota of 1 core: the budget of 2 lowered to 1, said once"
    is "$(all_of "$T/quota")" "1-1" "... one caller's regions: teams of 1"
    rmdir "$CG" 2>/dev/null
else
    skip 2 "cannot make a cgroup with a CPU quota here"
fi

# numpy in an 8-thread pool, OpenBLAS's pthreads and OpenMP builds, bounded.
if $PY -c 'import numpy' 2>/dev/null; then
    for b in pthread openmp; do
        d=/usr/lib/$NG_MA/openblas-$b
        if [ ! -f "$d/libopenblas.so.0" ]; then
            skip 1 "libopenblas0-$b not installed"
            continue
        fi
        rounds=20
        [ $b = pthread ] && rounds=4  # its own pool, one lock: slow on 2 cores
        LD_LIBRARY_PATH=$d gov $PY tests/omp/np_pool.py 8 $rounds 192 >"$T/np.$b" 2>&1
        rc=$?
        ok $([ $rc -eq 0 ] && grep -q '^ok bad=0' "$T/np.$b"; echo $?) \
            "numpy + OpenBLAS $b build, 8 threads x $rounds rounds: finishes with right products (rc $rc, limit ${LIMIT}s)"
        [ $rc -eq 0 ] || tail -3 "$T/np.$b" | sed 's/^/#   /'
    done
    LD_LIBRARY_PATH=/usr/lib/$NG_MA/openblas-openmp NUMAGUARD_OMP_DEBUG=1 \
        gov $PY tests/omp/np_pool.py 4 1 192 >"$T/np.dbg" 2>&1
    like "$(cat "$T/np.dbg")" "omp_get_max_threads: 1 instead of 2" \
        "OpenBLAS's OpenMP build in the pool is told 1 thread (it sizes its jobs by omp_get_max_threads)"
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread NUMAGUARD_OMP_DEBUG=1 \
        gov $PY tests/omp/np_pool.py 4 1 192 >"$T/np.pdbg" 2>&1
    like "$(cat "$T/np.pdbg")" "OpenBLAS, pthreads build: its pool governed" \
        "OpenBLAS's pthreads build (its own pool) is recognised"
    like "$(cat "$T/np.pdbg")" "OpenBLAS's pool set to 1 \(its cap 2\)" \
        "... and its pool set to 1 thread while 4 threads call it"
else
    skip 5 "python3-numpy not installed"
fi

# PyTorch and scikit-learn in a pool of 8 threads (Debian's python3-torch,
# python3-sklearn; bench set of tests/install-deps.sh): each decision the
# governor prints, counted. torch sets omp_set_num_threads(2) (its
# OMP_NUM_THREADS) in every thread, then sizes each region by
# omp_get_max_threads(); scikit-learn's KMeans passes num_threads(n), n from
# omp_get_max_threads() as the fit starts. Both echo the default: governed.
# decided FILE: "N M": outermost decisions made with 4 or more callers, and
# those that gave 1 thread (regions, and omp_get_max_threads answers).
decided() { sed -n 's/.* \([0-9]*\) callers.* -> \([0-9]*\)$/\1 \2/p; s/.*omp_get_max_threads: \([0-9]*\) instead of [0-9]* (\([0-9]*\) callers.*/\2 \1/p' "$1" |
    awk '$1 >= 4 {n++; if ($2 == 1) one++} END {print n + 0, one + 0}'; }
if $PY -c 'import torch' 2>/dev/null; then
    NUMAGUARD_OMP_DEBUG=1 gov $PY tests/omp/torch_pool.py pool 8 10 >"$T/torch" 2>&1
    rc=$?
    set -- $(decided "$T/torch")
    ok $([ $rc -eq 0 ] && grep -q '^ok bad=0' "$T/torch" && [ "$1" -ge 100 ] && [ $(($2 * 10)) -ge $(($1 * 9)) ]; echo $?) \
        "torch, 8 threads with omp_set_num_threads(2) each: $2 of $1 decisions with 4+ callers give 1 thread (>= 90%; rc $rc)"
    like "$(cat "$T/torch")" "omp_set_num_threads\(2\) echoes the default: this thread stays governed" \
        "... its omp_set_num_threads(2) seen as the default's echo"
    # A DataLoader with fork workers beside a running torch pool can hang
    # (a worker forked while a pool thread held a lock: OpenBLAS's
    # server_lock, torch's own mutexes; docs/omp-adaptive.md): the fix the
    # docs name, spawn or forkserver workers, finishes under the governor.
    for ctx in spawn forkserver; do
        gov $PY tests/omp/torch_pool.py loader $ctx 8 >"$T/loader" 2>&1
        rc=$?
        ok $([ $rc -eq 0 ] && grep -q '^ok batches=8' "$T/loader"; echo $?) \
            "torch pool + DataLoader(num_workers=2, multiprocessing_context=\"$ctx\"): finishes (rc $rc, limit ${LIMIT}s)"
    done
else
    skip 4 "python3-torch not installed (sh tests/install-deps.sh bench)"
fi
if $PY -c 'import sklearn' 2>/dev/null; then
    NUMAGUARD_OMP_LOAD=0 NUMAGUARD_OMP_DEBUG=1 gov $PY tests/omp/sk_pool.py 8 2 >"$T/sk" 2>&1
    rc=$?
    set -- $(decided "$T/sk")
    ok $([ $rc -eq 0 ] && grep -q '^ok inertia' "$T/sk" && [ "$1" -ge 100 ] && [ $(($2 * 10)) -ge $(($1 * 9)) ]; echo $?) \
        "scikit-learn KMeans in 8 joblib threads: $2 of $1 decisions with 4+ callers give 1 thread (>= 90%; rc $rc)"
    like "$(cat "$T/sk")" "num_threads echoing the default 2, 1 caller share 2 cores -> 2" \
        "... its fit alone first: 2 threads"
else
    skip 2 "python3-sklearn not installed (sh tests/install-deps.sh bench)"
fi

# numaguard check names the fix where it sees nested pools, and not where
# the governor already runs.
if [ -x $PY ] && [ -f "$BUILD/tests/omp/libpart_gomp.so" ]; then
    PIDS=""
    start nest env OMP_NUM_THREADS=2 $PY tests/omp/nest_pool.py "$BUILD/tests/omp/libpart_gomp.so" 4
    sleep 1
    out=$("$NG" check --pid "$PID_nest" 2>&1)
    like "$out" "warning: [0-9]+ threads for [0-9]+ core\(s\) with an OpenMP runtime loaded: several threads each run an OpenMP team \(nested pools\)\? --omp-guard=adaptive shares the cores among them" \
        "check: 8 threads each running an OpenMP team: names --omp-guard=adaptive"
    wait "$PID_nest" 2>/dev/null
    if [ -n "$XDIR" ]; then
        start gnest "$XNG" exec --numa-policy=none --omp-guard=adaptive -- $PY tests/omp/nest_pool.py \
            "$BUILD/tests/omp/libpart_gomp.so" 4
        sleep 1
        out=$("$NG" check --pid "$PID_gnest" 2>&1)
        unlike "$out" "nested pools" "check: the same pools under the governor: no such advice"
        wait "$PID_gnest" 2>/dev/null
    else
        skip 1 "$NOX"
    fi
else
    skip 2 "$PY or tests/omp/libpart_gomp.so missing"
fi

# numaguard exec: the variables, LD_PRELOAD appended to the user's.
if [ -n "$XDIR" ]; then
    out=$(LD_PRELOAD=/lib/$NG_MA/libm.so.6 "$XNG" exec --numa-policy=none --omp-guard=adaptive -- \
          sh -c 'echo "LD_PRELOAD=$LD_PRELOAD"; echo "CORES=$NUMAGUARD_OMP_CORES"; echo "OMP=$OMP_NUM_THREADS"' 2>&1)
    n=$(nproc)
    is "$(val "$out" LD_PRELOAD)" "/lib/$NG_MA/libm.so.6:$XGOV" \
        "exec --omp-guard=adaptive: the governor appended to the user's LD_PRELOAD (build tree: beside the binary)"
    is "$(val "$out" CORES)/$(val "$out" OMP)" "$n/$n" "... NUMAGUARD_OMP_CORES and OMP_NUM_THREADS as auto sets it ($n)"
    out=$(LD_PRELOAD=$XGOV "$XNG" exec --numa-policy=none --omp-guard=adaptive -- sh -c 'echo "LD_PRELOAD=$LD_PRELOAD"')
    is "$(val "$out" LD_PRELOAD)" "$XGOV" "... not added twice"
    out=$("$XNG" exec --numa-policy=none --omp-guard=adaptive --verbose -- true 2>&1)
    like "$out" "threads $n \(adaptive: teams shared by their callers\)" "... the verbose line says adaptive"
    out=$("$XNG" exec --omp-guard=adaptive --dry-run)
    like "$out" "^env +LD_PRELOAD=$XGOV" "--dry-run lists LD_PRELOAD"
else
    skip 5 "$NOX"
fi

# A governor root does not own (or in a directory others may write) is never added.
mkdir -p "$T/bin" && cp "$NG" "$GOV" "$T/bin/" && chmod 755 "$T/bin" "$T"
if [ "$(id -u)" -eq 0 ] && [ ! -f /usr/local/lib/numaguard/libnumaguard-omp.so ]; then
    chown 65534 "$T/bin/libnumaguard-omp.so"
    out=$("$T/bin/numaguard" exec --numa-policy=none --omp-guard=adaptive -- sh -c 'echo "LD_PRELOAD=${LD_PRELOAD-unset}"' 2>&1)
    is "$(val "$out" LD_PRELOAD)" "unset" "a governor owned by uid 65534: not preloaded"
    like "$out" "governor .*libnumaguard-omp.so not used \(not owned by root, or writable by others\)" "... and said why"
    chown 0 "$T/bin/libnumaguard-omp.so" && chmod 775 "$T/bin"
    out=$("$T/bin/numaguard" exec --numa-policy=none --omp-guard=adaptive -- sh -c 'echo "LD_PRELOAD=${LD_PRELOAD-unset}"' 2>&1)
    like "$out" "not used \(directory $T/bin is not root's alone\)" "a group-writable directory above it: not preloaded"
else
    skip 3 "needs root, and no governor installed at /usr/local/lib"
fi

# What the library exports: the entry points it governs, nothing else; it
# needs libc alone.
syms=$(nm -D --defined-only "$GOV" | awk '{print $3}' | sort | tr '\n' ' ')
want=$(sed -n 's/^ *\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$BUILD/numaguard-omp.map" | sort | tr '\n' ' ')
is "$syms" "$want" "libnumaguard-omp.so exports exactly this architecture's version script ($(echo $want | wc -w) symbols)"
writable=$(nm -D --defined-only "$GOV" | awk '$2 ~ /^[BDbdGgSsVv]$/')
is "$writable" "" "... no data"
needed=$(objdump -p "$GOV" | awk '/NEEDED/ {print $2}' | grep -v -E '^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux.*)$' | tr '\n' ' ')
is "$needed" "" "... and needs no library but libc's"

# ASan+UBSan: the governor built with them, the team probes run under it.
SAN=$T/san.so
if cc -O1 -g -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -fsanitize=address,undefined \
      -fno-sanitize-recover=all -fno-omit-frame-pointer -shared \
      -Wl,--version-script="$BUILD/numaguard-omp.map" -o "$SAN" preload/*.c $(ls preload/kmp_stub_"$(uname -m)".S 2>/dev/null) \
      -ldl -pthread 2>"$T/san.err"; then
    asan=$(cc -print-file-name=libasan.so)
    for d in "$BUILD/tests" "$BUILD/tests/clang"; do
        for run in "omp_teams 8 50" "omp_teams 2 3 longnest 150" "omp_teams 2 3 start 150" "omp_args 4 20"; do
            set -- $run
            P=$d/$1
            shift
            ASAN_OPTIONS=detect_leaks=0:exitcode=86 UBSAN_OPTIONS=halt_on_error=1:exitcode=87 \
                LD_PRELOAD="$asan $SAN" NUMAGUARD_OMP_CORES=2 timeout -k 5 "$LIMIT" "$P" "$@" >"$T/san.out" 2>&1
            rc=$?
            ok $([ $rc -eq 0 ] && ! grep -qE 'runtime error|Sanitizer| bad [1-9]' "$T/san.out"; echo $?) \
                "$(basename "$d")/$run under the ASan+UBSan governor: clean (rc $rc)"
            [ $rc -eq 0 ] || grep -E 'runtime error|ERROR' "$T/san.out" | head -3 | sed 's/^/#   /'
        done
    done
else
    skip 8 "cannot build the governor with ASan+UBSan"
    sed 's/^/#   /' "$T/san.err" | head -3
fi
done_testing
