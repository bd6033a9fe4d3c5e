#!/usr/bin/env bash
# CI check: the `python -m opdispatch coverage --html` page rendered by a real
# browser (headless Chromium from Debian): .ci/browser_check.py checks the
# DOM Chromium builds and the colours of its screenshot, and leaves the page
# and build/browser-check/coverage.png to look at.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" != "0" ]; then
    echo "browser check: needs Debian's chromium (apt-get install chromium, as root)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
.ci/install-extra.sh test pillow
timeout 900 python .ci/browser_check.py build/browser-check
