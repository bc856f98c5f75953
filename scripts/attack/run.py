#!/usr/bin/env python3
"""The attack classes of docs/robustness.md, run against one memtally binary.

    sudo scripts/attack/run.py [--bin PATH] [--doc docs/robustness.md] [--only CLASS...]

Each class runs a bounded number of hostile cases and counts those that
held (memtally did what it promised) and those that did not, with the
first failure's detail. With --doc, the table between the markers
`<!-- attack:begin -->` and `<!-- attack:end -->` in that file is
rewritten with this run's counts; without it the table is printed.

It needs root (several classes are another user attacking root's runs:
the attacker is uid 65534 through setpriv) and Linux. It creates
everything it uses under one temporary directory and removes it, and
starts only loopback servers. A run takes a few minutes on 2 cores.
"""

import argparse
import contextlib
import http.client
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(REPO, "testdata/fixtures/linux/python3-mmap/proc")
GPU_FIXTURE = os.path.join(REPO, "testdata/fixtures/gpu/machine")
NOBODY = 65534
SECRET = "SECRET-ROOT-ONLY-7f3a9c"
# Every run of memtally here: at most this long, and this much address space.
DEADLINE_S = 20
ADDRESS_SPACE = 1 << 30

RESULTS = []  # (class, what, cases, held, first failure)


class Class:
    def __init__(self, name, what):
        self.name, self.what = name, what
        self.cases = self.held = 0
        self.failure = ""

    def case(self, ok, detail=""):
        self.cases += 1
        if ok:
            self.held += 1
        elif not self.failure:
            self.failure = detail[:160].replace("|", "/").replace("\n", " ")

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if err is not None:
            # A case that could not run is a case that did not hold.
            self.cases += 1
            if not self.failure:
                self.failure = f"the case itself failed: {err!r}"[:160]
        RESULTS.append((self.name, self.what, self.cases, self.held, self.failure))
        print(f"{self.name}: {self.held}/{self.cases} held {self.failure}", file=sys.stderr)
        return True  # one class failing to run never stops the others


def limits():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# The peak resident memory (KiB) of the last run of memtally, from its own
# rusage (wait4): a fork of this script, so it starts at this script's
# size, a few tens of MiB, below every bound set here.
LAST_PEAK_KIB = 0
# The exit codes memtally documents (README "Exit status"); anything else,
# a signal included, is never a held case.
DOCUMENTED_EXITS = {0, 1, 2, 3, 4, 5, 6}
# What a run on a hostile or huge input may use at most.
PEAK_BOUND_KIB = 256 << 10


def memtally(args, stdin=subprocess.DEVNULL, timeout=DEADLINE_S, **kw):
    """Runs memtally bounded: (exit code or None when killed at the
    deadline, stdout, stderr); its peak memory in LAST_PEAK_KIB."""
    global LAST_PEAK_KIB
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([BIN] + args, stdin=stdin, stdout=out, stderr=err,
                             preexec_fn=limits, **kw)
        end = time.monotonic() + timeout
        code = None
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                code = os.waitstatus_to_exitcode(status)
                LAST_PEAK_KIB = usage.ru_maxrss
                p.returncode = code
                break
            if time.monotonic() > end:
                p.kill()
                _, _, usage = os.wait4(p.pid, 0)
                LAST_PEAK_KIB = usage.ru_maxrss
                p.returncode = -9
                break
            time.sleep(0.01)
        out.seek(0)
        err.seek(0)
        return code, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def sound(code, out, err, produced=None):
    """What every case asserts besides its own point: memtally ran and
    either gave its result (exit 0 and output: `produced`, when given, or
    else something on stdout) or refused with a documented exit code and
    one clear error line (`memtally: ...`); never a signal or a panic.
    A stand-in that does nothing, or aborts, fails it."""
    if code is None or code not in DOCUMENTED_EXITS or "panicked" in err:
        return False
    if code == 0:
        return bool(out.strip()) if produced is None else bool(produced)
    # Exit 2 is a usage error, worded by the argument parser.
    return err.startswith("memtally: ") or (code == 2 and err.startswith("error: "))


def nonempty(path):
    """Whether `path` is a file with something in it, or a directory with a file in it."""
    if os.path.isdir(path) and not os.path.islink(path):
        return any(os.path.isfile(p) and os.path.getsize(p) > 0 for p in files_under(path))
    return os.path.isfile(path) and os.path.getsize(path) > 0


