"""import paraxis (issue #17) against the paraxis executable: the same documents, plain objects.

Usage: /usr/bin/python3 paraxis_test.py PARAXIS_EXECUTABLE MEASURED_CSV (with the built package
on PYTHONPATH). Prints "N passed, M failed"."""
import json
import subprocess
import sys

import paraxis

executable, measured = sys.argv[1], sys.argv[2]
results = []


def check(name, condition):
    results.append(bool(condition))
    if not condition:
        print(f"FAIL: {name}")


def command(*args):
    return json.loads(subprocess.run([executable, *args, "--json"], check=True, capture_output=True, text=True).stdout)


estimates = paraxis.plan(model="resnet50", cluster="abci", gpus=[64])
check("plan's best strategy on 64 GPUs", estimates[0]["strategy"]["name"] == "data")
check("plan equals the command's --json",
      estimates == command("plan", "--model", "resnet50", "--cluster", "abci", "--gpus", "64")["estimates"])
swept = paraxis.plan(model="resnet50", cluster="abci", gpus=[8, 16], strategies=["data", "filter"], batch_per_gpu=32)
check("options: a list is joined, underscores are dashes",
      {e["strategy"]["name"] for e in swept} == {"data", "filter"} and
      {e["gpus"] for e in swept} == {8, 16})
models = {m["name"]: m for m in paraxis.models()}
check("models: ResNet-50's parameters", models["resnet50"]["params"] == 25557032)
check("clusters: the presets", {"abci", "summit", "local"} <= {c["name"] for c in paraxis.clusters()})
placed = paraxis.place(model="inception-v3", devices=2, method="list")
check("place: a makespan under one device's step", 0 < placed["makespan_s"] < placed["one_device_s"])
report = paraxis.validate(measured)
check("validate: a finite mean error", 0 <= report["mean_absolute_error"] < 10)
try:
    paraxis.plan(model="nosuch")
    check("a bad model raises paraxis.Error", False)
except paraxis.Error as e:
    check("a bad model raises paraxis.Error (a ValueError) naming it", isinstance(e, ValueError) and "nosuch" in str(e))

print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
sys.exit(0 if all(results) else 1)
