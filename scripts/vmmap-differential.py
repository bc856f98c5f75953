#!/usr/bin/env python3
"""Differential test of `memtally vmmap --seed-view` against the seed tool on
randomly damaged copies of the vmmap fixtures (the repo's and ../shared's).

For each mutated file both programs run (default types and --types '');
where the seed itself succeeds, their outputs must be identical, or
memtally's must say where it read a line differently ("seed parity mismatch
at line N": memtally refused or flagged a damaged line the seed read
anyway). A difference without such a line is a silent disagreement: a bug.

    scripts/vmmap-differential.py [--seed S] [--files N] [--bin PATH]

Exits 1 if any silent disagreement is found (the file is kept in /tmp).
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--files", type=int, default=200)
ap.add_argument("--bin", default=os.path.join(root, "target/release/memtally"))
a = ap.parse_args()
seed_py = os.path.join(root, "../shared/seeds/vmmap_seed.py")
files = sorted(glob.glob(os.path.join(root, "testdata/fixtures/vmmap/*.txt"))
               + glob.glob(os.path.join(root, "../shared/fixtures/vmmap/[0-9]*.txt")))
rnd = random.Random(a.seed)
alphabet = b" \t[]-/=.0123456789abcdefKMGTBSMPURGE=NVE()\n"
work = f"/tmp/vmmap-differential-{os.getpid()}.txt"
stats = dict(compared=0, identical=0, explained=0, silent=0)
for _ in range(a.files):
    data = bytearray(open(rnd.choice(files), "rb").read())
    for _ in range(rnd.randint(1, 10)):
        i = rnd.randrange(len(data) + 1)
        op = rnd.random()
        if op < 0.5 and data:
            data[min(i, len(data) - 1)] = rnd.choice(alphabet)
        elif op < 0.8:
            data[i:i] = bytes([rnd.choice(alphabet)]) * rnd.randint(1, 3)
        else:
            del data[i:i + rnd.randint(1, 10)]
    open(work, "wb").write(data)
    for types in ([], ["--types", ""]):
        s = subprocess.run(["python3", seed_py, "--file", work, *types], capture_output=True)
        if s.returncode != 0:
            continue  # the seed crashed on this input
        j = subprocess.run([a.bin, "vmmap", work, "--format", "json"], capture_output=True)
        pages = j.returncode == 0 and json.loads(j.stdout)["header"]["pages"]
        m = subprocess.run([a.bin, "vmmap", work, "--seed-view", *(["--page-size", "1"] if pages else []), *types],
                           capture_output=True)
        if m.returncode == 5 and b"is this `vmmap` output?" in m.stderr and not s.stdout:
            continue  # neither reads anything
        stats["compared"] += 1
        if m.stdout == s.stdout:
            stats["identical"] += 1
        elif m.returncode == 0 and b"seed parity mismatch at line" in m.stdout:
            stats["explained"] += 1
        else:
            stats["silent"] += 1
            keep = f"/tmp/vmmap-differential-silent-{stats['silent']}.txt"
            open(keep, "wb").write(data)
            print(f"SILENT difference {types}: {keep} ({m.stderr.decode(errors='replace').strip()[:200]})")
os.unlink(work)
print(" ".join(f"{k}={v}" for k, v in stats.items()))
sys.exit(1 if stats["silent"] else 0)