def as_nobody():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def copy_tree(to, src=FIXTURE):
    shutil.copytree(src, to, symlinks=True)
    pid = next(n for n in os.listdir(to) if n.isdigit())
    return pid


def add_cgroup(root, pid):
    """A v2 memory cgroup `/atk` beside the recording, and the process in it."""
    cg = os.path.join(root, "sys/fs/cgroup")
    os.makedirs(os.path.join(cg, "atk"))
    with open(os.path.join(cg, "cgroup.controllers"), "w") as f:
        f.write("cpu memory pids\n")
    for name, value in [
        ("memory.current", "10485760\n"),
        ("memory.max", "max\n"),
        ("memory.high", "max\n"),
        ("memory.peak", "20971520\n"),
        ("memory.swap.current", "0\n"),
        ("memory.stat", "anon 4096\nfile 8192\nactive_file 4096\ninactive_file 4096\n"),
    ]:
        with open(os.path.join(cg, "atk", name), "w") as f:
            f.write(value)
    with open(os.path.join(root, pid, "cgroup"), "w") as f:
        f.write("0::/atk\n")


@contextlib.contextmanager
def live_child():
    """A process to capture and watch, killed after."""
    p = subprocess.Popen(["sleep", "600"])
    try:
        yield p
    finally:
        p.kill()
        p.wait()


def files_under(d):
    out = []
    for base, dirs, files in os.walk(d):
        out += [os.path.join(base, n) for n in dirs + files]
    return out


def contains_secret(paths):
    for p in paths:
        try:
            if not os.path.islink(p) and os.path.isfile(p) and SECRET.encode() in open(p, "rb").read():
                return p
        except OSError:
            pass
    return None


# --- the classes ----------------------------------------------------------


def capture_race(tmp):
    """Item 1: another user owns the output directory and swaps root's
    staging directory for a link to a root directory while capture runs."""
    with Class("capture-race", "`capture -o DIR`, DIR owned by another user who swaps the staging directory for a symlink to a root directory, 20 runs") as c:
        victim = os.path.join(tmp, "race-victim")
        os.mkdir(victim, 0o700)
        secret = os.path.join(victim, "root-0600")
        with open(secret, "w") as f:
            f.write("x")
        os.chmod(secret, 0o600)
        out = os.path.join(tmp, "race-out")
        os.mkdir(out)
        os.chown(out, NOBODY, NOBODY)
        with live_child() as child:
            stop = os.path.join(tmp, "race-stop")

            def attacker():
                # Renames every staging entry root makes and plants a link in its place.
                as_nobody()
                n = 0
                while not os.path.exists(stop):
                    for e in os.listdir(out):
                        if e.startswith(".memtally") and not e.endswith(".moved"):
                            p = os.path.join(out, e)
                            try:
                                os.rename(p, p + f".{n}.moved")
                                os.symlink(victim, p)
                                n += 1
                            except OSError:
                                pass
                os._exit(0)

            pid = os.fork()
            if pid == 0:
                attacker()
            try:
                for _ in range(20):
                    before = sorted(os.listdir(victim))
                    code, o, e = memtally(["capture", str(child.pid), "-o", out])
                    ran = sound(code, o, e, produced=nonempty(out))
                    after = sorted(os.listdir(victim))
                    mode = stat.S_IMODE(os.lstat(victim).st_mode)
                    smode = stat.S_IMODE(os.lstat(secret).st_mode)
                    c.case(ran and after == before and mode == 0o700 and smode == 0o600,
                           f"exit {code}; victim dir now {after[:4]} mode {mode:o}, its 0600 file {smode:o}")
                    for e in os.listdir(victim):
                        if e != "root-0600":
                            p = os.path.join(victim, e)
                            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
                    os.chmod(victim, 0o700)
                    os.chmod(secret, 0o600)
            finally:
                open(stop, "w").close()
                os.waitpid(pid, 0)


