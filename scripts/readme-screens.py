#!/usr/bin/env python3
"""Rewrites the README's screens from the binary.

Each screen in README.md is a ```text block right after a marker:

  <!-- screen: pipe 80: ARGS -->     memtally ARGS piped, COLUMNS=80
  <!-- screen: tmux 80x24: ARGS -->  memtally ARGS in an 80x24 tmux window
  <!-- screen: ui 80x24 then KEY...: ARGS -->
                                     memtally ARGS (a full-screen `ui`) in an
                                     80x24 tmux window, after the keys named
                                     (tmux's names: Enter, Escape, q), each
                                     pressed once the screen is steady

ARGS are memtally's arguments (split at spaces; run from the repository
root, so `--proc-root testdata/...` finds the recorded trees). The tmux
screen is what the cleared terminal shows once the shell prompts again,
without the prompt. A ui screen is the window once it stayed the same for
a second after the last key, each run of blank rows squeezed to one (the
body's empty rows), before `q` ends it. `memtally-cli/tests/cli/readme_screens.rs`
runs the same and fails when a block differs: run this script (after
`cargo build`) and commit README.md.

usage: scripts/readme-screens.py [--bin PATH] [--check]
"""
import os
import re
import subprocess
import sys
import time

MARKER = re.compile(
    r"^<!-- screen: (pipe (\d+)|tmux (\d+)x(\d+)|ui (\d+)x(\d+)((?: then(?: [A-Za-z0-9-]+)+)?)): (.*) -->$")
ARGS = 8


SOCKETS = iter(range(1_000_000))


def socket_name():
    """A tmux server of its own for each screen (one just killed may still
    be exiting under the same name)."""
    return f"readme-screens-{os.getpid()}-{next(SOCKETS)}"


def piped(binary, columns, args):
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("LINES", None)
    out = subprocess.run([binary] + args, env=env, capture_output=True, text=True, check=True)
    return out.stdout.rstrip("\n").split("\n")


def start_session(t, width, height, shell):
    """A detached tmux session "s" of exactly WIDTHxHEIGHT, no status line."""
    subprocess.run(t + ["-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", str(width),
                        "-y", str(height)] + shell, check=True)
    subprocess.run(t + ["set-option", "-g", "status", "off"], check=True)
    subprocess.run(t + ["set-option", "-g", "window-size", "manual"], check=True)
    subprocess.run(t + ["resize-window", "-t", "s", "-x", str(width), "-y", str(height)], check=True)


def in_tmux(binary, width, height, args):
    sock = socket_name()
    t = ["tmux", "-L", sock]
    shell = ["env", "-i", "PATH=/usr/bin:/bin", "TERM=screen", "HOME=/tmp", "PS1=$ ", "sh"]
    try:
        start_session(t, width, height, shell)
        # The screen cleared first: the typed command (a long path) off it.
        typed = "printf '\\033[H\\033[2J'; " + " ".join([binary] + args)
        subprocess.run(t + ["send-keys", "-t", "s", "-l", typed], check=True)
        subprocess.run(t + ["send-keys", "-t", "s", "Enter"], check=True)
        for _ in range(600):
            time.sleep(0.1)
            s = subprocess.run(t + ["capture-pane", "-p", "-t", "s"], capture_output=True,
                               text=True, check=True).stdout.rstrip()
            lines = s.split("\n")
            if len(lines) > 1 and lines[-1] == "$" and not lines[0].startswith("$ "):
                break
        return screen_lines(s)
    finally:
        subprocess.run(t + ["kill-server"], capture_output=True)


def squeezed(lines):
    """Runs of blank rows as one, trailing ones dropped (as `cat -s`)."""
    out = []
    for l in lines:
        if l or (out and out[-1]):
            out.append(l)
    while out and not out[-1]:
        out.pop()
    return out


def in_ui(binary, width, height, keys, args):
    sock = socket_name()
    t = ["tmux", "-L", sock]
    shell = ["env", "-i", "PATH=/usr/bin:/bin", "TERM=screen", "HOME=/tmp", "PS1=$ ", "sh"]

    def capture():
        return subprocess.run(t + ["capture-pane", "-p", "-t", "s"], capture_output=True,
                              text=True, check=True).stdout

    def steady():
        """The screen once it stayed the same for a second (10 captures)."""
        last, same = capture(), 0
        for _ in range(600):
            time.sleep(0.1)
            now = capture()
            same = same + 1 if now == last and not now.startswith("$ ") else 0
            if same >= 10:
                break
            last = now
        return last

    try:
        start_session(t, width, height, shell)
        subprocess.run(t + ["send-keys", "-t", "s", "-l", " ".join([binary] + args)], check=True)
        subprocess.run(t + ["send-keys", "-t", "s", "Enter"], check=True)
        for k in keys:
            steady()
            subprocess.run(t + ["send-keys", "-t", "s", k], check=True)
        s = steady()
        subprocess.run(t + ["send-keys", "-t", "s", "q"], check=True)
        return squeezed([l.rstrip() for l in s.split("\n")])
    finally:
        subprocess.run(t + ["kill-server"], capture_output=True)


def screen_lines(s):
    """The output on a captured screen, the prompt after it left out."""
    lines = [l.rstrip() for l in s.rstrip().split("\n")]
    if lines and lines[-1] == "$":
        lines = lines[:-1]
    return lines


def render(binary, m):
    args = m.group(ARGS).split()
    if m.group(2):
        return piped(binary, int(m.group(2)), args)
    if m.group(5):
        keys = (m.group(7) or "").split()[1:]
        return in_ui(binary, int(m.group(5)), int(m.group(6)), keys, args)
    return in_tmux(binary, int(m.group(3)), int(m.group(4)), args)


def main():
    binary = "target/debug/memtally"
    if "--bin" in sys.argv:
        binary = sys.argv[sys.argv.index("--bin") + 1]
    binary = os.path.abspath(binary)
    readme = open("README.md").read().split("\n")
    out, i, drift = [], 0, []
    while i < len(readme):
        line = readme[i]
        out.append(line)
        m = MARKER.match(line)
        if m and i + 1 < len(readme) and readme[i + 1] == "```text":
            end = readme.index("```", i + 2)
            new = render(binary, m)
            if readme[i + 2:end] != new:
                drift.append(m.group(0))
            out.extend(["```text"] + new + ["```"])
            i = end + 1
            continue
        i += 1
    if "--check" in sys.argv:
        for d in drift:
            print(f"README screen drifted: {d}")
        sys.exit(1 if drift else 0)
    open("README.md", "w").write("\n".join(out))


if __name__ == "__main__":
    main()
