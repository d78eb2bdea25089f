"""Two OpenMP runtimes in one process (tests/e2e/t-omp-adaptive.sh): the
gcc build of tests/omp/part.c (libgomp) and its clang build (libomp),
loaded RTLD_LOCAL by ctypes as Python loads extension modules. Prints
"<lib> alone N" (one caller: its largest team) and "<lib> pool LAST..."
(THREADS callers at once: each caller's last team)."""
import ctypes, sys, threading

libs = sys.argv[1:3]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
loaded = [ctypes.CDLL(p) for p in libs]
for name, lib in zip(("gomp", "omp"), loaded):
    print(name, "alone", lib.ng_part_teams(20))
for name, lib in zip(("gomp", "omp"), loaded):
    last = [0] * threads
    go = threading.Barrier(threads)
    def run(i, lib=lib, last=last, go=go):
        go.wait()
        lib.ng_part_teams(30)
        last[i] = lib.ng_part_last(30)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(name, "pool", " ".join(map(str, last)))
