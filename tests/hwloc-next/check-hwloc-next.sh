#!/bin/sh
# make check-hwloc-next: numaguard against the next hwloc (3.0, the
# vendored snapshot of hwloc's master), beside the hwloc 2.x build.
#   1. builds the snapshot (../shared/vendor/hwloc-master-*.tar.gz, or
#      NG_HWLOC_NEXT_TARBALL) under $BUILD/hwloc-next/ (never installed
#      system-wide; rebuilt only when the tarball changes);
#   2. builds numaguard against it into $BUILD/hwloc-next/ng (rpath: the
#      binaries run with that libhwloc, whatever the system has);
#   3. makes the corpus hwloc 3.0 reads: tests/topologies, its hwloc 1.x
#      XMLs converted to 2.x by the system's hwloc 2 lstopo (hwloc 3 reads
#      no 1.x XML), in a scratch tree $BUILD/hwloc-next/tree;
#   4. runs there the unit suites and t-cli with the 3.0 build, and the two
#      hwloc-next suites (tests/hwloc-next/t-hwloc-next-*.sh): topo, plan
#      and exec over the whole corpus against the 2.x build ($BUILD), byte
#      for byte, and the XML versions each build reads or refuses.
# Prints "N passed, N failed" last. docs/testing.md, "hwloc 3.0".
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
BUILD=${BUILD:-build}
case $BUILD in /*) base=$BUILD ;; *) base=$top/$BUILD ;; esac
nx=$base/hwloc-next
say() { echo "numaguard check-hwloc-next: $*"; }
die() { say "$*" >&2; echo "0 passed, 1 failed"; exit 1; }

tarball=${NG_HWLOC_NEXT_TARBALL:-}
if [ -z "$tarball" ]; then
    for t in "$top"/../shared/vendor/hwloc-master-*.tar.gz; do
        [ -f "$t" ] && tarball=$t
    done
fi
[ -n "$tarball" ] && [ -f "$tarball" ] ||
    die "no hwloc snapshot: ../shared/vendor/hwloc-master-*.tar.gz is missing (or set NG_HWLOC_NEXT_TARBALL)"
for tool in autoreconf automake libtoolize python3 lstopo-no-graphics; do
    command -v $tool >/dev/null 2>&1 || die "$tool is missing: run 'make deps' (as root)"
done
[ -x "$base/numaguard" ] || die "$BUILD/numaguard (the hwloc 2.x build) is missing: run make"
lstopo_v=$(lstopo-no-graphics --version 2>/dev/null | awk '{print $NF}')
case $lstopo_v in 2.*) ;; *) die "lstopo-no-graphics is hwloc '$lstopo_v', not 2.x: it converts the 1.x XMLs" ;; esac

# 1. hwloc, once per tarball.
stamp="$(basename "$tarball") $(wc -c <"$tarball")"
if [ "$(cat "$nx/prefix/.stamp" 2>/dev/null)" != "$stamp" ]; then
    say "build $(basename "$tarball") into $nx/prefix (about a minute, log: $nx/hwloc-build.log)"
    rm -rf "$nx/src" "$nx/prefix"
    mkdir -p "$nx/src" || die "cannot create $nx"
    tar xzf "$tarball" -C "$nx/src" --strip-components=1 || die "cannot unpack $tarball"
    # The switches of the tarball's README: no GPU runtimes, X or libxml2.
    if ! (cd "$nx/src" && ./autogen.sh && ./configure --prefix="$nx/prefix" --disable-cairo \
            --disable-libxml2 --disable-opencl --disable-cuda --disable-nvml --disable-rsmi \
            --disable-levelzero --disable-gl && make -j"$(nproc)" && make install) \
            >"$nx/hwloc-build.log" 2>&1; then
        tail -n 20 "$nx/hwloc-build.log" >&2
        die "the hwloc snapshot did not build ($nx/hwloc-build.log)"
    fi
    echo "$stamp" >"$nx/prefix/.stamp"
fi
hw_inc=$nx/prefix/include
hw_lib=$nx/prefix/lib

# 2. numaguard against it.
say "build numaguard against $(sed -n 's/^#define HWLOC_VERSION "\(.*\)"/hwloc \1/p' "$hw_inc/hwloc/autogen/config.h") into $nx/ng"
make --no-print-directory BUILD="$nx/ng" CPPFLAGS="-I$hw_inc ${CPPFLAGS:-}" \
    LDFLAGS="-L$hw_lib -Wl,-rpath,$hw_lib ${LDFLAGS:-}" all tests >"$nx/ng-build.log" 2>&1 || {
    grep -E 'error|warning' "$nx/ng-build.log" | head -n 20 >&2
    die "numaguard did not build against the hwloc snapshot ($nx/ng-build.log)"
}
"$nx/ng/numaguard" --version | grep -q '^hwloc 3\.' ||
    die "$nx/ng/numaguard does not run with hwloc 3: $("$nx/ng/numaguard" --version | grep hwloc)"

# 3. The corpus for hwloc 3.0: the scratch tree links everything of the
# repository but tests/topologies, whose 1.x XMLs are replaced by their 2.x
# conversions (every object kept: I/O, disallowed, Misc).
rm -rf "$nx/tree" "$nx/v2"
mkdir -p "$nx/tree/tests/topologies" "$nx/v2" "$nx/snapshot-xml"
for e in "$top"/* "$top"/.ci; do
    name=$(basename "$e")
    [ "$name" = tests ] || [ "$name" = "$(basename "$base")" ] || ln -s "$e" "$nx/tree/$name"
done
for e in "$top"/tests/*; do
    [ "$(basename "$e")" = topologies ] || ln -s "$e" "$nx/tree/tests/"
done
for f in "$top"/tests/topologies/*; do
    name=$(basename "$f")
    case $name in
        *.xml) ;;
        *) ln -s "$f" "$nx/tree/tests/topologies/"; continue ;;
    esac
    if grep -q '<topology version=' "$f"; then
        ln -s "$f" "$nx/tree/tests/topologies/"
    else
        lstopo-no-graphics --input "$f" --filter all:all --disallowed --of xml -f "$nx/v2/$name" \
            2>>"$nx/convert.log" || die "hwloc $lstopo_v cannot convert $name ($nx/convert.log)"
        ln -s "$nx/v2/$name" "$nx/tree/tests/topologies/"
    fi
done
# hwloc's own test XMLs of the snapshot (version 3.0): the 2.x build
# refuses them in one line, the 3.0 build plans them.
tar xzf "$tarball" -C "$nx/snapshot-xml" --strip-components=4 --wildcards '*/tests/hwloc/xml/*.xml' ||
    die "no tests/hwloc/xml/*.xml in $tarball"
say "corpus: $(ls "$nx/tree/tests/topologies" | grep -c '\.xml$') topologies ($(ls "$nx/v2" | wc -l) converted from hwloc 1.x XML), $(ls "$nx/snapshot-xml" | wc -l) hwloc test XMLs"

# 4. The suites, in the scratch tree, with the 3.0 build (and its tools
# first on PATH: t-cli compares --version with lstopo's).
cd "$nx/tree" || exit 2
PATH=$nx/prefix/bin:$PATH
export PATH
NG_HWLOC_BASE=$base/numaguard NG_HWLOC_BASE_BUILD=$base NG_HWLOC_V2DIR=$nx/v2 \
    NG_HWLOC_SNAPSHOT_XML=$nx/snapshot-xml NG_HWLOC_REPO=$top BUILD="$nx/ng" \
    NG_TESTS="${NG_HWLOC_NEXT_TESTS:-test_ t-cli t-hwloc-next}" exec sh tests/run-all.sh
