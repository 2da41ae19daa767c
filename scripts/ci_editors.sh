#!/usr/bin/env bash
# Build, unit-test and package the VS Code extension (editors/vscode).
# Idempotent: npm ci starts from the lock file every time and the .vsix is rebuilt.
# Fails loudly: the first failing step stops the script with a non-zero exit and says which step it was.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ext="$here/editors/vscode"

step() { printf '\n== ci_editors: %s\n' "$*"; }
fail() { printf 'ci_editors: FAILED: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || fail "node is not installed; install Node.js 20 or newer."
command -v npm >/dev/null || fail "npm is not installed; install it with Node.js."
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 20 ] || fail "node $major is too old; the extension's tests need Node.js 20 or newer."

cd "$ext"
step "npm ci"
npm ci --no-audit --no-fund || fail "npm ci (is package-lock.json in step with package.json?)"

step "compile"
rm -rf out
npm run compile || fail "TypeScript compile"

step "unit tests"
npm test || fail "unit tests (node --test out/test/)"

step "package"
rm -f k1412.vsix
npm run package || fail "vsce package"
[ -s k1412.vsix ] || fail "vsce did not write k1412.vsix"
listing="$(unzip -l k1412.vsix 2>/dev/null || python3 -m zipfile -l k1412.vsix)"
for needed in extension/package.json extension/out/extension.js extension/node_modules/vscode-languageclient/package.json; do
  grep -q "$needed" <<<"$listing" || fail "k1412.vsix lacks $needed"
done
if grep -q "extension/src/" <<<"$listing"; then
  fail "k1412.vsix ships TypeScript sources; check .vscodeignore"
fi
step "ok: $ext/k1412.vsix ($(wc -c <k1412.vsix) bytes)"
