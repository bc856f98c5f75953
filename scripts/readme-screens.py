#!/usr/bin/env python3
"""Rewrites the README's screens from the binary.

Each screen in README.md is a ```text block right after a marker:

  <!-- screen: pipe 80: ARGS -->     memtally ARGS piped, COLUMNS=80
  <!-- screen: tmux 80x24: ARGS -->  memtally ARGS in an 80x24 tmux window

ARGS are memtally's arguments (split at spaces; run from the repository
root, so `--proc-root testdata/...` finds the recorded trees). The tmux
screen is what the cleared terminal shows once the shell prompts again,
without the prompt. `memtally-cli/tests/cli/readme_screens.rs`
runs the same and fails when a block differs: run this script (after
`cargo build`) and commit README.md.

usage: scripts/readme-screens.py [--bin PATH] [--check]
"""
import os
import re
import subprocess
import sys
import time

MARKER = re.compile(r"^<!-- screen: (pipe (\d+)|tmux (\d+)x(\d+)): (.*) -->$")


def piped(binary, columns, args):
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("LINES", None)
    out = subprocess.run([binary] + args, env=env, capture_output=True, text=True, check=True)
    return out.stdout.rstrip("\n").split("\n")


def in_tmux(binary, width, height, args):
    sock = f"readme-screens-{os.getpid()}"
    t = ["tmux", "-L", sock]
    shell = ["env", "-i", "PATH=/usr/bin:/bin", "TERM=screen", "HOME=/tmp", "PS1=$ ", "sh"]
    try:
        subprocess.run(t + ["-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", str(width),
                            "-y", str(height)] + shell, check=True)
        subprocess.run(t + ["set-option", "-g", "status", "off"], check=True)
        subprocess.run(t + ["set-option", "-g", "window-size", "manual"], check=True)
        subprocess.run(t + ["resize-window", "-t", "s", "-x", str(width), "-y", str(height)], check=True)
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


def screen_lines(s):
    """The output on a captured screen, the prompt after it left out."""
    lines = [l.rstrip() for l in s.rstrip().split("\n")]
    if lines and lines[-1] == "$":
        lines = lines[:-1]
    return lines


def render(binary, m):
    args = m.group(5).split()
    if m.group(2):
        return piped(binary, int(m.group(2)), args)
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
