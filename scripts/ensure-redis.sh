#!/usr/bin/env bash
# The replica tests start Debian's redis-server on a free port; install it when missing (we run as root here).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing redis-server for the replica tests…"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
else
  echo "redis-server not found and cannot install it here; the Redis replica tests will be skipped" >&2
fi
