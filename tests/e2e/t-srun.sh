#!/bin/sh
# numaguard as an admin installs it and a user runs it: build the .debs
# (dpkg-buildpackage), unpack them into a clean root (dpkg -x), check the
# files, run the installed CLI and man pages, load the INSTALLED plugin in a
# real private Slurm (tests/slurm/cluster.sh, free ports from 36817 up) and run jobs;
# and `numaguard exec` under a real srun (ranks from SLURM_LOCALID and
# SLURM_STEP_TASKS_PER_NODE).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
cd "$(dirname "$0")/../.." || exit 2
. tests/slurm/testlib.sh

command -v dpkg-buildpackage >/dev/null && dpkg -s debhelper >/dev/null 2>&1 ||
    skip_all "needs dpkg-dev and debhelper (Debian packages) for the .deb build"
[ "$(nproc --all)" -ge 2 ] || skip_all "needs 2 CPUs"
ngt_start_suite e2e-srun plugin

# --- the package ---
make --no-print-directory BUILD="$BUILD" deb >"$NGT_OUT/deb.log" 2>&1
ok $? "make deb (dpkg-buildpackage) succeeds"
DEB=$(ls "$NGT_BUILD"/deb/numaguard_*.deb 2>/dev/null | head -1)
ROOT=$NGC_DIR/root
mkdir -p "$ROOT"
dpkg -x "$DEB" "$ROOT" 2>/dev/null
ok $? "dpkg -x into a clean root"
MA=$NG_MA
for f in usr/bin/numaguard "usr/lib/$MA/slurm-wlm/numaguard.so" "usr/lib/$MA/numaguard/libnumaguard-omp.so" \
         usr/share/man/man1/numaguard.1.gz \
         usr/share/man/man8/numaguard.8.gz usr/share/doc/numaguard/plugstack.conf.example; do
    [ -f "$ROOT/$f" ]
    ok $? "package holds /$f"
done
like "$(dpkg -I "$DEB" | grep '^ Depends:')" \
    'slurm-wlm-basic-plugins \(>= [0-9]+\.[0-9]+\), slurm-wlm-basic-plugins \(<< [0-9]+\.[0-9]+\)' \
    "depends on the Slurm release it was built for"
is "$("$ROOT/usr/bin/numaguard" topo --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["numa_nodes"]) > 0)')" \
    "True" "installed CLI runs (topo --json)"
like "$(zcat "$ROOT/usr/share/man/man1/numaguard.1.gz" | groff -man -Tascii -P-cbou 2>&1 | grep -m1 'numaguard exec')" \
    'numaguard exec' "installed numaguard(1) renders"

# --- package quality: lintian, hardening, docs, clean install/remove -----
DEV=$(ls "$NGT_BUILD"/deb/libnumaguard-dev_*.deb 2>/dev/null | head -1)
if command -v lintian >/dev/null 2>&1; then
    lint=$(lintian --pedantic -I -E --tag-display-limit 0 "$DEB" "$DEV" 2>&1 | grep -v 'running with root privileges')
    printf '%s\n' "$lint" | sed '/^$/d; s/^/# lintian: /'
    is "$lint" "" "lintian --pedantic -I -E: no tags on either .deb"
else
    ok 0 "lintian --pedantic # SKIP lintian not installed"
fi
is "$(strings "$ROOT/usr/lib/$MA/slurm-wlm/numaguard.so" | grep -c "^/usr/lib/$MA/numaguard/libnumaguard-omp.so$")" 1 \
    "the plugin preloads the governor from the path the package installs it at"
for f in usr/bin/numaguard "usr/lib/$MA/slurm-wlm/numaguard.so"; do
    # FORTIFY: the Debian build's CPPFLAGS reached the compiler.
    chk=$(readelf --dyn-syms -W "$ROOT/$f" | grep -oE '__[a-z_]+_chk' | sort -u | tr '\n' ' ')
    like "$chk" '__[a-z]+_chk' "/$f calls FORTIFY's checked functions ($chk)"
    if command -v hardening-check >/dev/null 2>&1; then
        hc=$(hardening-check "$ROOT/$f")
        printf '%s\n' "$hc" | sed 's/^/# /'
        for want in "Stack protected: yes" "Fortify Source functions: yes" \
                    "Read-only relocations: yes" "Immediate binding: yes"; do
            like "$hc" "$want" "hardening-check /$f: $want"
        done
    fi
