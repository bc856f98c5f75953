#!/usr/bin/env python3
"""Turns a `memtally snapshot` file of format 2 (JSON Lines: docs/json.md)
into the one object of format 1 that memtally wrote before (and that a
report page embeds), for a binary that reads only format 1:

    to_format1.py SNAPSHOT.jsonl > SNAPSHOT.json
    to_format1.py --same FORMAT1.json SNAPSHOT.jsonl

With --same it prints nothing and exits 0 when both hold the same
snapshot but for when it was taken (`time`, `unix_time`, and the
exclusive figures' moment), 1 with the first difference otherwise.
"""
import json
import sys


def format1(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    head, records = lines[0], lines[1:]
    assert head.pop("memtally_snapshot") == 2, f"{path}: not a snapshot of format 2"
    wss = head.pop("wss", None)
    processes, regions, end = [], [], None
    for r in records:
        (kind, body), = r.items()
        if kind == "region":
            regions.append(body)
        elif kind == "dropped":
            assert body["regions"] == len(regions)
            regions = []
        elif kind == "process":
            p = {k: body[k] for k in ("pid", "ppid", "user", "comm", "command", "source", "totals", "categories")}
            p["regions"], regions = regions, []
            processes.append(p)
        else:
            end = body
    assert end is not None and end["processes"] == len(processes), f"{path}: cut short"
    for i, p in enumerate(processes):
        share = end["shmem_swap"][i]
        if share is not None:
            p["totals"]["shmem_swap"] = share
        if end.get("exclusive") and end["exclusive"][i] is not None:
            p["exclusive"] = end["exclusive"][i]
    doc = {"memtally_snapshot": 1, "kind": head["kind"]}
    for k in ("time", "unix_time", "host", "kernel", "proc_root"):
        doc[k] = head[k]
    doc["processes"] = processes
    doc["totals"], doc["categories"] = end["totals"], end["categories"]
    doc["machine"], doc["notes"] = head["machine"], end["notes"]
    if "exact" in end:
        doc["exact"] = end["exact"]
    if wss is not None:
        doc["wss"] = wss
    return doc


def timeless(doc):
    for k in ("time", "unix_time"):
        doc.pop(k, None)
        doc.get("exact", {}).pop(k, None)
    return doc


if sys.argv[1] == "--same":
    with open(sys.argv[2]) as f:
        old = timeless(json.load(f))
    new = timeless(format1(sys.argv[3]))
    if old != new:
        for k in old.keys() | new.keys():
            if old.get(k) != new.get(k):
                sys.exit(f"{sys.argv[3]}: {k} differs from {sys.argv[2]}")
else:
    json.dump(format1(sys.argv[1]), sys.stdout, separators=(",", ":"))
    print()
