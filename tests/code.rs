//! Configs written as code and launch lines: what hwlint reads from each style (the training
//! setup with each setting's origin), that nothing is ever run, suppressions in code comments,
//! and fixes that land where the value was set (the script's flag or the config's key).

use std::fs;
use std::path::Path;

use assert_cmd::Command;

#[path = "support/cli.rs"]
mod support;
use support::{hwlint, write};

fn run(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// One fixture of each style, as `--show-settings` lists what it read and from where.
#[test]
fn each_style_yields_its_training_setup() {
    let fixtures = [
        "fixtures/rules/HW101/openpi-guide/src/openpi/training/bad-config.py",
        "fixtures/rules/HW101/openpi-guide/scripts/bad-guide-line.sh",
        "fixtures/rules/HW104/openpi/scripts/bad-parallel-runs.sh",
        "fixtures/rules/HW202/mmengine/bad-faster-rcnn-debug-loader.py",
        "fixtures/rules/HW202/named-host/bad-pytorch-argparse.py",
        "fixtures/rules/HW202/named-host/bad-hf-script.py",
        "fixtures/rules/HW202/bad-lightning-script.py",
        "fixtures/rules/HW202/named-host/bad-burn-training.rs",
        "fixtures/rules/HW202/named-host/bad-lerobot-train.sh",
        "fixtures/rules/HW202/export-workers/bad-export-num-workers.sh",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (_, out) = run(hwlint(root)
        .args([
            "check",
            "--show-settings",
            "--no-config",
            "--target",
            "rtx-4090",
        ])
        .args(fixtures));
    insta::assert_snapshot!(out);
}

/// A script whose top level would leave a file behind if anything ran it, and a launch script
/// that would too: linting and fixing them leaves no trace.
#[test]
fn no_code_is_ever_executed() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "train.py",
        "import os\nfrom torch.utils.data import DataLoader\nopen('RAN_PYTHON', 'w').write('ran')\nos.system('touch RAN_SHELL_FROM_PYTHON')\nloader = DataLoader(ds, batch_size=8, num_workers=0)\nfor x in loader:\n    model(x).loss.backward()\n",
    );
    write(
        d.path(),
        "run.sh",
        "touch RAN_SHELL\nexport NUM_WORKERS=$(touch RAN_SUBSHELL; echo 0)\npython train.py --batch-size 8\n",
    );
    write(
        d.path(),
        "build.rs",
        "fn main() { std::fs::write(\"RAN_RUST\", \"ran\").unwrap(); }\n",
    );
    let (code, out) = run(hwlint(d.path()).args(["check", "--no-config", "."]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("HW202"), "{out}");
    let (_, out) = run(hwlint(d.path()).args([
        "check",
        "--no-config",
        // A stated host: HW202's fix applies only where the cores are not a guess.
        "--cpu-cores",
        "16",
        "--fix",
        "--unsafe-fixes",
        ".",
    ]));
    for marker in [
        "RAN_PYTHON",
        "RAN_SHELL_FROM_PYTHON",
        "RAN_SHELL",
        "RAN_SUBSHELL",
        "RAN_RUST",
    ] {
        assert!(
            !d.path().join(marker).exists(),
            "{marker} exists: something ran\n{out}"
        );
    }
    // The fix is in the script, as a literal.
    let fixed = fs::read_to_string(d.path().join("train.py")).unwrap();
    assert!(fixed.contains("num_workers=8)"), "{fixed}");
}

/// `# hwlint: ignore[...]` in Python and shell, `// hwlint: ignore[...]` in Rust.
#[test]
fn suppressions_in_code_comments() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "train.py",
        "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, num_workers=0)  # hwlint: ignore[HW202]\nfor x in loader:\n    model(x).loss.backward()\n",
    );
    write(
        d.path(),
        "train.sh",
        "# hwlint: ignore[HW202]\nlerobot-train --policy.type=act --dataset.repo_id=lerobot/pusht --num_workers=0\n",
    );
    write(
        d.path(),
        "training.rs",
        "#[derive(Config)]\npub struct TrainingConfig {\n    // hwlint: ignore[HW202]\n    #[config(default = 0)]\n    pub num_workers: usize,\n    #[config(default = 64)]\n    pub batch_size: usize,\n}\nfn train(config: TrainingConfig) {\n    let loader = DataLoaderBuilder::new(b).batch_size(config.batch_size).num_workers(config.num_workers).build(ds);\n}\n",
    );
    let (code, out) =
        run(hwlint(d.path()).args(["check", "--no-config", "--output-format", "concise", "."]));
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("HW903"), "{out}");
    // Without the comments each file has its finding.
    for f in ["train.py", "train.sh", "training.rs"] {
        let p = d.path().join(f);
        let text = fs::read_to_string(&p)
            .unwrap()
            .replace("hwlint: ignore[HW202]", "note");
        fs::write(&p, text).unwrap();
    }
    let (_, out) =
        run(hwlint(d.path()).args(["check", "--no-config", "--output-format", "concise", "."]));
    assert_eq!(out.matches("HW202").count(), 3, "{out}");
}

/// A launch line over the config it names: a value the line sets is fixed on the line; a
/// finding the config gives alone is reported once, on the config; one the line causes points
/// at the line.
#[test]
fn launch_lines_and_their_configs_report_once_and_fix_where_set() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "configs/act.yaml",
        "dataset:\n  repo_id: lerobot/aloha_sim_insertion_human\npolicy:\n  type: act\nbatch_size: 8\nnum_workers: 0\nsteps: 100000\nsave_freq: 5000\n",
    );
    write(
        d.path(),
        "train.sh",
        "lerobot-train --config_path=configs/act.yaml --steps=1000 --save_freq=20000\n",
    );
    let (_, out) =
        run(hwlint(d.path()).args(["check", "--no-config", "--output-format", "concise", "."]));
    // num_workers: the config's finding, once.
    assert_eq!(out.matches("HW202").count(), 1, "{out}");
    assert!(out.contains("configs/act.yaml:6:14: HW202"), "{out}");
    // save_freq 20000 > steps 1000: set on the line, so reported and fixed there.
    assert!(out.contains("train.sh:1:71: HW303"), "{out}");
    let (_, out) = run(hwlint(d.path()).args([
        "check",
        "--no-config",
        "--fix",
        "--unsafe-fixes",
        "train.sh",
    ]));
    let line = fs::read_to_string(d.path().join("train.sh")).unwrap();
    assert_eq!(
        line, "lerobot-train --config_path=configs/act.yaml --steps=1000 --save_freq=100\n",
        "{out}"
    );
    // The config was not touched by fixing the line.
    let cfg = fs::read_to_string(d.path().join("configs/act.yaml")).unwrap();
    assert!(cfg.contains("num_workers: 0"));
}

/// torchrun's processes per node count for the host checks: 8 processes x 8 workers on a
/// 16-core host is too many.
#[test]
fn launcher_processes_feed_the_host_checks() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "run.sh",
        "torchrun --nproc_per_node=8 run_clm.py --model_name_or_path gpt2 --per_device_train_batch_size 8 --num_train_epochs 3 --output_dir out --dataloader_num_workers 8\n",
    );
    let (_, out) = run(hwlint(d.path()).args([
        "check",
        "--no-config",
        "--cpu-cores",
        "16",
        "--output-format",
        "concise",
        "run.sh",
    ]));
    assert!(out.contains("HW201"), "{out}");
    assert!(out.contains("8 processes"), "{out}");
}
