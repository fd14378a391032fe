#!/usr/bin/env bash
# Debian's chromium for the browser tests: Playwright drives /usr/bin/chromium (no browser
# download, never `playwright install`). Installs it with apt-get when missing and root.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing and this is not root: as root run" \
       "'apt-get install -y chromium' (browser tests will be skipped)" >&2
  exit 0
fi
echo "installing Debian's chromium for the browser tests…" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version >&2 || true
