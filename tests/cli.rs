//! The command line: exit codes, --diff, --fix, --select/--ignore, config discovery,
//! per-path targets, files that are not training configs, broken files.

use std::fs;

use assert_cmd::Command;

#[path = "support/cli.rs"]
mod support;
use support::{hwlint, write};

const BAD_HF: &str = "# HF Trainer args\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 2\nmax_steps: 100\nsave_steps: 500   # copied\nlearning_rate: 2.0e-5\n";
const BAD_LEROBOT: &str = "{\n  \"dataset\": {\"repo_id\": \"lerobot/pusht\"},\n  \"policy\": {\"type\": \"diffusion\"},\n  \"batch_size\": 64,\n  \"steps\": 200000,\n  \"num_workers\": 0,\n  \"save_freq\": 20000\n}\n";

fn stdout(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn exit_codes() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "clean/args.yaml", "per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\nmax_steps: 1000\nsave_steps: 500\nlearning_rate: 2.0e-5\n");
    write(d.path(), "bad/args.yaml", BAD_HF);
    assert_eq!(stdout(hwlint(d.path()).arg("clean")).0, 0);
    let (code, out) = stdout(hwlint(d.path()).args(["bad", "--output-format", "concise"]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("bad/args.yaml:5:13: HW303"), "{out}");
    assert_eq!(stdout(hwlint(d.path()).args(["bad", "--exit-zero"])).0, 0);
    assert_eq!(stdout(hwlint(d.path()).arg("missing")).0, 2);
    write(d.path(), "badcfg/hwlint.toml", "target = \"no-such-gpu\"\n");
    write(d.path(), "badcfg/a.yaml", BAD_HF);
    let out = hwlint(d.path()).arg("badcfg").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-gpu"));
    // Info never fails a run; `check` is the default subcommand.
    assert_eq!(stdout(hwlint(d.path()).args(["check", "clean"])).0, 0);
}

#[test]
fn diff_prints_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "train_config.json", BAD_LEROBOT);
    let (code, out) =
        stdout(hwlint(d.path()).args(["--cpu-cores", "16", "--diff", "train_config.json"]));
    assert_eq!(code, 1);
    assert!(
        out.contains("-  \"num_workers\": 0,") && out.contains("+  \"num_workers\": 8,"),
        "{out}"
    );
    assert_eq!(
        fs::read_to_string(d.path().join("train_config.json")).unwrap(),
        BAD_LEROBOT
    );
}

#[test]
fn fix_writes_keeps_comments_and_is_idempotent() {
    let d = tempfile::tempdir().unwrap();
    let text = "\u{feff}# loader\r\nper_device_train_batch_size: 8\r\ndataloader_num_workers: 64 # too many\r\nmax_steps: 1000\r\n";
    write(d.path(), "args.yaml", text);
    // Under the built-in default target the host is a guess: HW201's fix is shown, not applied.
    let (code, out) = stdout(hwlint(d.path()).args(["--fix", "args.yaml"]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("guess of the host"), "{out}");
    assert_eq!(
        fs::read_to_string(d.path().join("args.yaml")).unwrap(),
        text
    );
    // The host named: the fix applies.
    let (code, out) = stdout(hwlint(d.path()).args(["--cpu-cores", "16", "--fix", "args.yaml"]));
    assert_eq!(code, 0, "{out}");
    let fixed = fs::read_to_string(d.path().join("args.yaml")).unwrap();
    assert_eq!(fixed, text.replace("64 # too many", "15 # too many"));
    assert!(out.contains("Fixed 1 problem"), "{out}");
    let (code, _) = stdout(hwlint(d.path()).args(["--fix", "args.yaml"]));
    assert_eq!(code, 0);
    assert_eq!(
        fs::read_to_string(d.path().join("args.yaml")).unwrap(),
        fixed
    );
}

#[test]
fn select_and_ignore() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_HF);
    assert_eq!(
        stdout(hwlint(d.path()).args(["a.yaml", "--ignore", "HW3"])).0,
        0
    );
    assert_eq!(
        stdout(hwlint(d.path()).args(["a.yaml", "--select", "HW2,HW4"])).0,
        0
    );
    assert_eq!(
        stdout(hwlint(d.path()).args(["a.yaml", "--select", "HW303"])).0,
        1
    );
}

