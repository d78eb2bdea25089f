# shellcheck shell=sh
# What the CLI comparisons of tests/compat start with (t-compat.sh,
# t-unsigned-char.sh; sourced): BUILD (default build), top (the tree, the
# working directory from here on), build (BUILD made absolute), and a
# skip of the whole suite when the CLI is not built or python3 is missing.
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
case $BUILD in /*) build=$BUILD ;; *) build=$top/$BUILD ;; esac
if [ ! -x "$build/numaguard" ]; then
    echo "1..0 # SKIP $BUILD/numaguard is not built (make all)"
    exit 0
fi
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 is missing"; exit 0; }
