"""A small PyTorch DDP run (gloo) with DataLoader workers, for make bench
(bench/ddp.sh): each rank trains an MLP for EPOCHS epochs on random data
with 2 DataLoader workers, and reports where it and its workers ran.

Prints per rank one line:
  rank R cpus LIST threads N governed 0|1 workers W1;W2 secs S loss A->B
(cpus: the rank's affinity; workers: each worker's affinity and whether
the governor is mapped in it, as "cpus/governed")."""
import os, sys, time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
OUT = sys.argv[2] if len(sys.argv) > 2 else "/tmp"


def cpus():
    s = sorted(os.sched_getaffinity(0))
    return ",".join(map(str, s))


def governed():
    with open("/proc/self/maps") as f:
        return int("libnumaguard-omp.so" in f.read())


def worker_init(i):
    rank = os.environ.get("RANK", "0")
    with open(os.path.join(OUT, "worker.%s.%d" % (rank, i)), "w") as f:
        f.write("%s/%d\n" % (cpus(), governed()))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    g = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(4096, 256, generator=g), torch.randint(0, 10, (4096,), generator=g))
    loader = DataLoader(data, batch_size=64, num_workers=2, sampler=DistributedSampler(data),
                        worker_init_fn=worker_init)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    lossf = torch.nn.CrossEntropyLoss()
    first = last = None
    t0 = time.time()
    for epoch in range(EPOCHS):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            loss = lossf(ddp(x), y)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
            last = loss.item()
    secs = time.time() - t0
    workers = ";".join(open(os.path.join(OUT, "worker.%d.%d" % (rank, i))).read().strip()
                       for i in range(2))
    print("rank %d cpus %s threads %d governed %d workers %s secs %.2f loss %.3f->%.3f"
          % (rank, cpus(), torch.get_num_threads(), governed(), workers, secs, first, last), flush=True)
    dist.destroy_process_group()


main()