done
# Every relative link of the installed docs leads to an installed file.
broken=$(python3 - "$ROOT/usr/share/doc/numaguard" <<'PY'
import os, re, sys
top = sys.argv[1]
for d, _, files in os.walk(top):
    for f in files:
        if not f.endswith(".md"):
            continue
        for t in re.findall(r"\]\(([^)\s]+)\)", open(os.path.join(d, f)).read()):
            t = t.split("#")[0]
            if t and "://" not in t and not os.path.exists(os.path.join(d, t)):
                print(os.path.relpath(os.path.join(d, f), top), "->", t)
PY
)
is "$broken" "" "installed docs: every relative link resolves (README -> docs/*.md -> each other)"
ok "$(test -f "$ROOT/usr/share/doc/numaguard/docs/security.md" &&
          test -f "$ROOT/usr/share/doc/numaguard/docs/hardening.md" &&
          test -f "$ROOT/usr/share/doc/numaguard/docs/performance.md"; echo $?)" \
    "security, hardening and performance guides shipped"
like "$(cat "$ROOT/usr/share/doc/numaguard/copyright")" "Permission is hereby granted" \
    "copyright holds the license notice"

# dpkg into a fresh root (own admin dir; the dependencies are not there)
# and out again: installed, then nothing left behind.
FR=$NGC_DIR/fresh
mkdir -p "$FR/var/lib/dpkg/info" "$FR/var/lib/dpkg/updates"
: >"$FR/var/lib/dpkg/status"
dpkg --root="$FR" --force-depends -i "$DEB" "$DEV" >"$NGT_OUT/dpkg-i.log" 2>&1
ok $? "dpkg --root: both packages install into a fresh root"
is "$(dpkg-query --root="$FR" -W -f='${Package} ${Status}\n' 2>/dev/null | sort | tr '\n' ';')" \
    "libnumaguard-dev install ok installed;numaguard install ok installed;" "dpkg --root: both installed"
pc="$FR/usr/lib/$MA/pkgconfig"
libs=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$FR pkg-config --libs numaguard 2>&1)
like "$libs" "-lnumaguard .*-lhwloc" "pkg-config --libs numaguard names hwloc ($libs)"
is "$(PKG_CONFIG_PATH=$pc pkg-config --modversion numaguard 2>&1)" \
    "$(sed -n 's/^#define NUMAGUARD_VERSION "\(.*\)"$/\1/p' lib/include/numaguard.h)" "numaguard.pc version = numaguard.h"
cat >"$NGT_OUT/app.c" <<'C'
#include <numaguard.h>
#include <stdio.h>
int main(void)
{
#if NUMAGUARD_VERSION_NUMBER < NUMAGUARD_VERSION_NUM(0, 1, 0)
#error too old
#endif
    printf("%s %s\n", NUMAGUARD_VERSION, ng_mem_kind_name(NG_MEM_HBM));
    return 0;
}
C
# shellcheck disable=SC2046
cc -o "$NGT_OUT/app" "$NGT_OUT/app.c" $(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$FR pkg-config \
    --cflags numaguard) $(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$FR pkg-config \
    --libs numaguard) >"$NGT_OUT/app.log" 2>&1
is "$("$NGT_OUT/app" 2>&1)" "$(sed -n 's/^#define NUMAGUARD_VERSION "\(.*\)"$/\1/p' lib/include/numaguard.h) HBM" \
    "a program built with pkg-config against the installed -dev package runs"
dpkg --root="$FR" --force-depends -P numaguard libnumaguard-dev >"$NGT_OUT/dpkg-P.log" 2>&1
ok $? "dpkg --root -P: both packages purge"
is "$(cd "$FR" && find . -mindepth 1 -not -path './var/lib/dpkg*' -not -path ./var/lib -not -path ./var)" "" \
    "nothing left in the fresh root after the purge"

