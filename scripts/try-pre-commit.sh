#!/usr/bin/env bash
# End-to-end check of hwlint's pre-commit hooks (.pre-commit-hooks.yaml), run from the repo root:
#
#   scripts/try-pre-commit.sh                 # test the COMMITTED state (HEAD)
#   scripts/try-pre-commit.sh --ref REF       # test another commit, branch or tag
#   scripts/try-pre-commit.sh --working-tree  # test the working tree, uncommitted files included
#
# IMPORTANT: `pre-commit try-repo --ref` clones the repository and builds the hooks from
# COMMITTED content only. By default this script therefore tests HEAD: uncommitted or untracked
# changes (to src/, Cargo.toml or .pre-commit-hooks.yaml itself) are NOT part of the test.
# `--working-tree` first copies the working tree (tracked and untracked files, minus what
# .gitignore ignores) into a throw-away repository with one commit, and tests that instead.
#
# What it does, inside one temporary folder removed on exit (the cargo build folder aside):
#   1. creates a venv (python3 -m venv) and pip-installs `pre-commit` from PyPI into it;
#   2. creates a git repository holding one Hugging Face Trainer config with
#      `dataloader_num_workers: 64` (HW201 on the 16-core `workstation` target its hwlint.toml
#      names) and commits it;
#   3. `pre-commit try-repo <this repo> hwlint --all-files` must fail and name HW201;
#   4. `pre-commit try-repo <this repo> hwlint-fix --all-files` must rewrite the value to 15
#      (16 cores - 1) and leave every other byte of the file as it was;
#   5. `pre-commit try-repo <this repo> hwlint --all-files` must then pass;
#   6. with several configs naming the same unknown model, HW901 is said once per run (pre-commit
#      would otherwise split the files into parallel batches, one hwlint each);
#   7. the `language: python` variant (hwlint-python: pip builds the maturin wheel) reports the
#      same finding.
#
# pre-commit's `rust` language runs `cargo install --bins --root <env> --path .` in its clone.
# The build goes to CARGO_TARGET_DIR=target/try-pre-commit of this checkout (override with
# HWLINT_TRY_TARGET_DIR), with CARGO_BUILD_JOBS=2 unless set: a folder of its own inside target/,
# kept between runs, so only the first run builds the dependencies (about 3 minutes on 2 cores)
# and later runs rebuild only the hwlint crate. It is not target/ itself: the clone has the same
# relative paths as this checkout, so cargo would take the two hwlint crates for one, and the
# committed binary would overwrite target/release/hwlint of whoever is building here.
# Needs network access to PyPI and, the first time, crates.io.
#
# Exit status: 0 when every check passed, 1 otherwise. When pre-commit cannot be installed (no
# network) the script fails, unless HWLINT_ALLOW_SKIP=1, in which case it prints
# "SKIP: cannot install pre-commit" and exits 0.
set -euo pipefail

usage() {
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
}

mode=committed
ref=""
while [ $# -gt 0 ]; do
    case "$1" in
        --working-tree) mode=worktree ;;
        --ref)
            [ $# -ge 2 ] || { echo "error: --ref needs a value" >&2; exit 2; }
            mode=ref
            ref="$2"
            shift
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "error: unknown argument: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

repo_root="$(git -C "$(dirname "${BASH_SOURCE[0]}")/.." rev-parse --show-toplevel)"

work="$(mktemp -d "${TMPDIR:-/tmp}/hwlint-try-pre-commit.XXXXXX")"
trap 'rm -rf "$work"' EXIT

failures=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
die() {
    echo "FAIL: $*"
    echo "RESULT: FAIL"
    exit 1
}
show_log() { # the last lines of a log, indented
    echo "----- last lines of $(basename "$1") -----"
    tail -n "${2:-40}" "$1" | sed 's/^/    /'
    echo "-----"
}

# --- what to test ------------------------------------------------------------------------------
case "$mode" in
    committed | ref)
        [ -n "$ref" ] || ref=HEAD
        sha="$(git -C "$repo_root" rev-parse --verify --quiet "$ref^{commit}")" ||
            die "no commit '$ref' in $repo_root"
        src="$repo_root"
        if ! git -C "$repo_root" cat-file -e "$sha:.pre-commit-hooks.yaml" 2>/dev/null; then
            die "commit $sha has no .pre-commit-hooks.yaml (try-repo tests committed content; commit it, or rerun with --working-tree)"
        fi
        if [ "$mode" = committed ] && [ -n "$(git -C "$repo_root" status --porcelain --untracked-files=no)" ]; then
            echo "note: the working tree has uncommitted changes; they are NOT tested (use --working-tree)"
        fi
        ref="$sha"
        echo "testing committed state $sha of $repo_root"
        ;;
    worktree)
        src="$work/snapshot"
        git init -q "$src"
        # Tracked and untracked files, minus ignored ones and tracked files deleted in the tree.
        (
            cd "$repo_root"
            git ls-files -z --cached --others --exclude-standard |
                while IFS= read -r -d '' f; do
                    [ -f "$f" ] || [ -L "$f" ] || continue
                    printf '%s\0' "$f"
                done |
                tar --null -T - -cf -
        ) | tar -C "$src" -xf -
        git -C "$src" add -A
        git -C "$src" -c user.name=try-pre-commit -c user.email=try-pre-commit@localhost \
            commit -q --no-verify -m "working tree snapshot"
        ref="$(git -C "$src" rev-parse HEAD)"
        [ -f "$src/.pre-commit-hooks.yaml" ] || die "the working tree has no .pre-commit-hooks.yaml"
        echo "testing the working tree of $repo_root (snapshot commit $ref)"
        ;;
