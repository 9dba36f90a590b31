#!/usr/bin/env python3
"""The peer of `paraxis train --device cuda` (scripts/gpu-check.sh): PyTorch eager on one GPU,
the same model (layer for layer), batch and optimizer (SGD, momentum 0.9, PyTorch's foreach
kernels on CUDA), synthetic data held on the GPU as paraxis holds it, NCHW and PyTorch's TF32
defaults as paraxis runs them. As paraxis does, it reads the loss every step and times the
steps after 3 warm-up ones. Prints one JSON line: model, batch, parameters, samples_per_second."""
import argparse
import json
import time

import torch
import torch.nn as nn
import torchvision


def cosmoflow(extent, channels=4, targets=4):
    """paraxis's zoo CosmoFlow (graph/zoo/science.cpp), layer for layer."""
    layers, c, e, i = [], channels, extent, 0
    while e > 4:
        out = 32 << min(i, 4)
        layers += [nn.Conv3d(c, out, 3, padding=1), nn.LeakyReLU(0.3), nn.MaxPool3d(2)]
        c, e, i = out, e // 2, i + 1
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(c * e ** 3, 128), nn.LeakyReLU(0.3), nn.Dropout(0.5),
                         nn.Linear(128, 64), nn.LeakyReLU(0.3), nn.Dropout(0.5), nn.Linear(64, targets), nn.Tanh())


def build(name, extent):
    if name == "resnet50":
        return torchvision.models.resnet50(), (3, extent, extent), nn.CrossEntropyLoss(), lambda n: torch.randint(1000, (n,))
    if name == "cosmoflow":
        return cosmoflow(extent), (4, extent, extent, extent), nn.MSELoss(), lambda n: torch.rand(n, 4) * 2 - 1
    raise SystemExit(f"eager_peer.py: unknown model '{name}' (resnet50, cosmoflow)")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--input", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--samples", type=int, default=0, help="synthetic samples (default: 256 MiB worth, 8 to 4096)")
    a = p.parse_args()
    torch.manual_seed(1)
    model, shape, loss_fn, targets = build(a.model, a.input)
    device = torch.device("cuda")
    model = model.to(device).train()
    per_sample = 4 * torch.Size(shape).numel()
    samples = a.samples or max(8, min(4096, (256 << 20) // per_sample))
    x = torch.randn(samples, *shape, device=device)
    y = targets(samples).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    warmup = 3
    for it in range(warmup + a.iterations):
        if it == warmup:
            torch.cuda.synchronize()
            start = time.perf_counter()
        idx = torch.randint(samples, (a.batch,), device=device)
        opt.zero_grad()
        loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
        loss.backward()
        opt.step()
        loss.item()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({"model": a.model, "input": a.input, "batch": a.batch, "iterations": a.iterations,
                      "parameters": sum(t.numel() for t in model.parameters()),
                      "samples_per_second": a.iterations * a.batch / seconds, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
