#!/usr/bin/env python3
"""Series churn of `memtally serve`, per process and per program (issue 38.2).

Starts two `memtally serve` (default `--by process --top 50`, and `--by
program`), scrapes both every 15 s for MINUTES minutes while a loop starts
short-lived processes (each allocates and touches 64 MiB for 4 s, one every
2 s: the way CI jobs come and go), and counts the distinct series (metric
name + labels) each published over the window. A series that appears is a
new head series in Prometheus; the per-hour figure extrapolates the new
ones seen after the first scrape.

    python3 bench/series_churn.py [MEMTALLY] [MINUTES]
"""
import re
import subprocess
import sys
import time
import urllib.request

MEMTALLY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/memtally"
MINUTES = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
STEP = 15.0

HOG = "x = bytearray(64 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\nimport time; time.sleep(4)\n"


def start(args):
    p = subprocess.Popen([MEMTALLY, "serve", "--listen", "127.0.0.1:0", "--min-interval", "1s", *args],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    return p, line.removeprefix("memtally: serving ")


def series(url):
    text = urllib.request.urlopen(url, timeout=20).read().decode()
    out = set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            out.add(re.split(r" (?=[^ ]+$)", line)[0])
    return out


def main():
    servers = {"process": start([]), "program": start(["--by", "program"])}
    seen = {k: set() for k in servers}
    first = {}
    hogs = []
    t0 = time.time()
    next_scrape = t0
    next_hog = t0
    scrapes = 0
    try:
        while time.time() - t0 < MINUTES * 60:
            now = time.time()
            if now >= next_hog:
                hogs.append(subprocess.Popen([sys.executable, "-c", HOG]))
                hogs = [h for h in hogs if h.poll() is None]
                next_hog += 2.0
            if now >= next_scrape:
                for k, (_, url) in servers.items():
                    s = series(url)
                    first.setdefault(k, len(s))
                    seen[k] |= s
                scrapes += 1
                next_scrape += STEP
            time.sleep(0.1)
    finally:
        for p, _ in servers.values():
            p.terminate()
        for h in hogs:
            h.kill()
    window = time.time() - t0
    print(f"{scrapes} scrapes every {STEP:.0f} s over {window / 60:.1f} min, a 64 MiB process started every 2 s")
    for k in servers:
        new = len(seen[k]) - first[k]
        per_hour = first[k] + new * 3600 / window
        print(f"--by {k}: {first[k]} series in one scrape, {len(seen[k])} distinct over the window, "
              f"{new} new ({new * 60 / window:.1f}/min): about {per_hour:,.0f} series per hour")


main()