def capture_race_new(tmp):
    """Item 1: `capture -o ATK/new`, ATK another user's directory: the new
    directory is swapped for a link to a root directory as it appears."""
    with Class("capture-race-new", "`capture -o ATK/new`, ATK owned by another user who swaps `new` (and anything memtally makes in ATK) for a symlink to a root directory as it appears, 20 runs") as c:
        victim = os.path.join(tmp, "new-victim")
        os.mkdir(victim, 0o700)
        secret = os.path.join(victim, "root-0600")
        with open(secret, "w") as f:
            f.write("x")
        os.chmod(secret, 0o600)
        atk = os.path.join(tmp, "new-atk")
        os.mkdir(atk)
        os.chown(atk, NOBODY, NOBODY)
        with live_child() as child:
            stop = os.path.join(tmp, "new-stop")

            def attacker():
                # Every directory that appears in ATK is moved aside and a
                # link to the victim put in its place.
                as_nobody()
                n = 0
                while not os.path.exists(stop):
                    try:
                        entries = os.listdir(atk)
                    except OSError:
                        continue
                    for e in entries:
                        p = os.path.join(atk, e)
                        if e.endswith(".moved") or os.path.islink(p):
                            continue
                        try:
                            os.rename(p, os.path.join(atk, f"{e}.{n}.moved"))
                            os.symlink(victim, p)
                            n += 1
                        except OSError:
                            pass
                os._exit(0)

            pid = os.fork()
            if pid == 0:
                attacker()
            try:
                for i in range(20):
                    out = os.path.join(atk, f"new{i}")
                    before = sorted(os.listdir(victim))
                    code, o, e = memtally(["capture", str(child.pid), "-o", out])
                    after = sorted(os.listdir(victim))
                    mode = stat.S_IMODE(os.lstat(victim).st_mode)
                    # A capture that says it succeeded left a whole recording
                    # (not through the link: the victim is unchanged).
                    kept = [os.path.join(atk, n) for n in os.listdir(atk) if n.startswith(f"new{i}")]
                    made = any(nonempty(k) for k in kept if not os.path.islink(k))
                    ran = sound(code, o, e, produced=made)
                    c.case(ran and after == before and mode == 0o700,
                           f"exit {code}; victim dir now {after[:4]} mode {mode:o}")
                    for e2 in os.listdir(victim):
                        if e2 != "root-0600":
                            p = os.path.join(victim, e2)
                            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
                    os.chmod(victim, 0o700)
            finally:
                open(stop, "w").close()
                os.waitpid(pid, 0)
            swaps = sum(n.endswith(".moved") for n in os.listdir(atk))
            print(f"capture-race-new: the attacker swapped {swaps} entries", file=sys.stderr)
            c.case(swaps > 0, "the attacker never swapped an entry: the race never started")


def planted_parent(tmp):
    """Item 1: the -o directory or a parent is another user's symlink."""
    with Class("planted-parent-link", "`capture -o`, `snapshot -o`, `export --textfile` through another user's symlinked output directory or parent") as c:
        victim = os.path.join(tmp, "parent-victim")
        os.mkdir(victim, 0o755)
        atk = os.path.join(tmp, "atk-home")
        os.mkdir(atk)
        os.chown(atk, NOBODY, NOBODY)
        link = os.path.join(atk, "out")
        subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "ln", "-s", victim, link], check=True)
        with live_child() as child:
            runs = [
                ["capture", str(child.pid), "-o", link],
                ["capture", str(child.pid), "-o", os.path.join(link, "cap")],
                ["snapshot", "--pid", str(child.pid), "-o", os.path.join(link, "s.json")],
                ["export", "--pid", str(child.pid), "--textfile", link],
                ["export", "--pid", str(child.pid), "--textfile", os.path.join(link, "sub")],
            ]
            for args in runs:
                code, o, e = memtally(args)
                left = os.listdir(victim)
                refused = code not in (None, 0) and sound(code, o, e)
                c.case(refused and not left,
                       f"`{' '.join(args[:1])}`: exit {code}, wrote {left[:3]} through the link")
                for e in left:
                    p = os.path.join(victim, e)
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)


def cgroup_link(tmp):
    """Item 2: a recording's `sys/fs/cgroup` is a symlink planted elsewhere."""
    with Class("capture-cgroup-link", "`capture` into a DIR whose `sys/fs/cgroup` (or `sys`) is another user's symlink") as c:
        with live_child() as child:
            for planted in ["sys/fs/cgroup", "sys/fs", "sys"]:
                victim = os.path.join(tmp, "cg-victim-" + planted.replace("/", "-"))
                os.mkdir(victim, 0o755)
                out = os.path.join(tmp, "cg-out-" + planted.replace("/", "-"))
                os.makedirs(os.path.join(out, os.path.dirname(planted)), exist_ok=True)
                os.symlink(victim, os.path.join(out, planted))
                os.lchown(os.path.join(out, planted), NOBODY, NOBODY)
                code, o, e = memtally(["capture", str(child.pid), "-o", out])
                left = files_under(victim)
                ran = sound(code, o, e, produced=nonempty(os.path.join(out, str(child.pid))))
                c.case(ran and not left,
                       f"{planted}: exit {code}, {len(left)} entries made inside the link's target")


