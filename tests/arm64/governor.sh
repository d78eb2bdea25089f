#!/bin/sh
# The governor's team sizes and libomp's entry stub on this machine's
# architecture, short: what `make check-arm64` runs inside the arm64 root
# under qemu-user (tests/arm64/check-arm64.sh), where t-omp-adaptive as a
# whole would take too long. For the gcc (libgomp) and clang (libomp)
# probes: 16 callers on 2 cores get teams of 1, a lone caller gets both;
# regions with 4, 8, 9 and 20 shared variables (clang: 8 and 20 of them
# passed as __kmpc_fork_call's variadic arguments, the ones past the
# registers on the stack, counted from the probe's own code) see every
# value; backtrace() from inside a region reaches main through the
# governor's frame (libomp: through its stub, with a one-thread runtime
# where libomp's own frame cannot be unwound); a thread that exits inside its region (libomp) is
# unwound through the stub. TAP on stdout. Runs anywhere (amd64 too).
#   NG_EMULATED   set by check-arm64.sh (qemu-user): said in the skips
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
. tests/lib/omp_args.sh
GOV=$BUILD/libnumaguard-omp.so
[ -f "$GOV" ] || skip_all "$GOV not built (make all)"
[ -x "$BUILD/tests/omp_teams" ] && [ -x "$BUILD/tests/clang/omp_teams" ] ||
    skip_all "OpenMP probes not built (make tests: gcc and clang with libomp-dev)"
unset OMP_NUM_THREADS OMP_PLACES OMP_PROC_BIND OMP_DYNAMIC LD_PRELOAD NUMAGUARD_OMP_DEBUG
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
LIMIT=${NG_OMP_HANG_LIMIT:-300}
gov() { LD_PRELOAD=$GOV NUMAGUARD_OMP_CORES=2 OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" "$@"; }
all_of() { sed -n 's/^all \([0-9-]*\) .*/\1/p' "$1"; }

echo "# $(uname -m)${NG_EMULATED:+ under $NG_EMULATED}, multiarch $NG_MA"
argcs=$(ng_kmpc_argcs "$BUILD/tests/clang/omp_args")
if [ -z "$argcs" ]; then
    skip 1 "objdump or the $(uname -m) argument register unknown: argument counts not read"
else
    like "$argcs" "0x14 .*0x8 " \
        "the clang probe's regions call __kmpc_fork_call with 8 and 20 arguments ($argcs)"
fi
for rt in gcc clang; do
    case $rt in
        gcc) D=$BUILD/tests lib=libgomp ;;
        *) D=$BUILD/tests/clang lib=libomp ;;
    esac
    # (NUMAGUARD_OMP_LOAD=0: a lone caller's 2 threads assume quiet cores,
    # see tests/e2e/t-omp-adaptive.sh)
    NUMAGUARD_OMP_LOAD=0 gov "$D/omp_teams" 1 100 >"$T/one" 2>&1
    is "$(all_of "$T/one")" "2-2" "$lib: one caller: each of its 100 regions gets both cores"
    NUMAGUARD_OMP_WINDOW_MS=2000 gov "$D/omp_teams" 16 50 >"$T/pool" 2>&1
    ones=$(sed -n 's/^ones \([0-9]*\) of .*/\1/p' "$T/pool")
    ok $([ "${ones:-0}" -ge 720 ]; echo $?) \
        "$lib: 16 callers at once on 2 cores: teams of 1 (${ones:-none} of 800 regions; >= 90%)"
    NUMAGUARD_OMP_LOAD=0 ng_args_check "$D/omp_args" "$lib" 20
    # Unwinding from inside a region crosses the runtime's own frames
    # first: where the runtime alone cannot be unwound through (libomp on
    # aarch64: __kmp_invoke_microtask's FDE is empty, and with OMPT its
    # x29 points at its x19/x20 pair, not at its frame record, so the
    # frame-record walk stops there too), nothing through the governor
    # can be asked of it, so a run without it decides; the stub itself is
    # unwound below with a runtime whose frames can be.
    OMP_NUM_THREADS=2 timeout -k 5 60 "$D/omp_args" 1 1 >"$T/plain" 2>&1
    if ! grep -q '^unwind caller 1' "$T/plain"; then
        skip 1 "$lib: backtrace() from a region does not reach main without the governor either ($(grep -E '^(unwind|fpwalk)' "$T/plain" | tr '\n' ';')): the runtime's own frame between the region and its fork call cannot be unwound here"
    else
        # libgomp: through its own entry point, which the governor jumped
        # to (the governor's frame is the region function's wrapper)
        via="^unwind caller 1 via .*@libnumaguard-omp\.so"
        [ $rt = gcc ] && via="^unwind caller 1 via GOMP_parallel@libgomp\.so[.0-9]*\$"
        like "$(grep '^unwind' "$T/args1")" "$via" \
            "$lib: backtrace() inside a region reaches main through the governor's frame"
    fi
    if [ $rt = clang ]; then
        OMP_NUM_THREADS=2 timeout -k 5 60 "$D/omp_args" 1 1 exit >"$T/plainexit" 2>&1
        if [ $? -ne 0 ]; then
            skip 1 "$lib: pthread_exit inside a region does not finish without the governor either (the runtime's frames cannot be unwound here)"
        else
            gov "$D/omp_args" 1 1 exit >"$T/exit" 2>&1
            rc=$?
            is "$(sed -n 's/^exit //p' "$T/exit") rc $rc" "during 1 after 2 rc 0" \
                "$lib: pthread_exit inside a region: unwound through the stub, taken off as it exits"
        fi
    fi
