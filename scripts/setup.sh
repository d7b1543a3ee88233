#!/usr/bin/env bash
# Fresh machine to built project: installs pnpm if missing, the locked dependencies, then `pnpm build`
# (lint -> bundle -> types -> compile). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pnpm >/dev/null 2>&1; then
  npm install -g pnpm@12.21.0
fi
pnpm install --frozen-lockfile
pnpm build
