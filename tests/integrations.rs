//! What users meet outside `check`'s default output: suppressions in every format, HW903,
//! --add-ignore, the github / sarif / json-lines formats, --statistics, standard input,
//! --force-exclude, --exit-non-zero-on-fix, --version.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

fn hwlint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("hwlint").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("HWLINT_OUTPUT_FORMAT");
    c
}

fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = hwlint(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const HF: &str = "per_device_train_batch_size: 8\nmax_steps: 100\nsave_steps: 500\n";

/// These files name no model, so HW901 notes that the memory check did not run on them; the
/// tests here are about other rules and turn that note off as a user would.
const NO_MEMORY_NOTE: [&str; 2] = ["--ignore", "HW901"];

#[test]
fn suppressions_in_yaml_toml_and_jsonc() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a.yaml"), "per_device_train_batch_size: 8\nmax_steps: 100\n# hwlint: ignore[HW303]\nsave_steps: 500\n").unwrap();
    fs::write(
        d.path().join("t.toml"),
        "[job]\ndump_folder = \"./o\"\n[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n[training]\nlocal_batch_size = 8\nsteps = 1000\n[checkpoint]\nenable = true\ninterval = 5000  # hwlint: ignore[HW303]\n# hwlint: ignore-file[HW102]\n",
    )
    .unwrap();
    fs::write(
        d.path().join("ds.jsonc"),
        "{\n  \"train_batch_size\": 64, // hwlint: ignore[HW501]\n  \"train_micro_batch_size_per_gpu\": 6,\n  \"gradient_accumulation_steps\": 4\n}\n",
    )
    .unwrap();
    let (code, out) = run(
        d.path(),
        &[
            ".",
            "--output-format",
            "concise",
            "-q",
            NO_MEMORY_NOTE[0],
            NO_MEMORY_NOTE[1],
        ],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{out}");
    // Without the comments each file fires.
    for f in ["a.yaml", "t.toml", "ds.jsonc"] {
        let p = d.path().join(f);
        let text = fs::read_to_string(&p).unwrap();
        let stripped: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("# hwlint"))
            .map(|l| {
                l.split(" # hwlint")
                    .next()
                    .unwrap()
                    .split("  # hwlint")
                    .next()
                    .unwrap()
                    .split(" // hwlint")
                    .next()
                    .unwrap()
            })
            .map(|l| format!("{l}\n"))
            .collect();
        fs::write(&p, stripped).unwrap();
    }
    let (_, out) = run(
        d.path(),
        &[".", "--output-format", "concise", "--select", "HW3,HW5"],
    );
    for f in ["a.yaml", "t.toml", "ds.jsonc"] {
        assert!(out.contains(f), "{f} fires without its comment: {out}");
    }
}

#[test]
fn plain_json_takes_per_file_ignores_only() {
    let d = tempfile::tempdir().unwrap();
    let ds = "{\n  \"train_batch_size\": 64,\n  \"train_micro_batch_size_per_gpu\": 6,\n  \"gradient_accumulation_steps\": 4\n}\n";
    fs::write(d.path().join("ds.json"), ds).unwrap();
    let (code, out) = run(d.path(), &["ds.json", "--output-format", "concise"]);
    assert_eq!(code, 1);
    assert!(out.contains("HW501"), "{out}");
    // --add-ignore never writes into plain JSON.
    run(d.path(), &["ds.json", "--add-ignore"]);
    assert_eq!(fs::read_to_string(d.path().join("ds.json")).unwrap(), ds);
    fs::write(
        d.path().join("hwlint.toml"),
        "[per-file-ignores]\n\"ds.json\" = [\"HW501\"]\n",
    )
    .unwrap();
    assert_eq!(run(d.path(), &["ds.json"]).0, 0);
}

