"""PyTorch in a thread pool (tests/e2e/t-omp-adaptive.sh, bench/real.sh).

  torch_pool.py pool THREADS ROUNDS [PASSES]   THREADS threads each run
      ROUNDS of intra-op work (a 256x256 matmul, elementwise ops over 2^18
      values: OpenMP regions in ATen, OpenBLAS's sgemm), after one caller
      alone. Prints "ok bad=N secs=S" (S: the pool's time, not the caller
      alone's; with PASSES > 1, the pool runs PASSES times one after the
      other and S is the median pass: bench/real.sh's single callers, whose
      passes vary by 10-25% within one process on a shared 2-core VM).
  torch_pool.py loader CONTEXT THREADS   the same pool running while a
      DataLoader with 2 worker processes (multiprocessing CONTEXT: fork,
      spawn, forkserver) is read: the fork case can hang in OpenBLAS's
      pthreads build (a forked worker blocks on a lock a pool thread held
      at the fork). Prints "ok batches=N secs=S".
"""
import sys, time, threading
import torch

def work(rounds, bad):
    a = torch.randn(256, 256); b = torch.randn(256, 256)
    ref = a @ b
    x = torch.randn(1 << 18)
    for _ in range(rounds):
        c = a @ b
        if not torch.allclose(c, ref, atol=1e-3):
            bad.append(1)
        y = (x * 1.5 + 2.0).relu().sum()
        del y

def pool(threads, rounds):
    bad = []
    ts = [threading.Thread(target=work, args=(rounds, bad)) for _ in range(threads)]
    for t in ts:
        t.start()
    return ts, bad

class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.full((64, 64), float(i)) @ torch.ones(64, 64)

def main():
    mode = sys.argv[1]
    t0 = time.time()
    if mode == "pool":
        threads, rounds = int(sys.argv[2]), int(sys.argv[3])
        passes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
        work(rounds, [])   # one caller alone first (not timed)
        secs, nbad = [], 0
        for _ in range(passes):
            t0 = time.time()
            ts, bad = pool(threads, rounds)
            for t in ts:
                t.join()
            secs.append(time.time() - t0)
            nbad += len(bad)
        print("ok bad=%d secs=%.3f" % (nbad, sorted(secs)[len(secs) // 2]))
    else:
        ctx, threads = sys.argv[2], int(sys.argv[3])
        ts, bad = pool(threads, 40)
        dl = torch.utils.data.DataLoader(Squares(), batch_size=8, num_workers=2,
                                         multiprocessing_context=ctx)
        n = sum(1 for _ in dl)
        for t in ts:
            t.join()
        print("ok batches=%d secs=%.2f" % (n, time.time() - t0))

if __name__ == "__main__":
    main()
