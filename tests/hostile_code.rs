//! Hostile inputs for the code front-ends and the launch merge: Rust nested past what syn's
//! stack holds, Python nested where the old check did not look, shell scripts and launch lines
//! of quadratic shape, a config that names itself as its base through `..`, a shell fix that
//! could never take, numbers past i64, and files whose values would take more memory than a
//! file may. Each shape broke hwlint before (an abort, gigabytes, minutes or a wrong fix); the
//! watchdog (120 s a run) stops a hung run, and some runs are held to an address-space limit.

use std::fs;

#[path = "support/hostile.rs"]
mod support;
use support::*;

const TOO_DEEP: Expect = hw902(&["nested too deeply"]);

// ---------------------------------------------------------------------------------------------
// Rust: syn recursed past its thread's stack and aborted the whole run

#[test]
fn rust_nesting_without_brackets_is_refused_not_an_abort() {
    let n = 100_000;
    let shapes = [
        format!(
            "type T = {}u8{};\n",
            "Vec<".repeat(10_000),
            ">".repeat(10_000)
        ),
        format!("fn f() {{ let x = {}x; }}\n", "!".repeat(n)),
        format!("fn f() {{ let x = {}1; }}\n", "|| ".repeat(n)),
        format!("type T = {}u8;\n", "&".repeat(n)),
        format!("type T = {}u8;\n", "*const ".repeat(n)),
        format!("fn f() -> {}u8 {{ }}\n", "impl Fn() -> ".repeat(10_000)),
        format!("fn f() {{ let x = 1{}; }}\n", " + 1".repeat(n)),
        // A quote in a shebang-like first line: the old check took what followed for a string.
        format!(
            "#!/usr/bin/env run-cargo-script \"\nfn f() {{ {}{} }}\n",
            "(".repeat(n),
            ")".repeat(n)
        ),
    ];
    for text in shapes {
        let d = with_file("config.rs", &text);
        // With the process aborted, `run` fails on the signal before any code is compared.
        case(d.path(), &["config.rs"], TOO_DEEP);
    }
}

#[test]
fn rust_long_builder_chain_is_linear() {
    // 10,000 links took 42.7 s in a release build (each link read back to its root).
    let text = format!(
        "use burn::data::dataloader::DataLoaderBuilder;\nfn train() {{\n    let dataloader_train = DataLoaderBuilder::new(batcher){}\n        .build(ds);\n}}\n",
        "\n        .num_workers(0)".repeat(10_000)
    );
    let d = with_file("train.rs", &text);
    case(
        d.path(),
        &["train.rs"],
        exit(&[1]).reports("HW202", &["num_workers"]).fixable(),
    );
}

// ---------------------------------------------------------------------------------------------
// Python: the nesting check was bypassed, and nesting costs the parser ~2 KB a level

#[test]
fn python_nesting_the_old_check_missed_is_refused_within_a_gigabyte() {
    let n = 1_000_000;
    let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let shapes = [
        // A comment ended by a lone CR, as Python ends it.
        format!("#\rx = {deep}\n"),
        // Brackets in an f-string's replacement field.
        format!("x = f\"{{{deep}}}\"\n"),
        // A lone quote inside a triple-quoted string.
        format!("x = \"\"\" \" \"\"\" + {deep}\n"),
        // Nesting with no bracket at all.
        format!("x = {}1\n", "-".repeat(n)),
    ];
    for text in shapes {
        let d = with_file("config.py", &text);
        // Each took 1-2 GB before: a gigabyte of address space is more than enough now.
        let out = run_within(d.path(), &["config.py", "--output-format", "json"], 1024);
        check_out(&out, "json", TOO_DEEP, "under 1 GiB");
        assert_no_temp_files(d.path());
    }
}

// ---------------------------------------------------------------------------------------------
// Shell and launch lines: quadratic in lines, exports and flags

#[test]
fn shell_exports_before_every_launch_line_are_refused() {
    // Each line sees every export before it: 4,000 of each took 25 s and 4.7 GB.
    let text: String = (0..4000)
        .map(|i| format!("export V{i}={i}\npython train.py --lr 1\n"))
        .collect();
    let d = with_file("sweep.sh", &text);
    fs::write(
        d.path().join("train.py"),
        "import torch\nloader = torch.utils.data.DataLoader(ds, num_workers=0)\n",
    )
    .unwrap();
    case(d.path(), &["sweep.sh"], hw902(&["environment variables"]));
}

#[test]
fn many_launch_lines_are_linear() {
    // Launch lines alone were ~n^2: 16,000 took 13 s in a release build.
    let text = "python train.py --lr 1\n".repeat(40_000);
    let d = with_file("sweep.sh", &text);
    case(d.path(), &["sweep.sh"], exit(&[0, 1]).absent(&["HW902"]));
}