#[test]
fn unused_and_unknown_suppressions_are_hw903() {
    let d = tempfile::tempdir().unwrap();
    let text = "per_device_train_batch_size: 8  # hwlint: ignore[HW202]\nmax_steps: 1000\nsave_steps: 500 # hwlint: ignore[HW777]\n";
    fs::write(d.path().join("a.yaml"), text).unwrap();
    let (code, out) = run(d.path(), &["a.yaml", "--output-format", "concise"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("a.yaml:1:33: HW903 suppression of HW202 matches no diagnostic [*]"),
        "{out}"
    );
    assert!(
        out.contains("a.yaml:3:17: HW903 suppression names unknown code HW777"),
        "{out}"
    );
    run(d.path(), &["a.yaml", "--fix"]);
    let fixed = fs::read_to_string(d.path().join("a.yaml")).unwrap();
    assert_eq!(fixed, "per_device_train_batch_size: 8\nmax_steps: 1000\nsave_steps: 500 # hwlint: ignore[HW777]\n");
    // A suppression of a rule not selected in this run is not reported.
    fs::write(d.path().join("a.yaml"), text).unwrap();
    let (_, out) = run(
        d.path(),
        &["a.yaml", "--output-format", "concise", "--ignore", "HW202"],
    );
    assert!(!out.contains("HW202 matches"), "{out}");
}

#[test]
fn add_ignore_then_clean() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("a.yaml"),
        format!("{HF}dataloader_num_workers: 64\n"),
    )
    .unwrap();
    fs::write(d.path().join("b.jsonc"), "{\n  \"train_batch_size\": 64,\n  \"train_micro_batch_size_per_gpu\": 6,\n  \"gradient_accumulation_steps\": 4\n}\n").unwrap();
    assert_eq!(run(d.path(), &["."]).0, 1);
    let out = hwlint(d.path())
        .args([".", "--add-ignore"])
        .args(NO_MEMORY_NOTE)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("Added 3 suppression comments"));
    assert_eq!(
        fs::read_to_string(d.path().join("a.yaml")).unwrap(),
        "per_device_train_batch_size: 8\nmax_steps: 100\nsave_steps: 500  # hwlint: ignore[HW303]\ndataloader_num_workers: 64  # hwlint: ignore[HW201, HW203]\n"
    );
    assert!(fs::read_to_string(d.path().join("b.jsonc"))
        .unwrap()
        .contains("\"train_batch_size\": 64,  // hwlint: ignore[HW501]"));
    assert_eq!(run(d.path(), &["."]).0, 0);
}

