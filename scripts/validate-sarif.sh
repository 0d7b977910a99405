#!/usr/bin/env bash
# Validates hwlint's SARIF output with Microsoft's SARIF validator (npm @microsoft/sarif-multitool:
# the 2.1.0 schema plus GitHub-relevant best practices), for relative and absolute paths.
# Passes when the validator reports no error and no warning other than SARIF2005 (no tool
# informationUri) while Cargo.toml has no `repository`.
# Usage: scripts/validate-sarif.sh [path/to/hwlint]   (default: builds target/release/hwlint)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=$repo/target/release/hwlint
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! (cd "$work" && npm install --silent --no-audit --no-fund @microsoft/sarif-multitool >/dev/null 2>&1); then
  if [ "${HWLINT_ALLOW_SKIP:-0}" = 1 ]; then echo "SKIP: cannot install @microsoft/sarif-multitool"; exit 0; fi
  echo "FAIL: cannot install @microsoft/sarif-multitool" >&2; exit 1
fi
# npm may not run the package's postinstall (chmod); do it ourselves.
chmod u+x "$work"/node_modules/@microsoft/sarif-multitool-*/Sarif.Multitool 2>/dev/null || true

allowed='SARIF2005'
if grep -q '^repository *=' Cargo.toml; then allowed='^$'; fi

status=0
for mode in relative absolute; do
  target=fixtures
  [ "$mode" = absolute ] && target=$repo/fixtures
  "$bin" check "$target" --output-format sarif --output-file "$work/$mode.sarif" --exit-zero
  log=$work/$mode.log
  (cd "$work" && npx --no-install sarif-multitool validate "$mode.sarif" --output "$mode.val.sarif" >"$log" 2>&1) || true
  problems=$(grep -E ': (error|warning) ' "$log" | grep -Ev "$allowed" || true)
  results=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['runs'][0]['results']))" "$work/$mode.sarif")
  if [ -n "$problems" ] || ! grep -q 'Analysis completed successfully' "$log"; then
    echo "FAIL: SARIF ($mode paths, $results results):"; echo "$problems"; tail -5 "$log"; status=1
  else
    echo "PASS: SARIF ($mode paths, $results results) validates; allowed: $allowed"
  fi
done
exit $status
