#!/usr/bin/env python3
"""Holds a `train --trace` file against the run's report (`train --report`, rank 0's figures):
- it parses as Chrome trace events, with a process per rank and named threads;
- on every thread the events nest (each one inside the one before it, or after it ends);
- rank 0 has one step event per iteration, the measured ones as many as the report counts, and
  one `zero gradients` update inside each;
- per kind, rank 0's time over the measured steps, divided by their number, is the report's
  time.<kind> within 5 % (plus 1 % of the iteration, for kinds of a few microseconds). A kind's
  time is its events' durations less the outermost events of other kinds they hold (docs/trace.md).
Usage: check_trace.py TRACE.json REPORT.json RANKS
Prints each kind's figures, one line per failure, and "N passed, M failed"."""
import json
import sys
from collections import defaultdict

KINDS = {  # trace category -> the report's time.<key>s it adds up to
    "forward": ["forward"], "backward": ["backward_data", "backward_weight"], "update": ["update"],
    "data_loading": ["data_loading"], "gradient_exposed": ["gradient_exposed"], "halo": ["halo"],
    "shuffle": ["shuffle"], "layer_collectives": ["layer_collectives"]}
SLACK_US = 0.01  # the file's times have 3 decimals

failures, checks = [], 0


def check(ok, message):
    global checks
    checks += 1
    if not ok:
        failures.append(message)


trace = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
ranks = int(sys.argv[3])
events = trace["traceEvents"]
spans = [e for e in events if e["ph"] == "X"]
meta = [e for e in events if e["ph"] == "M"]
check(all(k in e for e in spans for k in ("pid", "tid", "ts", "dur", "cat", "name")) and all(e["dur"] >= 0 for e in spans),
      "an event lacks pid, tid, ts, dur, cat or name, or has a negative duration")
check(sorted({e["pid"] for e in spans}) == list(range(ranks)), f"processes {sorted({e['pid'] for e in spans})}, expected 0..{ranks - 1}")
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
check({"main", "comm progress"} <= set(names.values()), f"thread names {sorted(set(names.values()))}")

# Nesting, and each event's outermost children (the events directly inside it).
children = defaultdict(list)
rows = defaultdict(list)
for i, e in enumerate(spans):
    rows[(e["pid"], e["tid"])].append(i)
bad = 0
for key, row in rows.items():
    if names.get(key) in ("backward by layer", "point-to-point"):  # overlap by nature (branches; messages in flight)
        continue
    row.sort(key=lambda i: (spans[i]["ts"], -spans[i]["dur"]))
    stack = []
    for i in row:
        e = spans[i]
        while stack and e["ts"] >= spans[stack[-1]]["ts"] + spans[stack[-1]]["dur"] - SLACK_US:
            stack.pop()
        if stack:
            top = spans[stack[-1]]
            if e["ts"] + e["dur"] > top["ts"] + top["dur"] + SLACK_US:
                bad += 1
            children[stack[-1]].append(i)
        stack.append(i)
check(bad == 0, f"{bad} events overlap another on their thread without nesting in it")


def own(i, kind):
    """Microseconds of event i counted as `kind`: less the outermost events of other kinds inside it."""
    total = spans[i]["dur"]
    pending = list(children[i])
    while pending:
        j = pending.pop()
        if spans[j]["cat"] in KINDS and spans[j]["cat"] != kind:
            total -= spans[j]["dur"]
        else:
            pending.extend(children[j])
    return total


steps = [i for i, e in enumerate(spans) if e["pid"] == 0 and e["cat"] == "step"]
measured = [i for i in steps if "warm-up" not in spans[i]["name"]]
check(len(steps) == report["iterations"] and len(measured) == report["measured_iterations"],
      f"{len(steps)} steps ({len(measured)} measured), the report says {report['iterations']} ({report['measured_iterations']})")
main_row = (0, spans[steps[0]]["tid"]) if steps else None
windows = [(spans[i]["ts"], spans[i]["ts"] + spans[i]["dur"]) for i in measured]
iteration = report["time"]["iteration"]
for kind, keys in KINDS.items():
    inside = [i for i in rows.get(main_row, []) if spans[i]["cat"] == kind and
              any(a - SLACK_US <= spans[i]["ts"] and spans[i]["ts"] + spans[i]["dur"] <= b + SLACK_US for a, b in windows)]
    traced = sum(own(i, kind) for i in inside) / 1e6 / max(1, len(measured))
    want = sum(report["time"].get(k, 0.0) for k in keys)
    print(f"{kind:18} trace {traced * 1e3:9.3f} ms   report {want * 1e3:9.3f} ms   ({len(inside)} events)")
    check(abs(traced - want) <= 0.05 * want + 0.01 * iteration,
          f"{kind}: the trace gives {traced * 1e3:.3f} ms per iteration, the report {want * 1e3:.3f} ms")
# Every step zeroes the gradients once, an update the breakdown counts (docs/trace.md).
zeroings = [e for e in spans if e["pid"] == 0 and e["cat"] == "update" and e["name"] == "zero gradients"]
check(len(zeroings) == len(steps) and all(any(spans[i]["ts"] - SLACK_US <= z["ts"] and z["ts"] + z["dur"] <= spans[i]["ts"] + spans[i]["dur"] + SLACK_US
                                              for i in steps) for z in zeroings),
      f"{len(zeroings)} 'zero gradients' updates for {len(steps)} steps, or one outside every step")
backwards = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["pid"] == 0 and e["cat"] == "backward"]
per_layer = [e for e in spans if e["pid"] == 0 and e["cat"] == "layer_backward"]
# Executors that run a forward, then a backward (not a pipeline's or a placement's scheduled
# pass) time each layer's backward; without backward events the kinds above already failed.
plain = bool(backwards)
check((per_layer or not plain) and all(any(a - SLACK_US <= e["ts"] and e["ts"] + e["dur"] <= b + SLACK_US for a, b in backwards)
                        for e in per_layer),
      f"{len(per_layer)} per-layer backward events, not all inside a backward pass")
collectives = [e for e in spans if e["cat"] == "comm"]
check(ranks == 1 or (collectives and all("bytes" in e.get("args", {}) for e in collectives)),
      "no collective events with their bytes")
# The forward-priority engine's reductions: every rank reduces every group once a step, so the
# bytes of its `reduce group` events are the same on every rank and a whole number of steps.
priority_rows = {key for key, name in names.items() if name == "gradient reduction (priority)"}
if ranks > 1 and priority_rows:
    reduced = defaultdict(int)
    for e in spans:
        if e["cat"] == "engine" and e["name"].startswith("reduce group") and (e["pid"], e["tid"]) in priority_rows:
            reduced[e["pid"]] += e["args"]["bytes"]
    steps_run = sum(1 for e in spans if e["pid"] == 0 and e["cat"] == "step")
    totals = {reduced[r] for r in range(ranks)}
    check(len(totals) == 1 and reduced[0] > 0 and reduced[0] % steps_run == 0,
          f"the priority engine's reduce events: bytes per rank {dict(reduced)}, not one whole number of {steps_run} steps' worth")
for f in failures:
    print("FAIL:", f)
print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
