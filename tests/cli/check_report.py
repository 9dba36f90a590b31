#!/usr/bin/env python3
"""Holds the charts of a `paraxis report` HTML file against the JSON documents it was drawn
from: every mark's numbers (data-x, data-y, data-value) must be the values docs/report.md says
it plots, computed here independently, and nothing else may be plotted. Also: the file fetches
nothing (no script, link, image or url other than the SVG namespace), and each stacked
iteration bar adds up to the document's time.iteration.

Usage: check_report.py REPORT.html DOC.json...   (the documents in the order given to report)
Prints one line per failure and "N passed, M failed"."""
import html.parser
import json
import math
import re
import sys
from collections import defaultdict

GIB = 1024.0 ** 3
COMPONENTS = ["forward", "backward_data", "backward_weight", "update", "gradient_exposed", "halo", "shuffle",
              "layer_collectives", "pipeline_p2p", "bubble", "data_loading", "negotiation"]
MEMORY = ["weights", "gradients", "optimizer", "activations", "workspace", "fusion", "halo", "pipeline_in_flight"]


class Report(html.parser.HTMLParser):
    """Sections (data-file), their charts (data-title) and each chart's marks."""

    def __init__(self):
        super().__init__()
        self.sections = []  # [{"file", "kind", "summary", "charts": [{"title", "marks"}]}]
        self.tags = []
        self.in_p = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "section":
            self.sections.append({"file": a["data-file"], "kind": a["data-kind"], "summary": "", "charts": []})
        elif tag == "svg":
            self.sections[-1]["charts"].append({"title": a["data-title"], "marks": []})
        elif tag in ("circle", "rect") and a.get("class") == "mark":
            self.sections[-1]["charts"][-1]["marks"].append(a)
        elif tag == "p" and self.sections:
            self.in_p = True

    def handle_endtag(self, tag):
        if tag == "p":
            self.in_p = False

    def handle_data(self, data):
        if self.in_p and self.sections:
            self.sections[-1]["summary"] += data


failures = []
checks = 0


def check(condition, message):
    global checks
    checks += 1
    if not condition:
        failures.append(message)


def same(got, want, what):
    """got and want: lists of tuples (labels..., number); equal as multisets, numbers to 1e-12."""
    key = lambda t: tuple(str(x) for x in t[:-1])
    g = sorted(got, key=key)
    w = sorted(want, key=key)
    ok = len(g) == len(w) and all(key(a) == key(b) and math.isclose(a[-1], b[-1], rel_tol=1e-12, abs_tol=1e-300)
                                  for a, b in zip(g, w))
    check(ok, f"{what}: plotted {len(g)} marks, expected {len(w)}; first differences: "
              f"{[(a, b) for a, b in zip(g, w) if a != b][:3] or (g[len(w):] + w[len(g):])[:3]}")


def points(chart):
    return [(m["data-series"], float(m["data-x"]), float(m["data-y"])) for m in chart["marks"]]


def bars(chart):
    return [(m["data-series"], m["data-category"], float(m["data-value"])) for m in chart["marks"]]


def chart(section, title_part):
    found = [c for c in section["charts"] if title_part in c["title"]]
    check(len(found) == 1, f"{section['file']}: expected one chart titled '...{title_part}...', found {len(found)}")
    return found[0] if found else {"title": "", "marks": []}


def as_xy(triples):  # (series, x, y) -> (series, x, y) with x folded into the labels
    return [(s, repr(float(x)), y) for s, x, y in triples]


