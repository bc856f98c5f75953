#!/usr/bin/env python3
"""The attack script can fail: run against stand-ins for memtally that do
nothing (`exit 0`) and that abort on every call, nearly every case of
every class must fail (issue 35, item 1). A case that holds for a binary
that does nothing does not test memtally.

    sudo scripts/attack/standin_check.py [--only CLASS...] [--most-held FRACTION]

Runs scripts/attack/run.py twice (as root, as that script needs), prints
each class's held/cases per stand-in, and exits 1 when more than
FRACTION (default 0.02) of all the cases held for either stand-in, or a
class has a case that held for both.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STANDINS = {
    "no-op": "#!/bin/sh\nexit 0\n",
    "abort": "#!/bin/sh\nkill -ABRT $$\n",
}


def run(binary, only):
    """run.py against `binary`: {class: (cases, held)}."""
    args = [sys.executable, os.path.join(HERE, "run.py"), "--bin", binary]
    if only:
        args += ["--only"] + only
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    rows = {}
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (int(cells[2]), int(cells[3]))
    if not rows:
        sys.exit(f"standin_check: run.py printed no table (exit {p.returncode}): {p.stderr[-500:]}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=[], help="run only these classes")
    ap.add_argument("--most-held", type=float, default=0.02)
    a = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="memtally-standin-") as d:
        os.chmod(d, 0o755)
        held_by = {}
        for name, body in STANDINS.items():
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(body)
            os.chmod(path, 0o755)
            t = time.monotonic()
            rows = run(path, a.only)
            cases = sum(c for c, _ in rows.values())
            held = sum(h for _, h in rows.values())
            print(f"{name} stand-in: {held} of {cases} cases held ({time.monotonic() - t:.0f} s)")
            for cls, (c, h) in sorted(rows.items()):
                print(f"  {cls}: {h}/{c} held")
                held_by.setdefault(cls, []).append(h)
            if cases == 0 or held > a.most_held * cases:
                print(f"FAIL: more than {a.most_held:.0%} of the cases held for the {name} stand-in")
                failed = True
        for cls, helds in sorted(held_by.items()):
            if all(h > 0 for h in helds):
                print(f"FAIL: {cls} has cases that held for every stand-in")
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
