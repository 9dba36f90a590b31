#!/usr/bin/python3
"""Compares a paraxis zoo model with torchvision's definition, layer by layer.

Runs torchvision's model on a dummy batch with forward hooks on every leaf module, then
checks `paraxis models show NAME --json`: every leaf module that runs exactly once must be a
paraxis layer of the same name, kind, per-sample output shape and parameter count, and the
total parameter counts must be equal. Modules that run several times (torchvision reuses one
ReLU per residual block) have no single output shape and are skipped.

usage: torchvision_compare.py PARAXIS MODEL   (MODEL: alexnet, vgg11, vgg16, resnet18, ..., inception_v3)
"""
import json
import subprocess
import sys

import torch
import torchvision

KINDS = {
    torch.nn.Conv2d: "conv",
    torch.nn.Linear: "fc",
    torch.nn.BatchNorm2d: "batchnorm",
    torch.nn.MaxPool2d: "maxpool",
    torch.nn.AvgPool2d: "avgpool",
    torch.nn.AdaptiveAvgPool2d: "adaptive_avgpool",
    torch.nn.Dropout: "dropout",
    torch.nn.ReLU: "relu",
}


def torchvision_layers(name):
    size = 299 if name == "inception_v3" else 224
    kwargs = {"init_weights": False} if name == "inception_v3" else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    # Train mode so that Inception-v3 runs its auxiliary classifier; batch 2 for batch-norm.
    model.train()
    calls, shapes = {}, {}

    def hook(module_name):
        def record(_module, _inputs, output):
            calls[module_name] = calls.get(module_name, 0) + 1
            shapes[module_name] = list(output.shape[1:])
        return record

    leaves = {}
    for module_name, module in model.named_modules():
        if len(list(module.children())) == 0:
            leaves[module_name] = module
            module.register_forward_hook(hook(module_name))
    with torch.no_grad():
        model(torch.zeros(2, 3, size, size))
    total = sum(p.numel() for p in model.parameters())
    return leaves, calls, shapes, total


def main():
    paraxis, name = sys.argv[1], sys.argv[2]
    leaves, calls, shapes, total = torchvision_layers(name)
    report = json.loads(subprocess.run([paraxis, "models", "show", name, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    layers = {layer["name"]: layer for layer in report["layers"]}
    failures, compared = [], 0
    for module_name, module in leaves.items():
        if calls.get(module_name, 0) != 1:
            continue
        ours = layers.get(module_name)
        if ours is None:
            failures.append(f"{module_name}: torchvision has it, paraxis does not")
            continue
        params = sum(p.numel() for p in module.parameters())
        expected_kind = KINDS.get(type(module), "?")
        checks = [("kind", ours["kind"], expected_kind), ("output", ours["output"], shapes[module_name]),
                  ("params", ours["params"], params)]
        for what, got, want in checks:
            if got != want:
                failures.append(f"{module_name}: {what} paraxis {got}, torchvision {want}")
        compared += 1
    if report["totals"]["params"] != total:
        failures.append(f"total params: paraxis {report['totals']['params']}, torchvision {total}")
    print(f"{name}: compared {compared} layers; parameters paraxis {report['totals']['params']:,}, "
          f"torchvision {total:,}")
    for failure in failures:
        print("FAIL:", failure)
    if compared < 5:
        print("FAIL: too few layers compared; the hooks did not run")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