/// A rule that leaves a finding to another does so only when that one runs: with HW104
/// switched off, HW101 reports the JAX run whose fraction is too small for its step (and says
/// which fraction holds it); with HW103 off, HW102 no longer waits for HW103's fix to offer
/// its own. Before, both passed in silence or without a fix.
#[test]
fn a_finding_left_to_a_rule_that_is_off_is_reported_by_the_rule_that_left_it() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules");
    let openpi = fixtures.join("HW104/openpi");
    let run = |args: &[&str]| {
        stdout(
            hwlint(&openpi)
                .args([
                    "scripts/bad-fraction-too-low.sh",
                    "--output-format",
                    "concise",
                ])
                .args(args),
        )
    };
    let (code, out) = run(&[]);
    assert_eq!(
        (code, out.contains("HW104"), out.contains("HW101")),
        (1, true, false),
        "{out}"
    );
    for off in [["--ignore", "HW104"], ["--select", "HW101"]] {
        let (code, out) = run(&off);
        assert_eq!(code, 1, "{off:?}: {out}");
        assert!(
            out.contains("HW101")
                && out.contains("the card holds the step at XLA_PYTHON_CLIENT_MEM_FRACTION=0.8"),
            "{off:?}: {out}"
        );
    }
    let hw102 = fixtures.join("HW102");
    let fixes = |args: &[&str]| {
        let (_, out) = stdout(
            hwlint(&hw102)
                .args(["bad-trl-checkpointing.yaml", "--output-format", "json"])
                .args(args),
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "HW102")
            .map(|d| !d["fix"].is_null())
            .collect::<Vec<_>>()
    };
    assert_eq!(fixes(&[]), [false], "HW102 waits for HW103's fix");
    assert_eq!(fixes(&["--ignore", "HW103"]), [true]);
}

#[test]
fn closest_config_wins_and_per_path_targets() {
    let d = tempfile::tempdir().unwrap();
    let trl = "model_name_or_path: Qwen/Qwen2.5-0.5B\nmax_length: 1024\nper_device_train_batch_size: 4\nnum_train_epochs: 1\n";
    write(
        d.path(),
        "hwlint.toml",
        "target = \"h100-sxm\"\n\n[[per-path]]\npaths = [\"old/**\"]\ntarget = \"t4\"\n",
    );
    write(d.path(), "a/sft.yaml", trl);
    write(d.path(), "old/sft.yaml", trl);
    write(d.path(), "b/hwlint.toml", "target = \"v100-16gb\"\n");
    write(d.path(), "b/sft.yaml", trl);
    let (_, out) =
        stdout(hwlint(d.path()).args([".", "--output-format", "concise", "--select", "HW4"]));
    // TRL trains in bf16 by default: fine on H100, not on T4 or V100.
    assert!(!out.contains("a/sft.yaml"), "{out}");
    assert!(out.contains("old/sft.yaml:1:1: HW401"), "{out}");
    assert!(out.contains("b/sft.yaml:1:1: HW401"), "{out}");
    assert!(out.contains("varies per file"), "{out}");
    // Flags win over files.
    let (code, _) =
        stdout(hwlint(d.path()).args([".", "--target", "a100-80gb", "--select", "HW4"]));
    assert_eq!(code, 0);
    let (code, _) = stdout(hwlint(d.path()).args([".", "--no-config", "--select", "HW4"]));
    assert_eq!(code, 0);
}

