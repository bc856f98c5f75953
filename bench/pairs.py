#!/usr/bin/env python3
"""Paired, interleaved runs of several commands: each pair runs every
command once, in turn, so a change in the machine's load falls on all of
them alike. CPU is user + sys of the command and its children from
wait4's rusage (the kernel's exact runtime, not 10 ms ticks), peak RSS
from GNU time around it (whose own CPU, well under a millisecond, is
counted in); printed as medians over the pairs, with the ratio of each
command's CPU to the first one's (the floor).

    pairs.py PAIRS NAME=COMMAND [NAME=COMMAND ...]   (COMMAND is run by sh)
"""
import os
import statistics
import sys
import time


def run(cmd):
    t = time.perf_counter()
    # Peak RSS from GNU time around the command: a child spawned from
    # Python shares (vfork) or copies (fork) Python's pages until it
    # execs, and its ru_maxrss would count them.
    null = os.open(os.devnull, os.O_WRONLY)
    rss_file = f"/tmp/pairs-rss.{os.getpid()}"
    argv = ["/usr/bin/time", "-f", "%M", "-o", rss_file, "sh", "-c", "exec " + cmd]
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
    os.close(null)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    rss = int(open(rss_file).read().split()[-1])
    os.unlink(rss_file)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{cmd}: exit {os.waitstatus_to_exitcode(status)}")
    return (ru.ru_utime + ru.ru_stime) * 1000, wall * 1000, rss / 1024


def main():
    pairs = int(sys.argv[1])
    cmds = [a.split("=", 1) for a in sys.argv[2:]]
    for _, c in cmds:
        run(c)  # warm the page cache
    got = {n: [] for n, _ in cmds}
    for _ in range(pairs):
        for n, c in cmds:
            got[n].append(run(c))
    print(f"load {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} CPUs, {pairs} pairs")
    print(f"| command | CPU ms | wall ms | peak RSS MiB | CPU : {cmds[0][0]} |")
    print("| --- | ---: | ---: | ---: | ---: |")
    floor = None
    for n, _ in cmds:
        cpu, wall, rss = (statistics.median(x[i] for x in got[n]) for i in range(3))
        floor = floor or cpu
        print(f"| {n} | {cpu:.1f} | {wall:.1f} | {rss:.1f} | {cpu / floor:.2f}x |")


main()
