#!/bin/bash
# make bench: install what is needed, build, run every benchmark, and
# regenerate docs/performance.md (machine, date, commands, tables).
# Never part of make check. Knobs: BUILD (default build-bench), BENCH_RUNS
# (srun runs per launch configuration, default 30), BENCH_OMP_RUNS (5),
# BENCH_FRESH (fresh processes per load figure, 20), BENCH_OUT.
# BENCH_ONLY=adaptive: build, run section f alone (bench/adaptive.sh) and
# splice it, with its own date, revision and load, into the existing
# $BENCH_OUT in place of the old f (and the static tail); the other
# sections and the "This run" header stay those of the last whole run.
# BENCH_ONLY=real: the same for section h (bench/real.sh, real programs).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export BUILD=${BUILD:-build-bench}
OUT=${BENCH_OUT:-docs/performance.md}
ONLY=${BENCH_ONLY:-}
case $ONLY in
"") ;;
adaptive) grep -q '^### f\. ' "$OUT" 2>/dev/null || { echo "bench: BENCH_ONLY=adaptive: no section f in $OUT" >&2; exit 2; } ;;
real) grep -q '^## Reading the figures' "$OUT" 2>/dev/null || { echo "bench: BENCH_ONLY=real: no \"Reading the figures\" in $OUT" >&2; exit 2; } ;;
*) echo "bench: BENCH_ONLY=$ONLY: the valid values are adaptive, real or empty (everything)" >&2; exit 2 ;;
esac
export BENCH_WORK
BENCH_WORK=$(mktemp -d /tmp/ng-bench.XXXXXX)
chmod 755 "$BENCH_WORK" # munged refuses sockets under a private (0700) parent
export BENCH_BIN=$top/$BUILD/bench
start=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
sh tests/install-deps.sh bench || exit 1
make --no-print-directory BUILD="$BUILD" all >/dev/null || exit 1
mkdir -p "$BENCH_BIN"
CC=${CC:-cc}
for p in bench_topo bench_apply; do
    $CC -O2 -g -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib/include -Ilib -Ibench -o "$BENCH_BIN/$p" \
        "bench/$p.c" "$BUILD/libnumaguard.a" -lhwloc -lnuma -ldl || exit 1
done
$CC -O2 -std=c11 -Wall -Wextra -Werror -fopenmp -o "$BENCH_BIN/omp_barrier" bench/omp_barrier.c || exit 1
$CC -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -pthread -o "$BENCH_BIN/omp_pool" \
    tests/helpers/omp_pool.c || exit 1
make --no-print-directory BUILD="$BUILD" tests >/dev/null || exit 1
clang -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fopenmp -pthread -o "$BENCH_BIN/omp_pool_clang" \
    tests/helpers/omp_pool.c || exit 1

# only LETTER SCRIPT WHAT: run section LETTER (bench/SCRIPT) alone and
# splice it, with its own date, revision and load, into $OUT: in place of
# the old one (everything from its heading to the next heading of level 2
# or 3), or, where there is none, before the static tail ("## Reading the
# figures" on). Section f also puts the static tail back (it was written
# after f before section h existed).
only() {
    local letter=$1 script=$2 what=$3 rc=0 rev
    rev="$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
    echo "bench: $what ($letter) alone, spliced into $OUT" >&2
    bash "bench/$script" "$BENCH_WORK/$letter.md" || { rc=1; echo "bench: a target was missed (see $letter.)" >&2; }
    {
        sed -n '1,2p' "$BENCH_WORK/$letter.md"
        echo "This section alone: \`BENCH_ONLY=$ONLY make bench\`, $(date -u '+%Y-%m-%d %H:%M UTC'),"
        echo "numaguard $rev, load average (1/5/15 min) before: $load_before, after:"
        echo "$(cut -d' ' -f1-3 /proc/loadavg), $(( $(date +%s) - start )) s. The other sections are from the run above."
        echo
        sed '1,2d' "$BENCH_WORK/$letter.md"
    } >"$BENCH_WORK/$letter-only.md"
    python3 - "$OUT" "$BENCH_WORK/$letter-only.md" bench/performance-tail.md "$letter" <<'PY' || exit 1
import re, sys
doc = open(sys.argv[1]).read()
frag = open(sys.argv[2]).read()
tail = open(sys.argv[3]).read()
letter = sys.argv[4]
t = doc.find("\n## Reading the figures")
if t < 0:
    sys.exit("bench: the tail not found in " + sys.argv[1])
doc, old_tail = doc[:t + 1], doc[t + 1:]
m = re.search(r"^### " + letter + r"\. .*?(?=^##+ |\Z)", doc, re.M | re.S)
doc = doc[:m.start()] + frag + doc[m.end():] if m else doc + frag
open(sys.argv[1], "w").write(doc + (tail if letter == "f" else old_tail))
PY
    echo "bench: wrote section $letter into $OUT" >&2
    rm -rf "$BENCH_WORK"
    exit $rc
}
[ "$ONLY" = real ] && only h real.sh "real programs under --omp-guard=adaptive"
[ "$ONLY" = adaptive ] && only f adaptive.sh "--omp-guard=adaptive"

