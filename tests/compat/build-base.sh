#!/bin/sh
# Build the reference release the compat suites compare against.
#
#   sh tests/compat/build-base.sh      prints the path of the built tree
#
# The commit is tests/compat/base (one full commit id), or NG_COMPAT_BASE
# (any revision git knows). Its sources come from git (git archive, so the
# working tree is never touched) and build with their own Makefile into
# their own build/ directory:
#
#   $BUILD/compat/<commit>/src/          the reference sources
#   $BUILD/compat/<commit>/src/build/    numaguard, numaguard.so (make all)
#   $BUILD/compat/<commit>/build.log     the reference build's output
#   $BUILD/compat/<commit>/stamp         written last: the cache is complete
#
# A complete cache is reused. Exit status: 0 built (path on stdout);
# 77 cannot build here (not a git checkout, git missing, commit absent:
# one line on stderr; callers print a TAP skip); 1 the build failed.
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$top" || exit 1
case $BUILD in /*) build=$BUILD ;; *) build=$top/$BUILD ;; esac

skip() { echo "compat: $*" >&2; exit 77; }

want=${NG_COMPAT_BASE:-$(sed -n '1{s/[[:space:]]//g;p;}' tests/compat/base 2>/dev/null)}
[ -n "$want" ] || skip "no reference commit (tests/compat/base is missing or empty)"
command -v git >/dev/null 2>&1 || skip "git is not installed; the reference $want comes from git"
# The tree itself must be the checkout: a tarball unpacked inside some other
# repository must not build that repository's commit.
if ! gtop=$(git -C "$top" rev-parse --show-toplevel 2>&1) ||
        [ "$(cd "$gtop" 2>/dev/null && pwd -P)" != "$top" ]; then
    # git's own reason when it has one other than "not a git repository"
    # (e.g. a checkout owned by another user: "dubious ownership").
    case $gtop in
        *"not a git repository"* | /*) why="" ;;
        *) why=" (git: $(printf '%s' "$gtop" | head -n 1 | cut -c1-120))" ;;
    esac
    skip "not a git checkout (a release tarball?): cannot build the reference $want$why"
fi
if ! commit=$(git -C "$top" rev-parse --verify -q "$want^{commit}"); then
    if [ "$(git -C "$top" rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
        skip "reference commit $want is not in this shallow clone (run: git fetch --unshallow)"
    fi
    skip "reference commit $want is not in this repository (git fetch the branch that has it)"
fi

cache=$build/compat/$commit
if [ -f "$cache/stamp" ] && [ -x "$cache/src/build/numaguard" ]; then
    echo "$cache/src"
    exit 0
fi
mkdir -p "$build/compat" || exit 1
# Two suites may ask at once (two run-all.sh on one build dir): one builds,
# the other waits and then finds the stamp.
exec 9>"$build/compat/.lock"
command -v flock >/dev/null 2>&1 && flock 9
if [ -f "$cache/stamp" ] && [ -x "$cache/src/build/numaguard" ]; then
    echo "$cache/src"
    exit 0
fi
rm -rf "$cache"
mkdir -p "$cache/src" || exit 1
short=$(echo "$commit" | cut -c1-7)
echo "compat: building reference $short into $cache (make all, once)" >&2
if ! git -C "$top" archive "$commit" | tar -xf - -C "$cache/src"; then
    echo "compat: git archive $commit failed" >&2
    exit 1
fi
# Its own Makefile and build/ directory: nothing from the caller's make
# (BUILD, SAN, MAKEFLAGS and its jobserver) may leak into it. CFLAGS and
# friends are honoured as by the tree's own build.
t0=$(date +%s)
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u BUILD \
        make -C "$cache/src" -j2 BUILD=build all >"$cache/build.log" 2>&1; then
    echo "compat: building reference $short failed; last lines of $cache/build.log:" >&2
    tail -n 15 "$cache/build.log" | sed 's/^/compat:   /' >&2
    exit 1
fi
if [ ! -x "$cache/src/build/numaguard" ]; then
    echo "compat: reference $short built no build/numaguard" >&2
    exit 1
fi
echo "$commit built in $(( $(date +%s) - t0 ))s" >"$cache/stamp"
echo "$cache/src"
