//! Every stage linear in its input: parse, rules, suppressions, fixes, every report format,
//! and many files. Each stage runs on inputs of n, 2n, 4n and 8n items; the table shows the
//! best of three times at each size (files a stage reads are written before its clock
//! starts), and the run fails when 8n costs more than 16x what n costs (linear is 8x,
//! quadratic 64x). Run with `cargo bench --bench scaling` (release build).
//!
//! There is no per-file time budget in hwlint itself: this benchmark is what shows that no
//! input shape (many keys, duplicates, suppressions, findings on one long line, deep nesting,
//! a long builder chain, many launch lines, exports, flags and overrides on one line, many
//! `_base_` files, many files) makes any stage grow faster than its input.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use hwlint::fix::Applicability;
use hwlint::lint::{lint_path, lint_source, FileResult, FixMode};
use hwlint::report;
use hwlint::settings::{FileSettings, LoadedConfig, Overrides};
use hwlint::syntax::{self, Format};

/// The largest 8n/n time ratio accepted (linear is 8).
const MAX_RATIO: f64 = 16.0;

struct Stage {
    name: &'static str,
    /// Items at the smallest size.
    base: usize,
    /// Files the stage reads, written into its folder before the clock starts: a file
    /// system's cost of creating them is not hwlint's.
    files: Option<fn(&Path, usize)>,
    run: fn(&Path, usize, &FileSettings) -> usize,
}

fn hf_header() -> String {
    "per_device_train_batch_size: 8\nmax_steps: 100\n".to_string()
}

/// An HF Trainer config followed by `n` copies of `line`.
fn hf_with(line: &str, n: usize) -> String {
    hf_header() + &line.repeat(n)
}

fn lint(name: &str, text: &str, format: Format, s: &FileSettings, mode: FixMode) -> FileResult {
    lint_source(Path::new(name), text, format, s, mode)
}

fn all_reports(r: FileResult) -> usize {
    let results = [r];
    report::render_full(&results, false, false).len()
        + report::render_concise(&results, false).len()
        + report::render_json(&results).len()
        + report::render_sarif(&results).len()
        + report::render_github(&results).len()
}

