#!/usr/bin/env python3
"""Batches and refusals from gpuletd trace files (every request traced).

    trace-batches.py TRACE_FILE... [--window 0.1] [--slow lenet5=1.2,resnet18=2.6]

Rebuilds each model's batches from its requests' COMPUTE_START/COMPUTE_END
(the requests of one batch share its run time; the executor's times carry
each request's own half-hop offset, so starts within 0.3 ms are one batch),
then prints per model the batch count, mean size and run-time percentiles,
the share of slow batches (over --slow ms, default 3x the model's median)
by batch size, and every window (seconds from the first request) with
refused requests or slow batches: refused/slow per model.
"""
import argparse
import collections
import json
import signal


def load(paths):
    traces = []
    for p in paths:
        with open(p) as f:
            traces += json.load(f)
    return traces


def batches_of(traces):
    runs, refused = [], []
    for t in traces:
        ts = {x["name"]: x["ns"] for x in t["timestamps"]}
        if "COMPUTE_START" in ts:
            runs.append((t["model_name"], ts["COMPUTE_START"], ts["COMPUTE_END"]))
        else:
            refused.append((t["model_name"], ts["REQUEST_START"], (t.get("error") or "")[:60]))
    runs.sort()
    out = []
    for m, s, e in runs:
        b = out[-1] if out else None
        if b and b["model"] == m and b["dur"] == e - s and abs(s - b["start"]) < 300_000:
            b["rows"] += 1
            continue
        out.append({"model": m, "start": s, "dur": e - s, "rows": 1})
    out.sort(key=lambda b: b["start"])
    return out, refused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--window", type=float, default=0.1, help="seconds per window")
    ap.add_argument("--slow", default="", help="MODEL=MS,... a slow batch's run time")
    a = ap.parse_args()
    traces = load(a.files)
    batches, refused = batches_of(traces)
    if not batches:
        print("no traced batches")
        return
    t0 = min(x["ns"] for t in traces for x in t["timestamps"] if x["name"] == "REQUEST_START")
    limits = {k: float(v) * 1e6 for k, v in (kv.split("=") for kv in a.slow.split(",") if kv)}
    by_model = collections.defaultdict(list)
    for b in batches:
        by_model[b["model"]].append(b)
    for m, bs in sorted(by_model.items()):
        ds = sorted(b["dur"] for b in bs)
        q = lambda p: ds[int(p * (len(ds) - 1))] / 1e3
        limits.setdefault(m, 3 * ds[len(ds) // 2])
        sizes = collections.Counter(b["rows"] for b in bs)
        slow = collections.Counter(b["rows"] for b in bs if b["dur"] > limits[m])
        print(f"{m}: {len(bs)} batches, mean {sum(b['rows'] for b in bs) / len(bs):.2f} rows, run µs p50 {q(.5):.0f} "
              f"p90 {q(.9):.0f} p99 {q(.99):.0f} max {ds[-1] / 1e3:.0f}; refused {sum(1 for r in refused if r[0] == m)}")
        print("  slow (over %.2f ms) by rows: %s" % (limits[m] / 1e6, " ".join(
            f"{n}:{slow[n]}/{sizes[n]}" for n in sorted(sizes))))
    win = collections.defaultdict(collections.Counter)
    for m, s, _ in refused:
        win[int((s - t0) / 1e9 / a.window)][m + " refused"] += 1
    for b in batches:
        if b["dur"] > limits[b["model"]]:
            win[int((b["start"] - t0) / 1e9 / a.window)][b["model"] + " slow"] += 1
    print("windows with refused requests or slow batches (s: counts):")
    for w in sorted(win):
        print(f"  {w * a.window:.2f}: " + ", ".join(f"{k} {v}" for k, v in sorted(win[w].items())))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    main()
