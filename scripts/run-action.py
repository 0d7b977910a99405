"""Runs the `run:` steps of action.yml the way the runner does, against a built hwlint, and checks
what a user sees: the outputs, the job summary and the exit status.

    python3 scripts/run-action.py path/to/hwlint        (needs PyYAML)

The `uses:` steps (the cache) are not run; their outputs are simulated as a cache hit, so the
Install step is skipped and `~/.cargo/bin/hwlint` is the given binary. Each `run:` block gets
the `env:` of its step with `${{ inputs.X }}` and `${{ steps.S.outputs.O }}` filled in, and
GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH and HOME set, as on a runner.
Prints PASS/FAIL lines; exits 1 on any failure.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = 0


def check(ok, what, detail=""):
    global failures
    if ok:
        print(f"PASS: {what}")
    else:
        failures += 1
        print(f"FAIL: {what}")
        if detail:
            print("    " + detail.replace("\n", "\n    "))


def expression(text, inputs, outputs):
    """`${{ inputs.x }}` / `${{ steps.s.outputs.o }}`: the only expressions env: uses here."""

    def one(m):
        e = m.group(1).strip()
        if e.startswith("inputs."):
            return inputs.get(e[len("inputs."):], "")
        s = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", e)
        if s:
            return outputs.get(s.group(1), {}).get(s.group(2), "")
        raise ValueError(f"expression the simulation does not know: {e}")

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))


def condition(cond, inputs, outputs):
    """The `if:` forms action.yml uses: `&&` of `always()`, `inputs.X ==/!= 'v'`,
    `steps.S.outputs.O ==/!= 'v'` and `steps.S.outcome == 'v'`."""
    if cond is None:
        return True
    result = True
    for atom in str(cond).split("&&"):
        a = atom.strip()
        if a == "always()":
            continue
        m = re.fullmatch(r"(inputs\.([\w-]+)|steps\.([\w-]+)\.(outputs\.([\w-]+)|outcome)) (==|!=) '(.*)'", a)
        if not m:
            raise ValueError(f"condition the simulation does not know: {a}")
        if m.group(2):
            value = inputs.get(m.group(2), "")
        elif m.group(4) == "outcome":
            value = outputs.get(m.group(3), {}).get("__outcome", "skipped")
        else:
            value = outputs.get(m.group(3), {}).get(m.group(5), "")
        result = result and ((value == m.group(7)) == (m.group(6) == "=="))
    return result


def path_without(tool, work):
    """PATH with every program but `tool` (a runner without a Rust toolchain)."""
    bin_dir = os.path.join(work, "path-without-" + tool)
    os.makedirs(bin_dir, exist_ok=True)
    for d in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            target = os.path.join(d, name)
            link = os.path.join(bin_dir, name)
            if name != tool and os.access(target, os.X_OK) and not os.path.lexists(link):
                os.symlink(target, link)
    return bin_dir


def run_action(binary, inputs, cwd, no_cargo=False, extra_env=None):
    """Runs the action's steps; returns (exit status of the last step run, outputs, summary).
    A cache restore that runs is a hit (the binary is in place); `no_cargo` leaves cargo off
    PATH."""
    with open(os.path.join(REPO, "action.yml"), encoding="utf-8") as f:
        action = yaml.safe_load(f)
    defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    inputs = {**defaults, **inputs}
    work = tempfile.mkdtemp(prefix="hwlint-action-")
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(home, ".cargo", "bin"))
    summary = os.path.join(work, "summary.md")
    open(summary, "w").close()
    outputs = {}
    path = path_without("cargo", work) if no_cargo else os.environ["PATH"]
    status = 0
    for i, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{i}")
        if status != 0 and "always()" not in str(step.get("if", "")):
            break
        if not condition(step.get("if"), inputs, outputs):
            continue
        if "uses" in step:
            if step["uses"].startswith("actions/cache/restore@"):
                shutil.copy(binary, os.path.join(home, ".cargo", "bin", "hwlint"))
                outputs[sid] = {"cache-hit": "true", "cache-primary-key": "k", "__outcome": "success"}
            elif step["uses"].startswith("actions/cache/save@"):
                outputs["saved"] = {"yes": "true"}
            continue
        out_file = os.path.join(work, f"output-{i}")
        open(out_file, "w").close()
        env = {
            "PATH": path,
            "HOME": home,
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": out_file,
            "GITHUB_STEP_SUMMARY": summary,
            "GITHUB_ACTION_PATH": REPO,
            "RUNNER_TEMP": work,
            "RUNNER_OS": "Linux",
        }
        env.update(extra_env or {})
        for k, v in (step.get("env") or {}).items():
            env[k] = expression(v, inputs, outputs)
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                           cwd=cwd, env=env, capture_output=True, text=True)
        got = {"__outcome": "success" if p.returncode == 0 else "failure"}
        with open(out_file, encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    got[k] = v
        got["__log"] = p.stdout + p.stderr
        outputs[sid] = got
        status = p.returncode
    with open(summary, encoding="utf-8") as f:
        text = f.read()
    shutil.rmtree(work, ignore_errors=True)
    return status, outputs, text


def main():
    binary = os.path.abspath(sys.argv[1])
    with open(os.path.join(REPO, "action.yml"), encoding="utf-8") as f:
        action = yaml.safe_load(f)
    uses = [s.get("uses", "") for s in action["runs"]["steps"]]
    check(not any(re.match(r"actions/cache@", u) for u in uses),
          "the action never uses the combined actions/cache (its post-step save is skipped when the job fails)")
    save = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/cache/save@")]
    restore = [s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/cache/restore@")]
    check(len(restore) == 1 and len(save) == 1 and "always()" in str(save[0].get("if", "")),
          "the build cache is restored by actions/cache/restore and saved by actions/cache/save with if: always()")

    # A repository with a config that does not fit an RTX 4090 and one that does.
    repo = tempfile.mkdtemp(prefix="hwlint-action-repo-")
    try:
        for f in ("fixtures/rules/HW101/bad-trl.yaml", "fixtures/rules/HW101/clean-trl.yaml"):
            shutil.copy(os.path.join(REPO, f), os.path.join(repo, os.path.basename(f)))
        status, outputs, summary = run_action(binary, {"target": "rtx-4090", "paths": "."}, repo)
        check(status == 1, "fail-on warning: the job fails on findings", f"exit {status}\n{summary}")
        check(outputs.get("lint", {}).get("exit-code") == "1", "the exit-code output is hwlint's (1)")
        # A bare GPU name is one GPU model and no count (DESIGN.md "World size").
        check("Target: rtx-4090 (23.6 GiB)" in summary and "1 x rtx-4090" not in summary,
              "the job summary names the target GPU without inventing a GPU count", summary)
        rows = {line.split("|")[1].strip(): line for line in summary.splitlines()
                if line.startswith("| ") and ".yaml" in line}
        direct = subprocess.run([binary, "check", "--target", "rtx-4090", "--output-format", "concise", "."],
                                cwd=repo, capture_output=True, text=True).stdout
        for name, row in sorted(rows.items()):
            flagged = f"{name}:" in direct and "HW101" in "".join(l for l in direct.splitlines() if l.startswith(name))
            says_no = "**no**" in row
            check(flagged == says_no,
                  f"the job summary's verdict for {name} is check's (HW101 {'reported' if flagged else 'not reported'})",
                  row + "\n" + direct)
        check(len(rows) == 2, "the job summary has a memory row per training config", summary)

        # A config that names no model: the job summary never says "All checks passed" over a
        # memory check that did not run, and says what it needs.
        unnamed = tempfile.mkdtemp(prefix="hwlint-action-unnamed-")
        with open(os.path.join(unnamed, "sft.yaml"), "w") as f:
            f.write("per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\nmax_length: 512\n"
                    "output_dir: out\nlearning_rate: 2.0e-5\nbf16: true\n")
        status, _, summary = run_action(binary, {"target": "rtx-4090", "paths": ".", "fail-on": "never"}, unnamed)
        check("All checks passed" not in summary
              and "Memory check over 1 run(s): 0 checked; 1 not checked (1 need the model)." in summary,
              "the job summary says the memory check did not run, and what it needs", summary)
        shutil.rmtree(unnamed, ignore_errors=True)

        # A prebuilt binary by URL: a wheel as scripts/try-wheel.sh builds it, a tarball, and
        # a download that fails, which falls back to building (here without cargo: an error
        # that says what to do).
        import tarfile, zipfile
        version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()[1]
        wheel = os.path.join(repo, "..", f"hwlint-{version}-py3-none-any.whl")
        with zipfile.ZipFile(wheel, "w") as z:
            z.write(binary, f"hwlint-{version}.data/scripts/hwlint")
            info = f"hwlint-{version}.dist-info"
            z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: hwlint\nVersion: {version}\n")
            z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: run-action.py\nRoot-Is-Purelib: false\nTag: py3-none-any\n")
            z.writestr(f"{info}/RECORD", "")
        tarball = os.path.join(repo, "..", "hwlint.tar.gz")
        with tarfile.open(tarball, "w:gz") as t:
            t.add(binary, "hwlint-x86_64/hwlint")
        for what, url in (("a wheel", wheel), ("a tarball", tarball)):
            status, outputs, summary = run_action(
                binary, {"target": "rtx-4090", "paths": ".", "url": "file://" + os.path.abspath(url)}, repo,
                no_cargo=True)
            check(status == 1 and outputs.get("install", {}).get("built") == "false"
                  and "cache" not in outputs and "saved" not in outputs
                  and outputs.get("lint", {}).get("exit-code") == "1",
                  f"url input: hwlint installed from {what} without building or caching, then lints",
                  str({k: v for k, v in outputs.items()}))
        os.remove(tarball)
        # The version input, from a package index (here a folder standing in for PyPI).
        index = os.path.join(repo, "..", "index")
        os.makedirs(index, exist_ok=True)
        shutil.move(wheel, os.path.join(index, os.path.basename(wheel)))
        status, outputs, _ = run_action(
            binary, {"target": "rtx-4090", "paths": ".", "version": version}, repo, no_cargo=True,
            extra_env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": index, "PIP_CONFIG_FILE": os.devnull})
        check(outputs.get("install", {}).get("built") == "false" and outputs.get("lint", {}).get("exit-code") == "1",
              f"version input: the wheel of hwlint {version} is installed from the index, not built",
              outputs.get("install", {}).get("__log", ""))
        status, outputs, _ = run_action(
            binary, {"target": "rtx-4090", "paths": ".", "version": "0.0.1"}, repo, no_cargo=True,
            extra_env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": index, "PIP_CONFIG_FILE": os.devnull})
        log = outputs.get("install", {}).get("__log", "")
        check(status != 0 and "no prebuilt wheel of hwlint 0.0.1" in log,
              "version input with no such wheel: a warning, then the build", log)
        shutil.rmtree(index)
        status, outputs, _ = run_action(
            binary, {"target": "rtx-4090", "paths": ".", "url": "file:///nonexistent/hwlint.whl"}, repo,
            no_cargo=True)
        log = outputs.get("install", {}).get("__log", "")
        check(status != 0 and "building it instead" in log and "cargo is not on PATH" in log
              and "lint" not in outputs,
              "url input that fails: a warning, then the build, which without cargo stops with what to do", log)

        status, outputs, summary = run_action(binary, {"target": "rtx-4090", "paths": ".", "fail-on": "never"}, repo)
        check(status == 0, "fail-on never: the job passes with findings")
        status, _, summary = run_action(binary, {"target": "h100", "paths": "."}, repo)
        check(status == 2 and "exited 2" in summary,
              "an ambiguous target is a configuration error (exit 2) the summary explains", summary)
    finally:
        shutil.rmtree(repo, ignore_errors=True)
    if failures:
        print(f"RESULT: FAIL ({failures})")
        sys.exit(1)
    print("RESULT: PASS")


if __name__ == "__main__":
    main()
