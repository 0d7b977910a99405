#!/usr/bin/env bash
# The standing benchmark (issue 14): hwlint against `cat`, yamllint and ruff on the same inputs,
# in one run, on this machine. Not a test and not run by CI: timings are noisy, ratios less so.
#
#   bench/run.sh            # 1k, 10k and 50k files
#   SIZES="1000 10000" bench/run.sh
#
# It builds the release binary; builds workloads by replicating ../shared/corpus (or, without
# it, the fixtures) into a temporary folder; installs yamllint and ruff from PyPI into a
# temporary venv; times each command with hyperfine when it is installed (Debian package
# `hyperfine`), else takes the median of RUNS timed runs; measures peak RSS with GNU time or,
# without it, Python's getrusage; prints a table of ratios and writes it to bench/RESULTS.md.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
sizes="${SIZES:-1000 10000 50000}"
runs="${RUNS:-5}"
work="$(mktemp -d "${TMPDIR:-/tmp}/hwlint-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say() { printf '%s\n' "$*" >&2; }

say "building the release binary"
(cd "$root" && cargo build --release --quiet)
hwlint="$root/target/release/hwlint"

# ---- workloads ------------------------------------------------------------------------------
corpus="$root/../shared/corpus"
src_list="$work/sources.txt"
if [ -d "$corpus" ]; then
  source_name="../shared/corpus"
  find "$corpus" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' -o -name '*.toml' \
    -o -name '*.py' -o -name '*.rs' -o -name '*.sh' \) | LC_ALL=C sort > "$src_list"
else
  source_name="fixtures/"
  find "$root/fixtures" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' -o -name '*.toml' \
    -o -name '*.py' -o -name '*.rs' -o -name '*.sh' \) | LC_ALL=C sort > "$src_list"
fi
# The corpus holds no Python: the Python comparison uses the code fixtures.
py_list="$work/python.txt"
find "$root/fixtures/code/python" -type f -name '*.py' | LC_ALL=C sort > "$py_list"

# N files copied round-robin from a list, 100 to a folder, keeping each name's extension.
replicate() {
  local list="$1" n="$2" dest="$3"
  python3 - "$list" "$n" "$dest" <<'PY'
import os, shutil, sys
files = [l.strip() for l in open(sys.argv[1]) if l.strip()]
n, dest = int(sys.argv[2]), sys.argv[3]
for i in range(n):
    src = files[i % len(files)]
    d = os.path.join(dest, f"d{i // 100:04d}")
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(src, os.path.join(d, f"f{i:06d}_{os.path.basename(src)}"))
PY
}

for n in $sizes; do
  say "workload: $n files from $source_name"
  replicate "$src_list" "$n" "$work/all-$n"
done
small="$(echo "$sizes" | tr ' ' '\n' | sort -n | head -1)"
# The YAML files of the smallest workload, and as many Python files.
mkdir -p "$work/yaml" "$work/python"
find "$work/all-$small" -type f \( -name '*.yaml' -o -name '*.yml' \) -exec cp {} "$work/yaml/" \;
replicate "$py_list" "$small" "$work/python"
# One large Python config module: a dict per line and a call per block, as configs are written.
python3 - "$work/big.py" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("from dataclasses import dataclass\n\n")
    for i in range(20000):
        f.write(f"cfg_{i} = dict(type='Block', lr={i}e-5, batch_size={i % 64 + 1}, layers=[{i}, {i + 1}])\n")
    f.write("\ntrain_dataloader = dict(batch_size=8, num_workers=4)\n")
PY
one="$root/fixtures/dialects/trl-sft.yaml"

# ---- tools ----------------------------------------------------------------------------------
venv="$work/venv"
have_py_tools=1
if python3 -m venv "$venv" >/dev/null 2>&1 \
  && "$venv/bin/pip" install --quiet --disable-pip-version-check yamllint ruff >/dev/null 2>&1; then
  yamllint="$venv/bin/yamllint"
  ruff="$venv/bin/ruff"
else
  say "yamllint/ruff could not be installed from PyPI: those rows are skipped"
  have_py_tools=0
fi

# Median seconds of a command (stdout and stderr discarded).
time_cmd() {
  local cmd="$1" n="${2:-$runs}"
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --style none --warmup 1 --runs "$n" --export-json "$work/h.json" -i "$cmd" >/dev/null 2>&1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$work/h.json"
  else
    bash -c "$cmd" >/dev/null 2>&1 || true
    python3 - "$cmd" "$n" <<'PY'
import statistics, subprocess, sys, time
cmd, n = sys.argv[1], int(sys.argv[2])
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append(time.perf_counter() - t)
print(statistics.median(ts))
PY
  fi
}

