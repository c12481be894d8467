#!/usr/bin/env python3
"""Turns the archives of campaign.sh (unpacked into folders) into one
JSON-lines file of measurements, the origin of the `h100-measured` reference
set (profiler/refset/measured/).

  dump-campaign.py --meta KEY=VALUE... [--solo DIR]... [--pairs DIR]... > FILE

Each DIR holds a phase's gpuletd.db, its PHASE-MODEL.log files and any
PHASE-MODEL.json results. Solo points and utilisation come from the first
--solo store that has them (a later store fills only what earlier ones
lack); co-locations from the --pairs stores. Models
are named through the "profile run finished" log lines (a store knows a
model by its file's sha256 only).

Records, one JSON object per line, each with "kind":
  meta      what was measured, on what, when (from --meta)
  point     model size batch p50_ms p99_ms samples complete
  util      model size batch metric value source   (percent; null unknown)
  pair      model_a size_a batch_a solo_a_ms coloc_a_ms, the same for b
  executor  model size sm_count start_ms load_ms warmup_ms
"""
import argparse
import glob
import json
import os
import re
import sqlite3
import sys

RUN = re.compile(r'"msg":"profile run finished","model":"([^"]+)","device":"[^"]*","run":(\d+)')


def run_names(d):
    """run id -> model name, from a phase folder's logs."""
    names = {}
    for log in glob.glob(os.path.join(d, "*.log")):
        with open(log) as f:
            for m in RUN.finditer(f.read()):
                names[int(m.group(2))] = m.group(1)
    return names


def sha_names(d, db):
    """model sha256 -> name: each run's sha, named by the run's log line."""
    names = run_names(d)
    out = {}
    for run_id, sha in db.execute("select id, model_sha from profile_runs"):
        if run_id in names:
            out[sha] = names[run_id]
    return out


def executors(d):
    """executor records from "model loaded" log lines and JSON results."""
    recs = {}
    for log in sorted(glob.glob(os.path.join(d, "*.log"))):
        with open(log) as f:
            for line in f:
                if '"msg":"model loaded"' not in line:
                    continue
                e = json.loads(line)
                recs[(e["model"], e["size"])] = {"kind": "executor", "model": e["model"], "size": e["size"],
                                                 "sm_count": None, "start_ms": round(e["start"] * 1000, 3),
                                                 "load_ms": e["load_us"] / 1000, "warmup_ms": e["warmup_us"] / 1000}
    for js in sorted(glob.glob(os.path.join(d, "*.json"))):
        if os.path.getsize(js) == 0:
            continue  # an interrupted run prints no JSON
        with open(js) as f:
            r = json.load(f)
        for x in r.get("executors") or []:
            key = (r["model"]["name"], x["size"])
            if key in recs and x.get("sm_count"):
                recs[key]["sm_count"] = x["sm_count"]
    return recs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meta", action="append", default=[], help="KEY=VALUE")
    ap.add_argument("--solo", action="append", default=[])
    ap.add_argument("--pairs", action="append", default=[])
    a = ap.parse_args()
    meta = {"kind": "meta"}
    for kv in a.meta:
        k, _, v = kv.partition("=")
        meta[k] = v
    print(json.dumps(meta))
    points, utils, execs = {}, {}, {}
    for d in a.solo:
        db = sqlite3.connect(os.path.join(d, "gpuletd.db"))
        names = sha_names(d, db)
        for sha, size, batch, p50, p99, samples, complete in db.execute(
                "select model_sha, size, batch, p50_ms, p99_ms, samples, complete from latency_profiles"):
            if sha in names:
                points.setdefault((names[sha], size, batch), {"kind": "point", "model": names[sha], "size": size, "batch": batch,
                                                     "p50_ms": p50, "p99_ms": p99, "samples": samples,
                                                     "complete": bool(complete)})
        for sha, size, batch, metric, value, source in db.execute(
                "select model_sha, size, batch, metric, value, source from utilisation"):
            if sha not in names:
                continue
            key = (names[sha], size, batch, metric)
            # the first store's value, unless it left the metric unknown
            if key not in utils or utils[key]["value"] is None:
                utils[key] = {"kind": "util", "model": names[sha], "size": size, "batch": batch,
                              "metric": metric, "value": value, "source": source}
        for k, v in executors(d).items():
            execs.setdefault(k, v)
    sms = {size: r["sm_count"] for r in execs.values() for size in [r["size"]] if r["sm_count"]}
    for r in execs.values():
        if r["sm_count"] is None:
            r["sm_count"] = sms.get(r["size"])  # MPS grants a size the same SMs whatever the model
    for key in sorted(points):
        print(json.dumps(points[key]))
    for key in sorted(utils):
        print(json.dumps(utils[key]))
    for d in a.pairs:
        db = sqlite3.connect(os.path.join(d, "gpuletd.db"))
        names = sha_names(d, db)
        for row in db.execute("select model_a, size_a, batch_a, solo_a_ms, coloc_a_ms, model_b, size_b, batch_b, "
                              "solo_b_ms, coloc_b_ms from interference_samples order by id"):
            ma, sa, ba, soa, coa, mb, sb, bb, sob, cob = row
            if ma not in names or mb not in names:
                continue
            print(json.dumps({"kind": "pair", "model_a": names[ma], "size_a": sa, "batch_a": ba, "solo_a_ms": soa,
                              "coloc_a_ms": coa, "model_b": names[mb], "size_b": sb, "batch_b": bb,
                              "solo_b_ms": sob, "coloc_b_ms": cob}))
    for key in sorted(execs):
        print(json.dumps(execs[key]))


if __name__ == "__main__":
    sys.exit(main())