fn stages() -> Vec<Stage> {
    vec![
        Stage {
            name: "keys (YAML parse + rules)",
            base: 25_000,
            files: None,
            run: |_, n, s| {
                let mut t = hf_header();
                for i in 0..n {
                    t.push_str(&format!("extra_key_{i}: {i}\n"));
                }
                lint("args.yaml", &t, Format::Yaml, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "keys (JSON, one line)",
            base: 25_000,
            files: None,
            run: |_, n, s| {
                let body: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
                let t = format!("{{\"train_batch_size\": 64, {}}}", body.join(", "));
                lint("ds_config.json", &t, Format::Json, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "duplicate keys -> findings, all formats",
            base: 2_000,
            files: None,
            run: |_, n, s| {
                let t = hf_with("max_steps: 100\n", n);
                all_reports(lint("args.yaml", &t, Format::Yaml, s, FixMode::Off))
            },
        },
        Stage {
            name: "duplicate keys on one JSON line, all formats",
            base: 2_000,
            files: None,
            run: |_, n, s| {
                let body: Vec<String> = (0..n).map(|_| "\"steps\": 10".to_string()).collect();
                let t = format!(
                    "{{\"dataset\": {{\"repo_id\": \"lerobot/pusht\"}}, \"policy\": {{\"type\": \"act\"}}, {}}}",
                    body.join(", ")
                );
                all_reports(lint("train_config.json", &t, Format::Json, s, FixMode::Off))
            },
        },
        Stage {
            name: "suppressions (unused -> HW903), all formats",
            base: 2_000,
            files: None,
            run: |_, n, s| {
                let t = hf_with("# hwlint: ignore[HW202]\n", n);
                all_reports(lint("args.yaml", &t, Format::Yaml, s, FixMode::Off))
            },
        },
        Stage {
            name: "fixes (remove n suppressions)",
            base: 2_000,
            files: None,
            run: |_, n, s| {
                let t = hf_with("# hwlint: ignore[HW202]\n", n);
                let mode = FixMode::Apply(Applicability::Safe);
                lint("args.yaml", &t, Format::Yaml, s, mode).fixed
            },
        },
        Stage {
            name: "lines (bare CR breaks)",
            base: 25_000,
            files: None,
            run: |_, n, s| {
                let mut t = hf_header().replace('\n', "\r");
                for i in 0..n {
                    t.push_str(&format!("k{i}: {i}\r"));
                }
                lint("args.yaml", &t, Format::Yaml, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "depth refused (YAML `- - -`, JSON `[[[`, TOML `[a.a.a]`)",
            base: 100_000,
            files: None,
            run: |_, n, _| {
                let yaml = "- ".repeat(n) + "1";
                let json = "[".repeat(n);
                let toml = format!("[{}]\n", vec!["a"; n].join("."));
                [
                    syntax::parse(&yaml, Format::Yaml).is_err(),
                    syntax::parse(&json, Format::Json).is_err(),
                    syntax::parse(&toml, Format::Toml).is_err(),
                ]
                .iter()
                .filter(|e| **e)
                .count()
            },
        },
        Stage {
            name: "Rust builder chain links",
            base: 1_000,
            files: None,
            run: |_, n, s| {
                let t = format!(
                    "fn train() {{\n    let dataloader_train = DataLoaderBuilder::new(b){}\n        .build(ds);\n}}\n",
                    "\n        .num_workers(0)".repeat(n)
                );
                lint("train.rs", &t, Format::Rust, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "launch lines (shell)",
            base: 2_000,
            files: None,
            run: |_, n, s| {
                let t = "python train.py --lr 1 --batch_size 8\n".repeat(n);
                lint("sweep.sh", &t, Format::Shell, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "exports before 10 launch lines",
            base: 4_000,
            files: None,
            run: |_, n, s| {
                let mut t: String = (0..n).map(|i| format!("export V{i}={i}\n")).collect();
                t.push_str(&"python train.py --lr 1\n".repeat(10));
                lint("sweep.sh", &t, Format::Shell, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "dotted flags over a config (one launch line)",
            base: 2_500,
            files: Some(|dir, _| {
                std::fs::write(
                    dir.join("cfg.json"),
                    "{\"dataset\": {\"repo_id\": \"lerobot/pusht\"}, \"policy\": {\"type\": \"act\"}, \"num_workers\": 0}",
                )
                .expect("write");
            }),
            run: |dir, n, s| {
                let flags: Vec<String> = (0..n).map(|i| format!("--a.b{i}.c=1")).collect();
                let t = format!("lerobot-train --config_path=cfg.json {}\n", flags.join(" "));
                let p = dir.join("run.sh");
                lint(&p.display().to_string(), &t, Format::Shell, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "Hydra overrides (one launch line)",
            base: 2_500,
            files: None,
            run: |_, n, s| {
                let flags: Vec<String> = (0..n).map(|i| format!("a.k{i}=1")).collect();
                let t = format!("python train.py {}\n", flags.join(" "));
                lint("run.sh", &t, Format::Shell, s, FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "_base_ files listed (mmengine; depth is capped at 8)",
            base: 50,
            files: Some(|dir, n| {
                let mut names = Vec::new();
                for i in 0..n {
                    let name = format!("b{i}.py");
                    std::fs::write(
                        dir.join(&name),
                        format!("train_dataloader = dict(batch_size={i}, num_workers=0)\n"),
                    )
                    .expect("write");
                    names.push(format!("'{name}'"));
                }
                let t = format!(
                    "_base_ = [{}]\ntrain_cfg = dict(type='EpochBasedTrainLoop', max_epochs=12)\n",
                    names.join(", ")
                );
                std::fs::write(dir.join("cfg.py"), &t).expect("write");
            }),
            run: |dir, _, s| {
                lint_path(&dir.join("cfg.py"), Format::Python, s.clone(), FixMode::Off)
                    .diagnostics
                    .len()
            },
        },
        Stage {
            name: "files (read + lint)",
            base: 250,
            files: Some(|dir, n| {
                let text = "per_device_train_batch_size: 8\nmax_steps: 100\nsave_steps: 500\ndataloader_num_workers: 0\n";
                for i in 0..n {
                    std::fs::write(dir.join(format!("a{i}.yaml")), text).expect("write");
                }
            }),
            run: |dir, n, s| {
                (0..n)
                    .map(|i| {
                        let p = dir.join(format!("a{i}.yaml"));
                        lint_path(&p, Format::Yaml, s.clone(), FixMode::Off)
                            .diagnostics
                            .len()
                    })
                    .sum()
            },
        },
    ]
}

/// Best of three runs.
fn time(stage: &Stage, n: usize, s: &FileSettings) -> Duration {
    (0..3)
        .map(|_| {
            let dir = tempfile::tempdir().expect("temp dir");
            if let Some(write) = stage.files {
                write(dir.path(), n);
            }
            let start = Instant::now();
            black_box((stage.run)(dir.path(), black_box(n), s));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let settings = LoadedConfig::empty()
        .and_then(|c| c.for_file(Path::new("args.yaml"), &Overrides::default()))
        .expect("built-in settings");
    println!(
        "{:<52} {:>9} {:>10} {:>10} {:>10} {:>10} {:>7}",
        "stage", "n", "n", "2n", "4n", "8n", "8n/n"
    );
    let mut failed = Vec::new();
    for stage in stages() {
        let times: Vec<Duration> = [1, 2, 4, 8]
            .iter()
            .map(|k| time(&stage, stage.base * k, &settings))
            .collect();
        let ratio = times[3].as_secs_f64() / times[0].as_secs_f64().max(1e-9);
        let ms = |d: &Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
        println!(
            "{:<52} {:>9} {:>10} {:>10} {:>10} {:>10} {:>6.1}x",
            stage.name,
            stage.base,
            ms(&times[0]),
            ms(&times[1]),
            ms(&times[2]),
            ms(&times[3]),
            ratio
        );
        if ratio > MAX_RATIO {
            failed.push(stage.name);
        }
    }
    if !failed.is_empty() {
        eprintln!("not linear (8n/n > {MAX_RATIO}): {}", failed.join(", "));
        std::process::exit(1);
    }
}