#[test]
fn non_training_files_are_silent_and_broken_files_do_not_stop_the_run() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "workflow.yml", "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cargo test\n");
    write(
        d.path(),
        "tokenizer.json",
        "{\"version\": \"1.0\", \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}}\n",
    );
    write(
        d.path(),
        "package.json",
        "{\"name\": \"x\", \"version\": \"1.0.0\"}\n",
    );
    write(d.path(), "pyproject.toml", "[project]\nname = \"x\"\n");
    write(d.path(), "notes.txt", "not a config");
    let (code, out) = stdout(hwlint(d.path()).args([".", "--output-format", "concise", "-q"]));
    assert_eq!((code, out.as_str()), (0, ""));
    // Named explicitly, a file of a type hwlint does not read is skipped silently.
    assert_eq!(stdout(hwlint(d.path()).arg("notes.txt")).0, 0);
    write(d.path(), "broken.yaml", "a: [1, 2\nb: 3\n");
    write(d.path(), "binary.json", "\u{0}\u{1}\u{2}");
    write(d.path(), "args.yaml", BAD_HF);
    let (code, out) = stdout(hwlint(d.path()).args([".", "--output-format", "concise"]));
    assert_eq!(code, 1);
    assert!(
        out.contains("broken.yaml:") && out.contains("HW902 yaml parse error"),
        "{out}"
    );
    assert!(
        out.contains("binary.json:1:1: HW902 not a text file"),
        "{out}"
    );
    assert!(out.contains("args.yaml:5:13: HW303"), "{out}");
}

#[test]
fn json_output_and_targets() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_HF);
    let (_, out) =
        stdout(hwlint(d.path()).args(["a.yaml", "--output-format", "json", "--unsafe-fixes"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The file names no model: the memory check says it did not run, at the batch it states.
    assert_eq!(v[0]["code"], "HW901");
    assert_eq!(v[0]["location"]["row"], 2);
    assert_eq!(v[1]["code"], "HW303");
    assert_eq!(v[1]["location"]["row"], 5);
    assert_eq!(v[1]["fix"]["applicability"], "unsafe");
    assert_eq!(v[1]["fix"]["edits"][0]["content"], "10");
    let (code, out) = stdout(hwlint(d.path()).arg("targets"));
    assert_eq!(code, 0);
    for gpu in ["rtx-4090", "h100-sxm", "v100-16gb", "b200"] {
        assert!(out.contains(gpu), "{out}");
    }
}

#[test]
fn where_the_checkout_sits_does_not_change_the_result() {
    // `not_paths = ["**/tests/**"]` keeps PyTorch test suites out; matched against the path
    // as given, it switched the dialect off for a whole checkout under a folder named `tests`.
    let d = tempfile::tempdir().unwrap();
    let script =
        fs::read_to_string("fixtures/rules/HW202/named-host/bad-pytorch-argparse.py").unwrap();
    write(d.path(), "tests/proj/.git/HEAD", "ref: refs/heads/main\n");
    write(d.path(), "tests/proj/train.py", &script);
    write(d.path(), "tests/proj/tests/test_train.py", &script);
    let proj = d.path().join("tests/proj");
    let abs = proj.join("train.py");
    for (dir, arg) in [
        (proj.as_path(), "train.py".to_string()),
        (d.path(), abs.display().to_string()),
        (proj.as_path(), ".".to_string()),
    ] {
        let (code, out) =
            stdout(hwlint(dir).args(["--no-config", "--output-format", "concise", &arg]));
        assert_eq!(code, 1, "{arg}: {out}");
        assert_eq!(out.matches("HW202").count(), 1, "{arg}: {out}");
        // The project's own tests folder is still a test suite.
        assert!(!out.contains("test_train.py"), "{arg}: {out}");
    }
}

#[test]
fn user_dialect_from_hwlint_toml() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "tools/our_trainer.toml",
        "name = \"ours\"\ntitle = \"Our trainer\"\nformats = [\"yaml\"]\n[[detect]]\nkeys = { \"ours.version\" = 2 }\nmin_score = 2\n[settings.num_workers]\nfrom = [{ key = \"loader.workers\" }]\n",
    );
    write(
        d.path(),
        "hwlint.toml",
        "dialects = [\"tools/our_trainer.toml\"]\n",
    );
    write(
        d.path(),
        "run.yaml",
        "ours:\n  version: 1\nloader:\n  workers: 0\n",
    );
    let (code, out) = stdout(hwlint(d.path()).args(["run.yaml", "--output-format", "concise"]));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("run.yaml:4:12: HW202 `loader.workers` is 0"),
        "{out}"
    );
}