#[test]
fn launch_lines_with_many_dotted_flags_and_overrides_are_linear() {
    // 10,000 `--a.b{i}.c=1` flags took 99 s, 20,000 Hydra overrides 277 s.
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("cfg.json"),
        "{\"dataset\": {\"repo_id\": \"lerobot/pusht\"}, \"policy\": {\"type\": \"diffusion\"}, \"batch_size\": 64, \"num_workers\": 4}\n",
    )
    .unwrap();
    let dotted: Vec<String> = (0..20_000).map(|i| format!("--a.b{i}.c=1")).collect();
    let hydra: Vec<String> = (0..20_000).map(|i| format!("a.k{i}=1")).collect();
    fs::write(
        d.path().join("dotted.sh"),
        format!(
            "lerobot-train --config_path=cfg.json {}\n",
            dotted.join(" ")
        ),
    )
    .unwrap();
    fs::write(
        d.path().join("hydra.sh"),
        format!("python train.py {}\n", hydra.join(" ")),
    )
    .unwrap();
    case(
        d.path(),
        &["dotted.sh", "hydra.sh"],
        exit(&[0, 1]).absent(&["HW902"]),
    );
}

#[test]
fn a_shell_fix_that_cannot_take_is_not_applied() {
    // The line ends inside an unterminated quote, backtick, `$(` or `${`: a flag appended
    // there is not a flag. `--fix` added one every pass, ten a run, and reported them fixed.
    for open in ["\"out", "'out", "`date", "$(date", "${OUT"] {
        let text = format!(
            "lerobot-train --policy.type=act --dataset.repo_id=lerobot/pusht --output_dir={open}\n"
        );
        let d = with_file("train.sh", &text);
        let out = run(
            d.path(),
            &[
                "train.sh",
                "--cpu-cores",
                "2",
                "--fix",
                "--output-format",
                "concise",
            ],
            false,
        );
        assert_eq!(out.code, 1, "{open}: {}", out.show());
        assert!(!out.stdout.contains("Fixed"), "{open}: {}", out.show());
        assert!(out.stdout.contains("HW201"), "{open}: {}", out.show());
        assert_eq!(fs::read_to_string(d.path().join("train.sh")).unwrap(), text);
        assert_no_temp_files(d.path());
    }
}

// ---------------------------------------------------------------------------------------------
// Inheritance: a config naming itself through `..` was no cycle, and merged 2^depth times

#[test]
fn a_base_naming_itself_through_dotdot_is_a_loop() {
    let d = tempfile::tempdir().unwrap();
    for sub in ["d1", "d2"] {
        fs::create_dir_all(d.path().join(sub)).unwrap();
    }
    fs::write(
        d.path().join("a.py"),
        "_base_ = ['d1/../a.py', 'd2/../a.py']\ntrain_dataloader = dict(batch_size=2, num_workers=0)\n",
    )
    .unwrap();
    fs::write(
        d.path().join("b.yaml"),
        "_BASE_: \"d1/../b.yaml\"\nSOLVER:\n  IMS_PER_BATCH: 2\nDATALOADER:\n  NUM_WORKERS: 0\n",
    )
    .unwrap();
    let loops = hw902(&["loops back on itself"]);
    case(d.path(), &["a.py"], loops);
    case(d.path(), &["b.yaml"], loops);
}

// ---------------------------------------------------------------------------------------------
// Numbers past i64

#[test]
fn a_batch_past_i64_times_accumulation_writes_no_fix() {
    // 2^62 x 4 wrapped to 0 in a release build: `gradient_accumulation_steps: 0` as a safe fix.
    let text = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\noutput_dir: out\nmax_length: 2048\nper_device_train_batch_size: 4611686018427387904\ngradient_accumulation_steps: 4\n";
    let d = with_file("sft.yaml", text);
    let out = run(
        d.path(),
        &[
            "sft.yaml",
            "--target",
            "h100-sxm",
            "--fix",
            "--output-format",
            "concise",
        ],
        false,
    );
    assert_eq!(out.code, 1, "{}", out.show());
    assert!(out.stdout.contains("HW101"), "{}", out.show());
    assert_eq!(fs::read_to_string(d.path().join("sft.yaml")).unwrap(), text);
}

// ---------------------------------------------------------------------------------------------
// Memory per input byte: values cost the parsers 180-620 bytes each