esac

# --- pre-commit in a throw-away venv -------------------------------------------------------------
echo "installing pre-commit into a temporary venv..."
python3 -m venv "$work/venv" || die "python3 -m venv failed (is the venv module installed?)"
if ! "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --timeout 30 --retries 2 pre-commit >"$work/pip.log" 2>&1; then
    show_log "$work/pip.log" 15
    if [ "${HWLINT_ALLOW_SKIP:-0}" = 1 ]; then
        echo "SKIP: cannot install pre-commit"
        exit 0
    fi
    die "cannot install pre-commit from PyPI (set HWLINT_ALLOW_SKIP=1 to skip instead)"
fi
pre_commit="$work/venv/bin/pre-commit"
pass "installed pre-commit $("$pre_commit" --version | awk '{print $2}')"

command -v cargo >/dev/null || die "cargo is not on PATH (pre-commit's rust hooks build with it)"

export PRE_COMMIT_HOME="$work/pre-commit-home"
export CARGO_TARGET_DIR="${HWLINT_TRY_TARGET_DIR:-$repo_root/target/try-pre-commit}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
export CARGO_TERM_COLOR=never
export NO_COLOR=1
# Under GitHub Actions hwlint would default to its `github` annotation format; test the
# format a developer sees locally instead.
unset GITHUB_ACTIONS

# --- a repository with a bad config --------------------------------------------------------------
consumer="$work/consumer"
mkdir -p "$consumer/configs"
git init -q "$consumer"
cat >"$consumer/configs/train.yaml" <<'YAML'
# Hugging Face Trainer arguments (TrainingArguments)
output_dir: out
per_device_train_batch_size: 8
gradient_accumulation_steps: 1
max_steps: 100
save_steps: 50
dataloader_num_workers: 64  # one per core of the big box
YAML
# The machine its runs use, named as `hwlint init` does: under the built-in default target the
# host is a guess and hwlint-fix would only show HW201's fix.
cat >"$consumer/hwlint.toml" <<'TOML'
target = "workstation"
TOML
sed 's/^dataloader_num_workers: 64 /dataloader_num_workers: 15 /' \
    "$consumer/configs/train.yaml" >"$work/expected.yaml"
git -C "$consumer" add -A
git -C "$consumer" -c user.name=try-pre-commit -c user.email=try-pre-commit@localhost \
    commit -q --no-verify -m "bad config"

try_repo() { # HOOK LOG: run `pre-commit try-repo` in the consumer repo; prints nothing, returns rc
    local hook="$1" log="$2"
    (cd "$consumer" && "$pre_commit" try-repo "$src" "$hook" --ref "$ref" --all-files \
        --color never --verbose) >"$log" 2>&1
}

explain_error() { # LOG: say why a hook run errored out rather than linting
    local log="$1"
    if grep -q "unexpected argument '--[a-z-]*'" "$log"; then
        echo "  hwlint at $ref lacks a flag the hook passes: $(grep -o "unexpected argument '--[a-z-]*'" "$log" | head -n 1)"
    fi
    if grep -qE "An unexpected error has occurred|CalledProcessError" "$log"; then
        echo "  pre-commit itself failed (building the hook with cargo install?); see $(basename "$log") below"
        [ -f "$PRE_COMMIT_HOME/pre-commit.log" ] && show_log "$PRE_COMMIT_HOME/pre-commit.log" 30
    fi
    show_log "$log"
}

# --- 1. hwlint must fail and name HW201 ----------------------------------------------------------
echo "running the hwlint hook (pre-commit builds hwlint with cargo install into $CARGO_TARGET_DIR;"
echo "  the first build there takes a few minutes)..."
start=$SECONDS
rc=0
try_repo hwlint "$work/hwlint-1.log" || rc=$?
echo "  (took $((SECONDS - start)) s, exit $rc)"
if [ "$rc" -eq 0 ]; then
    fail "hook hwlint passed on a config with dataloader_num_workers: 64 (expected a failure)"
    show_log "$work/hwlint-1.log"
