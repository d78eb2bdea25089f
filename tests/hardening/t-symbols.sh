#!/bin/sh
# What the shipped binaries expose and link (issue 13):
#   - numaguard.so exports only what Slurm's SPANK loader looks up
#     (spank/numaguard.map): plugin_name, plugin_type, plugin_version,
#     spank_plugin_version, the optional spank_options table and the
#     slurm_spank_* callbacks; in particular no writable data (test-hook
#     function pointers) and no library function another plugin could clash
#     with or interpose;
#   - no fault injection in the shipped plugin: numaguard.so has no
#     "test_fault" string (its plugstack parser does not know the argument)
#     and no plugin source but spank/faults.c includes a private library
#     header (lib/private/, where the test seams are);
#     the test build numaguard-faults.so (make tests) has them and exports
#     the same SPANK symbols;
#   - neither the plugin nor the CLI needs libnuma at run time (nothing of
#     numaguard calls it; the test helpers do);
#   - numaguard --version agrees with numaguard.h and debian/changelog.
# Loading the plugin in a real Slurm is covered by every tests/slurm suite.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh

so=$BUILD/numaguard.so
cli=$BUILD/numaguard
if [ ! -f "$so" ] || [ ! -x "$cli" ]; then
    skip_all "$so or $cli not built (make all; the plugin needs Slurm headers)"
fi

syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
echo "$syms" | sed 's/^/# exported: /'
odd=$(echo "$syms" | grep -Ev '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|spank_options|slurm_spank_[a-z_]+)$')
ok "$([ -z "$odd" ]; echo $?)" "numaguard.so exports only SPANK symbols ($(echo "$syms" | wc -l) exported)"
[ -z "$odd" ] || echo "$odd" | sed 's/^/#   unexpected: /'
for s in plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_user_init \
         slurm_spank_task_init; do
    echo "$syms" | grep -qx "$s"
    ok $? "numaguard.so exports $s"
done
# slurm_spank_init_failure_mode (Slurm 25.05+ headers) is Slurm's own
# variable, read by the loader; nothing else may be writable.
writable=$(nm -D --defined-only "$so" | awk '$2 ~ /^[BDbdGgSs]$/ {print $3}' |
    grep -vx slurm_spank_init_failure_mode)
ok "$([ -z "$writable" ]; echo $?)" "no writable data exported (test hooks stay local)"
[ -z "$writable" ] || echo "$writable" | sed 's/^/#   writable: /'

# Fault injection lives only in the test build (spank/faults.c, -DNG_FAULT_INJECTION).
hits=$(strings "$so" | grep -c test_fault)
echo "# strings $so | grep -c test_fault: $hits"
ok "$([ "$hits" -eq 0 ]; echo $?)" "numaguard.so contains no \"test_fault\" string"
inc=$(grep -l '"private/' spank/*.c spank/*.h | grep -vx spank/faults.c)
ok "$([ -z "$inc" ]; echo $?)" "only spank/faults.c includes a private library header (${inc:-none else})"
fso=$BUILD/numaguard-faults.so
if [ -f "$fso" ]; then
    fhits=$(strings "$fso" | grep -c test_fault)
    echo "# strings $fso | grep -c test_fault: $fhits"
    ok "$([ "$fhits" -gt 0 ]; echo $?)" "the test build numaguard-faults.so knows test_fault= ($fhits strings)"
    fsyms=$(nm -D --defined-only "$fso" | awk '{print $3}' | sort)
    ok "$([ "$fsyms" = "$syms" ]; echo $?)" "numaguard-faults.so exports the same SPANK symbols"
else
    echo "# $fso not built (make tests builds it): test-build checks skipped"
fi

for f in "$so" "$cli"; do
    needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    echo "# $f needs: $needed"
    case " $needed " in *" libnuma.so"*) r=1 ;; *) r=0 ;; esac
    ok $r "$(basename "$f") does not link libnuma"
    echo "$needed" | grep -q 'libhwloc\.so'
    ok $? "$(basename "$f") links libhwloc"
done

# What never runs in slurmstepd is not in the plugin at all: the doctor
# (forks, runs nvidia-smi and slurmd), the pictures and check's /proc
# inspection are the CLI's (the plugin links the archive: only what its
# calls reach).
cli_only=$(nm "$so" | awk '{print $NF}' | grep -E '^ngi?_(doctor|draw|inspect|proc_|environ_)|^ng_check_status' | head -5)
ok "$([ -z "$cli_only" ]; echo $?)" "numaguard.so holds none of the CLI's doctor, drawing or inspection code${cli_only:+: $cli_only}"

hdr=$(sed -n 's/^#define NUMAGUARD_VERSION "\(.*\)"$/\1/p' lib/include/numaguard.h)
num=$(awk '/^#define NUMAGUARD_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' lib/include/numaguard.h)
deb=$(head -1 debian/changelog | sed 's/.*(\([^)-]*\).*/\1/')
cliv=$("$cli" --version | sed -n '1s/^numaguard //p')
ok "$([ -n "$hdr" ] && [ "$hdr" = "$num" ] && [ "$hdr" = "$deb" ] && [ "$hdr" = "$cliv" ]; echo $?)" \
    "one version everywhere: numaguard.h $hdr ($num), debian/changelog $deb, numaguard --version $cliv"
if [ -f /usr/include/slurm/slurm_version.h ]; then
    v=$(sed -n 's/.*define SLURM_VERSION_NUMBER \(0x[0-9a-fA-F]*\).*/\1/p' /usr/include/slurm/slurm_version.h)
    want=$(printf '%d.%02d.%d' $((v >> 16)) $(((v >> 8) & 255)) $((v & 255)))
    "$cli" --version | grep -q "^slurm $want "
    ok $? "numaguard --version names the Slurm the plugin was built for ($want)"
fi

done_testing
