#!/usr/bin/python3
"""An ONNX file exported from torchvision by Debian's python3-torch, read by paraxis, against
paraxis's zoo model of the same network (which graph.torchvision.* holds against torchvision
itself): equal parameters and FLOPs (forward, backward data and weights), and the same layers'
output shapes: every (kind, per-sample output shape) of the zoo model's parameterised and
pooling layers appears as often in the ONNX model. The export keeps batch-norm and dropout
(training mode) and leaves the weights out (export_params=False: the file stays small; their
shapes come from the graph's inputs).

usage: onnx_compare.py PARAXIS MODEL   (alexnet, vgg16, resnet18, resnet50, inception_v3)
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

import torch
import torchvision

COMPARED = {"conv", "fc", "batchnorm", "maxpool", "avgpool", "global_avgpool", "adaptive_avgpool"}


def export(name, path):
    size = 299 if name == "inception_v3" else 224
    kwargs = {"init_weights": False} if name == "inception_v3" else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    model.train()  # batch-norm and dropout as in training; Inception-v3 with its auxiliary head
    torch.onnx.export(model, torch.randn(2, 3, size, size), path, export_params=False, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING, opset_version=13)


def show(paraxis, model):
    out = subprocess.run([paraxis, "models", "show", model, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def shapes(doc):
    # torch exports an adaptive pool to 1x1 as GlobalAveragePool and one to its input's own
    # size as a 1x1 AveragePool: the same layers.
    def kind(layer):
        if layer["kind"] != "adaptive_avgpool":
            return layer["kind"]
        return "global_avgpool" if all(d == 1 for d in layer["output"][1:]) else "avgpool"
    return collections.Counter((kind(l), tuple(l["output"])) for l in doc["layers"] if l["kind"] in COMPARED)


def main():
    paraxis, name = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, name + ".onnx")
        export(name, path)
        onnx_doc, zoo_doc = show(paraxis, path), show(paraxis, name)
    failures = 0
    for key in ("params", "forward_flops", "backward_data_flops", "backward_weight_flops"):
        a, b = onnx_doc["totals"][key], zoo_doc["totals"][key]
        ok = a == b
        print(f"{key:22} onnx {a:>16,.0f}  zoo {b:>16,.0f}  {'ok' if ok else 'DIFFERENT'}")
        failures += not ok
    a, b = shapes(onnx_doc), shapes(zoo_doc)
    if a != b:
        print("FAIL: layer output shapes differ: only in ONNX", dict(a - b), "only in the zoo", dict(b - a))
        failures += 1
    print(f"{name}: {sum(b.values())} layers compared, input {onnx_doc['input']} (zoo {zoo_doc['input']})")
    failures += onnx_doc["input"] != zoo_doc["input"]
    print(f"{5 - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


main()