#[test]
fn dense_lists_in_every_format_are_refused_within_a_gigabyte() {
    let n = 4_000_000;
    let list = vec!["1"; n].join(", ");
    let files = [
        ("a.yaml", format!("x: [{list}]\n")),
        ("a.json", format!("{{\"x\": [{list}]}}\n")),
        ("a.toml", format!("x = [{list}]\n")),
        ("a.py", format!("x = [{list}]\n")),
        ("a.rs", format!("const X: [u8; 4] = [{list}];\n")),
        (
            "a.sh",
            format!("python train.py {}\n", vec!["1"; n].join(" ")),
        ),
    ];
    for (name, text) in files {
        let d = with_file(name, &text);
        // 12 MB of values took 0.7-2.5 GB; the limit is the file-size limit's business now.
        let out = run_within(d.path(), &[name, "--output-format", "json"], 1024);
        check_out(
            &out,
            "json",
            hw902(&["holds more values than hwlint reads"]),
            name,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Nothing is ever run

#[test]
fn no_input_is_ever_executed() {
    // Files whose running, importing, sourcing or building would write a marker file, where the
    // code front-ends, launch lines and inheritance read them: lint, fix, show the settings,
    // estimate. Not one marker may appear.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let m = |name: &str| dir.join(format!("MARKER_{name}")).display().to_string();
    let files = [
        (
            "train.py",
            format!(
                "import os, pathlib, argparse\n\
                 pathlib.Path({module:?}).write_text('ran')\n\
                 __import__('os').system('touch {system}')\n\
                 def touch(p):\n    open(p, 'w').write('ran')\n    return lambda f: f\n\
                 @touch({decorator:?})\n\
                 def main(workers=open({default:?}, 'w')):\n    pass\n\
                 class Cfg:\n    x = open({class_body:?}, 'w')\n\
                 p = argparse.ArgumentParser()\n\
                 p.add_argument('--batch-size', type=lambda s: open({arg_type:?}, 'w'), default=64)\n\
                 p.add_argument('--workers', type=int, default=0)\n\
                 args = p.parse_args()\n\
                 import torch\nfrom torch.utils.data import DataLoader\n\
                 loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers)\n\
                 model = torch.nn.Linear(2, 2).cuda()\n\
                 if __name__ == '__main__':\n    open({main:?}, 'w')\n",
                module = m("py_module"),
                system = m("py_system"),
                decorator = m("py_decorator"),
                default = m("py_default"),
                class_body = m("py_class_body"),
                arg_type = m("py_argparse_type"),
                main = m("py_main"),
            ),
        ),
        (
            "base.py",
            format!(
                "import os\nos.system('touch {}')\ntrain_dataloader = dict(batch_size=2, num_workers=0)\n",
                m("py_base")
            ),
        ),
        (
            "cfg.py",
            format!(
                "_base_ = ['base.py']\nimport os\nos.system('touch {}')\noptim_wrapper = dict(type='AmpOptimWrapper')\n",
                m("py_config")
            ),
        ),
        (
            "run.sh",
            format!(
                "#!/bin/bash\nexport WORKERS=$(touch {subst}; echo 0)\nOUT=`touch {tick}`\n\
                 source <(echo touch {procsub})\neval \"touch {eval}\"\n\
                 python train.py --batch-size ${{BS:=$(touch {default})}} --workers $WORKERS\n\
                 lerobot-train --policy.type=act --output_dir=$(touch {flag}) --num_workers=0\n",
                subst = m("sh_subst"),
                tick = m("sh_backtick"),
                procsub = m("sh_procsub"),
                eval = m("sh_eval"),
                default = m("sh_default"),
                flag = m("sh_flag"),
            ),
        ),
        (
            "build.rs",
            format!(
                "fn main() {{\n    std::fs::write({:?}, \"ran\").unwrap();\n    std::process::Command::new(\"touch\").arg({:?}).status().unwrap();\n}}\n",
                m("rs_build"),
                m("rs_command")
            ),
        ),
        (
            "training.rs",
            format!(
                "#[derive(Config)]\npub struct TrainingConfig {{\n    #[config(default = {{ std::fs::write({:?}, \"\").unwrap(); 4 }})]\n    pub num_workers: usize,\n    #[config(default = 64)]\n    pub batch_size: usize,\n}}\nconst _: &str = include_str!(\"/proc/self/status\");\n",
                m("rs_default")
            ),
        ),
        (
            "tagged.yaml",
            format!(
                "per_device_train_batch_size: !!python/object/apply:os.system [\"touch {}\"]\nmax_steps: 100\nsave_steps: 500\n",
                m("yaml_tag")
            ),
        ),
    ];
    for (name, text) in &files {
        fs::write(dir.join(name), text).unwrap();
    }
    let before = snapshot(dir);
    let runs: [&[&str]; 5] = [
        &["."],
        &[
            ".",
            "--fix",
            "--unsafe-fixes",
            "--target",
            "h100-sxm",
            "--cpu-cores",
            "4",
        ],
        &[".", "--show-settings"],
        &[".", "--show-settings", "--output-format", "json"],
        &["estimate", "train.py"],
    ];
    for args in runs {
        let out = run(dir, args, false);
        assert!(matches!(out.code, 0..=2), "hwlint {args:?}: {}", out.show());
    }
    let markers: Vec<_> = snapshot(dir)
        .into_keys()
        .filter(|p| p.to_string_lossy().contains("MARKER_"))
        .collect();
    assert!(markers.is_empty(), "ran: {markers:?}");
    // The one write allowed: fixes, and only to the files linted (none of them a marker).
    let after = snapshot(dir);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
}
