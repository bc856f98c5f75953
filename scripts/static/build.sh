#!/usr/bin/env bash
# Builds the static binary: target/x86_64-unknown-linux-musl/release/memtally
# and checks that it is statically linked and runs (version, a real scan
# of this shell, the man page and a completion script). Adds the rustup
# target when it is missing. Rust's musl target brings its own libc; ring
# (serve's TLS) compiles C, with Debian's musl-tools (x86_64-linux-musl-gcc),
# which .ci/run installs.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=x86_64-unknown-linux-musl
if ! rustup target list --installed | grep -x "$target" >/dev/null; then
  rustup target add "$target"
fi
cargo build --release --locked -p memtally-cli --target "$target" >&2
bin=target/$target/release/memtally
fail() { echo "static build: $*" >&2; exit 1; }
# Static: no program interpreter (ld.so) and no shared library needed.
# (ldd is no test: it says "statically linked" and exits 0 on a static-pie.)
if readelf -l "$bin" | grep 'Requesting program interpreter' >/dev/null; then fail "$bin has a program interpreter"; fi
if readelf -d "$bin" 2>/dev/null | grep NEEDED >/dev/null; then fail "$bin needs shared libraries"; fi
"$bin" --version
"$bin" top --pid $$ --format json > /dev/null || fail "top does not run"
"$bin" man | grep '^\.TH memtally 1' >/dev/null || fail "no man page"
"$bin" completions bash | bash -n || fail "the bash completion does not parse"
echo "static build: $bin ($(du -k "$bin" | cut -f1) KiB), statically linked, runs"
