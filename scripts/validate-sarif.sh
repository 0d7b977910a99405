#!/usr/bin/env bash
# Validates hwlint's SARIF output with Microsoft's SARIF validator (npm @microsoft/sarif-multitool:
# the 2.1.0 schema plus GitHub-relevant best practices) and checks what code scanning relies on:
#   - relative, absolute and from-a-subfolder runs over a git repository holding the fixtures and
#     files whose names need percent-encoding (`#`, spaces, non-ASCII);
#   - every artifactLocation is relative to the repository root (`uriBaseId` %SRCROOT%, declared
#     in originalUriBaseIds) whatever the working directory;
#   - every rule has a helpUri (its docs page) and a fullDescription (its "Why is this bad?"),
#     the driver an informationUri, and every fix says whether it is safe.
# Passes when the validator reports no error and no warning, and every check holds.
# Usage: scripts/validate-sarif.sh [path/to/hwlint]   (default: builds target/release/hwlint)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
bin=${1:-}
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=$repo/target/release/hwlint
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! (cd "$work" && npm install --silent --no-audit --no-fund @microsoft/sarif-multitool >/dev/null 2>&1); then
  if [ "${HWLINT_ALLOW_SKIP:-0}" = 1 ]; then echo "SKIP: cannot install @microsoft/sarif-multitool"; exit 0; fi
  echo "FAIL: cannot install @microsoft/sarif-multitool" >&2; exit 1
fi
# npm may not run the package's postinstall (chmod); do it ourselves.
chmod u+x "$work"/node_modules/@microsoft/sarif-multitool-*/Sarif.Multitool 2>/dev/null || true

# A repository of its own: the fixtures, and a folder whose names must be percent-encoded.
src=$work/src
mkdir -p "$src/odd dir/ü #1"
cp -r fixtures "$src/fixtures"
(cd "$src" && git init -q .)
printf 'per_device_train_batch_size: 8\nmax_steps: 1000\nsave_steps: 100\ndataloader_num_workers: 0\n' \
  >"$src/odd dir/ü #1/tr ain?.yaml"

status=0
check() { # mode, working dir, path argument, the URI prefix every odd-dir result must have
  local mode=$1 cwd=$2 target=$3
  (cd "$cwd" && "$bin" check "$target" --output-format sarif --output-file "$work/$mode.sarif" --exit-zero)
  local log=$work/$mode.log
  (cd "$work" && npx --no-install sarif-multitool validate "$mode.sarif" --output "$mode.val.sarif" >"$log" 2>&1) || true
  local problems
  problems=$(grep -E ': (error|warning) ' "$log" || true)
  local facts
  if ! facts=$(python3 - "$work/$mode.sarif" "$src" <<'PY'
import json, sys, urllib.parse
sarif, root = json.load(open(sys.argv[1])), sys.argv[2]
run = sarif["runs"][0]
bad = []
base = run.get("originalUriBaseIds", {}).get("%SRCROOT%", {}).get("uri", "")
if urllib.parse.unquote(base) != "file://" + root.rstrip("/") + "/":
    bad.append(f"%SRCROOT% is {base!r}, not the repository {root}")
driver = run["tool"]["driver"]
if not driver.get("informationUri"):
    bad.append("no informationUri")
for r in driver["rules"]:
    if not r.get("helpUri", "").endswith(f"/docs/rules/{r['id']}.md"):
        bad.append(f"{r['id']}: helpUri {r.get('helpUri')!r}")
    if r["fullDescription"]["text"] == r["shortDescription"]["text"]:
        bad.append(f"{r['id']}: fullDescription is the short one")
odd = 0
for res in run["results"]:
    locs = [l["physicalLocation"]["artifactLocation"] for l in res["locations"]]
    locs += [c["artifactLocation"] for f in res.get("fixes", []) for c in f["artifactChanges"]]
    for loc in locs:
        uri = loc["uri"]
        if loc.get("uriBaseId") != "%SRCROOT%" or uri.startswith(("/", "file:")):
            bad.append(f"not relative to the repository: {loc}")
        if any(c in uri for c in " #?") or any(ord(c) > 127 for c in uri):
            bad.append(f"not percent-encoded: {uri}")
        if urllib.parse.unquote(uri) == "odd dir/ü #1/tr ain?.yaml":
            odd += 1
    for f in res.get("fixes", []):
        if f.get("properties", {}).get("applicability") not in ("safe", "unsafe"):
            bad.append(f"fix without applicability: {f['description']['text']}")
print(f"{len(run['results'])} results, {odd} locations in the odd-named file")
if bad:
    print("\n".join(sorted(set(bad))[:20]))
    sys.exit(1)
PY
  ); then
    echo "FAIL: SARIF ($mode): $facts"; status=1; return
  fi
  if [ -n "$problems" ] || ! grep -q 'Analysis completed successfully' "$log"; then
    echo "FAIL: SARIF ($mode, $facts):"; echo "$problems"; tail -5 "$log"; status=1
  else
    echo "PASS: SARIF ($mode, $facts) validates, relative to the repository root"
  fi
}
check relative "$src" .
check absolute "$work" "$src"
check subfolder "$src/odd dir" .
# The odd-named file was found in each run.
for mode in relative absolute subfolder; do
  if ! grep -q 'odd%20dir/%C3%BC%20%231/tr%20ain%3F.yaml' "$work/$mode.sarif"; then
    echo "FAIL: SARIF ($mode): the odd-named file's URI is missing or encoded otherwise"; status=1
  fi
done
exit $status