done

# The stub unwound for real: backtrace() inside a region of a clang
# -fopenmp program reaches main through the governor's __kmpc_fork_call,
# with libomp's entry points served by a one-thread runtime whose own frame
# can be unwound (tests/omp/kmp_mini.c; libomp's cannot on aarch64, above).
K=$BUILD/tests/kmp_mini/kmp_unwind
if [ ! -x "$K" ]; then
    skip 1 "$K not built (make tests: clang)"
else
    gov "$K" >"$T/kmp" 2>&1
    like "$(grep '^unwind' "$T/kmp")" \
        "^unwind caller 1 via __kmpc_fork_call@libkmpmini\.so __kmpc_fork_call@libnumaguard-omp\.so\$" \
        "backtrace() inside a region reaches main through the governor's __kmpc_fork_call stub (libomp's interface, a runtime whose frames unwind)"
fi

# The stub's own unwind information, read from the library: a frame on
# the frame pointer with the caller's frame pointer and return address
# saved (what an unwinder needs to get from a region to its caller).
addr=$(nm -D --defined-only "$GOV" 2>/dev/null | awk '$3 == "__kmpc_fork_call" {print $1}' | sed 's/^0*//')
case $(uname -m) in
    aarch64) want='def_cfa_register: r29 .*r29 \(x29\) at cfa-240.*r30 \(x30\) at cfa-232|r29 \(x29\) at cfa-240.*r30 \(x30\) at cfa-232.*def_cfa_register: r29' ;;
    x86_64) want='r6 \(rbp\) at cfa-16.*def_cfa_register: r6' ;;
    *) want= ;;
esac
if [ -z "$addr" ] || [ -z "$want" ] || ! command -v readelf >/dev/null; then
    skip 1 "no stub or no readelf on $(uname -m)"
else
    fde=$(readelf --debug-dump=frames "$GOV" 2>/dev/null |
        awk -v a="$addr" '/ FDE / {on = ($0 ~ ("pc=0*" a "\\.\\."))} on' | tr '\n' ' ')
    like "$fde" "$want" "the stub's unwind information: frame on the frame pointer, its caller's saved ($(uname -m))"
fi

# An architecture without a stub (here: the stub left out, -DNGO_KMP_STUB=0):
# libomp's regions keep the runtime's teams, and the governor says so once
# per process; libgomp's are still governed, without that line.
grep -v '__kmpc_fork_call;' "$BUILD/numaguard-omp.map" >"$T/nostub.map"
if cc -O2 -std=c11 -D_GNU_SOURCE -DNGO_KMP_STUB=0 -fPIC -fvisibility=hidden -shared \
    -Wl,--version-script="$T/nostub.map" -o "$T/nostub.so" preload/*.c -ldl -pthread 2>"$T/nostub.err"; then
    LD_PRELOAD=$T/nostub.so NUMAGUARD_OMP_CORES=2 OMP_NUM_THREADS=2 timeout -k 5 "$LIMIT" \
        "$BUILD/tests/clang/omp_teams" 4 10 >"$T/ns" 2>&1
    is "$(grep -c 'cannot be governed' "$T/ns")/$(all_of "$T/ns")" "1/2-2" \
        "no stub: libomp's 4 callers keep teams of 2, and the process is told once"
    like "$(grep 'cannot be governed' "$T/ns")" \
        "^numaguard-omp: .*libomp's regions \(__kmpc_fork_call\) cannot be governed on $(uname -m): no entry stub" \
        "... naming the architecture"
    NUMAGUARD_OMP_WINDOW_MS=2000 LD_PRELOAD=$T/nostub.so NUMAGUARD_OMP_CORES=2 OMP_NUM_THREADS=2 \
        timeout -k 5 "$LIMIT" "$BUILD/tests/omp_teams" 16 20 >"$T/nsg" 2>&1
    is "$(grep -c 'cannot be governed' "$T/nsg")/$(sed -n 's/^caller [0-9]* teams .* last \([0-9]*\) .*/\1/p' "$T/nsg" | sort -u)" \
        "0/1" "no stub: libgomp's 16 callers still get 1 each, nothing said"
else
    skip 3 "the governor without its stub did not build: $(head -1 "$T/nostub.err")"
fi
done_testing
