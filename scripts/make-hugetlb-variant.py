#!/usr/bin/env python3
"""Makes testdata/fixtures/linux-variants/hugetlb from the recorded
python3-mmap tree, for the tests of huge page and /dev/zero categories on a
machine that has no huge page pool (HugePages_Total 0: MAP_HUGETLB fails,
and a test must not change vm.nr_hugepages for everyone).

    scripts/make-hugetlb-variant.py

The recording itself is not changed. The variant is a copy of it with four
mappings added before [stack], in smaps and maps alike, written the way
Linux 6.18 prints them (checked against a live smaps of the same kinds of
mapping; the hugetlb ones against the kernel's show_smap, which prints
KernelPageSize/MMUPageSize 2048 kB, Rss 0 and the pages under
Private_Hugetlb, and VmFlags `ht`):

  - a 4 MiB hugetlbfs file at /mnt/huge (a hugetlbfs mount that is not
    /dev/hugepages; the variant's PID/mounts lists it), 4 MiB faulted in;
  - 2 MiB of MAP_HUGETLB memory (`/anon_hugepage (deleted)`), faulted in;
  - 2 MiB MAP_PRIVATE of /dev/zero and 2 MiB MAP_SHARED of /dev/zero, not
    touched (no resident pages, so the recorded sums stay as they were).

smaps_rollup gets the hugetlb pages added to Private_Hugetlb (6144 kB);
every other figure is unchanged because the new mappings hold no resident
pages that RSS/PSS count.
"""

import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent.parent
SRC = HERE / "testdata/fixtures/linux/python3-mmap/proc"
DST = HERE / "testdata/fixtures/linux-variants/hugetlb/proc"
PID = "11364"

KEYS = [
    "Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss", "Pss_Dirty",
    "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty",
    "Referenced", "Anonymous", "KSM", "LazyFree", "AnonHugePages",
    "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb", "Private_Hugetlb",
    "Swap", "SwapPss", "Locked",
]

# (maps line, size kB, page kB, Private_Hugetlb kB, VmFlags)
ADDED = [
    ("7fa400000000-7fa400400000 rw-s 00000000 00:2f 4242                       /mnt/huge/memtally-variant",
     4096, 2048, 4096, "rd wr sh mr mw me ms de ht"),
    ("7fa400400000-7fa400600000 rw-p 00000000 00:10 5151                       /anon_hugepage (deleted)",
     2048, 2048, 2048, "rd wr mr mw me de ht"),
    ("7fa400600000-7fa400800000 rw-p 00000000 00:06 4                          /dev/zero",
     2048, 4, 0, "rd wr mr mw me ac"),
    ("7fa400800000-7fa400a00000 rw-s 00000000 00:01 1136                       /dev/zero (deleted)",
     2048, 4, 0, "rd wr sh mr mw me ms"),
]


def block(head, size, page, hugetlb, flags):
    values = {k: 0 for k in KEYS}
    values.update(Size=size, KernelPageSize=page, MMUPageSize=page, Private_Hugetlb=hugetlb)
    lines = [head] + [f"{k + ':':<16}{values[k]:>8} kB" for k in KEYS]
    lines += [f"{'THPeligible:':<16}{0:>8}", f"VmFlags: {flags} "]
    return "\n".join(lines) + "\n"


def insert_before_stack(text, added):
    out, done = [], False
    for line in text.splitlines(keepends=True):
        if not done and line.rstrip().endswith("[stack]") and "-" in line.split()[0]:
            out.append(added)
            done = True
        out.append(line)
    assert done, "no [stack] mapping"
    return "".join(out)


def main():
    if DST.exists():
        shutil.rmtree(DST)
    shutil.copytree(SRC, DST)
    p = DST / PID
    smaps = (p / "smaps").read_text()
    p.joinpath("smaps").write_text(
        insert_before_stack(smaps, "".join(block(*a) for a in ADDED)))
    maps = (p / "maps").read_text()
    p.joinpath("maps").write_text(insert_before_stack(maps, "".join(a[0] + "\n" for a in ADDED)))
    rollup = []
    for line in (p / "smaps_rollup").read_text().splitlines(keepends=True):
        if line.startswith("Private_Hugetlb:"):
            kb = int(line.split()[1]) + sum(a[3] for a in ADDED)
            line = f"{'Private_Hugetlb:':<16}{kb:>8} kB\n"
        rollup.append(line)
    p.joinpath("smaps_rollup").write_text("".join(rollup))
    p.joinpath("mounts").write_text(
        "/dev/vda1 / ext4 rw,relatime 0 0\n"
        "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
        "hugetlbfs /dev/hugepages hugetlbfs rw,nosuid,nodev,relatime,pagesize=2M 0 0\n"
        "none /mnt/huge hugetlbfs rw,relatime,pagesize=2M 0 0\n"
    )


if __name__ == "__main__":
    main()