# make install / make uninstall with DESTDIR, PREFIX, LIBDIR: the same files out again.
D=$NGC_DIR/destdir
iv=(BUILD="$BUILD" DESTDIR="$D" PREFIX=/opt/ng LIBDIR=/opt/ng/lib64 SLURM_PLUGIN_DIR=/opt/ng/slurm)
make --no-print-directory "${iv[@]}" install >"$NGT_OUT/install.log" 2>&1
ok $? "make install DESTDIR PREFIX LIBDIR"
# The public headers: numaguard.h and its topic headers numaguard/*.h.
want=$( { printf '%s\n' ./opt/ng/bin/numaguard ./opt/ng/bin/numaguard-healthcheck \
    ./opt/ng/include/numaguard.h \
    ./opt/ng/lib64/libnumaguard.a ./opt/ng/lib64/pkgconfig/numaguard.pc \
    ./opt/ng/lib64/numaguard/libnumaguard-omp.so \
    ./opt/ng/share/man/man1/numaguard.1 ./opt/ng/share/man/man8/numaguard.8 \
    ./opt/ng/share/man/man8/numaguard-healthcheck.8 \
    ./opt/ng/slurm/numaguard.so
    for h in lib/include/numaguard/*.h; do echo "./opt/ng/include/numaguard/${h##*/}"; done; } |
    sort | tr '\n' ' ')
is "$(cd "$D" && find . -type f | sort | tr '\n' ' ')" "$want" \
    "make install: files where PREFIX/LIBDIR say (headers: numaguard.h, numaguard/*.h)"
like "$(cat "$D/opt/ng/lib64/pkgconfig/numaguard.pc")" "libdir=/opt/ng/lib64" "numaguard.pc names LIBDIR"
make --no-print-directory "${iv[@]}" uninstall >>"$NGT_OUT/install.log" 2>&1
ok $? "make uninstall"
is "$(cd "$D" && find . -type f)" "" "make uninstall removes every installed file"

# The RPM (rpmbuild from Debian's rpm package; the build dependencies are
# Debian packages here, hence --nodeps).
if command -v rpmbuild >/dev/null 2>&1; then
    make --no-print-directory BUILD="$BUILD" rpm RPMBUILD_FLAGS=--nodeps >"$NGT_OUT/rpm.log" 2>&1
    ok $? "make rpm (rpmbuild -bb)"
    RPM=$(ls "$NGT_BUILD"/rpm/RPMS/*/numaguard-[0-9]*.rpm 2>/dev/null | head -1)
    RDEV=$(ls "$NGT_BUILD"/rpm/RPMS/*/numaguard-devel-*.rpm 2>/dev/null | head -1)
    like "$(rpm -qp --requires "$RPM" 2>/dev/null | tr '\n' ';')" \
        'slurm\([^)]*\) >= [0-9]+\.[0-9]+;slurm\([^)]*\) < [0-9]+\.[0-9]+;' \
        "RPM requires a Slurm major-release range"
    like "$(rpm -qpl "$RDEV" 2>/dev/null | tr '\n' ' ')" "$(rpm --eval '%{_libdir}')/libnumaguard.a" \
        "RPM -devel installs into %{_libdir}"
    like "$(rpm -qpl "$RPM" 2>/dev/null | tr '\n' ' ')" "$(rpm --eval '%{_libdir}')/numaguard/libnumaguard-omp.so" \
        "RPM ships the governor of --omp-guard=adaptive"
else
    ok 0 "make rpm # SKIP rpmbuild not installed"
fi

# --- the installed plugin in a real Slurm ---
# The package checks above take ~40 s: another suite may have taken the
# port block picked at start-up meanwhile, so pick a free one now.
ngc_pick_ports || { echo "Bail out! no free port block"; exit 1; }
NGT_PLUGIN=$ROOT/usr/lib/$MA/slurm-wlm/numaguard.so
NGC_PLUGSTACK="required $NGT_PLUGIN allowed_policies=local,prefer,interleave,none"
ngt_cluster
show='echo "$SLURM_PROCID $(sed -n "s/^Cpus_allowed_list:\t//p" /proc/self/status) $NUMAGUARD_CPUS $NUMAGUARD_MEM_MODE $OMP_NUM_THREADS"'
ngc_wait_idle 10
out=$(ngc_srun -n 2 --numa-policy=local --omp-guard sh -c "$show" 2>"$NGT_OUT/j1.err" | sort)
is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" "installed plugin: 2 tasks on CPUs 0 and 1, memory bound, 1 thread each"
ngc_wait_idle 10
OMP_NUM_THREADS=7 ngc_srun -n 2 --numa-policy=local,verbose --omp-guard true 2>"$NGT_OUT/j1k.err"
like "$(grep -c ' threads 1 (kept OMP_NUM_THREADS=7) \[preset thread values kept (OMP_NUM_THREADS=7) disagree' "$NGT_OUT/j1k.err")" '^2$' \
    "installed plugin: a kept OMP_NUM_THREADS=7 is named in each task's verbose line, with the > 2x warning"
