#!/usr/bin/env bash
# Fuzzes every hwlint target for a while and prints what each did.
#
#   fuzz/run.sh [SECONDS]            each target for SECONDS (default 120)
#   FUZZ_RUNS=N fuzz/run.sh          each target for N executions instead
#   FUZZ_TARGETS="yaml fix" ...      only these targets (default: every target of fuzz/Cargo.toml:
#                                    yaml toml json fix python rust shell launch inherit)
#   FUZZ_KEEP_GOING=1 ...            do not stop at the first crash (libFuzzer fork mode with
#                                    -ignore_crashes): collects every crash in the time given
#   FUZZ_SANITIZER=none ...          build without AddressSanitizer (about twice the execs/s)
#   FUZZ_NO_TRACE_COMPARES=1 ...     build without comparison tracing: several times the execs/s
#                                    for the code targets, whose lints compare many strings
#   FUZZ_TIMEOUT=S                   seconds one input may take before it counts as a hang (20)
#
# Uses the nightly toolchain when installed, else the stable one with RUSTC_BOOTSTRAP=1 (no
# toolchain is downloaded). Installs cargo-fuzz into
# ${CARGO_FUZZ_ROOT:-~/.cache/hwlint-fuzz/cargo-fuzz} when it is not on PATH. Seeds
# fuzz/corpus/<target>/ from fixtures/ (copied at every run, never committed), keeps logs in
# fuzz/logs/ and crashes in fuzz/artifacts/<target>/. Exits non-zero when a target crashed
# (or failed to build). A crash is replayed with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/crash-...
# and, once minimized (`cargo +nightly fuzz tmin <target> <file>`), belongs in
# fuzz/regressions/<target>/, which `cargo test --test fuzz_regressions` replays.
set -euo pipefail

seconds="${1:-120}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: $0 [SECONDS]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fuzz="$root/fuzz"
cd "$root"

read -ra targets <<<"${FUZZ_TARGETS:-yaml toml json fix python rust shell launch inherit}"

# --- cargo-fuzz -------------------------------------------------------------------------------
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    tool_root="${CARGO_FUZZ_ROOT:-$HOME/.cache/hwlint-fuzz/cargo-fuzz}"
    if [[ ! -x "$tool_root/bin/cargo-fuzz" ]]; then
        echo "installing cargo-fuzz into $tool_root" >&2
        cargo install --locked cargo-fuzz --root "$tool_root"
    fi
    export PATH="$tool_root/bin:$PATH"
fi

# --- corpus seeds -----------------------------------------------------------------------------
# Every input starts with header bytes (see tests/support/invariants.rs): `yaml`, `toml`,
# `python`, `rust` and `shell` one byte for the file name and hardware, `json` and `fix` two
# (variant or format, then file name and hardware); `launch` and `inherit` one, then files
# split at NUL bytes. Seeds cycle through the 8 file names x 4 targets; every target also starts
# from its committed regressions.
seed() { # seed TARGET HEADER-BYTES(decimal, space-separated) FILE
    local dir="$fuzz/corpus/$1" header="" name b
    for b in $2; do header+="\\x$(printf '%02x' "$b")"; done
    name="seed-${2// /-}-$(echo "${3#fixtures/}" | tr '/' '_')"
    { printf '%b' "$header"; cat "$3"; } >"$dir/$name"
}

for t in "${targets[@]}"; do
    mkdir -p "$fuzz/corpus/$t" "$fuzz/artifacts/$t"
done
i=0
while IFS= read -r -d '' f; do
    p=$(((i % 8) + 64 * ((i / 8) % 4)))
    i=$((i + 1))
    case "$f" in
        *.yaml | *.yml) fmt=yaml fmtbyte=48 ;; # '0'
        *.toml) fmt=toml fmtbyte=49 ;;          # '1'
        *.json | *.jsonc) fmt=json fmtbyte=50 ;; # '2'
        *.py) fmt=python ;;
        *.rs) fmt=rust ;;
        *.sh) fmt=shell ;;
        *) continue ;;
    esac
    for t in "${targets[@]}"; do
        case "$t" in
            yaml | toml | python | rust | shell) [[ "$t" == "$fmt" ]] && seed "$t" "$p" "$f" ;;
            json)
                if [[ "$fmt" == json ]]; then
                    seed json "48 $p" "$f"
                    seed json "49 $p" "$f"
                fi
                ;;
            fix)
                seed fix "$fmtbyte $p" "$f"
                [[ "$fmt" == json ]] && seed fix "51 $p" "$f"
                ;;
        esac
    done
