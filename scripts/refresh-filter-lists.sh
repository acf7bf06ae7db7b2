#!/usr/bin/env bash
# Refreshes the vendored ad and tracker lists (vendor/filter-lists/, read by src/capture/blockers.ts for
# the blockAds and blockTrackers capture options) from Debian's `webext-ublock-origin-chromium`
# package, which ships EasyList and EasyPrivacy (GPL-3+ or CC-BY-SA-3.0+, see LICENSE.md there).
# Nothing is fetched at capture time: run this by hand, review the diff, commit.
# Usage: scripts/refresh-filter-lists.sh [directory with easylist.txt and easyprivacy.txt]
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:-/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist}"
if [ ! -f "$src/easylist.txt" ] && [ -z "${1:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends webext-ublock-origin-chromium >/dev/null
  else
    echo "Install webext-ublock-origin-chromium (apt-get) or pass a directory holding easylist.txt and easyprivacy.txt" >&2
    exit 1
  fi
fi
for list in easylist easyprivacy; do
  gzip -9 -n -c "$src/$list.txt" > "vendor/filter-lists/$list.txt.gz"
done
version="$(dpkg-query -W -f='${Version}' webext-ublock-origin-chromium 2>/dev/null || echo unknown)"
sed -i "s/^Debian package version: .*/Debian package version: $version/" vendor/filter-lists/LICENSE.md
echo "Refreshed vendor/filter-lists from $src (webext-ublock-origin-chromium $version)"
