#!/usr/bin/env bash
# Makes sure the machine has what Glimpse needs besides npm packages: Debian's browsers for Playwright
# (no browser download): `chromium-headless-shell` (the default capture browser) and `chromium` (the full
# browser, selectable with CHROMIUM_PATH); `ffmpeg` (browser session run videos); CJK/emoji fonts;
# `redis-server` (tests that stop their own Redis); then PostgreSQL and Redis themselves where
# DATABASE_URL and REDIS_URL point at this machine and nothing answers (scripts/ensure-local-services.sh).
# Installs them with apt-get when missing and we are root; otherwise says what to install.
# Idempotent and quiet when all is there.
set -euo pipefail

# Any usable browser (what the tests need at the least): CHROMIUM_PATH or one of the paths the
# browser pool looks at (src/browser/chromium-executable.ts).
have_browser() {
  [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ] && return 0
  for p in /usr/bin/chromium-headless-shell /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome-stable /usr/bin/google-chrome /snap/bin/chromium; do
    [ -x "$p" ] && return 0
  done
  return 1
}
# fc-list's output is read whole: with pipefail, `fc-list | grep -q` fails when grep stops reading early
# (fc-list then dies of SIGPIPE), and the fonts were installed again on every run.
have_fonts() {
  local fonts
  command -v fc-list >/dev/null 2>&1 && fonts=$(fc-list) && grep -qi 'Noto Sans CJK' <<<"$fonts" && grep -qi 'Noto Color Emoji' <<<"$fonts"
}

missing=()
[ -x /usr/bin/chromium-headless-shell ] || missing+=(chromium-headless-shell)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
have_fonts || missing+=(fonts-noto-cjk fonts-noto-color-emoji)
# Tests that take Redis away start their own redis-server on a loopback port.
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -eq 0 ]; then
  :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing ${missing[*]} with apt-get…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "Missing system packages: ${missing[*]}. Install them (e.g. sudo apt-get install ${missing[*]}) or set CHROMIUM_PATH." >&2
  have_browser || exit 1
fi

bash "$(dirname "$0")/ensure-local-services.sh"