elif ! grep -q "HW201" "$work/hwlint-1.log"; then
    fail "hook hwlint failed (exit $rc) but its output does not mention HW201"
    explain_error "$work/hwlint-1.log"
else
    pass "hook hwlint fails on the bad config and reports HW201"
fi
# Without an installed hook nothing else can work.
if ! grep -q "HW201" "$work/hwlint-1.log"; then
    echo "RESULT: FAIL ($failures check(s) failed)"
    exit 1
fi

# --- 2. hwlint-fix must rewrite the value ---------------------------------------------------------
rc=0
try_repo hwlint-fix "$work/hwlint-fix.log" || rc=$?
if [ "$rc" -eq 0 ]; then
    fail "hook hwlint-fix exited 0, but pre-commit should fail a hook that modified files"
    show_log "$work/hwlint-fix.log"
elif ! grep -q "files were modified by this hook" "$work/hwlint-fix.log"; then
    fail "hook hwlint-fix failed (exit $rc) without modifying files"
    explain_error "$work/hwlint-fix.log"
else
    pass "hook hwlint-fix modified files (exit $rc, as pre-commit does for a fixing hook)"
fi
if grep -q '^dataloader_num_workers: 15  # one per core of the big box$' "$consumer/configs/train.yaml"; then
    pass "hwlint-fix set dataloader_num_workers to 15 and kept the trailing comment"
else
    fail "hwlint-fix did not set dataloader_num_workers to 15; the file now reads:"
    sed 's/^/    /' "$consumer/configs/train.yaml"
fi
if cmp -s "$work/expected.yaml" "$consumer/configs/train.yaml"; then
    pass "hwlint-fix left every other byte of the file as it was"
else
    fail "hwlint-fix changed more than the one value:"
    diff -u "$work/expected.yaml" "$consumer/configs/train.yaml" | sed 's/^/    /' || true
fi

# --- 3. hwlint must now pass ------------------------------------------------------------------
rc=0
try_repo hwlint "$work/hwlint-2.log" || rc=$?
if [ "$rc" -eq 0 ] && grep -q "Passed" "$work/hwlint-2.log"; then
    pass "hook hwlint passes on the fixed config"
else
    fail "hook hwlint still fails on the fixed config (exit $rc)"
    explain_error "$work/hwlint-2.log"
fi

# --- 4. HW901 once per run, whatever the batches ----------------------------------------------
for i in 1 2 3 4 5 6; do
    cat >"$consumer/configs/sweep-$i.yaml" <<YAML
# Hugging Face Trainer arguments (TrainingArguments)
output_dir: out-$i
model_name_or_path: our-org/internal-7b
per_device_train_batch_size: 4
max_steps: 100
save_steps: 50
YAML
done
git -C "$consumer" add -A
rc=0
try_repo hwlint "$work/hwlint-901.log" || rc=$?
# Counted by the note on that model: train.yaml beside them names no model and gets its own
# HW901 (a run the memory check did not run on), which is not a repeat.
n901="$(grep -c "model \`our-org/internal-7b\` is not in hwlint's catalog" "$work/hwlint-901.log" || true)"
if [ "$n901" -eq 1 ]; then
    pass "HW901 for a model six configs name is reported once (exit $rc)"
else
    fail "HW901 reported $n901 times for one unknown model in six configs (expected once)"
    show_log "$work/hwlint-901.log"
fi
git -C "$consumer" rm -q --cached configs/sweep-*.yaml
rm -f "$consumer"/configs/sweep-*.yaml

# --- 5. the language: python variant -------------------------------------------------------------
sed -i 's/^dataloader_num_workers: 15 /dataloader_num_workers: 64 /' "$consumer/configs/train.yaml"
git -C "$consumer" add -A
echo "running the hwlint-python hook (pip builds the maturin wheel)..."
start=$SECONDS
rc=0
try_repo hwlint-python "$work/hwlint-python.log" || rc=$?
echo "  (took $((SECONDS - start)) s, exit $rc)"
if [ "$rc" -ne 0 ] && grep -q "HW201" "$work/hwlint-python.log"; then
    pass "hook hwlint-python (language: python) fails on the bad config and reports HW201"
else
    fail "hook hwlint-python (exit $rc) did not report HW201"
    explain_error "$work/hwlint-python.log"
fi

if [ "$failures" -eq 0 ]; then
    echo "RESULT: PASS (all checks passed)"
    exit 0
fi
echo "RESULT: FAIL ($failures check(s) failed)"
exit 1
