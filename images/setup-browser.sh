#!/usr/bin/env bash
# setup-browser.sh: make a headless Chromium from the OS packages available at
# /usr/bin/chromium for the website's browser tests (`make browser`; harness/site).
#
# Idempotent: when /usr/bin/chromium runs, nothing is changed. Otherwise (as root) the OS
# package chromium is installed, waiting up to 10 minutes for the package manager's lock
# and trying once more after a failure (a mirror or the lock can fail once on a busy
# machine). Nothing is downloaded outside the OS packages.
#
# The last line printed is `browser: <version>`.
set -euo pipefail

BIN=/usr/bin/chromium
log() { echo "setup-browser: $*" >&2; }
die() { echo "setup-browser: error: $*" >&2; exit 1; }
# shellcheck source=images/lib-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-apt.sh"

works() { [ -x "$BIN" ] && "$BIN" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1; }

if works; then
	log "chromium is installed"
	echo "browser: $("$BIN" --version 2>/dev/null | head -n 1)"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root (it installs the OS package chromium)"

apt_install chromium fonts-dejavu-core
works || die "$BIN does not run after the install"
echo "browser: $("$BIN" --version 2>/dev/null | head -n 1)"
