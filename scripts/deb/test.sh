#!/usr/bin/env bash
# Builds the .deb and checks it the way a user meets it: dpkg -i, the
# binary on PATH, its man pages found by man(1), the completion scripts
# where bash, zsh and fish look, the systemd unit accepted by
# systemd-analyze verify, the options file a conffile, then dpkg -r
# removes it all (and dpkg --purge the conffile). Run as root (CI is).
# lintian checks the package first where it is installed (CI installs it).
# A .deb already built can be given: scripts/deb/test.sh path/to.deb
set -euo pipefail
cd "$(dirname "$0")/../.."

deb=${1:-$(scripts/deb/build.sh target/debian | tail -n 1)}
echo "deb: $deb ($(du -k "$deb" | cut -f1) KiB)"
dpkg-deb --info "$deb" | sed -n 's/^ *\(Package\|Version\|Depends\|Installed-Size\):/  &/p'
want_version=$(dpkg-deb --field "$deb" Version)
fail() { echo "deb test: $*" >&2; exit 1; }
# Debian's own package checker: no error and no warning.
if command -v lintian >/dev/null; then
  lintian --fail-on error,warning --tag-display-limit 0 "$deb" 2>&1 | grep -v 'root privileges' || true
  lintian --fail-on error,warning "$deb" >/dev/null 2>&1 || fail "lintian finds errors or warnings in $deb"
  echo "lintian: no errors, no warnings"
fi

cleanup() { dpkg --purge memtally >/dev/null 2>&1 || true; }
trap cleanup EXIT

dpkg -i "$deb"
[ "$(command -v memtally)" = /usr/bin/memtally ] || fail "memtally is not /usr/bin/memtally"
# `memtally VERSION (COMMIT)`, or `memtally VERSION` built outside a git checkout.
case "$(memtally --version)" in
  "memtally $want_version" | "memtally $want_version ("*")") ;;
  *) fail "memtally --version: $(memtally --version)" ;;
esac
memtally top --pid $$ --format json > /dev/null || fail "memtally top does not run"

for page in $(memtally man --list); do
  path=$(man -w "$page") || fail "man -w $page finds no page"
  [ "$path" = "/usr/share/man/man1/$page.1.gz" ] || fail "man -w $page: $path"
  warnings=$(MANWIDTH=80 man --warnings "$page" 2>&1 >/dev/null) || fail "man $page fails"
  [ -z "$warnings" ] || fail "man $page warns: $warnings"
done
echo "man pages: $(memtally man --list | wc -l), each found by man -w and rendered without warnings"

bash_c=/usr/share/bash-completion/completions/memtally
zsh_c=/usr/share/zsh/vendor-completions/_memtally
fish_c=/usr/share/fish/vendor_completions.d/memtally.fish
bash -n "$bash_c" || fail "$bash_c does not parse"
words=$(bash --norc -c "source $bash_c; COMP_WORDS=(memtally ser); COMP_CWORD=1; _memtally memtally ser memtally; echo \${COMPREPLY[*]}")
[ "$words" = serve ] || fail "bash completes 'memtally ser' to '$words'"
if command -v zsh >/dev/null; then zsh -n "$zsh_c" || fail "$zsh_c does not parse"; fi
if command -v fish >/dev/null; then
  fish --no-execute "$fish_c" || fail "$fish_c does not parse"
  # fish finds it by itself, from its vendor directory (a fresh HOME: no
  # user configuration; --no-config would also drop the vendor directories).
  fish_home=$(mktemp -d)
  got=$(HOME=$fish_home fish -c "complete -C 'memtally ser'" | cut -f1)
  rm -rf "$fish_home"
  [ "$got" = serve ] || fail "fish does not load $fish_c (completes 'memtally ser' to '$got')"
fi
echo "completions: bash, zsh, fish installed and parsed"

unit=/lib/systemd/system/memtally.service
systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
echo "unit: systemd-analyze verify passed"
if systemd-analyze security --help 2>/dev/null | grep -- --offline >/dev/null; then
  systemd-analyze security --offline=true --no-pager "$unit" | tail -n 1
fi

grep -qx /etc/default/memtally /var/lib/dpkg/info/memtally.conffiles || fail "/etc/default/memtally is not a conffile"

# The licence texts: the MIT paragraph is LICENSE-MIT's permission text
# word for word (as a paragraph carries it: one space in front, empty lines
# as " ."), and Apache-2.0 is named.
copyright=/usr/share/doc/memtally/copyright
mit=$(awk '/^License: MIT$/ { p = 1; next } p && /^$/ { exit } p' "$copyright")
[ "$mit" = "$(sed -n '5,$p' LICENSE-MIT | sed -e 's/^$/./' -e 's/^/ /')" ] \
  || fail "$copyright does not carry the text of LICENSE-MIT"
grep -q '^License: Apache-2.0$' "$copyright" || fail "$copyright has no Apache-2.0 licence paragraph"
echo "copyright: MIT text, Apache-2.0 reference"

dpkg -r memtally
[ ! -e /usr/bin/memtally ] || fail "dpkg -r left /usr/bin/memtally"
[ ! -e "$unit" ] || fail "dpkg -r left $unit"
[ -e /etc/default/memtally ] || fail "dpkg -r removed the conffile (only --purge should)"
dpkg --purge memtally
[ ! -e /etc/default/memtally ] || fail "dpkg --purge left /etc/default/memtally"
echo "deb test: passed"
