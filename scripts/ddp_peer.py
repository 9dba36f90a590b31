#!/usr/bin/python3
"""The peer for bench-train-vs-ddp.sh and bench-gradient-wire.sh: PyTorch
DistributedDataParallel (gloo) training the same model on the same synthetic batches that
`paraxis train` uses, optionally with a communication hook (fp16 compression, PowerSGD), as a
link-bound DDP user would run it. Launched by mpirun (rank and size from OpenMPI's
environment); prints 'samples_per_second N' on rank 0."""
import argparse
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


def register_hook(ddp, a):
    """PowerSGD starts compressing after the warm-up iterations (it needs at least 2 plain
    ones), so every timed iteration is compressed."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    if a.hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif a.hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=a.powersgd_rank,
                                            start_powerSGD_iter=max(2, a.warmup))
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)


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
    torch.manual_seed(1)
    model = small_cnn(10) if a.model == "small-cnn" else torchvision.models.resnet18(num_classes=10)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
    ddp = nn.parallel.DistributedDataParallel(model)
    register_hook(ddp, a)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
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
