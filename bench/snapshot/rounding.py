#!/usr/bin/env python3
"""What a snapshot's PSS would be off by were its totals taken from its
regions (smaps rounds each mapping's proportional figures down to a kB)
instead of the kernel's exact sums (`smaps_rollup`, what it stores):

    rounding.py SNAPSHOT.jsonl

For each proportional figure: the sum over processes of the rollup's and
of the regions', and the processes furthest off, as a share of their own.
Pss_Anon, Pss_File and Pss_Shmem are the rollup's alone (smaps prints
them for no mapping): without it, a snapshot has none.
"""
import json
import sys

FIGURES = ("pss", "pss_dirty", "swap_pss", "pss_anon", "pss_file", "pss_shmem")
rows, regions = [], []
with open(sys.argv[1]) as f:
    for line in f:
        if line.startswith('{"memtally_snapshot"'):
            continue
        (kind, body), = json.loads(line).items()
        if kind == "region":
            regions.append(body)
        elif kind == "dropped":
            regions = []
        elif kind == "process":
            summed = {k: sum(r.get(k, 0) for r in regions) for k in FIGURES}
            rows.append((body["pid"], body["comm"], len(regions), body["totals"], summed))
            regions = []
print(f"{len(rows)} processes, {sum(r[2] for r in rows)} mappings")
for k in FIGURES:
    pairs = [(r, r[3].get(k), r[4][k]) for r in rows if r[3].get(k)]
    if not pairs:
        continue
    if not any(s for _, _, s in pairs):
        print(f"{k}: rollup {sum(t for _, t, _ in pairs)} B over {len(pairs)} processes; no mapping has it")
        continue
    exact = sum(t for _, t, _ in pairs)
    summed = sum(s for _, _, s in pairs)
    off = sorted(((t - s) / t, r, t, s) for r, t, s in pairs)
    over1 = sum(1 for o, *_ in off if o > 0.01)
    worst, r, t, s = off[-1]
    print(f"{k}: rollup {exact} B, regions {summed} B, {exact - summed} B ({100 * (exact - summed) / exact:.3f}%) less;"
          f" {over1} of {len(pairs)} processes off by more than 1%; furthest: pid {r[0]} {r[1]} ({r[2]} mappings)"
          f" {t} -> {s} B, {100 * worst:.2f}%")
