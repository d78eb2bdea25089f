#!/bin/sh
# make check-hwloc-next: the hwloc 3.0 build ($BUILD) against the hwloc 2.x
# build ($NG_HWLOC_BASE) over the whole corpus: topo, plan and exec
# (--json, text, run), the live machine and the error cases of
# tests/compat/compat.py, exit status, stdout and stderr byte for byte.
# The 1.x XMLs of tests/topologies reach the 3.0 build as their 2.x
# conversions ($NG_HWLOC_V2DIR): hwloc 3 reads no 1.x XML. A difference
# passes only when tests/hwloc-next/differences.tsv explains it.
# Run by tests/hwloc-next/check-hwloc-next.sh; elsewhere it skips.
if [ -z "${NG_HWLOC_BASE:-}" ] || [ -z "${NG_HWLOC_V2DIR:-}" ]; then
    echo "1..0 # SKIP make check-hwloc-next runs it"
    exit 0
fi
cd "${NG_HWLOC_REPO:-$(dirname "$0")/../..}" || exit 1
hw=$("$NG_HWLOC_BASE" --version | sed -n 's/^hwloc \([^ ]*\) running.*/\1/p')
exec python3 tests/compat/compat.py --base "$NG_HWLOC_BASE" --new "$BUILD/numaguard" \
    --base-name "the hwloc $hw build" --new-topologies "$NG_HWLOC_V2DIR" \
    --differences tests/hwloc-next/differences.tsv --jobs "${NG_COMPAT_JOBS:-2}"
