#!/usr/bin/env python3
"""Writes a recorded /proc tree whose one process has a huge smaps, for the
size tests of memtally (never committed: generated into a temp dir).

    python3 scripts/stress/gen_smaps.py DIR [--bytes N] [--pid P]

Each region is a real-looking smaps entry (the keys of a 6.x kernel, a mix
of file-backed, heap, stack and anonymous mappings); regions are written
until the file reaches N bytes (default 1 GiB). Also writes comm, cmdline,
status and maps (maps: the header lines only).
"""
import argparse
import os

KEYS = ["Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss", "Pss_Dirty", "Shared_Clean",
        "Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "Anonymous", "KSM",
        "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb",
        "Private_Hugetlb", "Swap", "SwapPss", "Locked"]
PATHS = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "", "[heap]", "[anon:v8 heap]",
         "/usr/lib/chromium/chromium", "/dev/shm/.org.chromium.Chromium.x"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--bytes", type=int, default=1 << 30)
    ap.add_argument("--pid", type=int, default=4242)
    a = ap.parse_args()
    d = os.path.join(a.dir, str(a.pid))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "comm"), "w") as f:
        f.write("huge\n")
    with open(os.path.join(d, "cmdline"), "wb") as f:
        f.write(b"huge\0--smaps\0")
    with open(os.path.join(d, "status"), "w") as f:
        f.write("Name:\thuge\nState:\tS (sleeping)\nPPid:\t1\nUid:\t0\t0\t0\t0\nVmSize:\t1 kB\n")
    addr = 0x10000000
    written = 0
    i = 0
    with open(os.path.join(d, "smaps"), "w", buffering=1 << 20) as s, \
            open(os.path.join(d, "maps"), "w", buffering=1 << 20) as m:
        while written < a.bytes:
            path = PATHS[i % len(PATHS)]
            perms = ["r-xp", "rw-p", "r--p", "rw-s"][i % 4]
            kb = 4 * (1 + i % 16)
            dev, inode = ("fe:00", 1000 + i % 50) if path.startswith("/") else ("00:00", 0)
            head = f"{addr:012x}-{addr + kb * 1024:012x} {perms} 00000000 {dev} {inode:<10d}               {path}\n"
            body = []
            for k in KEYS:
                v = kb if k in ("Size", "Rss", "Referenced") else (4 if k in ("KernelPageSize", "MMUPageSize") else (kb // 2 if k in ("Pss", "Private_Dirty", "Private_Clean", "Pss_Dirty") else 0))
                body.append(f"{k + ':':<16}{v:>8} kB\n")
            body.append("THPeligible:    0\nProtectionKey:         0\nVmFlags: rd wr mr mw me ac sd \n")
            chunk = head + "".join(body)
            s.write(chunk)
            m.write(head)
            written += len(chunk)
            addr += kb * 1024 + 4096
            i += 1
    print(f"{i} regions, {written} bytes of smaps in {d}")


if __name__ == "__main__":
    main()
