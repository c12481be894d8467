#!/usr/bin/env python3
"""Prints a short summary of one `gpuletd profile --json` result: the SMs
each executor saw with its start/load/warm-up times, p50 latency by size and
batch, solo utilisation and co-location slowdowns."""
import json
import sys


def main(path):
    with open(path) as f:
        r = json.load(f)
    name = r["model"]["name"]
    for x in r.get("executors") or []:
        print(f"{name} p={x['size']}%: {x.get('sm_count', '?')} SMs, start {x.get('start_ms', 0):.0f} ms, "
              f"load {x.get('load_ms', 0):.0f} ms, warm-up {x.get('warmup_ms', 0):.0f} ms")
    pts = {(p["size"], p["batch"]): p for p in r.get("points") or []}
    batches = sorted({b for _, b in pts})
    print(f"{name} p50 ms  " + " ".join(f"b={b:<6}" for b in batches))
    for s in sorted({s for s, _ in pts}):
        cells = [f"{pts[(s, b)]['p50_ms']:<8.3g}" if (s, b) in pts else "-       " for b in batches]
        print(f"{name} p={s:<3}%   " + " ".join(cells))
    for u in r.get("utilisation") or []:
        print(f"{name} util p={u['size']} b={u['batch']}: sm {u['sm']} ({u['sm_source']}) "
              f"l2 {u['l2']} ({u['l2_source']}) dram {u['dram']} ({u['dram_source']})")
    for p in r.get("pairs") or []:
        print(f"{name} pair {p['size_a']}/{p['size_b']} b={p['batch_a']}/{p['batch_b']}: "
              f"{p['coloc_a_ms']:.3g}/{p['coloc_b_ms']:.3g} ms vs solo {p['solo_a_ms']}/{p['solo_b_ms']}")
    for n in r.get("notes") or []:
        print(f"{name} note: {n}")


if __name__ == "__main__":
    main(sys.argv[1])