/// A loader that reads every document of a stream (declared by the user's dialect) lints each
/// document; a model that none of them can estimate is noted once per file, not per document
/// (issue 10: HW901 was reported twice for the same model).
#[test]
fn unknown_model_is_noted_once_per_file() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "tools/sweep.toml",
        "name = \"sweep\"\ntitle = \"Our sweep runner\"\nformats = [\"yaml\"]\n\
         [load.yaml]\ncall = \"yaml.safe_load_all\"\ndocuments = \"stream\"\n\
         [[detect]]\nkeys = { \"sweep.model\" = 2 }\nmin_score = 2\n\
         [settings.model]\nfrom = [{ key = \"sweep.model\" }]\n\
         [settings.micro_batch]\nfrom = [{ key = \"sweep.batch\" }]\n",
    );
    write(
        d.path(),
        "hwlint.toml",
        "dialects = [\"tools/sweep.toml\"]\n",
    );
    write(
        d.path(),
        "runs.yaml",
        "sweep:\n  model: our-org/internal-7b\n  batch: 4\n---\nsweep:\n  model: our-org/internal-7b\n  batch: 8\n",
    );
    let (_, out) = stdout(hwlint(d.path()).args(["runs.yaml", "--output-format", "concise"]));
    assert_eq!(
        out.lines().filter(|l| l.contains("HW901")).count(),
        1,
        "{out}"
    );
    assert!(
        out.contains("runs.yaml:2:10: HW901 model `our-org/internal-7b`"),
        "{out}"
    );
}

#[test]
fn torchtitan_data_parallel_degree_excludes_model_parallel() {
    let d = tempfile::tempdir().unwrap();
    let base = "[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n[training]\nlocal_batch_size = 8\nglobal_batch_size = 96\nsteps = 1000\n";
    write(d.path(), "dp.toml", base);
    write(
        d.path(),
        "tp.toml",
        &format!("{base}\n[parallelism]\ntensor_parallel_degree = 2\n"),
    );
    let (_, out) =
        stdout(hwlint(d.path()).args([".", "--gpus", "8", "--output-format", "concise"]));
    // 8 GPUs: DP 8 -> 96 is not a multiple of 8 x 8; with TP 2, DP 4 -> 96 = 8 x 4 x 3.
    assert!(out.contains("dp.toml:10:21: HW501"), "{out}");
    assert!(
        !out.lines()
            .any(|l| l.starts_with("tp.toml") && l.contains("HW501")),
        "{out}"
    );
}

#[test]
fn invalid_utf8_is_a_diagnostic() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("latin1.yaml"),
        b"per_device_train_batch_size: 8\nname: caf\xe9\n",
    )
    .unwrap();
    let (code, out) = stdout(hwlint(d.path()).args(["latin1.yaml", "--output-format", "concise"]));
    assert_eq!(code, 1);
    assert!(
        out.contains("latin1.yaml:1:1: HW902 not a text file: invalid UTF-8 at byte 40"),
        "{out}"
    );
}

/// A fix can make another rule fire with a fix of its own (turning checkpointing off lets
/// HW102 fold the accumulation into the micro-batch): the summary of `check` must count both,
/// as `--fix` then applies both.
#[test]
fn summary_counts_fixes_that_a_fix_enables() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "hwlint.toml", "target = \"h100-sxm\"\n");
    write(
        d.path(),
        "sft.json",
        "{\n  \"model_name_or_path\": \"TinyLlama/TinyLlama_v1.1\",\n  \"dataset_name\": \"trl-lib/Capybara\",\n  \"max_length\": 1024,\n  \"per_device_train_batch_size\": 1,\n  \"gradient_accumulation_steps\": 8,\n  \"gradient_checkpointing\": true\n}\n",
    );
    let (_, out) = stdout(hwlint(d.path()).args(["sft.json", "--output-format", "concise"]));
    assert!(
        out.contains("(1 fixable with --fix, which then fixes 1 more)"),
        "{out}"
    );
    let (_, out) =
        stdout(hwlint(d.path()).args(["sft.json", "--fix", "--output-format", "concise"]));
    assert!(out.contains("Fixed 2 problems"), "{out}");
}

