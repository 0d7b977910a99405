#!/usr/bin/env bash
# Builds hwlint as a Python wheel (maturin, `bindings = "bin"`, pyproject.toml at the root),
# installs it into a fresh venv without the network, and runs the installed `hwlint`:
#
#   scripts/try-wheel.sh            # a release wheel (what a user downloads)
#   HWLINT_WHEEL_PROFILE=dev scripts/try-wheel.sh   # CI: reuses the debug build of `cargo test`
#
# Checks: the wheel holds the binary as a script (`<name>.data/scripts/hwlint`), `pip install`
# of the wheel alone works offline, `hwlint --version` prints the Cargo.toml version, and
# `hwlint check` on a bundled fixture finds its problem (exit 1) with the rule data embedded.
# The wheel is left in target/wheels/ (HWLINT_WHEEL_OUT) for the Action or a release to use.
#
# maturin comes from PyPI into a temporary venv. Exit 0 when every check passed, 1 otherwise;
# when maturin cannot be installed (no network) the script fails, unless HWLINT_ALLOW_SKIP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
profile="${HWLINT_WHEEL_PROFILE:-release}"
out="${HWLINT_WHEEL_OUT:-$repo/target/wheels}"
work="$(mktemp -d "${TMPDIR:-/tmp}/hwlint-try-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

python3 -m venv "$work/build" || { echo "FAIL: python3 -m venv failed"; exit 1; }
if ! "$work/build/bin/python" -m pip install --quiet --disable-pip-version-check --timeout 30 \
    --retries 2 "maturin>=1.7,<2" >"$work/pip.log" 2>&1; then
    tail -n 10 "$work/pip.log" | sed 's/^/    /'
    if [ "${HWLINT_ALLOW_SKIP:-0}" = 1 ]; then echo "SKIP: cannot install maturin"; exit 0; fi
    echo "FAIL: cannot install maturin from PyPI (set HWLINT_ALLOW_SKIP=1 to skip instead)"
    exit 1
fi
pass "installed $("$work/build/bin/maturin" --version)"

mkdir -p "$out"
rm -f "$out"/hwlint-*.whl
start=$SECONDS
if ! "$work/build/bin/maturin" build --profile "$profile" --out "$out" >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log" | sed 's/^/    /'
    echo "FAIL: maturin build"
    exit 1
fi
wheel="$(ls "$out"/hwlint-*.whl)"
pass "built $(basename "$wheel") ($profile, $(du -k "$wheel" | cut -f1) KiB, $((SECONDS - start)) s)"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
if "$work/build/bin/python" - "$wheel" "$version" <<'PY'; then
import sys, zipfile
wheel, version = sys.argv[1], sys.argv[2]
names = zipfile.ZipFile(wheel).namelist()
script = f"hwlint-{version}.data/scripts/hwlint"
if script not in names:
    print(f"    {script} is not in the wheel: {names}")
    sys.exit(1)
PY
    pass "the wheel carries the binary as the hwlint script"
else
    fail "the wheel's contents"
fi

# A fresh venv, no index: only the wheel itself may be installed.
python3 -m venv "$work/user"
start=$SECONDS
if "$work/user/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel" \
    >"$work/install.log" 2>&1; then
    pass "pip install of the wheel alone, offline ($((SECONDS - start)) s)"
else
    sed 's/^/    /' "$work/install.log"
    fail "pip install of the wheel"
fi
hwlint="$work/user/bin/hwlint"
if [ -x "$hwlint" ] && "$hwlint" --version | grep -q "^hwlint $version"; then
    pass "installed hwlint --version: $("$hwlint" --version | head -n 1)"
else
    fail "installed hwlint --version (expected hwlint $version)"
fi
rc=0
(cd "$work" && NO_COLOR=1 "$hwlint" check --output-format concise --no-config \
    "$repo/fixtures/rules/HW202/bad-lerobot.yaml") >"$work/check.log" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -q "HW202" "$work/check.log"; then
    pass "installed hwlint check finds HW202 in a fixture (exit 1)"
else
    sed 's/^/    /' "$work/check.log"
    fail "installed hwlint check (exit $rc)"
fi

if [ "$failures" -eq 0 ]; then
    echo "RESULT: PASS (wheel in $out)"
    exit 0
fi
echo "RESULT: FAIL ($failures)"
exit 1
