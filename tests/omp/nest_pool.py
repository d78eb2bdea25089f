"""Nested pools for `numaguard check` (tests/e2e/t-omp-adaptive.sh): 8
threads each calling OpenMP regions of LIB (tests/omp/part.c) for SECONDS;
prints "ready" once they run."""
import ctypes, sys, threading, time

lib = ctypes.CDLL(sys.argv[1])
stop = time.time() + float(sys.argv[2])


def run():
    while time.time() < stop:
        lib.ng_part_teams(5)


ts = [threading.Thread(target=run) for _ in range(8)]
for t in ts:
    t.start()
print("ready", flush=True)
for t in ts:
    t.join()