/// With fewer cores than processes, HW201 still reports the oversubscription but offers no fix:
/// one worker is already the floor, and the fix used to "set" the value it already had.
#[test]
fn hw201_without_a_lower_worker_count_has_no_fix() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "args.yaml",
        "output_dir: runs\nper_device_train_batch_size: 8\ndataloader_num_workers: 1\n",
    );
    let (code, out) = stdout(hwlint(d.path()).args([
        "args.yaml",
        "--no-config",
        "--cpu-cores",
        "4",
        "--gpus",
        "8",
        "--output-format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("HW201"))
        .expect("HW201 fires");
    assert!(!line.ends_with("[*]"), "{line}");
}

/// An option the estimator only bounds (torchtitan's `memory_budget` checkpointing) gives
/// HW101 only when even its least does not fit, and the message says which bound it used.
#[test]
fn a_bounded_option_fires_hw101_only_when_its_least_does_not_fit() {
    let d = tempfile::tempdir().unwrap();
    for b in [1, 16] {
        write(
            d.path(),
            &format!("b{b}.toml"),
            &format!("[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\nflavor = \"8B\"\n\n[training]\nlocal_batch_size = {b}\nseq_len = 8192\nsteps = 1000\n\n[activation_checkpoint]\nmode = \"memory_budget\"\n"),
        );
    }
    let args = [
        "--target",
        "h100-sxm",
        "--gpus",
        "8",
        "--select",
        "HW101",
        "--output-format",
        "concise",
    ];
    // Without checkpointing one 8192-token sample would not fit an H100; with full
    // checkpointing it would: the budget lies between, so nothing is said.
    let (_, out) = stdout(hwlint(d.path()).arg("b1.toml").args(args));
    assert!(!out.contains("HW101"), "{out}");
    let (code, out) = stdout(hwlint(d.path()).arg("b16.toml").args(args));
    assert_eq!(code, 1);
    assert!(
        out.contains("with each option hwlint bounds at its lower end (activation checkpointing `memory_budget`"),
        "{out}"
    );
}

/// A typo in a rule code, a count of zero, or a GPU family name that fits several GPUs is a
/// usage error (exit 2) saying what was meant, never a run that silently checks less.
#[test]
fn typos_are_usage_errors_with_a_suggestion() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.yaml", BAD_HF);
    let err = |c: &mut Command| {
        let out = c.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (args, want) in [
        (vec!["--select", "HW999"], "`HW999` is not a rule code"),
        (vec!["--select", "hw101"], "did you mean `HW101`?"),
        (
            vec!["--ignore", "XYZ"],
            "--ignore: `XYZ` is not a rule code",
        ),
        (vec!["--gpus", "0"], "'0' for '--gpus <N>'"),
        (vec!["--cpu-cores", "0"], "'0' for '--cpu-cores <N>'"),
        (vec!["--ram-gb", "0"], "not a positive number of GB"),
        (vec!["--target", "h100"], "could be `h100-pcie`,"),
    ] {
        let (code, stderr) = err(hwlint(d.path()).arg("check").args(&args).arg("t.yaml"));
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    // The same in hwlint.toml, with the file and key named.
    write(
        d.path(),
        "hwlint.toml",
        "select = [\"HW1\"]\nignore = [\"HW2O2\"]\n",
    );
    let (code, stderr) = err(hwlint(d.path()).args(["check", "t.yaml"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("hwlint.toml: ignore: `HW2O2`"), "{stderr}");
    assert!(stderr.contains("did you mean `HW202`?"), "{stderr}");
    write(
        d.path(),
        "hwlint.toml",
        "[per-file-ignores]\n\"*.yaml\" = [\"HW3O3\"]\n",
    );
    let (code, stderr) = err(hwlint(d.path()).args(["check", "t.yaml"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("per-file-ignores \"*.yaml\""), "{stderr}");
}

/// Errors are one `error:` line with its help, never a bare `hwlint::...` header; a misspelt
/// command is suggested; a closed pipe on stderr is no panic.
#[test]
fn errors_read_as_errors_and_closed_pipes_end_quietly() {
    let d = tempfile::tempdir().unwrap();
    let out = hwlint(d.path()).arg("chek").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: chek: no such file or directory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean the command `hwlint check`?"),
        "{stderr}"
    );
    assert!(!stderr.contains("hwlint::"), "{stderr}");
    let out = hwlint(d.path()).arg("nope").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("help:"), "{stderr}");
    // stderr closed before hwlint writes its error: exit 2, not a panic (101).
    let bin = assert_cmd::cargo::cargo_bin("hwlint");
    for _ in 0..20 {
        let mut child = std::process::Command::new(&bin)
            .arg("nope")
            .current_dir(d.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(2), "{status:?}");
    }
}

/// A path with nothing hwlint reads says so (as ruff does) and exits 0.
#[test]
fn no_files_to_check_is_a_warning() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "notes.md", "# notes\n");
    let out = hwlint(d.path()).args(["check", "."]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: no files to check"), "{stderr}");
    let out = hwlint(d.path())
        .args(["check", "--quiet", "."])
        .output()
        .unwrap();
    assert!(out.stderr.is_empty());
}

/// The full format wraps at the terminal's width (`COLUMNS` here), not at a fixed 100 that
/// breaks words on an 80-column terminal.
#[test]
fn the_full_format_wraps_at_the_width_it_is_given() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.yaml", BAD_HF);
    let widest = |columns: Option<&str>| {
        let mut c = hwlint(d.path());
        c.args(["check", "--output-format", "full", "t.yaml"]);
        if let Some(w) = columns {
            c.env("COLUMNS", w);
        }
        let out = String::from_utf8(c.output().unwrap().stdout).unwrap();
        // The summary line is one line at any width, as ruff's is.
        out.lines()
            .filter(|l| !l.starts_with("Found "))
            .map(|l| l.chars().count())
            .max()
            .unwrap()
    };
    assert!(widest(Some("60")) <= 60);
    let wide = widest(None);
    assert!(wide > 60 && wide <= 100, "{wide}");
}

/// A misspelt hwlint.toml key or a wrong value in a `[target]` table is an error naming the key,
/// its line and what is allowed, never "did not match any variant".
#[test]
fn config_file_errors_name_the_key() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.yaml", BAD_HF);
    for (toml, want) in [
        (
            "slect = [\"HW1\"]\n",
            vec!["line 1", "unknown field `slect`", "did you mean `select`?"],
        ),
        (
            "[target]\ngpu = \"h100-sxm\"\ncpu_core = 8\n",
            vec![
                "line 3",
                "unknown field `cpu_core`",
                "did you mean `cpu_cores`?",
            ],
        ),
        (
            "[target]\ngpu = \"h100-sxm\"\ngpus = \"two\"\n",
            vec!["line 3", "expected u32"],
        ),
        (
            "target = 5\n",
            vec!["line 1", "a target name or file", "`[target]` table"],
        ),
        (
            "[target]\ngpus = 0\n",
            vec!["[target]: `gpus` must be positive"],
        ),
        (
            "[[per-path]]\npaths = [\"x/**\"]\nram_gb = 0\n",
            vec!["[[per-path]] for [\"x/**\"]: `ram_gb` must be positive"],
        ),
    ] {
        write(d.path(), "hwlint.toml", toml);
        let out = hwlint(d.path()).args(["check", "t.yaml"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{toml}: {stderr}");
        assert!(!stderr.contains("variant"), "{toml}: {stderr}");
        for w in want {
            assert!(stderr.contains(w), "{toml}: missing {w:?} in {stderr}");
        }
    }
}

/// `--show-settings --output-format json`: schema 1, each setting with its value, origin, file
/// and line, and each run's memory with the verdict `check` acts on.
#[test]
fn show_settings_as_json() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "sft.yaml",
        include_str!("../fixtures/rules/HW101/bad-trl.yaml"),
    );
    write(d.path(), "notes.yaml", "title: not a config\n");
    let out = hwlint(d.path())
        .args([
            "check",
            "--show-settings",
            "--output-format",
            "json",
            "--target",
            "rtx-4090",
            ".",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], 1);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let notes = files.iter().find(|f| f["path"] == "notes.yaml").unwrap();
    assert!(notes["dialect"].is_null() && notes["runs"].as_array().unwrap().is_empty());
    let sft = files.iter().find(|f| f["path"] == "sft.yaml").unwrap();
    assert_eq!(sft["target"]["gpu"], "rtx-4090");
    // A bare GPU name gives no GPU count.
    assert!(sft["target"]["gpus"].is_null());
    let run = &sft["runs"][0];
    let micro = run["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["concept"] == "micro_batch")
        .unwrap();
    assert_eq!(micro["value"], 16);
    assert_eq!(micro["origin"], "file");
    assert_eq!(micro["key"], "per_device_train_batch_size");
    assert_eq!(
        (micro["file"].as_str(), micro["line"].as_u64()),
        (Some("sft.yaml"), Some(5))
    );
    let memory = &run["memory"];
    assert_eq!(memory["model"], "Qwen/Qwen2.5-0.5B");
    let check = hwlint(d.path())
        .args([
            "check",
            "--target",
            "rtx-4090",
            "--output-format",
            "concise",
            "sft.yaml",
        ])
        .output()
        .unwrap();
    let flagged = String::from_utf8_lossy(&check.stdout).contains("HW101");
    assert_eq!(memory["verdict"] == "does not fit", flagged, "{memory}");
}

/// `--extend-select` adds to hwlint.toml's selection; `--exclude` replaces its `exclude` and
/// `--extend-exclude` adds to it; `--show-files` lists what would be checked.
#[test]
fn extend_select_exclude_and_show_files() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.yaml", BAD_HF);
    write(d.path(), "templates/t.yaml", BAD_HF);
    write(d.path(), "vendor/t.yaml", BAD_HF);
    write(
        d.path(),
        "hwlint.toml",
        "select = [\"HW2\"]\nexclude = [\"templates/**\"]\n",
    );
    let run = |args: &[&str]| {
        let out = hwlint(d.path()).args(args).output().unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let concise = ["check", "--output-format", "concise", "t.yaml"];
    assert!(!run(&concise).contains("HW303"));
    let out = run(&[&concise[..], &["--extend-select", "HW303"]].concat());
    assert!(out.contains("HW303"), "{out}");
    let files = |extra: &[&str]| {
        let out = run(&[&["check", "--show-files", "."][..], extra].concat());
        out.lines().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(files(&[]), ["hwlint.toml", "t.yaml", "vendor/t.yaml"]);
    assert_eq!(
        files(&["--extend-exclude", "vendor"]),
        ["hwlint.toml", "t.yaml"]
    );
    assert_eq!(
        files(&["--exclude", "vendor/**,*.toml"]),
        ["t.yaml", "templates/t.yaml"]
    );
    let out = hwlint(d.path())
        .args(["check", "--extend-select", "HW9O1", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `-v` says which config file applied, the dialect and the keys that decided it.
#[test]
fn verbose_says_what_was_read() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "cfg/t.yaml", BAD_HF);
    write(d.path(), "cfg/notes.yaml", "title: notes\n");
    write(d.path(), "hwlint.toml", "ignore = [\"HW205\"]\n");
    let out = hwlint(d.path())
        .args(["check", "-v", "cfg"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("hwlint: cfg/t.yaml: config hwlint.toml; target workstation"),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 2: dialect hf-trainer (keys ") && stderr.contains("save_steps"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cfg/notes.yaml: config hwlint.toml")
            && stderr.contains("not a training config"),
        "{stderr}"
    );
}

/// Shell completions and the man page come from the clap definitions; `init` writes a config
/// that loads, and never overwrites one.
#[test]
fn completions_man_page_and_init() {
    let d = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "_hwlint()"),
        ("zsh", "#compdef hwlint"),
        ("fish", "complete -c hwlint"),
    ] {
        let out = hwlint(d.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(marker),
            "{shell}: {text}"
        );
        assert!(text.contains("extend-select"), "{shell}");
    }
    let out = hwlint(d.path()).arg("man").output().unwrap();
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH hwlint"),
        "{roff}"
    );
    assert!(
        roff.contains("completions") && roff.contains("estimate"),
        "{roff}"
    );

    let out = hwlint(d.path())
        .env("PATH", d.path().join("no-nvidia-smi"))
        .arg("init")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let written = fs::read_to_string(d.path().join("hwlint.toml")).unwrap();
    assert!(written.contains("# select = ") && written.contains("hwlint detect --write"));
    // The file loads: a check with it runs.
    write(d.path(), "t.yaml", BAD_HF);
    let (code, _) = stdout(hwlint(d.path()).args(["check", "t.yaml"]));
    assert_eq!(code, 1);
    let out = hwlint(d.path()).arg("init").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists; not overwritten"));
    assert_eq!(
        fs::read_to_string(d.path().join("hwlint.toml")).unwrap(),
        written
    );
}

/// A GPU name is not a GPU count (DESIGN.md "World size"): `--target h100-sxm`, or
/// `target = "h100-sxm"` in hwlint.toml, on a DeepSpeed config built for 4 GPUs says nothing
/// about its batch arithmetic; a count from `--gpus` does, and the fix that would change the
/// global batch is never applied by `--fix` alone.
#[test]
fn a_gpu_name_is_not_a_gpu_count() {
    let d = tempfile::tempdir().unwrap();
    let ds = "{\n  \"train_batch_size\": 64,\n  \"train_micro_batch_size_per_gpu\": 4,\n  \"gradient_accumulation_steps\": 4,\n  \"bf16\": {\"enabled\": true}\n}\n";
    write(d.path(), "ds_config.json", ds);
    let concise = |extra: &[&str]| {
        let (_, out) = stdout(
            hwlint(d.path())
                .args(["check", "--output-format", "concise", "ds_config.json"])
                .args(extra),
        );
        out
    };
    let out = concise(&["--target", "h100-sxm"]);
    assert!(
        !out.contains("HW501") && out.contains("target h100-sxm (79.2 GiB)"),
        "{out}"
    );
    write(d.path(), "hwlint.toml", "target = \"h100-sxm\"\n");
    assert!(!concise(&[]).contains("HW501"));
    let out = concise(&["--gpus", "1"]);
    assert!(
        out.contains("x 1 process (the 1 GPU of target h100-sxm) = 16"),
        "{out}"
    );
    let out = concise(&["--fix", "--gpus", "2"]);
    assert!(
        out.contains("HW501") && out.contains("2 processes"),
        "{out}"
    );
    assert_eq!(
        fs::read_to_string(d.path().join("ds_config.json")).unwrap(),
        ds
    );
}

/// Across files too: HW901 names the same unknown model once per run, in the first file in
/// path order, as the report streams.
#[test]
fn unknown_model_is_noted_once_per_run() {
    let d = tempfile::tempdir().unwrap();
    for name in ["a.yaml", "b.yaml", "c.yaml"] {
        write(
            d.path(),
            name,
            "model_name_or_path: our-org/internal-7b\nper_device_train_batch_size: 4\nmax_steps: 100\n",
        );
    }
    let (_, out) = stdout(hwlint(d.path()).args([".", "--output-format", "concise"]));
    let hw901: Vec<&str> = out.lines().filter(|l| l.contains("HW901")).collect();
    assert_eq!(hw901.len(), 1, "{out}");
    assert!(hw901[0].starts_with("a.yaml:"), "{out}");
}
