#!/usr/bin/python3
"""The peer for bench-train-vs-ddp.sh and bench-gradient-wire.sh: PyTorch
DistributedDataParallel (gloo) training the same model on the same synthetic batches that
`paraxis train` uses, optionally with a communication hook (fp16 compression, PowerSGD), as a
link-bound DDP user would run it. Launched by mpirun (rank and size from OpenMPI's
environment); prints 'samples_per_second N' on rank 0."""
import argparse
import gzip
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision


def small_cnn(classes):
    layers, channels = [], 3
    for i in range(4):
        out = 32 << i
        layers += [nn.Conv2d(channels, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
        channels = out
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes))


def lenet(classes):
    """paraxis's zoo LeNet (graph/zoo/small.cpp), layer for layer."""
    return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 256), nn.ReLU(), nn.Dropout(0.25), nn.Linear(256, classes))


def fashion_mnist(kind):
    """Debian's dataset-fashion-mnist, normalised as paraxis's reader does (train/dataset.cpp)."""
    root = "/usr/share/datasets/fashion-mnist"
    with gzip.open(f"{root}/{kind}-images-idx3-ubyte.gz") as f:
        images = torch.frombuffer(bytearray(f.read()[16:]), dtype=torch.uint8).view(-1, 1, 28, 28)
    with gzip.open(f"{root}/{kind}-labels-idx1-ubyte.gz") as f:
        labels = torch.frombuffer(bytearray(f.read()[8:]), dtype=torch.uint8).long()
    return (images.float() / 255.0 - 0.2860) / 0.3530, labels


def train_epochs(ddp, opt, a, rank, world):
    """Epochs of Fashion-MNIST, each rank a disjoint shard of a per-epoch permutation; rank 0
    prints one JSON line per epoch: test accuracy and the seconds so far (training and the
    test pass, as paraxis's epoch report counts them)."""
    x, y = fashion_mnist("train")
    tx, ty = fashion_mnist("t10k")
    loss_fn = nn.CrossEntropyLoss()
    per_rank = len(x) // world // a.batch * a.batch
    elapsed = 0.0
    for epoch in range(a.epochs):
        order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch + 1000 * (a.seed - 1)))
        mine = order[rank * per_rank:(rank + 1) * per_rank]
        dist.barrier()
        start = time.perf_counter()
        ddp.train()
        for i in range(0, per_rank, a.batch):
            idx = mine[i:i + a.batch]
            opt.zero_grad()
            loss_fn(ddp(x[idx]), y[idx]).backward()
            opt.step()
        ddp.eval()
        with torch.no_grad():
            correct = sum(int((ddp.module(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum()) for i in range(0, len(tx), 1000))
        dist.barrier()
        elapsed += time.perf_counter() - start
        if rank == 0:
            print(json.dumps({"epoch": epoch + 1, "test_accuracy": correct / len(tx), "seconds": elapsed}), flush=True)


def register_hook(ddp, a):
    """PowerSGD starts compressing after the warm-up iterations (it needs at least 2 plain
    ones), so every timed iteration is compressed."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    if a.hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif a.hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=a.powersgd_rank,
                                            start_powerSGD_iter=max(2, a.powersgd_start or a.warmup))
        ddp.register_comm_hook(state, in_bucket_order(powerSGD_hook.powerSGD_hook))


def in_bucket_order(hook):
    """PowerSGD chains several allreduces per bucket in future callbacks; the callbacks of
    different buckets race, ranks then issue gloo collectives in different orders and gloo
    aborts (EnforceNotMet "op.preamble.length <= op.nbytes", measured here). Each bucket's
    chain starts once the previous bucket's has finished, so every rank keeps one order; the
    chains still overlap the backward pass that produces the next buckets."""
    last = [None]

    def ordered(state, bucket):
        if last[0] is not None and bucket.index() != 0:
            last[0].wait()
        last[0] = hook(state, bucket)
        return last[0]
    return ordered


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="small-cnn")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--channels-last", action="store_true", help="NHWC model and input (paraxis's layout)")
    p.add_argument("--hook", choices=["none", "fp16", "powersgd"], default="none",
                   help="DDP communication hook: fp16_compress_hook or powerSGD_hook")
    p.add_argument("--powersgd-rank", type=int, default=4, help="PowerSGD's matrix approximation rank")
    p.add_argument("--powersgd-start", type=int, default=0,
                   help="plain iterations before PowerSGD compresses (default: the warm-up iterations)")
    p.add_argument("--epochs", type=int, default=0, help="train LeNet on Fashion-MNIST for this many epochs instead")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1, help="seed of the weights and of the epochs' shuffles")
    a = p.parse_args()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", 0))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    if "GLOO_SOCKET_IFNAME" not in os.environ:  # namespace hosts: use the shaped link
        links = [n for n in os.listdir("/sys/class/net") if n.startswith("pxv")]
        if links:
            os.environ["GLOO_SOCKET_IFNAME"] = links[0]
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(a.seed)
    if a.epochs > 0:
        model = lenet(10)
    elif a.model == "small-cnn":
        model = small_cnn(10)
    else:
        model = torchvision.models.resnet18(num_classes=10)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
    ddp = nn.parallel.DistributedDataParallel(model)
    register_hook(ddp, a)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.9)
    if a.epochs > 0:
        train_epochs(ddp, opt, a, rank, world)
        dist.destroy_process_group()
        return
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=g)
    y = torch.randint(10, (a.batch,), generator=g)
    if a.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    loss_fn = nn.CrossEntropyLoss()
    start = None
    for i in range(a.warmup + a.iterations):
        if i == a.warmup:
            dist.barrier()
            start = time.perf_counter()
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
    dist.barrier()
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"samples_per_second {world * a.batch * a.iterations / elapsed:.1f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