def check_plan(section, doc):
    best_sps, best_ttt = {}, {}
    for e in doc["estimates"]:
        if not (e["feasible"] and e["fits"]):
            continue
        k = (e["strategy"]["name"], e["gpus"])
        if k not in best_sps or e["samples_per_second"] > best_sps[k]["samples_per_second"]:
            best_sps[k] = e
        if k not in best_ttt or e["time_to_train_seconds"] < best_ttt[k]["time_to_train_seconds"]:
            best_ttt[k] = e
    same(as_xy(points(chart(section, "samples/s by GPUs"))),
         as_xy([(s, g, e["samples_per_second"]) for (s, g), e in best_sps.items()]), "plan samples/s")
    same(as_xy(points(chart(section, "time to train by GPUs"))),
         as_xy([(s, g, e["time_to_train_seconds"] / 3600) for (s, g), e in best_ttt.items()]), "plan time to train")
    gpus = int(re.search(r"the bars at (\d+) GPUs", section["summary"]).group(1))
    at = {s: e for (s, g), e in best_sps.items() if g == gpus}
    breakdown = chart(section, f"One iteration on {gpus} GPUs")
    same(bars(breakdown), [(k, s, e["time"][k] * 1e3) for s, e in at.items() for k in COMPONENTS if e["time"][k] > 0],
         "plan breakdown")
    for s, e in at.items():
        total = sum(v for series, category, v in bars(breakdown) if category == s)
        check(math.isclose(total, e["time"]["iteration"] * 1e3, rel_tol=1e-9),
              f"plan breakdown of {s}: the stack adds up to {total} ms, time.iteration is {e['time']['iteration'] * 1e3}")
    memory = chart(section, f"Memory per GPU on {gpus} GPUs")
    same(bars(memory), [(k, s, e["memory"][k] / GIB) for s, e in at.items() for k in MEMORY if e["memory"][k] > 0],
         "plan memory")
    limits = re.findall(r'class="limit"[^>]*data-value="([^"]+)"', REPORT_TEXT)
    check(any(math.isclose(float(v), next(iter(at.values()))["memory"]["capacity"] / GIB, rel_tol=1e-12) for v in limits),
          "plan memory: no capacity line at memory.capacity")


def check_validate(section, doc):
    runs = doc["runs"]
    same(as_xy(points(chart(section, "Predicted against measured"))),
         as_xy([(r["strategy"], r["measured"]["total"], r["predicted"]["total"]) for r in runs if r["measured"]["total"] > 0]),
         "validate scatter")
    want = []
    for r in runs:
        for side in ("measured", "predicted"):
            for part in ("compute", "communication"):
                if r[side][part] > 0:
                    want.append((f"{side} {part}", r["label"], r[side][part]))
    same(bars(chart(section, "Compute and communication")), want, "validate components")


def check_bench(section, doc):
    by_op = defaultdict(list)
    for r in doc["rows"]:
        by_op[r["operation"]].append((r["algorithm"], r["bytes"], r["busbw_bytes_per_s"] / 1e9))
    for op, rows in by_op.items():
        # Sizes are all > 0 on the log axis; busbw is on a linear one, zero included.
        same(as_xy(points(chart(section, f"{op}: bus bandwidth"))), as_xy(rows), f"bench comm {op}")


def check_train(section, doc):
    label = f"{doc['strategy']['name']} x{doc['ranks']}"
    same(bars(chart(section, "one measured iteration")),
         [(k, label, doc["time"].get(k, 0) * 1e3) for k in COMPONENTS if doc["time"].get(k, 0) > 0], "train breakdown")
    same(as_xy(points(chart(section, "test accuracy by epoch"))),
         as_xy([(label, e["epoch"], e["test_accuracy"] * 100) for e in doc["epochs"]]), "train accuracy")


def main():
    global REPORT_TEXT
    REPORT_TEXT = open(sys.argv[1]).read()
    parser = Report()
    parser.feed(REPORT_TEXT)
    docs = [json.load(open(p)) for p in sys.argv[2:]]
    check(len(parser.sections) == len(docs), f"{len(parser.sections)} sections for {len(docs)} documents")
    urls = set(re.findall(r"""(?:https?|file|ftp)://[^"'\s)<>]*|url\(|\b(?:src|href)=""", REPORT_TEXT))
    urls -= {"http://www.w3.org/2000/svg"}
    check(not urls and not re.search(r"<(script|link|img|iframe|object|embed)\b", REPORT_TEXT),
          f"the report refers to something outside itself: {sorted(urls)[:3]}")
    checkers = {"plan": check_plan, "validate": check_validate, "bench comm": check_bench, "train": check_train}
    for section, doc in zip(parser.sections, docs):
        checkers[section["kind"]](section, doc)
    for f in failures:
        print("FAIL:", f)
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


main()
