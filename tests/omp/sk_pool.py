"""scikit-learn in a thread pool (tests/e2e/t-omp-adaptive.sh, bench/real.sh).
sk_pool.py [THREADS [ROUNDS [PASSES]]]: THREADS jobs of joblib's threading
backend each fit a KMeans (its Lloyd iterations are OpenMP loops with
num_threads(n), n read from omp_get_max_threads() as the fit starts) ROUNDS
times, after one fit alone.
Prints "ok inertia=X secs=S" (S: the pool's time, the fit alone not counted;
with PASSES > 1 the pool runs PASSES times and S is the median pass, see
torch_pool.py; X: the first pass's)."""
import sys, time
import numpy as np
from joblib import Parallel, delayed
from sklearn.cluster import KMeans

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 8
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
passes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
X = np.random.default_rng(0).standard_normal((4000, 16))

def fit(seed):
    s = 0.0
    for r in range(rounds):
        s += KMeans(n_clusters=8, n_init=1, max_iter=50, random_state=seed * 100 + r).fit(X).inertia_
    return s

fit(0)   # one caller alone first (not timed: the pool's figure is the pool's)
secs, totals = [], []
for _ in range(passes):
    t = time.time()
    totals.append(sum(Parallel(n_jobs=threads, backend="threading")(delayed(fit)(i) for i in range(threads))))
    secs.append(time.time() - t)
print("ok inertia=%.0f secs=%.3f" % (totals[0], sorted(secs)[len(secs) // 2]))
