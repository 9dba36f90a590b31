"""paraxis from Python: the oracle and its descriptions as plain objects.

Each function runs the paraxis command of the same name in this process (no subprocess, no
MPI) with --json and returns the document's objects, so the keys are the ones
docs/json-output.md documents for the command. Keyword options are the command's options
with underscores for dashes (``batch_per_gpu=32`` is ``--batch-per-gpu 32``; ``True`` is a
bare flag; a list is joined with commas). A bad option, file or model raises
``paraxis.Error`` (a ValueError) with the command's one-line message.

    >>> import paraxis
    >>> paraxis.plan(model="resnet50", cluster="abci", gpus=[64])[0]["strategy"]["name"]
    'data'
"""
import json

from ._paraxis import Error, _run

Error.__module__ = "paraxis"  # reported as paraxis.Error

__all__ = ["Error", "plan", "place", "models", "clusters", "validate"]


def _arguments(options):
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def _document(command, options):
    return json.loads(_run([command] + _arguments(options) + ["--json"]))


def plan(model="resnet50", cluster="abci", gpus=(64,), **options):
    """Every strategy on each GPU count, best first: the 'estimates' of ``paraxis plan --json``."""
    return _document("plan", dict(model=model, cluster=cluster, gpus=gpus, **options))["estimates"]


def place(model="inception-v3", devices=2, cluster="dgx1-v100", **options):
    """One replica's operations placed on devices: ``paraxis place --json``."""
    return _document("place", dict(model=model, devices=devices, cluster=cluster, **options))


def models():
    """The model zoo: the 'models' of ``paraxis models --json``."""
    return _document("models", {})["models"]


def clusters():
    """The cluster presets: the 'clusters' of ``paraxis clusters --json``."""
    return _document("clusters", {})["clusters"]


def validate(measured, **options):
    """Predictions held against measured runs (CSV files or train reports): ``paraxis validate --json``."""
    return _document("validate", dict(measured=measured, **options))