#[test]
fn add_ignore_keeps_what_the_file_says() {
    // A comment after a shell `\` would end the command, one inside a string that goes on
    // would join its value: such a line gets its comment where it holds, or none, said why.
    let d = tempfile::tempdir().unwrap();
    let files = [
        (
            "train.sh",
            "lerobot-train \\\n  --policy.type=act \\\n  --num_workers=0 \\\n  --dataset.repo_id=lerobot/pusht\n",
        ),
        (
            "script.py",
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(2, 2).cuda()\nloader = DataLoader(ds, batch_size=8, num_workers=0, sampler=f(\"\"\"a\nb\"\"\"))\nfor x in loader:\n    model(x.cuda()).sum().backward()\n",
        ),
        (
            "inside.py",
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(2, 2).cuda()\nloader = DataLoader(ds, batch_size=8, sampler=f(\"\"\"a\nb\"\"\"), num_workers=0)\nfor x in loader:\n    model(x.cuda()).sum().backward()\n",
        ),
    ];
    for (name, text) in files {
        fs::write(d.path().join(name), text).unwrap();
    }
    let out = hwlint(d.path())
        .args([".", "--add-ignore"])
        .args(NO_MEMORY_NOTE)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Added 2 suppression comments; 1 line left without one"),
        "{err}"
    );
    assert!(
        err.contains("inside.py:5: no `hwlint: ignore` comment added"),
        "{err}"
    );
    // The comment ends the continued command, and covers all of it.
    assert_eq!(
        fs::read_to_string(d.path().join("train.sh")).unwrap(),
        files[0]
            .1
            .replace("pusht\n", "pusht  # hwlint: ignore[HW202]\n")
    );
    // Above the line, whose end lies inside the string.
    assert_eq!(
        fs::read_to_string(d.path().join("script.py")).unwrap(),
        files[1]
            .1
            .replace("loader =", "# hwlint: ignore[HW202]\nloader =")
    );
    assert_eq!(
        fs::read_to_string(d.path().join("inside.py")).unwrap(),
        files[2].1
    );
    // Only the line left without a comment is still reported.
    let (code, out) = run(d.path(), &[".", "--output-format", "concise"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("inside.py:5:") && out.matches("HW202").count() == 1,
        "{out}"
    );
}

#[test]
fn github_annotations_escape_paths_and_messages() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("my configs")).unwrap();
    fs::write(d.path().join("my configs/a,b.yaml"), HF).unwrap();
    let (code, out) = run(
        d.path(),
        &[
            "my configs",
            "--output-format",
            "github",
            NO_MEMORY_NOTE[0],
            NO_MEMORY_NOTE[1],
        ],
    );
    assert_eq!(code, 1);
    assert!(
        out.starts_with("::warning file=my configs/a%2Cb.yaml,line=3,col=13,endLine=3,endColumn=16,title=HW303 save-freq-exceeds-steps::checkpoint every"),
        "{out}"
    );
    // GITHUB_ACTIONS picks the format when none is given.
    let out = hwlint(d.path())
        .env("GITHUB_ACTIONS", "true")
        .arg("my configs")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    // The note on the memory check that did not run, then the warning; the run's memory
    // outcome closes the annotations once.
    assert!(
        out.starts_with("::notice file=my configs/a%2Cb.yaml,line=1,")
            && out.contains("title=HW901 unknown-model::")
            && out.contains("\n::warning ")
            && out.ends_with(
                "::notice title=hwlint memory check::memory not checked for 1 run (1 needs the model)\n"
            ),
        "{out}"
    );
}

#[test]
fn sarif_json_lines_and_statistics() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("a.yaml"),
        format!("{HF}dataloader_num_workers: 64\n"),
    )
    .unwrap();
    // A target the user chose: under the built-in default the host is a guess and HW201's fix
    // is display-only.
    fs::write(d.path().join("hwlint.toml"), "target = \"workstation\"\n").unwrap();
    let (_, out) = run(d.path(), &["a.yaml", "--output-format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run0 = &v["runs"][0];
    // The memory check's outcomes over the run: the file names no model.
    assert_eq!(
        run0["properties"]["memory"],
        serde_json::json!({"checked": 0, "bounded": 0, "decided_by": {}, "not_checked": 1, "needs": {"the model": 1}})
    );
    assert_eq!(
        run0["tool"]["driver"]["rules"].as_array().unwrap().len(),
        hwlint::rules::RULES.len()
    );
    let results = run0["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert!(results.iter().any(|r| r["ruleId"] == "HW901"));
    let r201 = results.iter().find(|r| r["ruleId"] == "HW201").unwrap();
    assert_eq!(
        r201["locations"][0]["physicalLocation"]["region"]["startLine"],
        4
    );
    assert_eq!(
        r201["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"],
        "15"
    );
    assert_eq!(r201["fixes"][0]["properties"]["applicability"], "safe");
    // Paths are relative to the repository root whatever the working directory, and encoded.
    fs::create_dir_all(d.path().join(".git")).unwrap();
    fs::create_dir_all(d.path().join("sub/ü #1")).unwrap();
    fs::copy(d.path().join("a.yaml"), d.path().join("sub/ü #1/b.yaml")).unwrap();
    let (_, out) = run(&d.path().join("sub"), &[".", "--output-format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let location = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        location["artifactLocation"]["uri"],
        "sub/%C3%BC%20%231/b.yaml"
    );
    assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    let root = v["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        root.starts_with("file:///") && root.ends_with('/'),
        "{root}"
    );
    let driver = &v["runs"][0]["tool"]["driver"];
    assert!(driver["informationUri"]
        .as_str()
        .unwrap()
        .starts_with("https://"));
    let hw101 = &driver["rules"][0];
    assert!(hw101["helpUri"]
        .as_str()
        .unwrap()
        .ends_with("/docs/rules/HW101.md"));
    assert!(hw101["fullDescription"]["text"]
        .as_str()
        .unwrap()
        .starts_with("The run stops with `CUDA out of memory`"));
    let (_, out) = run(d.path(), &["a.yaml", "--output-format", "json-lines"]);
    assert_eq!(out.lines().count(), 4);
    assert!(out
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    let (_, out) = run(d.path(), &["a.yaml", "--statistics"]);
    assert!(
        out.contains("    1  HW201  workers-exceed-cores  [*]"),
        "{out}"
    );
    // In JSON, the counts come with the memory check's outcomes, and nothing else is printed.
    let (_, out) = run(
        d.path(),
        &["a.yaml", "--statistics", "--output-format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["memory"], run0["properties"]["memory"]);
    let rules = v["rules"].as_array().unwrap();
    assert_eq!(
        rules
            .iter()
            .map(|r| r["count"].as_u64().unwrap())
            .sum::<u64>(),
        4,
        "{out}"
    );
    assert!(
        rules.contains(&serde_json::json!({"code": "HW201", "name": "workers-exceed-cores", "count": 1, "fixable": true})),
        "{out}"
    );
    // --output-file writes there instead of standard output.
    let (_, out) = run(
        d.path(),
        &["a.yaml", "--output-format", "json", "-o", "out.json"],
    );
    assert!(out.is_empty());
    assert!(fs::read_to_string(d.path().join("out.json"))
        .unwrap()
        .contains("HW201"));
}

#[test]
fn stdin_force_exclude_exit_on_fix_and_version() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("hwlint.toml"), "target = \"workstation\"\n").unwrap();
    let out = hwlint(d.path())
        .args(["-", "--stdin-filename", "args.yaml", "--fix"])
        .write_stdin(format!("{HF}dataloader_num_workers: 64\n"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{HF}dataloader_num_workers: 15\n")
    );
    let out = hwlint(d.path())
        .args([
            "-",
            "--stdin-filename",
            "args.yaml",
            "--output-format",
            "concise",
        ])
        .write_stdin(HF)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("args.yaml:1:30: HW901 the memory rules (HW101-HW105) were skipped: the file does not say which model it trains (set `model_name_or_path`)\nargs.yaml:3:13: HW303"),
        "{stdout}"
    );
    // Standard input gets the summary line files get (HW901 is its memory part, not a
    // problem); with --fix it goes to standard error.
    assert!(
        stdout.contains("\nFound 1 problem (1 more with --unsafe-fixes) · memory not checked for 1 run (1 needs the model)"),
        "{stdout}"
    );
    let out = hwlint(d.path())
        .args(["-", "--stdin-filename", "args.yaml", "--fix"])
        .write_stdin(format!("{HF}dataloader_num_workers: 64\n"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Fixed 1 problem."), "{stderr}");
    let out = hwlint(d.path())
        .args(["-", "--stdin-filename", "args.yaml", "-q"])
        .write_stdin(HF)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Found"));

    fs::create_dir_all(d.path().join("templates")).unwrap();
    fs::write(d.path().join("templates/x.yaml"), HF).unwrap();
    fs::write(
        d.path().join("hwlint.toml"),
        "target = \"workstation\"\nexclude = [\"templates/**\"]\n",
    )
    .unwrap();
    assert_eq!(
        run(d.path(), &["templates/x.yaml"]).0,
        1,
        "named files bypass exclude"
    );
    assert_eq!(run(d.path(), &["templates/x.yaml", "--force-exclude"]).0, 0);

    fs::write(
        d.path().join("w.yaml"),
        "per_device_train_batch_size: 8\nmax_steps: 1000\ndataloader_num_workers: 64\n",
    )
    .unwrap();
    assert_eq!(
        run(
            d.path(),
            &[
                "w.yaml",
                "--fix",
                "--exit-non-zero-on-fix",
                "--ignore",
                "HW203"
            ]
        )
        .0,
        1
    );
    assert_eq!(
        run(
            d.path(),
            &[
                "w.yaml",
                "--fix",
                "--exit-non-zero-on-fix",
                "--ignore",
                "HW203"
            ]
        )
        .0,
        0
    );

    let (_, out) = run(d.path(), &["--version"]);
    assert!(
        out.starts_with("hwlint 0.") && out.contains("hardware catalog 20"),
        "{out}"
    );
}

#[test]
fn rule_docs_commands() {
    let d = tempfile::tempdir().unwrap();
    let (code, out) = run(d.path(), &["rule", "HW202"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("HW202 single-process-loading (warning, fix: always)"));
    let (_, out) = run(
        d.path(),
        &[
            "rule",
            "single-process-loading",
            "--output-format",
            "markdown",
        ],
    );
    assert!(
        out.starts_with("# HW202 single-process-loading") && out.contains("## Why is this bad?")
    );
    let (_, out) = run(d.path(), &["rules", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), hwlint::rules::RULES.len());
    assert_eq!(run(d.path(), &["rule", "HW000"]).0, 2);
}

/// Without a GPU or driver (this machine, CI) detect still describes the host and exits 0;
/// --write adds the table to hwlint.toml, which then loads.
#[test]
fn detect_degrades_without_a_gpu() {
    let d = tempfile::tempdir().unwrap();
    let (code, out) = run(d.path(), &["detect"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("[target]") && out.contains("cpu_cores = "),
        "{out}"
    );
    fs::write(
        d.path().join("hwlint.toml"),
        "# ours\nignore = [\"HW205\"]\n",
    )
    .unwrap();
    assert_eq!(run(d.path(), &["detect", "--write", "hwlint.toml"]).0, 0);
    let cfg = fs::read_to_string(d.path().join("hwlint.toml")).unwrap();
    assert!(
        cfg.contains("# ours") && cfg.contains("ignore = [\"HW205\"]") && cfg.contains("[target]"),
        "{cfg}"
    );
    fs::write(d.path().join("a.yaml"), HF).unwrap();
    assert_eq!(
        run(d.path(), &["a.yaml", "-q"]).0,
        1,
        "the config still loads"
    );
}

/// `detect --write` on a machine without a GPU keeps the GPU the file's target names (a name or
/// a table, with its count) and adds the host facts, saying so.
#[test]
fn detect_write_without_a_gpu_keeps_the_configured_gpu() {
    let d = tempfile::tempdir().unwrap();
    // No nvidia-smi on PATH: this machine has no GPU, wherever the test runs.
    let no_gpu = |args: &[&str]| {
        let out = hwlint(d.path())
            .env("PATH", d.path().join("empty"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (before, kept, said) in [
        (
            "target = \"h100-sxm\"\n",
            "gpu = \"h100-sxm\"\n",
            "(gpu = \"h100-sxm\")",
        ),
        (
            "[target]\ngpu = \"a100-80gb\"\ngpus = 8\n",
            "gpu = \"a100-80gb\"\ngpus = 8\n",
            "(gpu = \"a100-80gb\", gpus = 8)",
        ),
    ] {
        fs::write(d.path().join("hwlint.toml"), before).unwrap();
        let (code, stderr) = no_gpu(&["detect", "--write", "hwlint.toml"]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            stderr.contains(said) && stderr.contains("no GPU on this machine"),
            "{stderr}"
        );
        let cfg = fs::read_to_string(d.path().join("hwlint.toml")).unwrap();
        assert!(cfg.contains(kept) && cfg.contains("cpu_cores = "), "{cfg}");
        // And the file still gives that GPU to check.
        let out = hwlint(d.path())
            .args(["check", "--show-settings", "--output-format", "json", "."])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    // With no target before, there is no GPU to keep: the table says how to add one.
    fs::write(d.path().join("hwlint.toml"), "").unwrap();
    let (code, stderr) = no_gpu(&["detect", "--write", "hwlint.toml"]);
    assert_eq!(code, Some(0));
    assert!(!stderr.contains("kept"), "{stderr}");
    let cfg = fs::read_to_string(d.path().join("hwlint.toml")).unwrap();
    assert!(
        cfg.contains("# Add the GPU your runs train on") && !cfg.contains("\ngpu ="),
        "{cfg}"
    );
}