ngc_wait_idle 10
ngc_srun -n 1 --numa-policy=weighted true 2>"$NGT_OUT/j2.err"
rc=$?
is "$rc" 255 "allowed_policies from plugstack.conf: weighted refused (exit 255)"
like "$(cat "$NGT_OUT/j2.err")" 'numa-policy=weighted is not allowed on this cluster \(allowed: local,prefer,interleave,none\)' \
    "refusal names the allowed policies"

# --omp-guard=adaptive with the installed plugin: the governor only from
# the path the package puts it at (the package is unpacked, not installed,
# here: where it is missing the task is told, and runs as with auto).
gov=/usr/lib/$MA/numaguard/libnumaguard-omp.so
ngc_wait_idle 10
out=$(ngc_srun -n 1 --omp-guard=adaptive sh -c 'echo "PRE=${LD_PRELOAD-unset} CORES=$NUMAGUARD_OMP_CORES"' 2>"$NGT_OUT/j5.err")
if [ -f "$gov" ]; then
    is "$out" "PRE=$gov CORES=1" "installed plugin, --omp-guard=adaptive: the installed governor preloaded, 1 core"
else
    is "$out" "PRE=unset CORES=1" "installed plugin, --omp-guard=adaptive, governor not installed: no LD_PRELOAD"
    like "$(cat "$NGT_OUT/j5.err")" "governor $gov not used \(No such file or directory\)" "... and the task is told why"
fi

# --- numaguard exec under srun (the plugin not asked for) ---
ngc_wait_idle 10
out=$(ngc_srun -n 2 --cpu-bind=none "$NGT_CLI" exec --omp-guard -- sh -c "$show" 2>"$NGT_OUT/j3.err" | sort)
is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" \
    "srun -n 2 numaguard exec: rank from SLURM_LOCALID, size from SLURM_STEP_TASKS_PER_NODE"
ngc_wait_idle 10
out=$(ngc_srun -n 2 --cpu-bind=none "$NGT_CLI" exec --verbose -- true 2>&1 | grep '^numaguard: rank' | sort)
is "$out" "$(printf 'numaguard: rank 0 (local 0): gpus none numa 0 cpus 0 mem bind:0\nnumaguard: rank 1 (local 1): gpus none numa 0 cpus 1 mem bind:0')" \
    "exec --verbose under srun: one line per rank with SLURM_PROCID"
# srun's own binding (no --cpu-bind=none): exec keeps each rank's mask and
# local rank 0 says how to let numaguard place the ranks.
ngc_wait_idle 10
bound=$(ngc_srun -n 2 sh -c 'sed -n "s/^Cpus_allowed_list:\t//p" /proc/self/status' | sort | tr '\n' ' ')
ngc_wait_idle 10
out=$(ngc_srun -n 2 "$NGT_CLI" exec --omp-guard -- sh -c "$show" 2>"$NGT_OUT/j4.err" | sort)
if [ "$bound" = "0 1 " ]; then
    is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" "srun-bound ranks: exec keeps Slurm's masks, 1 thread each"
    like "$(cat "$NGT_OUT/j4.err")" '^numaguard: warning: Slurm already bound local rank 0 to CPUs 0 of the allowed 0-1: .*run srun --cpu-bind=none$' \
        "srun-bound ranks: one warning with the fix"
else
    is "$out" "$(printf '0 0 0 bind 1\n1 1 1 bind 1')" "srun without binding ($bound): exec places the ranks"
    is "$(cat "$NGT_OUT/j4.err")" "" "... and has nothing to warn about"
fi

ngt_done
