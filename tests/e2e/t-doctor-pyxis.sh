#!/bin/sh
# numaguard doctor's plugin.pyxis check (lib/doctor/ch_pyxis.c): where
# NVIDIA's pyxis (spank_pyxis.so) sits relative to numaguard in
# plugstack.conf, includes followed. pyxis first: OK (numaguard's
# task_init runs in the container, the image's ENV is a preset, the
# governor accepted by the identity checked before pyxis joined);
# numaguard first: WARN (the image's ENV replaces numaguard's variables,
# even with ,force) with the fix; no pyxis: OK, nothing to order. Under a
# second; needs only the CLI (the plugin's path need not exist).
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
[ -x "$NG" ] || skip_all "$NG not built"
T=$(mktemp -d /tmp/ng-doctor-pyxis.XXXXXX)
trap 'rm -rf "$T"' EXIT
pyx() {  # pyx PLUGSTACK: "STATUS|finding|fix|order evidence" of plugin.pyxis
    timeout 60 "$NG" doctor --json --plugstack "$1" --timeout 2 --deadline 20 2>/dev/null |
        python3 -c 'import json,sys
c=[c for c in json.load(sys.stdin)["checks"] if c["id"]=="plugin.pyxis"][0]
ev={e["key"]:e["value"] for e in c["evidence"]}
print("|".join([c["status"], c["finding"], c["fix"], ev.get("order","")]))'
}
mkdir -p "$T/plugstack.d"
printf 'required /usr/lib/slurm/spank_pyxis.so\noptional /usr/lib/slurm/numaguard.so verbose\n' >"$T/first.conf"
like "$(pyx "$T/first.conf")" "^OK\|numaguard after pyxis: its task_init runs inside the container.*\|\|pyxis at line 1, numaguard at line 2 \\(of plugstack.conf" \
    "pyxis, then numaguard: OK, what that order means"
printf '# numaguard first\noptional numaguard.so\ninclude %s/plugstack.d/*.conf\n' "$T" >"$T/after.conf"
printf 'required spank_pyxis.so runtime_path=/run/pyxis\n' >"$T/plugstack.d/pyxis.conf"
like "$(pyx "$T/after.conf")" "^WARN\|numaguard is listed before pyxis in plugstack.conf\|list numaguard after spank_pyxis.so in plugstack.conf.*\|pyxis at line 3, numaguard at line 2 \\(of plugstack.conf" \
    "numaguard, then pyxis (through an include): WARN, the fix names the order"
printf 'optional numaguard.so\n' >"$T/none.conf"
like "$(pyx "$T/none.conf")" "^OK\|no pyxis in plugstack.conf: nothing to order\|\|$" "no pyxis: nothing to order"
done_testing