def recording_escape(tmp):
    """Item 3: a recorded tree whose files are links to a root-only file."""
    with Class("recording-escape", "a recorded tree whose `cmdline`, `comm`, `status`, `smaps`, `cgroup`, `meminfo` is a symlink to a root-only file outside it; show, top, snapshot, export, capture") as c:
        secret = os.path.join(tmp, "secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        os.chmod(secret, 0o600)
        for name in ["cmdline", "comm", "status", "smaps", "cgroup", "meminfo", "smaps_rollup"]:
            root = os.path.join(tmp, "esc-" + name)
            pid = copy_tree(root)
            target = os.path.join(root, name if name == "meminfo" else os.path.join(pid, name))
            if os.path.exists(target):
                os.remove(target)
            os.symlink(secret, target)
            cap = os.path.join(tmp, "esc-cap-" + name)
            snap = os.path.join(tmp, f"esc-{name}.json")
            for args in (
                ["show", pid],
                ["top", "--all"],
                ["snapshot", "--pid", pid, "-o", snap],
                ["export", "--pid", pid],
                ["capture", pid, "-o", cap],
            ):
                code, out, err = memtally(["--proc-root", root] + args)
                leaked = SECRET in out or SECRET in err or contains_secret(files_under(cap) + [snap])
                made = {"snapshot": nonempty(snap), "capture": nonempty(cap)}.get(args[0])
                c.case(sound(code, out, err, produced=made) and not leaked,
                       f"{name} via `{args[0]}`: exit {code}, leaked {bool(leaked)}")


def setuid_kept(tmp):
    """Item 4: a file replaced keeps no set-id bits."""
    with Class("setid-kept", "a 6777 file planted at the `snapshot -o` and `export --textfile` targets") as c:
        with live_child() as child:
            d = os.path.join(tmp, "setid")
            os.mkdir(d)
            for args, target in (
                (["snapshot", "--pid", str(child.pid), "-o"], "s.json"),
                (["export", "--pid", str(child.pid), "--textfile", d], "memtally.prom"),
            ):
                p = os.path.join(d, target)
                with open(p, "w") as f:
                    f.write("planted\n")
                os.chmod(p, 0o6777)
                code, o, e = memtally(args + ([p] if args[-1] == "-o" else []))
                mode = os.lstat(p).st_mode
                written = code == 0 and open(p).read() != "planted\n"
                c.case(written and mode & 0o7000 == 0,
                       f"{target}: exit {code}, {stat.filemode(mode)} after the write")


def dev_stdout(tmp):
    """Item 8: `-o` a link to /proc/self/fd/1 with stdout redirected to a file."""
    with Class("dev-stdout", "`snapshot -o L`, L a root-owned link to /proc/self/fd/1 (as /dev/stdout is), stdout redirected with `>` and `>>`") as c:
        with live_child() as child:
            d = os.path.join(tmp, "stdout")
            os.mkdir(d)
            link = os.path.join(d, "stdout")
            os.symlink("/proc/self/fd/1", link)
            for mode in ("w", "a"):
                target = os.path.join(d, "redirect-" + mode)
                with open(target, "w") as f:
                    f.write("first line\n" if mode == "a" else "")
                with open(target, mode) as f:
                    code = subprocess.run([BIN, "snapshot", "--pid", str(child.pid), "-o", link],
                                          stdout=f, stderr=subprocess.DEVNULL, timeout=DEADLINE_S).returncode
                body = open(target).read()
                still_link = os.path.islink(link)
                whole = code == 0 and '"memtally_snapshot"' in body and '"process"' in body \
                    and (mode == "w" or body.startswith("first line\n"))
                c.case(still_link and whole,
                       f"`>`{'>' if mode == 'a' else ''}: link kept {still_link}, redirect got {len(body)} bytes")
                if not still_link:
                    os.remove(link)
                    os.symlink("/proc/self/fd/1", link)


# Shorter than the others: a hang here is a FIFO read that never ends.
HOSTILE_DEADLINE_S = 5
HOSTILE_KINDS = ("dev-zero", "dev-urandom", "fifo", "sparse-2g")


def plant(path, kind):
    if os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    if kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "dev-urandom":
        os.symlink("/dev/urandom", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse-2g":
        with open(path, "wb") as f:
            f.truncate(2 << 30)


def hostile_files(tmp):
    """Item 5: devices, FIFOs and sparse giants at every file name."""
    with Class("hostile-files", "/dev/zero, /dev/urandom, a FIFO, a 2 GiB sparse file at each process, machine, cgroup and GPU file of a recording, under every command that reads it (5 s, 1 GiB address space each)") as c:
        per_pid = ["smaps", "maps", "smaps_rollup", "status", "stat", "statm", "cmdline", "comm",
                   "cgroup", "memtally-incomplete"]
        machine = ["meminfo", "mounts"]
        cgroup = ["sys/fs/cgroup/cgroup.controllers", "sys/fs/cgroup/atk/memory.stat",
                  "sys/fs/cgroup/atk/memory.current", "sys/fs/cgroup/atk/memory.max"]
        gpu = ["fd_targets", "fdinfo/5"]
        commands = [["show", "{pid}"], ["top", "--all"], ["top", "--by", "cgroup"], ["cgroup"],
                    ["export", "--by", "cgroup"], ["snapshot", "--pid", "{pid}"],
                    ["capture", "{pid}", "-o", "{cap}"]]
        n = 0
        for kind in HOSTILE_KINDS:
            for where in per_pid + machine + cgroup + gpu:
                n += 1
                root = os.path.join(tmp, f"hostile-{n}")
                if where in gpu:
                    shutil.copytree(GPU_FIXTURE, root, symlinks=True)
                    pid = "100"
                    add_cgroup(root, pid)
                    cmds = [["gpu"], ["show", "{pid}"], ["top", "--all"], ["export"]]
                else:
                    pid = copy_tree(root)
                    add_cgroup(root, pid)
                    cmds = commands
                target = os.path.join(root, where if where in machine or where in cgroup else os.path.join(pid, where))
                plant(target, kind)
                for args in cmds:
                    args = [a.format(pid=pid, cap=os.path.join(tmp, f"hostile-cap-{n}")) for a in args]
                    t = time.monotonic()
                    code, out, err = memtally(["--proc-root", root] + args, timeout=HOSTILE_DEADLINE_S)
                    took = time.monotonic() - t
                    cap = os.path.join(tmp, f"hostile-cap-{n}")
                    made = nonempty(cap) if args[0] == "capture" else None
                    ok = sound(code, out, err, produced=made) and took < HOSTILE_DEADLINE_S \
                        and len(err) < 2000 and LAST_PEAK_KIB < PEAK_BOUND_KIB
                    c.case(ok, f"{kind} at {where}, `{args[0]}`: exit {code} after {took:.1f}s, "
                               f"{LAST_PEAK_KIB >> 10} MiB {err.strip()[:60]}")
                    shutil.rmtree(cap, ignore_errors=True)
                shutil.rmtree(root)
        # Inputs named on the command line.
        zero_inputs = [["diff", "/dev/zero", "/dev/zero"], ["plot", "/dev/zero", "-o", os.path.join(tmp, "z.svg")],
                       ["vmmap", "/dev/zero"]]
        for args in zero_inputs:
            t = time.monotonic()
            code, out, err = memtally(args)
            took = time.monotonic() - t
            c.case(code == 5 and sound(code, out, err) and took < 10 and LAST_PEAK_KIB < PEAK_BOUND_KIB,
                   f"`{' '.join(args[:2])}`: exit {code} after {took:.1f}s, {LAST_PEAK_KIB >> 10} MiB")


def long_lines(tmp):
    """Item 5: endless unknown keys after one mapping; a cgroup line of 300,000 components."""
    with Class("endless-input", "one mapping then 2,000,000 unknown key lines; a `cgroup` line of 300,000 components; 2,000,000 distinct unknown keys") as c:
        root = os.path.join(tmp, "endless")
        pid = copy_tree(root)
        smaps = os.path.join(root, pid, "smaps")
        with open(smaps, "w") as f:
            f.write("00400000-00401000 r-xp 00000000 00:00 0 /bin/x\nSize: 4 kB\nRss: 4 kB\n")
            for i in range(2_000_000):
                f.write(f"Unknown{i % 1000}: 4 kB\n")
        for args in (["show", pid], ["top", "--all"]):
            code, out, err = memtally(["--proc-root", root] + args)
            # 1000 distinct unknown keys: not smaps (exit 5, bad input);
            # top reads every other process and says which it could not.
            want = {"show": 5, "top": 0}[args[0]]
            c.case(code == want and sound(code, out, err) and LAST_PEAK_KIB < PEAK_BOUND_KIB,
                   f"repeated unknown keys `{args[0]}`: exit {code}, {LAST_PEAK_KIB >> 10} MiB")
        with open(smaps, "w") as f:
            f.write("00400000-00401000 r-xp 00000000 00:00 0 /bin/x\nSize: 4 kB\nRss: 4 kB\n")
            for i in range(2_000_000):
                f.write(f"Unknown{i}: 4 kB\n")
        code, out, err = memtally(["--proc-root", root, "show", pid])
        c.case(code == 5 and sound(code, out, err) and LAST_PEAK_KIB < PEAK_BOUND_KIB,
               f"distinct unknown keys: exit {code}, {LAST_PEAK_KIB >> 10} MiB")
        root2 = os.path.join(tmp, "longcg")
        pid2 = copy_tree(root2)
        add_cgroup(root2, pid2)
        with open(os.path.join(root2, pid2, "cgroup"), "w") as f:
            f.write("0::/" + "/".join(["a"] * 300_000) + "\n")
        for args in (["top", "--by", "cgroup"], ["cgroup"], ["export", "--by", "cgroup"], ["show", pid2]):
            t = time.monotonic()
            code, out, err = memtally(["--proc-root", root2] + args)
            c.case(sound(code, out, err) and time.monotonic() - t < 10 and LAST_PEAK_KIB < PEAK_BOUND_KIB,
                   f"300,000-component cgroup `{args[0]}`: exit {code}, {LAST_PEAK_KIB >> 10} MiB")


def quadratic(tmp):
    """Item 6: inputs that made memtally quadratic."""
    with Class("quadratic", "100,000 DRM regions in one fdinfo; 80,000 mappings with distinct unknown keys (each under 20 s)") as c:
        root = os.path.join(tmp, "drm")
        shutil.copytree(GPU_FIXTURE, root, symlinks=True)
        with open(os.path.join(root, "100/fdinfo/5"), "a") as f:
            for i in range(100_000):
                f.write(f"drm-total-region{i}:\t4 KiB\ndrm-resident-region{i}:\t4 KiB\n")
        for args in (["show", "100"], ["gpu"]):
            t = time.monotonic()
            code, out, err = memtally(["--proc-root", root] + args)
            took = time.monotonic() - t
            c.case(code == 0 and sound(code, out, err) and took < DEADLINE_S and LAST_PEAK_KIB < PEAK_BOUND_KIB,
                   f"DRM regions `{args[0]}`: exit {code} after {took:.1f}s, {LAST_PEAK_KIB >> 10} MiB")
        root2 = os.path.join(tmp, "keys")
        pid = copy_tree(root2)
        with open(os.path.join(root2, pid, "smaps"), "w") as f:
            for i in range(80_000):
                a = 0x10000000 + i * 0x1000
                f.write(f"{a:08x}-{a + 0x1000:08x} rw-p 00000000 00:00 0\nSize: 4 kB\nRss: 4 kB\nOdd{i}: 4 kB\n")
        t = time.monotonic()
        code, out, err = memtally(["--proc-root", root2, "show", pid])
        took = time.monotonic() - t
        # Past 64 distinct unknown keys it is not smaps: exit 5, at once.
        c.case(code == 5 and sound(code, out, err) and took < DEADLINE_S and LAST_PEAK_KIB < PEAK_BOUND_KIB,
               f"distinct keys: exit {code} after {took:.1f}s, {LAST_PEAK_KIB >> 10} MiB")


def signals(tmp):
    """Item 7: every long command ends within a second of a signal, keeping its promise."""
    with Class("signals", "`watch -o FILE` and `serve` sent SIGINT, SIGTERM, SIGHUP: exit 128+signal within 1 s, the samples kept, no temporary file") as c:
        with live_child() as child:
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                d = os.path.join(tmp, f"watch-{sig.name}")
                os.mkdir(d)
                out = os.path.join(d, "series.csv")
                p = subprocess.Popen([BIN, "watch", "--pid", str(child.pid), "--interval", "200ms",
                                      "--format", "csv", "-o", out],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=limits)
                time.sleep(2.0)
                code, took = signal_and_wait(p, sig)
                lines = len(open(out).read().splitlines()) if os.path.exists(out) else 0
                temps = [n for n in os.listdir(d) if n.startswith(".")]
                c.case(code == 128 + sig and took < 1.0 and lines >= 3 and not temps,
                       f"watch {sig.name}: exit {code} after {took:.1f}s, {lines} lines, left {temps}")
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                port = free_port()
                p = subprocess.Popen([BIN, "--proc-root", FIXTURE, "serve", "--listen", f"127.0.0.1:{port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=limits)
                wait_listening(port)
                code, took = signal_and_wait(p, sig)
                c.case(code == 128 + sig and took < 1.0, f"serve {sig.name}: exit {code} after {took:.1f}s")


def signal_and_wait(p, sig):
    """Sends `sig` and waits (5 s at most, then kills): the exit status
    (None when killed) and the seconds it took."""
    p.send_signal(sig)
    t = time.monotonic()
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        code = None
    return code, time.monotonic() - t


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port, host="127.0.0.1"):
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)


def serve_slowloris(tmp):
    """Item 4: slow and idle sockets never starve real scrapes."""
    with Class("serve-starved", "520 slowloris sockets (a header byte every 2 s; more than the 512 waiting places) and 64 idle keep-alive sockets from 130 other loopback addresses hold `serve` while 20 real scrapes come; each must get 200 within 5 s; `--min-interval 0s` refused") as c:
        port = free_port()
        p = subprocess.Popen([BIN, "--proc-root", FIXTURE, "serve", "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=limits)
        socks = []
        stop = threading.Event()
        try:
            wait_listening(port)
            # The attackers come from 130 other loopback addresses: 4
            # slowloris sockets each, 520 in all (more than serve's 512
            # waiting places), and 64 idle keep-alive ones; a scraper
            # shares no address with them, as on a network.
            def attacker_socket(i):
                return socket.create_connection(("127.0.0.1", port), timeout=2,
                                                source_address=(f"127.0.0.{2 + i % 130}", 0))

            for i in range(520):
                try:
                    s = attacker_socket(i)
                    s.sendall(b"GET /metrics HTTP/1.1\r\n")
                    socks.append(("slow", s))
                except OSError:
                    pass
            for i in range(64):
                try:
                    s = attacker_socket(i)
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                    socks.append(("idle", s))
                except OSError:
                    pass

            def drip():
                while not stop.wait(2):
                    for kind, s in socks:
                        if kind == "slow":
                            try:
                                s.sendall(b"X")
                            except OSError:
                                pass

            threading.Thread(target=drip, daemon=True).start()
            time.sleep(1)
            # The attack is on: more sockets held open than waiting places.
            slow = sum(kind == "slow" for kind, _ in socks)
            c.case(slow > 512, f"only {slow} of 520 slowloris sockets connected")
            for _ in range(20):
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    conn.request("GET", "/metrics")
                    status = conn.getresponse().status
                    conn.close()
                except OSError as e:
                    status = repr(e)
                c.case(status == 200, f"a real scrape got {status}")
                time.sleep(0.25)
        finally:
            stop.set()
            for _, s in socks:
                s.close()
            p.terminate()
            p.wait()
        code, out, err = memtally(["serve", "--min-interval", "0s", "--listen", f"127.0.0.1:{free_port()}"], timeout=3)
        c.case(code == 2 and sound(code, out, err), f"`serve --min-interval 0s`: exit {code} (one client can keep a core busy)")


# A figure below zero as memtally prints one: -1B, -1.0K, -17.8M, -4096.
NEGATIVE = re.compile(r"^-[0-9]+(\.[0-9]+)?[BKMGTPE]?$")


def wrapped(out):
    """Figures below zero, but for `unexplained` (MemTotal less every
    line: below zero when the lines overshoot, as impossible input makes
    them)."""
    return [t for line in out.splitlines()
            if "unexplained" not in line and "unattributed" not in line
            for t in line.split() if NEGATIVE.match(t)]


def numbers(tmp):
    """Item 9: figures that wrap or are trusted."""
    with Class("numbers", "16 EiB and impossible meminfo, 8 EiB mappings, edited snapshot regions: no wrapped, negative or mistrusted figure, no panic") as c:
        root = os.path.join(tmp, "num")
        pid = copy_tree(root)
        with open(os.path.join(root, "meminfo"), "w") as f:
            f.write("MemTotal: 18014398509481983 kB\nMemFree: 18014398509481983 kB\nMemAvailable: 1 kB\n"
                    "Buffers: 18014398509481983 kB\nCached: 18014398509481983 kB\nSwapTotal: 0 kB\nSwapFree: 5 kB\n")
        for args in (["top", "--all"], ["machine"], ["export"]):
            code, out, err = memtally(["--proc-root", root] + args)
            bad = wrapped(out)
            c.case(sound(code, out, err) and not bad, f"huge meminfo `{args[0]}`: exit {code} {bad}")
        smaps = os.path.join(root, pid, "smaps")
        with open(smaps, "w") as f:
            for i in range(2):
                f.write(f"{i:016x}-{i + 1:016x} rw-p 00000000 00:00 0\n"
                        "Size: 9007199254740991 kB\nRss: 9007199254740991 kB\nPss: 9007199254740991 kB\n"
                        "Private_Dirty: 9007199254740991 kB\n")
        for args in (["show", pid, "--classic"], ["show", pid], ["top", "--all"]):
            code, out, err = memtally(["--proc-root", root] + args)
            c.case(sound(code, out, err) and not wrapped(out),
                   f"8 EiB mappings `{' '.join(args[:3])}`: exit {code} {err.strip()[:60]}")
        # A snapshot whose regions were edited and whose stored totals were
        # not: the diff must follow the regions (or say the two disagree).
        import json

        before = os.path.join(tmp, "before.json")
        after = os.path.join(tmp, "after.json")
        memtally(["--proc-root", FIXTURE, "snapshot", "-o", before])
        # A snapshot file of JSON Lines: the first region line edited.
        lines = open(before).read().splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith('{"region":'))
        record = json.loads(lines[first])
        record["region"]["rss"] += 64 << 20
        lines[first] = json.dumps(record, separators=(",", ":"))
        with open(after, "w") as f:
            f.write("\n".join(lines) + "\n")
        code, out, err = memtally(["diff", before, after])
        says = "disagree" in (out + err).lower()
        follows = any("64.0M" in line or "+64M" in line for line in out.splitlines()
                      if "process" in line.lower() or "total" in line.lower() or "rss" in line.lower())
        c.case(sound(code, out, err) and (says or follows), "edited regions: the diff's process totals trust the stored totals")


CLASSES = {
    "capture-race": capture_race,
    "capture-race-new": capture_race_new,
    "planted-parent-link": planted_parent,
    "capture-cgroup-link": cgroup_link,
    "recording-escape": recording_escape,
    "setid-kept": setuid_kept,
    "dev-stdout": dev_stdout,
    "hostile-files": hostile_files,
    "endless-input": long_lines,
    "quadratic": quadratic,
    "signals": signals,
    "serve-starved": serve_slowloris,
    "numbers": numbers,
}


def table():
    rows = ["| class | what was tried | cases | held | first failure |", "| --- | --- | --- | --- | --- |"]
    for name, what, cases, held, failure in RESULTS:
        rows.append(f"| `{name}` | {what} | {cases} | {held} | {failure or '-'} |")
    return "\n".join(rows) + "\n"


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release/memtally"))
    ap.add_argument("--doc", help="rewrite the table between the attack markers of this file")
    ap.add_argument("--only", nargs="*", choices=sorted(CLASSES), help="run only these classes")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("scripts/attack/run.py: run it as root (another user attacks root's runs)")
    BIN = os.path.abspath(a.bin)
    if not os.access(BIN, os.X_OK):
        sys.exit(f"scripts/attack/run.py: no memtally binary at {BIN}; build it (cargo build --release) or give --bin")
    tmp = tempfile.mkdtemp(prefix="memtally-attack-")
    os.chmod(tmp, 0o755)  # the attacker (uid 65534) must reach its own directories inside
    try:
        for name in a.only or CLASSES:
            d = os.path.join(tmp, name)
            os.mkdir(d)
            os.chmod(d, 0o755)
            CLASSES[name](d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = table()
    if a.doc:
        doc = open(a.doc).read()
        begin, end = "<!-- attack:begin -->\n", "<!-- attack:end -->"
        if begin not in doc or end not in doc:
            sys.exit(f"{a.doc}: no {begin.strip()} ... {end} markers")
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        open(a.doc, "w").write(head + begin + text + end + tail)
    else:
        sys.stdout.write(text)
    sys.exit(0 if all(held == cases for _, _, cases, held, _ in RESULTS) else 1)


if __name__ == "__main__":
    main()
