#!/usr/bin/env bash
# Fresh machine to built project: installs pnpm if missing, the locked dependencies, then `pnpm build`
# (lint -> bundle -> types -> compile). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pnpm >/dev/null 2>&1; then
  npm install -g pnpm@12.21.0
fi
# System tools of three test suites, from Debian: chromium for the reference-docs browser test (and the
# real-manager suite's test of the real manager's web interface), Go and
# the x/oauth2 sources for the generated Go client (built offline), the modules the generated Python
# client imports (when python3 lacks them), what builds its wheel offline (a python3 with setuptools,
# wheel and pip: Debian's, when none on the PATH has them) and makes a virtual environment, curl for
# the code samples' test. Installed only when
# missing and only as root; a failure here does not stop the setup: those tests then fail and say why.
need=()
command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ] || need+=(chromium)
command -v go >/dev/null 2>&1 || need+=(golang-go)
dpkg -s golang-golang-x-oauth2-dev >/dev/null 2>&1 || need+=(golang-golang-x-oauth2-dev)
python3 -c 'import urllib3, six, certifi, dateutil' >/dev/null 2>&1 ||
  need+=(python3-urllib3 python3-six python3-certifi python3-dateutil)
wheels=no
IFS=: read -ra path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [ -x "$d/python3" ] && "$d/python3" -c 'import setuptools, wheel, pip' >/dev/null 2>&1 && wheels=yes && break
done
[ $wheels = yes ] || need+=(python3-setuptools python3-wheel python3-pip)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } ||
      echo "setup: could not install ${need[*]} with apt-get; the docs, web-interface, generator and code-sample tests will fail" >&2
  else
    echo "setup: missing ${need[*]}. As root run: apt-get update && apt-get install -y --no-install-recommends ${need[*]}" >&2
    echo "       (or point CHROMIUM_PATH at a Chromium). Without them the docs, web-interface, generator and code-sample tests fail." >&2
  fi
fi
pnpm install --frozen-lockfile
pnpm build
