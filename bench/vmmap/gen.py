#!/usr/bin/env python3
"""Writes a synthetic `vmmap -noCoalesce` report with N region lines
(default 1,000,000, about 100 MB) for the benchmark: the modern 2.4 layout
with 16-digit addresses, a mix of region types (a quarter of them
IOAccelerator / IOSurface with PURGE= states, or --gpu-share), then the
summary table. With --type-each-line, every region is of a type of its
own (the summary table as long as the regions). With --odd-every N, every Nth region line has an address
range that is not hex (`...-zzzz`): a line memtally counts as unreadable,
and one its region path cannot read.

    python3 bench/vmmap/gen.py [--lines N] [--seed S] [--gpu-share F] [--odd-every N]
                               [--type-each-line] OUT
"""
import argparse
import random

TYPES = [
    ("IOSurface", "SHM", True),
    ("IOAccelerator", "SHM", True),
    ("IOAccelerator (graphics)", "SHM", True),
    ("MALLOC_SMALL", "PRV", False),
    ("MALLOC_TINY", "PRV", False),
    ("__TEXT", "COW", False),
    ("__DATA", "COW", False),
    ("__LINKEDIT", "COW", False),
    ("mapped file", "COW", False),
    ("VM_ALLOCATE", "PRV", False),
    ("Stack", "PRV", False),
    ("CoreAnimation", "PRV", False),
]
SIZES_K = [16, 32, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
DETAILS = ["", "", "/usr/lib/libobjc.A.dylib",
           "DefaultMallocZone_0x104c9c000", "thread 3", "/usr/lib/dyld"]


def fmt(k):
    if k >= 10240 * 1024:
        return f"{k / 1048576:.1f}G"
    if k >= 10240:
        return f"{k / 1024:.1f}M"
    return f"{k}K"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gpu-share", type=float, default=0.25,
                    help="fraction of lines that are IOSurface/IOAccelerator regions (default 0.25)")
    ap.add_argument("--odd-every", type=int, default=0,
                    help="every Nth region line unreadable (default 0: none)")
    ap.add_argument("--type-each-line", action="store_true",
                    help="every region of a type of its own")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    totals = {}
    with open(a.out, "w") as f:
        f.write("""Process:         BenchApp [4242]
Path:            /Applications/BenchApp.app/Contents/MacOS/BenchApp
Code Type:       ARM64E
OS Version:      macOS 26.5.2 (25F84)
Report Version:  7
Analysis Tool:   /usr/bin/vmmap

Physical footprint:         5.2G
Physical footprint (peak):  6.0G
----

Virtual Memory Map of process 4242 (BenchApp)
Output report format:  2.4  -- 64-bit process
VM page size:  16384 bytes

==== Writable regions for process 4242
REGION TYPE                      START - END             [ VSIZE  RSDNT  DIRTY   SWAP] PRT/MAX SHRMOD PURGE    REGION DETAIL
""")
        addr = 0x100000000
        for i in range(a.lines):
            if rnd.random() < a.gpu_share:
                t, sm, purgeable = TYPES[rnd.randrange(3)]
            else:
                t, sm, purgeable = TYPES[3 + rnd.randrange(len(TYPES) - 3)]
            if a.type_each_line:
                t = f"TYPE_{i:08}"
            vk = SIZES_K[rnd.randrange(len(SIZES_K))]
            rk = rnd.randrange(0, vk + 1, 16)
            dk = rnd.randrange(0, rk + 1, 16)
            sk = rnd.randrange(0, vk - rk + 1, 16)
            purge = ""
            if purgeable:
                purge = "PURGE=" + "NVE"[rnd.randrange(3)] if rnd.random() < 0.8 else ""
            end = addr + vk * 1024
            det = DETAILS[rnd.randrange(len(DETAILS))]
            line = (f"{t:<22} {addr:016x}-{end:016x} [{fmt(vk):>6} {fmt(rk):>6} {fmt(dk):>6} {fmt(sk):>6}] "
                    f"rw-/rwx SM={sm} {purge:<8} {det}").rstrip()
            if a.odd_every and i % a.odd_every == a.odd_every // 2:
                line = line.replace(f"-{end:016x}", "-zzzz", 1)
            f.write(line + "\n")
            addr = end + 16384
            s = totals.setdefault(t, [0, 0, 0, 0, 0])
            s[0] += vk; s[1] += rk; s[2] += dk; s[3] += sk; s[4] += 1
        f.write("""
==== Summary for process 4242

                                VIRTUAL RESIDENT    DIRTY  SWAPPED VOLATILE   NONVOL    EMPTY   REGION 
REGION TYPE                        SIZE     SIZE     SIZE     SIZE     SIZE     SIZE     SIZE    COUNT (non-coalesced) 
===========                     ======= ========    =====  ======= ========   ======    =====  ======= 
""")
        for t in sorted(totals):
            v, r, d, s, n = totals[t]
            f.write(f"{t:<30} {fmt(v):>8} {fmt(r):>8} {fmt(d):>8} {fmt(s):>8} {'0K':>8} {'0K':>8} {'0K':>8} {n:>8} \n")
        f.write("===========                     ======= ========    =====  ======= ========   ======    =====  ======= \n")
        v, r, d, s, n = (sum(x[i] for x in totals.values()) for i in range(5))
        f.write(f"{'TOTAL':<30} {fmt(v):>8} {fmt(r):>8} {fmt(d):>8} {fmt(s):>8} {'0K':>8} {'0K':>8} {'0K':>8} {n:>8} \n")


if __name__ == "__main__":
    main()