echo "bench: micro benchmarks" >&2
bash bench/micro.sh "$BENCH_WORK/micro.md" || exit 1
echo "bench: worker pool and ranks under --omp-guard (e)" >&2
pool_rc=0
bash bench/pool.sh "$BENCH_WORK/pool.md" || { pool_rc=1; echo "bench: a worker-pool target was missed (see e.)" >&2; }
echo "bench: --omp-guard=adaptive (f)" >&2
adaptive_rc=0
bash bench/adaptive.sh "$BENCH_WORK/adaptive.md" || { adaptive_rc=1; echo "bench: an adaptive target was missed (see f.)" >&2; }
echo "bench: PyTorch DDP under --omp-guard=adaptive (g)" >&2
ddp_rc=0
bash bench/ddp.sh "$BENCH_WORK/ddp.md" || { ddp_rc=1; echo "bench: the DDP run missed a check (see g.)" >&2; }
echo "bench: real programs under --omp-guard=adaptive (h)" >&2
real_rc=0
bash bench/real.sh "$BENCH_WORK/real.md" || { real_rc=1; echo "bench: a real-programs target was missed (see h.)" >&2; }
echo "bench: Slurm benchmarks (a, d)" >&2
slurm_rc=0
bash bench/slurm.sh "$BENCH_WORK/slurm.md" || { slurm_rc=1; echo "bench: Slurm benchmarks failed" >&2; }
[ -s "$BENCH_WORK/slurm.md" ] || echo "(Slurm benchmarks did not run: see the bench output.)" >"$BENCH_WORK/slurm.md"
secs=$(( $(date +%s) - start ))
# Before the redirection below truncates $OUT (a tracked file), which would
# make every run look like one with uncommitted changes.
rev="$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
{
    cat bench/performance-head.md
    echo
    echo "## This run"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), $secs s for the whole \`make bench\`"
    echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1),"\
         "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r),"\
         "$(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "- versions: hwloc $(hwloc-info --version 2>/dev/null | awk '{print $2}'),"\
         "Slurm $(dpkg-query -W -f='${Version}' slurmd 2>/dev/null), $($CC --version | head -1)"
    echo "- numaguard: $rev, built into $BUILD/"
    echo "- load average (1/5/15 min) before: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"\
         "(anything else running on the node shows up in every figure below)"
    echo "- command: \`make bench\` (bench/run.sh; bench/micro.sh, bench/slurm.sh, bench/pool.sh, bench/adaptive.sh, bench/ddp.sh, bench/real.sh)"
    echo
    echo "## Results"
    echo
    cat "$BENCH_WORK/slurm.md" "$BENCH_WORK/micro.md" "$BENCH_WORK/pool.md" "$BENCH_WORK/adaptive.md" "$BENCH_WORK/ddp.md" \
        "$BENCH_WORK/real.md"
    cat bench/performance-tail.md
} >"$OUT"
echo "bench: wrote $OUT in $secs s" >&2
rm -rf "$BENCH_WORK"
exit $((slurm_rc | pool_rc | adaptive_rc | ddp_rc | real_rc))
