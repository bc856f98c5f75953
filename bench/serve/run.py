#!/usr/bin/env python3
"""The exporter's own cost: memtally serve's CPU and RSS per scrape on
1,000 and 3,000 extra sleeping processes this script starts (and kills),
and serve's CPU at one scrape per 15 s on the machine's process list,
beside Debian's prometheus-process-exporter (every process, grouped by
comm) and node_exporter's processes collector, scraped in the same run.

    bench/serve/run.py                       # 1000 and 3000 sleepers, 10 scrapes each, 120 s at 15 s
    SLEEPERS="1000" SCRAPES=5 STEADY=60 bench/serve/run.py
    MEMTALLY=target/release/memtally bench/serve/run.py

Needs: root (every exporter reads every process), python3, a release
memtally (cargo build --release; or MEMTALLY=PATH), and optionally
prometheus-process-exporter and prometheus-node-exporter (Debian
packages of those names); a peer that is not installed is left out and
said so. CPU is utime + stime of the exporter's process from
/proc/PID/stat (clock ticks, 10 ms each here), taken just before and
after each scrape; RSS is VmRSS after the scrapes and VmHWM (its peak).
Prints a Markdown table (docs/benchmarks.md, "serve: the exporter's own
cost").
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TICK = os.sysconf("SC_CLK_TCK")
SLEEPERS = [int(n) for n in os.environ.get("SLEEPERS", "1000 3000").split()]
SCRAPES = int(os.environ.get("SCRAPES", "10"))
STEADY = int(os.environ.get("STEADY", "120"))  # seconds at one scrape per 15 s


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as r:
        return r.read()


def wait_up(port, proc):
    for _ in range(200):
        if proc.poll() is not None:
            raise SystemExit(f"exporter on {port} exited: {proc.returncode}")
        try:
            scrape(port)
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"exporter on {port} never answered")


def processes():
    return sum(1 for d in os.listdir("/proc") if d.isdigit())


class Exporters:
    """Each exporter this machine has, started on loopback; stopped on exit."""

    def __init__(self, memtally, tmp):
        self.procs = []
        self.list = []
        # min-interval 1s: every scrape of the per-scrape runs (1.2 s apart) is a fresh scan.
        self.start("memtally serve", 19464,
                   [memtally, "serve", "--listen", "127.0.0.1:19464", "--min-interval", "1s"])
        pe = shutil.which("prometheus-process-exporter")
        if pe:
            cfg = os.path.join(tmp, "process-exporter.yml")
            with open(cfg, "w") as f:
                f.write("process_names:\n  - name: \"{{.Comm}}\"\n    cmdline: ['.+']\n")
            self.start("process-exporter", 19256,
                       [pe, "-config.path", cfg, "-web.listen-address", "127.0.0.1:19256"])
        else:
            print("left out: prometheus-process-exporter is not installed", file=sys.stderr)
        ne = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
        if ne:
            self.start("node_exporter (processes)", 19100,
                       [ne, "--collector.disable-defaults", "--collector.processes",
                        "--web.listen-address=127.0.0.1:19100"])
        else:
            print("left out: node_exporter is not installed", file=sys.stderr)

    def start(self, name, port, argv):
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        wait_up(port, p)
        self.list.append((name, port, p))

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def per_scrape(exporters, extra):
    """SCRAPES rounds, each exporter scraped once a round in turn (never one
    exporter's scrapes in a window of their own: a change of load between
    windows would land in the comparison)."""
    for _, port, _ in exporters.list:
        scrape(port)  # warm: the first scan of a new process list
    time.sleep(1.2)
    ticks = {name: [] for name, _, _ in exporters.list}
    size = {}
    for _ in range(SCRAPES):
        for name, port, p in exporters.list:
            before = cpu_ticks(p.pid)
            size[name] = len(scrape(port))
            ticks[name].append(cpu_ticks(p.pid) - before)
        time.sleep(1.2)
    rows = []
    for name, _, p in exporters.list:
        ms = 1000.0 * sum(ticks[name]) / len(ticks[name]) / TICK
        rows.append((extra, processes(), name, ms, status_kb(p.pid, "VmRSS"),
                     status_kb(p.pid, "VmHWM"), size[name]))
    return rows


def steady(exporters):
    """One scrape per 15 s of each exporter for STEADY seconds: CPU as a share of one core."""
    start = {p.pid: cpu_ticks(p.pid) for _, _, p in exporters.list}
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < STEADY:
        for _, port, _ in exporters.list:
            scrape(port)
        n += 1
        time.sleep(max(0.0, t0 + 15 * n - time.monotonic()))
    wall = time.monotonic() - t0
    out = []
    for name, _, p in exporters.list:
        used = (cpu_ticks(p.pid) - start[p.pid]) / TICK
        out.append((name, n, wall, 100.0 * used / wall, 1000.0 * used / n))
    return out


def main():
    if os.geteuid() != 0:
        raise SystemExit("run.py: run as root, so every exporter reads every process")
    memtally = os.environ.get("MEMTALLY", os.path.join(REPO, "target/release/memtally"))
    if not os.access(memtally, os.X_OK):
        raise SystemExit(f"run.py: {memtally} missing: cargo build --release (or MEMTALLY=PATH)")
    tmp = tempfile.mkdtemp(prefix="memtally-bench-serve.")
    sleepers = []
    exporters = None
    try:
        exporters = Exporters(memtally, tmp)
        rows = per_scrape(exporters, 0)
        for n in SLEEPERS:
            while len(sleepers) < n:
                sleepers.append(subprocess.Popen(["sleep", "1200"]))
            rows += per_scrape(exporters, n)
        for s in sleepers:
            s.kill()
        for s in sleepers:
            s.wait()
        sleepers = []
        calm = steady(exporters)
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
        if exporters:
            exporters.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"Per scrape ({SCRAPES} rounds, the exporters scraped in turn each round, 1.2 s apart; CPU = utime + stime, {1000 // TICK} ms ticks; load {os.getloadavg()[0]:.1f}):\n")
    print("| sleepers added | processes | exporter | CPU per scrape | RSS after | peak RSS | answer |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for extra, procs, name, ms, rss, hwm, size in rows:
        print(f"| {extra} | {procs} | {name} | {ms:.0f} ms | {rss / 1024:.1f} MiB | {hwm / 1024:.1f} MiB | {size / 1024:.0f} KiB |")
    print(f"\nOne scrape per 15 s for {STEADY} s on the machine's own process list ({processes()} processes):\n")
    print("| exporter | scrapes | CPU (share of one core) | CPU per scrape |")
    print("| --- | ---: | ---: | ---: |")
    for name, n, wall, pct, ms in calm:
        print(f"| {name} | {n} | {pct:.2f} % | {ms:.0f} ms |")


if __name__ == "__main__":
    main()
