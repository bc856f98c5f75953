#!/usr/bin/env bash
# Copies, from a clone of the RustSec advisory database
# (https://github.com/rustsec/advisory-db, CC0-1.0), the advisories of every
# crate named in Cargo.lock into .ci/advisories, with the list of those
# crates and the database commit they were taken at. CI audits the lock file
# against this copy where it cannot fetch the database (its machines reach
# package registries, not GitHub), and refuses a lock file naming a crate
# the copy was not made for, so a new dependency comes with its advisories.
#
#   scripts/advisories/refresh.sh PATH-TO-ADVISORY-DB-CLONE
set -euo pipefail
db=${1:?usage: scripts/advisories/refresh.sh PATH-TO-ADVISORY-DB-CLONE}
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/.ci/advisories
[ -d "$db/crates" ] || { echo "$db: no crates/ directory: not an advisory-db clone" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/crates"
grep '^name = ' "$repo/Cargo.lock" | cut -d'"' -f2 | sort -u > "$out/LOCKED-CRATES"
while read -r crate; do
  if [ -d "$db/crates/$crate" ]; then cp -r "$db/crates/$crate" "$out/crates/"; fi
done < "$out/LOCKED-CRATES"
git -C "$db" log -1 --format='%H %cI' > "$out/DATABASE"
echo "$(find "$out/crates" -name '*.md' | wc -l) advisories of $(wc -l < "$out/LOCKED-CRATES") crates, database $(cat "$out/DATABASE")"
