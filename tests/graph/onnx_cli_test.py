#!/usr/bin/python3
"""ONNX models at the command line (issue #17): a small network exported by Debian's python3-torch
is shown, planned and trained like a zoo model; a node whose operator the IR lacks is refused in
one line naming the node and the operator (exit 2); a file that is not ONNX is refused in one
line (exit 2).

usage: onnx_cli_test.py PARAXIS
"""
import os
import subprocess
import sys
import tempfile

import torch

paraxis = sys.argv[1]
failures, passed = 0, 0


def run(*args):
    return subprocess.run([paraxis, *args], capture_output=True, text=True)


def expect(what, ok, detail=""):
    global failures, passed
    if ok:
        passed += 1
    else:
        failures += 1
        print(f"FAIL: {what}: {detail}")


class Decoder(torch.nn.Module):  # a transposed convolution (U-Net decoders, mesh-fcn)
    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, groups=2)

    def forward(self, x):
        return self.up(torch.relu(self.down(x)))


class Small(torch.nn.Module):
    def __init__(self, doubled=False):
        super().__init__()
        self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                            torch.nn.MaxPool2d(2))
        self.fc = torch.nn.Linear(8 * 16 * 16, 10)
        self.doubled = doubled

    def forward(self, x):
        x = self.features(x)
        if self.doubled:
            x = x * 2  # Mul: no IR layer
        return self.fc(torch.flatten(x, 1))


def export(model, path):
    model.train()
    torch.onnx.export(model, torch.randn(2, 3, 32, 32), path, export_params=False, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING, opset_version=13)


with tempfile.TemporaryDirectory() as work:
    small = os.path.join(work, "small.onnx")
    export(Small(), small)
    r = run("models", "show", small)
    expect("models show small.onnx", r.returncode == 0 and "parameters 20,730" in r.stdout, r.stdout[-300:] + r.stderr)
    r = run("plan", "--model", small, "--gpus", "8", "--top", "1")
    expect("plan --model small.onnx", r.returncode == 0 and "small" in r.stdout, r.stderr)
    r = run("train", "--model", small, "--iterations", "2", "--synthetic-samples", "16", "--batch-per-rank", "4",
            "--threads", "1", "--quiet", "--json")
    expect("train --model small.onnx", r.returncode == 0 and '"model"' in r.stdout, r.stderr[-300:])

    decoder = os.path.join(work, "decoder.onnx")
    export(Decoder(), decoder)
    r = run("models", "show", decoder, "--json")
    ok = r.returncode == 0
    if ok:
        import json
        layers = {l["kind"]: l for l in json.loads(r.stdout)["layers"]}
        up = layers.get("deconv", {})
        ok = up.get("output") == [4, 32, 32] and up.get("params") == 8 * 2 * 9 + 4
    expect("ConvTranspose: a deconv of the torch layer's shape and parameters", ok, r.stdout[-400:] + r.stderr)

    doubled = os.path.join(work, "doubled.onnx")
    export(Small(doubled=True), doubled)
    r = run("models", "show", doubled)
    lines = r.stderr.strip().splitlines()
    expect("an unsupported operator: exit 2, one line naming the node and the operator",
           r.returncode == 2 and len(lines) == 1 and "(Mul): operator not supported" in lines[0] and "node '" in lines[0]
           and not r.stdout, f"exit {r.returncode}: {r.stderr}")

    garbage = os.path.join(work, "garbage.onnx")
    with open(garbage, "w") as f:
        f.write("not a protobuf\n" * 10)
    r = run("plan", "--model", garbage)
    expect("a file that is not ONNX", r.returncode == 2 and "not an ONNX model" in r.stderr and
           len(r.stderr.strip().splitlines()) == 1, r.stderr)
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
