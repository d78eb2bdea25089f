# Sourced by bench/pool.sh and bench/adaptive.sh: the figures their
# tables print.
# med <FILE: the median of the numbers, as an integer.
med() { python3 bench/stats.py "$@" | sed 's/\.[0-9]*$//'; }
# paired A B: the median over the rounds of A's figure / B's figure in the
# same round (line i of each file): a shared machine's load drifts between
# rounds, less within one.
paired() {
    python3 -c 'import statistics, sys
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
r = [x / y for x, y in zip(a, b) if y > 0]
print("%.2f" % (statistics.median(r) if r else 0))' "$1" "$2"
}
# ratio A B: A / B with two decimals (0 when B is 0).
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('%.2f' % (a / b if b else 0))" "$1" "$2"; }
# atleast X Y: true when X >= Y.
atleast() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)" "$1" "$2"; }
