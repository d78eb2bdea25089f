#!/bin/sh
# Proof on a real multi-NUMA kernel: boots a QEMU (TCG) VM with two CPU
# NUMA nodes, one memory-only node and a virtio-gpu (DRM render node) on a
# PCIe expander of each CPU node; runs a real slurmctld + slurmd with the
# numaguard plugin inside and checks where tasks' CPUs and pages land.
# See docs/vm-test.md. TAP on stdout; exit 1 if any check failed.
#
#   BUILD=build sh tests/vm/t-vm.sh          (make check-vm)
#   NG_VM_KERNELS="612"   only the 6.12 kernel (default "612 61")
#   NG_VM_SKIP=1          print a skip and exit 0
#   NG_VM_PLUGIN=PATH     plugin to test (default $BUILD/numaguard.so)
#   NG_VM_KEEP=1          keep build/vm-run/PID (console and guest logs;
#                         kept anyway when a check failed)
#   NG_VM_SERIAL=1        boot the kernels one after the other (default:
#                         both VMs at once, one host core each)
#   NG_VM_TIMEOUT=S       seconds each VM may run (default 240; raise it on
#                         a loaded or slow machine: TCG is emulation)
#   NG_VM_PHASES="..."    only these phases of tests/vm/guest.sh; "jobwide"
#                         (check --job on two slurmd, cgroup v2, hidepid=2)
#                         runs only so: ~5 min of TCG, NG_VM_TIMEOUT=900;
#                         "jobwide26" the same with sid's Slurm 26.05
#                         (needs the chroot of make check-releases)
#   NG_VM_SID_ROOT=DIR    that sid root (default
#                         /var/cache/numaguard-chroots/sid)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
BUILD=${BUILD:-build}
. tests/lib/tap.sh

# The guest sees the host's / read-only except /tmp and /run (its own tmpfs).
# A checkout there (CI may clone under /tmp) is staged under /var/tmp, with
# its build, and the test runs from the copy.
case $top in
    /tmp/*|/run/*)
        if [ -z "${NG_VM_STAGED:-}" ]; then
            stage=/var/tmp/numaguard-vm-stage.$$
            rm -rf "$stage" && mkdir -p "$stage" || exit 2
            tar -cf - --exclude=./.git --exclude='./build*/vm-run' . | tar -xf - -C "$stage" || exit 2
            NG_VM_STAGED=1 BUILD=$BUILD sh "$stage/tests/vm/t-vm.sh"
            rc=$?
            rm -rf "$stage"
            exit $rc
        fi ;;
esac
# One directory per invocation: several test runs may overlap.
run_dir=$top/build/vm-run/$$
# Logs of earlier runs whose shell is gone are dropped.
for d in "$top"/build/vm-run/*; do
    [ -d "$d" ] || continue
    case ${d##*/} in *[!0-9]*) rm -rf "$d"; continue ;; esac
    kill -0 "${d##*/}" 2>/dev/null || rm -rf "$d"
done
mkdir -p "$run_dir"
kernels=${NG_VM_KERNELS:-612 61}
vm_limit=${NG_VM_TIMEOUT:-240}
t_start=$(date +%s)

[ "${NG_VM_SKIP:-0}" = 1 ] && skip_all "NG_VM_SKIP=1"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (QEMU 9p passthrough of /, apt)"
[ "$(uname -m)" = x86_64 ] || skip_all "x86_64 host only"

# The probe is built by `make tests`; build it here too when run alone.
if [ ! -x "$BUILD/tests/probe" ] || [ tests/helpers/probe.c -nt "$BUILD/tests/probe" ]; then
    make --no-print-directory BUILD="$BUILD" "$BUILD/tests/probe" >&2 || {
        ok 1 "build $BUILD/tests/probe"; done_testing; exit 1; }
fi

