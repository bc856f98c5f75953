#!/usr/bin/env python3
"""Generates a /proc tree for `--proc-root` from one recorded process.

    gen_proc.py OUT --procs N [--maps M] [--vary K] [--cut C] [--from PIDDIR]

Every generated process is the recorded one (default: the gst-launch
fixture in ../shared/fixtures) under its own pid: `stat` and `status`
rewritten with the pid, the other files hard links to one copy, so 50,000
processes cost little disk. `--maps M` gives the first process M
mappings (the recorded ones repeated at fresh addresses, smaps_rollup
their sum). `--vary K` drops the last mapping of the first K processes
and adds 4 kB to the Rss/Pss/Private_Dirty of their first anonymous one:
an "after" tree for `diff`. `--cut C` keeps only the first C recorded
mappings of every process (smaps_rollup their sum): many processes whose
snapshot stays under the 256 MiB a document may have (50,000 whole
copies of the recording make a snapshot of about 3.9 GB). The recorded
fixture is never written.
"""
import argparse
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "linux", "gst-launch", "proc", "5419")
HEAD = re.compile(rb"^([0-9a-f]+)-([0-9a-f]+) (\S+) (\S+) (\S+) (\S+)(.*)$")


def entries(smaps):
    """smaps as a list of (header line, [field lines])."""
    out = []
    for line in smaps.splitlines():
        if HEAD.match(line):
            out.append((line, []))
        else:
            out[-1][1].append(line)
    return out


def render(ents):
    smaps, maps = [], []
    for head, fields in ents:
        smaps.append(head)
        smaps.extend(fields)
        maps.append(head)
    return b"\n".join(smaps) + b"\n", b"\n".join(maps) + b"\n"


def rollup(ents):
    keys, sums = [], {}
    for _, fields in ents:
        for f in fields:
            k, _, rest = f.partition(b":")
            parts = rest.split()
            if len(parts) == 2 and parts[1] == b"kB":
                if k not in sums:
                    keys.append(k)
                    sums[k] = 0
                sums[k] += int(parts[0])
    first = HEAD.match(ents[0][0]).group(1)
    last = HEAD.match(ents[-1][0]).group(2)
    lines = [first + b"-" + last + b" ---p 00000000 00:00 0                          [rollup]"]
    for k in keys:
        if k in (b"Size", b"KernelPageSize", b"MMUPageSize"):
            continue
        lines.append(b"%s:%s%d kB" % (k + b"", b" " * max(1, 19 - len(k) - len(str(sums[k]))), sums[k]))
    return b"\n".join(lines) + b"\n"


def many(ents, m):
    """The recorded mappings repeated at fresh, ascending addresses, m in all."""
    out, addr = [], 0x10000000
    for i in range(m):
        head, fields = ents[i % len(ents)]
        g = HEAD.match(head)
        size = int(g.group(2), 16) - int(g.group(1), 16)
        rest = b" ".join(g.group(k) for k in (3, 4, 5, 6)) + g.group(7)
        out.append((b"%x-%x %s" % (addr, addr + size, rest), fields))
        addr += size + 0x1000
    return out


def vary(ents):
    ents = [(h, list(f)) for h, f in ents[:-1]]
    for h, fields in ents:
        if h.rstrip().endswith(b"0") and b" 00:00 0" in h and b"rw-p" in h:
            for i, f in enumerate(fields):
                k, _, rest = f.partition(b":")
                if k in (b"Rss", b"Pss", b"Private_Dirty", b"Anonymous", b"Pss_Dirty"):
                    fields[i] = b"%s:%s%d kB" % (k, b" " * 8, int(rest.split()[0]) + 4)
            break
    return ents


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--procs", type=int, required=True)
    ap.add_argument("--maps", type=int, default=0)
    ap.add_argument("--vary", type=int, default=0)
    ap.add_argument("--cut", type=int, default=0)
    ap.add_argument("--from", dest="src", default=DEFAULT)
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    shutil.copy(os.path.join(os.path.dirname(src), "meminfo"), a.out)
    shared = os.path.join(a.out, ".shared")
    os.makedirs(shared)
    read = lambda n: open(os.path.join(src, n), "rb").read()
    pid0 = os.path.basename(src).encode()
    ents = entries(read("smaps"))
    if a.cut:
        ents = ents[: a.cut]
    variants = {}

    def files(kind, e):
        if kind not in variants:
            d = os.path.join(shared, kind)
            os.makedirs(d)
            smaps, maps = render(e)
            # The recorded process keeps its recorded rollup; a changed one, their sum.
            roll = read("smaps_rollup") if kind == "plain" and not a.cut else rollup(e)
            for n, b in (("smaps", smaps), ("maps", maps), ("smaps_rollup", roll)):
                open(os.path.join(d, n), "wb").write(b)
            for n in ("cmdline", "comm", "statm"):
                shutil.copy(os.path.join(src, n), d)
            variants[kind] = d
        return variants[kind]

    stat, status = read("stat"), read("status")
    for i in range(a.procs):
        pid = 100000 + i
        d = os.path.join(a.out, str(pid))
        os.makedirs(d)
        if i == 0 and a.maps:
            base = files("many", many(ents, a.maps))
        elif i < a.vary:
            base = files("varied", vary(ents))
        else:
            base = files("plain", ents)
        for n in ("smaps", "maps", "smaps_rollup", "cmdline", "comm", "statm"):
            os.link(os.path.join(base, n), os.path.join(d, n))
        p = str(pid).encode()
        open(os.path.join(d, "stat"), "wb").write(p + stat[len(pid0):])
        st = re.sub(rb"(?m)^(Tgid|Pid|NStgid|NSpid):\t" + pid0 + rb"$", lambda m: m.group(1) + b":\t" + p, status)
        open(os.path.join(d, "status"), "wb").write(st)


main()