# Peak RSS of a command in MB.
rss_mb() {
  python3 - "$1" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1], shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}")
PY
}

bytes_of() { find "$@" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }

check="$hwlint check --no-config --exit-zero --output-format concise"
rows="$work/rows.tsv"
: > "$rows"
# what, hwlint seconds, other, other seconds, ratio text, target, met
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$rows"; }
ratio() { python3 -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}')"; }

for n in $sizes; do
  say "timing: $n files"
  h="$(time_cmd "$check $work/all-$n")"
  c="$(time_cmd "find $work/all-$n -type f -print0 | xargs -0 cat")"
  r="$(ratio "$h" "$c")"
  met="$(python3 -c "print('yes' if $r <= 1.5 else 'no')")"
  row "all files, $n" "$h" "cat" "$c" "$r x cat" "<= 1.5 x cat" "$met"
  m="$(rss_mb "$check $work/all-$n")"
  row "peak RSS, $n files" "$m MB" "" "" "" "< 60 MB" "$(python3 -c "print('yes' if $m < 60 else 'no')")"
done

if [ "$have_py_tools" = 1 ]; then
  say "timing: yamllint and ruff"
  y="$(time_cmd "$yamllint -f parsable $work/yaml" 3)"
  hy="$(time_cmd "$check $work/yaml")"
  r="$(ratio "$y" "$hy")"
  row "YAML subset ($(find "$work/yaml" -type f | wc -l) files)" "$hy" "yamllint" "$y" "hwlint $r x faster" ">= 300 x" \
    "$(python3 -c "print('yes' if $r >= 300 else 'no')")"
  ru="$(time_cmd "$ruff check --select E9,F63,F7 --no-cache --exit-zero $work/python")"
  hp="$(time_cmd "$check $work/python")"
  r="$(ratio "$hp" "$ru")"
  row "Python subset ($small files, $(bytes_of "$work/python") B)" "$hp" "ruff" "$ru" "$r x ruff" "<= 2 x ruff" \
    "$(python3 -c "print('yes' if $r <= 2 else 'no')")"
  rb="$(time_cmd "$ruff check --select E9,F63,F7 --no-cache --exit-zero $work/big.py")"
  hb="$(time_cmd "$check $work/big.py")"
  r="$(ratio "$hb" "$rb")"
  row "one large Python file ($(bytes_of "$work/big.py") B)" "$hb" "ruff" "$rb" "$r x ruff" "<= 2 x ruff" \
    "$(python3 -c "print('yes' if $r <= 2 else 'no')")"
fi

say "timing: one file and estimate"
o="$(time_cmd "$check $one" 20)"
row "one file" "$o" "" "" "" "< 5 ms" "$(python3 -c "print('yes' if $o < 0.005 else 'no')")"
e="$(time_cmd "$hwlint estimate --model llama-3.1-8b --batch-size 4 --seq-len 2048 --precision bf16-mixed --target h100-sxm" 20)"
row "estimate from flags" "$e" "" "" "" "< 5 ms" "$(python3 -c "print('yes' if $e < 0.005 else 'no')")"

# ---- the table ------------------------------------------------------------------------------
versions="hwlint $("$hwlint" --version | awk '{print $2}')"
if [ "$have_py_tools" = 1 ]; then
  versions="$versions, yamllint $("$yamllint" --version | awk '{print $2}'), ruff $("$ruff" --version | awk '{print $2}')"
fi
if command -v hyperfine >/dev/null 2>&1; then
  timer="hyperfine $(hyperfine --version | awk '{print $2}') (median of $runs runs, 3 for yamllint)"
else
  timer="median of $runs timed runs (3 for yamllint)"
fi
{
  echo "# hwlint benchmark"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m); $versions; timed with $timer."
  echo "Workloads: files replicated from $source_name, 100 to a folder; Python from fixtures/code/python."
  echo "Each row compares the same inputs in the same run."
  echo
  echo "| what | hwlint | against | its time | ratio | target | met |"
  echo "|---|---|---|---|---|---|---|"
  python3 - "$rows" <<'PY'
import sys
def t(s):
    try:
        v = float(s)
    except ValueError:
        return s
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"
for line in open(sys.argv[1]):
    what, h, other, o, ratio, target, met = line.rstrip("\n").split("\t")
    print(f"| {what} | {t(h)} | {other} | {t(o)} | {ratio} | {target} | {met} |")
PY
} > "$work/RESULTS.md"
cp "$work/RESULTS.md" "$here/RESULTS.md"
cat "$here/RESULTS.md"
