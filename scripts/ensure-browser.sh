#!/usr/bin/env bash
# The browser tests drive Debian's chromium headless; install it when missing (we run as root here).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for the browser tests…"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "chromium not found and cannot install it here; browser tests will be skipped" >&2
fi