done < <(find fixtures -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.toml' -o -name '*.json' -o -name '*.jsonc' -o -name '*.py' -o -name '*.rs' -o -name '*.sh' \) -print0 | sort -z)
for t in "${targets[@]}"; do
    for f in "$fuzz/regressions/$t"/*; do
        [[ -f "$f" && "$(basename "$f")" != README.md ]] && cp "$f" "$fuzz/corpus/$t/regression-$(basename "$f")"
    done
done

# --- build once, then run ---------------------------------------------------------------------
# cargo-fuzz needs nightly rustc flags. Where no nightly toolchain is installed (and none can
# be fetched), the stable compiler accepts them when told it is bootstrapping.
toolchain=(+nightly)
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    toolchain=()
    export RUSTC_BOOTSTRAP=1
fi

fuzz_flags=()
if [[ -n "${FUZZ_SANITIZER:-}" ]]; then
    fuzz_flags+=(--sanitizer "$FUZZ_SANITIZER")
fi
if [[ -n "${FUZZ_NO_TRACE_COMPARES:-}" ]]; then
    fuzz_flags+=(--no-trace-compares)
fi
mkdir -p "$fuzz/logs"
start=$(date +%s)
if ! cargo "${toolchain[@]}" fuzz build "${fuzz_flags[@]}" 2>&1 | tee "$fuzz/logs/build.log" | tail -n 3; then
    echo "fuzz build failed: see fuzz/logs/build.log" >&2
    exit 1
fi
echo "build: $(($(date +%s) - start)) s" >&2

lib_args=("-timeout=${FUZZ_TIMEOUT:-20}")
if [[ -n "${FUZZ_RUNS:-}" ]]; then
    lib_args+=("-runs=$FUZZ_RUNS")
else
    lib_args+=("-max_total_time=$seconds")
fi
if [[ -n "${FUZZ_KEEP_GOING:-}" ]]; then
    lib_args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi

marker="$fuzz/logs/.run-start-$$" # per run: two runs may go side by side
trap 'rm -f "$marker"' EXIT
touch "$marker"
declare -A status
for t in "${targets[@]}"; do
    echo "=== $t: ${lib_args[*]}" >&2
    t0=$(date +%s)
    set +e
    cargo "${toolchain[@]}" fuzz run "${fuzz_flags[@]}" "$t" -- "${lib_args[@]}" >"$fuzz/logs/$t.log" 2>&1
    status[$t]=$?
    set -e
    echo "$(($(date +%s) - t0))" >"$fuzz/logs/$t.seconds"
done

# --- report -----------------------------------------------------------------------------------
failed=0
printf '\n%-8s %12s %9s %8s %8s  %s\n' target executions exec/s seconds crashes status
for t in "${targets[@]}"; do
    log="$fuzz/logs/$t.log"
    # Plain mode ends with `Done N runs in S second(s)`; fork mode prints `#N: cov: ...` lines
    # and `INFO: exiting: C time: Ss`. A run stopped by a crash has neither: its last `#N` line
    # and the wall time stand in.
    execs=$(sed -nE 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/p' "$log" | tail -n 1)
    secs=$(sed -nE 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/p' "$log" | tail -n 1)
    [[ -n "$execs" ]] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    [[ -n "$secs" ]] || secs=$(sed -nE 's/^INFO: exiting: .* time: ([0-9]+)s.*/\1/p' "$log" | tail -n 1)
    [[ -n "$secs" ]] || secs=$(cat "$fuzz/logs/$t.seconds")
    rate="?"
    if [[ -n "$execs" ]] && ((secs > 0)); then
        rate=$((execs / secs))
    fi
    crashes=$(find "$fuzz/artifacts/$t" -type f -newer "$marker" \
        \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    state=ok
    if ((crashes > 0)); then
        state=CRASHED
        failed=1
    elif ((status[$t] != 0)); then
        state="exit ${status[$t]}"
        failed=1
    fi
    printf '%-8s %12s %9s %8s %8s  %s\n' "$t" "${execs:-?}" "$rate" "$secs" "$crashes" "$state"
done
if ((failed)); then
    echo
    echo "crashes (logs in fuzz/logs/):"
    find "$fuzz/artifacts" -type f -newer "$marker" \
        \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) |
        sed "s|^$root/||" | sort
fi
exit "$failed"