# The guest sees the host's / read-only, except /tmp and /run (its own
# tmpfs): the build and the plugin must live elsewhere.
case $BUILD in /*) build_abs=$BUILD ;; *) build_abs=$top/$BUILD ;; esac
plugin=${NG_VM_PLUGIN:-$build_abs/numaguard.so}
for p in "$build_abs" "$plugin"; do
    case $p in /tmp/*|/run/*) ok 1 "$p is under /tmp or /run, which the VM does not share"; done_testing; exit 1 ;; esac
done

prep_log=$(mktemp)
sh tests/vm/prepare.sh $kernels >"$prep_log.dirs" 2>"$prep_log"
prc=$?
if [ $prc -ne 0 ]; then
    sed 's/^/# /' "$prep_log"
    rm -f "$prep_log" "$prep_log.dirs"
    # No skip here: make check must prove placement on a real multi-NUMA
    # kernel, so a machine that cannot fetch the kernels fails loudly.
    ok 1 "prepare VM kernels and initramfs"; done_testing; exit 1
fi
rm -f "$prep_log" "$prep_log.dirs"
echo "# prepared kernels in $(( $(date +%s) - t_start ))s"

# Phase jobwide26 runs numaguard built against sid's Slurm 26.05, in the
# sid root of make check-releases (tests/vm/sid-build.sh; BUILD-sid).
sid_root=${NG_VM_SID_ROOT:-${NG_CHROOT_CACHE:-/var/cache/numaguard-chroots}/sid}
sid_build=$build_abs-sid
case " ${NG_VM_PHASES:-} " in
    *" jobwide26 "*)
        t0=$(date +%s)
        NG_VM_SID_ROOT=$sid_root sh tests/vm/sid-build.sh "$sid_build" >"$run_dir/sid-build.log" 2>&1
        src=$?
        echo "# sid build (tests/vm/sid-build.sh $sid_build): rc $src, $(( $(date +%s) - t0 ))s"
        # (the guest then says what it lacks: a failed jobwide26 check)
        [ $src -eq 0 ] || tail -5 "$run_dir/sid-build.log" | sed 's/^/#   /' ;;
esac

# boot_and_test FLAVOUR PHASES: one VM boot (retried once when the guest
# died before the test started); writes unnumbered TAP to $out/result.
boot_and_test() {
    boot_and_test_ "$@" >"$run_dir/k$1.result" 2>&1
    # Progress (the numbered lines come when every VM is done).
    echo "# kernel $1: VM run over, $(grep -c '^ok - ' "$run_dir/k$1.result") checks passed, $(grep -c '^not ok - ' "$run_dir/k$1.result") failed"
}
boot_and_test_() {
    fl=$1 phases=$2 out=$run_dir/k$1
    rm -rf "$out"; mkdir -p "$out"
    cat >"$out/env" <<EOF
REPO='$top'
BUILD='$build_abs'
FLAVOUR='$fl'
PLUGIN='$plugin'
PHASES='$phases'
SID_ROOT='$sid_root'
SID_BUILD='$sid_build'
EOF
    try=1
    while :; do
        t0=$(date +%s)
        rm -f "$out/tap" "$out/guest-started" "$out/guest.log"
        sh tests/vm/boot.sh "build/vm-cache/k-$fl" "$out" tests/vm/guest.sh "$vm_limit"
        rc=$?
        secs=$(( $(date +%s) - t0 ))
        if [ $rc -eq 3 ] || { [ $rc -ne 0 ] && [ ! -f "$out/guest-started" ]; }; then
            echo "# kernel $fl: guest died before the test started (boot.sh rc $rc, try $try)"
            tail -15 "$out/console.log" 2>/dev/null | sed 's/^/#   console: /'
            [ $try -lt 2 ] && { try=2; continue; }
        fi
        break
    done
    echo "# kernel $fl ($(cat build/vm-cache/k-$fl/package 2>/dev/null)): VM run ${secs}s, boot.sh rc $rc"
    grep -E '^ngvm: (guest up|run.sh exit)' "$out/console.log" 2>/dev/null | sed 's/^/# /'
    if [ -f "$out/tap" ]; then cat "$out/tap"; fi
    if [ $rc -eq 4 ] && [ "$secs" -ge "$vm_limit" ]; then
        echo "not ok - kernel $fl: VM run completed (timed out: its ${vm_limit}s, NG_VM_TIMEOUT, ran out; on a loaded machine raise it, e.g. NG_VM_TIMEOUT=$((vm_limit * 2)) make check)"
    elif [ $rc -ne 0 ]; then
        echo "not ok - kernel $fl: VM run completed (boot.sh rc $rc: 3 no start, 4 timeout)"
        tail -20 "$out/console.log" 2>/dev/null | sed 's/^/#   console: /'
        tail -20 "$out/guest.log" 2>/dev/null | sed 's/^/#   guest: /'
    fi
}

phases_of() {
    # NG_VM_PHASES: these phases on every kernel (a shorter run while working on one)
    [ -z "${NG_VM_PHASES:-}" ] || { echo "$NG_VM_PHASES"; return; }
    case $1 in
        612) echo "raw widemem slurm plugin container cgroup" ;;
        61) echo "raw slurm fallback" ;;
    esac
}
# Progress for run-all.sh (the results come when the VMs are done).
echo "# booting kernels: $kernels ($( [ "${NG_VM_SERIAL:-0}" = 1 ] && echo one after the other || echo at once); each VM may run ${vm_limit}s, NG_VM_TIMEOUT)"
pids=""
for k in $kernels; do
    [ -n "$(phases_of "$k")" ] || { echo "# unknown kernel flavour $k"; continue; }
    if [ "${NG_VM_SERIAL:-0}" = 1 ]; then
        boot_and_test "$k" "$(phases_of "$k")"
    else
        boot_and_test "$k" "$(phases_of "$k")" &
        pids="$pids $!"
    fi
done
for p in $pids; do wait "$p"; done
for k in $kernels; do
    [ -f "$run_dir/k$k.result" ] && emit "$run_dir/k$k.result"
done
echo "# VM test total $(( $(date +%s) - t_start ))s"
echo "1..$tap_n"
if [ $tap_failed -eq 0 ] && [ $tap_n -gt 0 ] && [ "${NG_VM_KEEP:-0}" != 1 ]; then
    rm -rf "$run_dir"
else
    echo "# logs: $run_dir/k*/{console.log,guest.log,qemu.log}"
fi
[ $tap_failed -eq 0 ] && [ $tap_n -gt 0 ]
