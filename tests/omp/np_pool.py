"""numpy in a thread pool (tests/e2e/t-omp-adaptive.sh, under a time
limit): THREADS workers each multiply and solve ROUNDS times, after and
before a single caller, PASSES times (default 1; S: the median pass, see
torch_pool.py). With OpenBLAS's OpenMP build its GEMM hands out
omp_get_max_threads() jobs and spin-waits for each: a team smaller than
that would hang. Prints "ok bad=N secs=S" (bad: wrong products)."""
import sys, time, numpy as np
from concurrent.futures import ThreadPoolExecutor
n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
passes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rng = np.random.default_rng(0)
a = rng.standard_normal((size, size)); b = rng.standard_normal((size, size))
ref = a @ b
def work(i):
    bad = 0
    for _ in range(rounds):
        c = a @ b
        bad += not np.allclose(c, ref)
        np.linalg.solve(a + size * np.eye(size), b)
    return bad
secs, bad = [], 0
for _ in range(passes):
    t = time.time()
    c0 = a @ b   # a single caller first
    with ThreadPoolExecutor(n) as ex:
        bad += sum(ex.map(work, range(n)))
    c1 = a @ b   # and after the pool
    secs.append(time.time() - t)
print("ok bad=%d secs=%.3f" % (bad, sorted(secs)[len(secs) // 2]))
