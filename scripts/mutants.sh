#!/usr/bin/env bash
# Mutation testing (cargo-mutants, https://mutants.rs) of the rules and the fix path.
#
#   bash scripts/mutants.sh AREA [SHARD [OPTIONS...]]   AREA: fix | fixpoint | rules
#                                                        SHARD: k/n, or `all`
#
# OPTIONS go to cargo mutants (`--list` shows the mutants without testing them).
# MUTANTS_JOBS=2 builds and tests two mutants at once (each in its own copy of the tree).
# MUTANTS_FILES='src/rules/hw104_*.rs src/rules/hw105_*.rs' narrows the area to those files
# (its tests stay the area's).
#
# Each area runs the tests that guard it, not the whole suite, so a mutant costs its build
# plus a few seconds of tests (about 50 s each on 2 cores; the rules' 600-odd mutants are a
# night's run, hence shards). A MISSED mutant is a change to the code no test notices: write
# the test that would. Results go to target/mutants/AREA[-k-of-n]/mutants.out.
set -euo pipefail
cd "$(dirname "$0")/.."
area=${1:?usage: scripts/mutants.sh fix|fixpoint|rules [k/n]}
shard=${2:-}
shift $(( $# < 2 ? $# : 2 ))
cache=${HWLINT_MUTANTS_CACHE:-$HOME/.cache/hwlint-mutants}
if [ ! -x "$cache/bin/cargo-mutants" ]; then
    cargo install --locked cargo-mutants --root "$cache"
fi
# The test targets are given to every cargo call (--cargo-arg), so that a mutant's build
# compiles those alone, not the suite's two dozen test binaries.
# The slow nesting test guards the parsers, not these areas (after `-- --`: for the test
# binaries, not cargo).
skip=(-- -- --skip every_nesting_the_guard_lets_through)
case "$area" in
    fix)
        args=(--file src/fix.rs --cargo-arg=--lib --cargo-arg=--test=safe_writes)
        ;;
    fixpoint)
        # The unit tests beside it are aimed at it; one test binary keeps a mutant to one build.
        args=(--file src/lint/fixpoint.rs --cargo-arg=--lib)
        ;;
    rules)
        args=(--file 'src/rules/*.rs' --cargo-arg=--lib --cargo-arg=--test=fixtures)
        ;;
    *)
        echo "scripts/mutants.sh: unknown area $area (fix, fixpoint or rules)" >&2
        exit 2
        ;;
esac
if [ -n "${MUTANTS_FILES:-}" ]; then
    kept=()
    skip_next=0
    for a in "${args[@]}"; do
        if [ "$skip_next" = 1 ]; then skip_next=0; continue; fi
        if [ "$a" = --file ]; then skip_next=1; continue; fi
        kept+=("$a")
    done
    args=("${kept[@]}")
    for f in $MUTANTS_FILES; do
        args+=(--file "$f")
    done
fi
out=target/mutants/$area
if [ -n "$shard" ] && [ "$shard" != all ]; then
    args+=(--shard "$shard")
    out+="-${shard/\//-of-}"
fi
if [ -n "${MUTANTS_FILES:-}" ]; then
    out+=-some
fi
mkdir -p "$out"
PATH="$cache/bin:$PATH" cargo mutants -j "${MUTANTS_JOBS:-1}" --profile mutants "${args[@]}" -o "$out" "$@" "${skip[@]}"
