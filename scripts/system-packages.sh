#!/usr/bin/env bash
# Install the Debian packages whytree needs, when they are missing and we may.
#
#   scripts/system-packages.sh PACKAGE...
#
# Already installed: nothing happens (no network). Missing, as root with apt-get:
# `apt-get update` once (quietly), then `apt-get install`. Otherwise, or when apt fails:
# one line saying what is missing and what it costs, and exit 0 — whytree still runs
# (the reasoning tree falls back to its text view, the services demo is not built;
# tests needing the packages are skipped with that reason).
set -u

missing=()
for package in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

why="tree pictures fall back to text, the services demo (Prometheus) is not built, no local Alertmanager for the alert tests; tests that need them are skipped"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "whytree: system packages missing: ${missing[*]} (install them with apt-get as root; until then $why)" >&2
    exit 0
fi
echo "whytree: installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq >/dev/null 2>&1 \
    || ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    echo "whytree: could not install ${missing[*]} with apt-get; $why" >&2
fi
exit 0
