//! Invariants that hold for every input, shared by the fuzz targets (`fuzz/fuzz_targets/*.rs`
//! include this file with `#[path]`) and by `tests/fuzz_regressions.rs`, which replays the
//! committed inputs under `fuzz/regressions/<target>/`. Only hwlint's public API is used. Every
//! check panics when an invariant is violated.
//!
//! Input layout (the same for fuzzing and for regression files):
//!
//! - `yaml`, `toml`: byte 0 picks the file and the hardware (below); the rest is the file's text.
//! - `json`: byte 0 picks plain JSON (even) or JSONC (odd), byte 1 the file and hardware; then
//!   the text.
//! - `fix`: byte 0 picks the format (`0` YAML, `1` TOML, `2` JSON, `3` JSONC, modulo 4), byte 1
//!   the file and hardware; then the text.
//! - `python`, `rust`, `shell`: byte 0 picks the file and the hardware; the rest is the file's
//!   text, linted (every output format) and fixed with every fix on (the `fix` invariants).
//! - `launch`: byte 0 picks the hardware (`/ 64`); the rest is split at NUL bytes into a launch
//!   script `run.sh`, the config `cfg.yaml` and the script `train.py` it may name, written to a
//!   folder of their own; `run.sh` is linted and fixed.
//! - `inherit`: byte 0 picks mmengine Python (even) or detectron2 YAML (odd) and the hardware;
//!   the rest, split at NUL bytes, is `a`, `b` and `d/c` of that format, which may name each other
//!   in `_base_` / `_BASE_`; `a` is linted and fixed.
//!
//! A file-and-hardware byte `b` picks the file name `paths(format)[b % 8]` and the target
//! `HARDWARE[b / 64]`: the ASCII digits `0`..`7` are file names 0..7 on the default workstation
//! (one RTX 4090), `@`..`G` the same names on 8 x V100 (no bf16, so the precision rules fire),
//! bytes 128..255 a T4 and 8 x H100.
//!
//! Inputs that are not UTF-8 are ignored (hwlint reports them without parsing).

#![allow(dead_code)]

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hwlint::fix::{apply_fixes_indexed, Applicability, Edit, Fix};
use hwlint::lint::{lint_source, lint_text, FileResult, FixMode};
use hwlint::report;
use hwlint::settings::{FileSettings, LoadedConfig, Overrides};
use hwlint::syntax::{self, Format};

/// The fuzz targets, in the order of `fuzz/fuzz_targets/`.
pub const TARGETS: &[&str] = &[
    "yaml", "toml", "json", "fix", "python", "rust", "shell", "launch", "inherit",
];

/// File names that real configs of each format carry (the dialects' own file names, the ones a
/// linked DeepSpeed config is looked up by, a few unrelated ones). Eight each.
const YAML_PATHS: &[&str] = &[
    "config.yaml",
    "accelerate_config.yaml",
    "train.yml",
    "examples/llama-3/qlora.yml",
    "recipes/sft_config.yaml",
    "lerobot/train_config.yaml",
    "lightning/config.yaml",
    ".github/workflows/ci.yml",
];
const TOML_PATHS: &[&str] = &[
    "llama3_8b.toml",
    "train_configs/debug_model.toml",
    "config.toml",
    "torchtitan/llama3_70b.toml",
    "hwlint.toml",
    "pyproject.toml",
    "Cargo.toml",
    "train.toml",
];
const JSON_PATHS: &[&str] = &[
    "train_config.json",
    "ds_config.json",
    "config.json",
    "accelerate_config.json",
    "configs/zero3.json",
    "lerobot/train_config.json",
    "trainer_state.json",
    "package.json",
];
const JSONC_PATHS: &[&str] = &[
    "train_config.jsonc",
    "ds_config.jsonc",
    "config.jsonc",
    "accelerate_config.jsonc",
    "configs/zero3.jsonc",
    "lerobot/train_config.jsonc",
    ".vscode/settings.jsonc",
    "tsconfig.jsonc",
];

const PYTHON_PATHS: &[&str] = &[
    "train.py",
    "scripts/train.py",
    "src/openpi/training/config.py",
    "configs/faster_rcnn_r50_fpn.py",
    "lightning_train.py",
    "finetune.py",
    "tests/test_train.py",
    "setup.py",
];
const RUST_PATHS: &[&str] = &[
    "src/training.rs",
    "src/main.rs",
    "examples/guide/src/training.rs",
    "train.rs",
    "src/config.rs",
    "build.rs",
    "src/lib.rs",
    "tests/train.rs",
];
const SHELL_PATHS: &[&str] = &[
    "train.sh",
    "scripts/train.sh",
    "run.sh",
    "launch.bash",
    "examples/finetune.sh",
    "slurm/job.sh",
    "sweep.sh",
    "install.sh",
];

pub fn paths(format: Format) -> &'static [&'static str] {
    match format {
        Format::Yaml => YAML_PATHS,
        Format::Toml => TOML_PATHS,
        Format::Json => JSON_PATHS,
        Format::Jsonc => JSONC_PATHS,
        Format::Python => PYTHON_PATHS,
        Format::Rust => RUST_PATHS,
        Format::Shell => SHELL_PATHS,
    }
}

/// Targets as `--target`, `--gpus`, `--cpu-cores`, `--ram-gb` give them (`None`: the default).
const HARDWARE: [Option<(&str, u32, u32, f64)>; 4] = [
    None,
    Some(("v100-32gb", 8, 80, 512.0)),
    Some(("t4", 1, 4, 16.0)),
    Some(("h100-sxm", 8, 224, 2048.0)),
];

fn overrides(hardware: usize) -> Overrides {
    match HARDWARE[hardware] {
        None => Overrides::default(),
        Some((gpu, gpus, cores, ram)) => Overrides {
            target: Some(gpu.to_string()),
            gpus: Some(gpus),
            cpu_cores: Some(cores),
            ram_gb: Some(ram),
            ..Overrides::default()
        },
    }
}

/// Settings for a file as `hwlint check` builds them with no config file (and the hardware
/// given on the command line), built once per path and hardware.
pub fn settings(path: &Path, hardware: usize) -> &'static FileSettings {
    type Cache = Vec<(PathBuf, usize, FileSettings)>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| {
        let config = LoadedConfig::empty().expect("the empty config loads");
        let mut all = Vec::new();
        let formats = [
            Format::Yaml,
            Format::Toml,
            Format::Json,
            Format::Jsonc,
            Format::Python,
            Format::Rust,
            Format::Shell,
        ];
        for format in formats {
            for p in paths(format) {
                for hw in 0..HARDWARE.len() {
                    let p = PathBuf::from(p);
                    let s = config
                        .for_file(&p, &overrides(hw))
                        .unwrap_or_else(|e| panic!("settings for {hw}: {e}"));
                    all.push((p, hw, s));
                }
            }
        }
        all
    });
    cache
        .iter()
        .find(|(p, hw, _)| p == path && *hw == hardware)
        .map(|(_, _, s)| s)
        .unwrap_or_else(|| {
            // A file of the multi-file targets: settings built for it, once each.
            static MORE: std::sync::Mutex<Vec<(PathBuf, usize, &'static FileSettings)>> =
                std::sync::Mutex::new(Vec::new());
            let mut more = MORE.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, _, s)) = more.iter().find(|(p, hw, _)| p == path && *hw == hardware) {
                return s;
            }
            let config = LoadedConfig::empty().expect("the empty config loads");
            let s: &'static FileSettings = Box::leak(Box::new(
                config
                    .for_file(path, &overrides(hardware))
                    .unwrap_or_else(|e| panic!("settings for {hardware}: {e}")),
            ));
            more.push((path.to_path_buf(), hardware, s));
            s
        })
}

/// The file name and hardware a header byte picks (see the module docs).
fn file_and_hardware(format: Format, byte: Option<&u8>) -> (&'static Path, usize) {
    let b = usize::from(byte.copied().unwrap_or(0));
    let names = paths(format);
    (Path::new(names[b % names.len()]), b / 64)
}

fn pick<T: Copy>(choices: &[T], byte: Option<&u8>) -> T {
    choices[usize::from(byte.copied().unwrap_or(0)) % choices.len()]
}

/// Runs the check of one fuzz target over one input.
pub fn check_target(target: &str, bytes: &[u8]) {
    match target {
        "yaml" => check_yaml(bytes),
        "toml" => check_toml(bytes),
        "json" => check_json(bytes),
        "fix" => check_fix_invariants(bytes),
        "python" => check_code(Format::Python, bytes),
        "rust" => check_code(Format::Rust, bytes),
        "shell" => check_code(Format::Shell, bytes),
        "launch" => check_launch(bytes),
        "inherit" => check_inherit(bytes),
        other => panic!("unknown fuzz target {other}"),
    }
}

pub fn check_yaml(bytes: &[u8]) {
    check_single_format(Format::Yaml, bytes);
}

pub fn check_toml(bytes: &[u8]) {
    check_single_format(Format::Toml, bytes);
}

fn check_single_format(format: Format, bytes: &[u8]) {
    let Some((selector, rest)) = bytes.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (path, hardware) = file_and_hardware(format, Some(selector));
    check_lint_all_formats(format, path, hardware, text);
}

pub fn check_json(bytes: &[u8]) {
    if bytes.len() < 2 {
        return;
    }
    let format = pick(&[Format::Json, Format::Jsonc], bytes.first());
    let (path, hardware) = file_and_hardware(format, bytes.get(1));
    let Ok(text) = std::str::from_utf8(&bytes[2..]) else {
        return;
    };
    check_lint_all_formats(format, path, hardware, text);
}

/// Lints without fixing, then renders the result in every output format.
pub fn check_lint_all_formats(format: Format, path: &Path, hardware: usize, text: &str) {
    let _ = syntax::parse(text, format);
    let settings = settings(path, hardware);
    let result = lint_source(path, text, format, settings, FixMode::Off);
    assert_eq!(result.fixed, 0, "FixMode::Off applied fixes");
    assert_eq!(
        result.text, result.original,
        "FixMode::Off changed the text"
    );
    check_diagnostics(&result);
    render_everything(&result);
}

/// Spans and fix edits must lie inside the text, on character boundaries: renderers slice the
/// text with them, and `apply_fixes` silently drops an edit that does not.
fn check_diagnostics(r: &FileResult) {
    let text = &r.text;
    for d in &r.diagnostics {
        assert!(
            valid_range(text, &d.span),
            "{} span {:?} is outside the text or not on a char boundary (len {}): {}",
            d.rule.code,
            d.span,
            text.len(),
            d.message
        );
        if let Some(fix) = &d.fix {
            for e in &fix.edits {
                assert!(
                    valid_range(text, &e.range),
                    "{} fix edit {:?} is outside the text or not on a char boundary (len {}): {}",
                    d.rule.code,
                    e.range,
                    text.len(),
                    fix.message
                );
            }
        }
    }
}

fn valid_range(text: &str, r: &Range<usize>) -> bool {
    r.start <= r.end
        && r.end <= text.len()
        && text.is_char_boundary(r.start)
        && text.is_char_boundary(r.end)
}

/// Every output format, once each (the JSON ones come from serde_json, valid by construction;
/// SARIF alone is some 60 KB per file, so nothing re-parses them here).
fn render_everything(result: &FileResult) {
    let results = std::slice::from_ref(result);
    let _ = report::render_full(results, true, false);
    let _ = report::render_full(results, false, true);
    let _ = report::render_concise(results, false);
    let _ = report::render_concise(results, true);
    let _ = report::render_json(results);
    let _ = report::render_json_lines(results);
    let _ = report::render_sarif(results);
    let _ = report::render_github(results);
    let _ = report::render_statistics(results);
    let _ = report::summary(results, "fuzz-target", false, false);
    let _ = report::summary(results, "fuzz-target", true, true);
}

/// Lints with every fix on and checks that fixing is sound:
///
/// (a) a file that parsed still parses after fixing (hwlint reverts a fix that breaks the file
///     and says "internal error": that counts as a violation here);
/// (b) fixing is idempotent: linting the fixed text with fixes on changes nothing;
/// (c) a fix changes only the bytes of its own edits: an independent fix loop (diagnostics from
///     `lint_text`, Safe and Unsafe fixes applied with `apply_fixes_indexed`, at most 10 passes)
///     checks every byte outside the chosen edits after every pass, and ends where
///     `lint_source` ended;
/// (d) the result of that loop parses;
/// (e) fixes write the file's own line breaks: a file whose breaks are all CRLF gets no lone LF,
///     one whose breaks are all bare CR gets no LF.
pub fn check_fix_invariants(bytes: &[u8]) {
    if bytes.len() < 2 {
        return;
    }
    let format = pick(
        &[Format::Yaml, Format::Toml, Format::Json, Format::Jsonc],
        bytes.first(),
    );
    let (path, hardware) = file_and_hardware(format, bytes.get(1));
    let Ok(raw) = std::str::from_utf8(&bytes[2..]) else {
        return;
    };
    check_fix_in(format, path, hardware, raw);
}

/// A Python, Rust or shell file: linted and rendered, then fixed with every fix on.
pub fn check_code(format: Format, bytes: &[u8]) {
    let Some((selector, rest)) = bytes.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (name, hardware) = file_and_hardware(format, Some(selector));
    // In a folder of its own: a launch line's named scripts and setups are looked for around
    // the file, and the fuzzer's working folder is a whole repository.
    FOLDER.with(|dir| {
        let path = dir.path().join(name);
        check_fix_in(format, &path, hardware, text);
    });
}

thread_local! {
    /// The folder of the multi-file targets' files, one per thread, kept for the run.
    static FOLDER: tempfile::TempDir = tempfile::tempdir().expect("a temporary folder");
}

/// Writes `parts` (split at NUL bytes) as the files `names` in this thread's folder (a part
/// that is not UTF-8 writes nothing, no part an empty file), and runs `f` on the folder.
fn with_files<T>(parts: &[u8], names: &[&str], f: impl FnOnce(&Path) -> T) -> Option<T> {
    let texts: Vec<&str> = parts
        .split(|&b| b == 0)
        .map(std::str::from_utf8)
        .collect::<Result<_, _>>()
        .ok()?;
    FOLDER.with(|dir| {
        for (i, name) in names.iter().enumerate() {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().expect("a folder")).expect("writable");
            std::fs::write(&p, texts.get(i).copied().unwrap_or("")).expect("writable");
        }
        Some(f(dir.path()))
    })
}

/// A launch script over the config and script it names, linted and fixed.
pub fn check_launch(bytes: &[u8]) {
    let Some((selector, rest)) = bytes.split_first() else {
        return;
    };
    let hardware = usize::from(*selector) / 64;
    with_files(rest, &["run.sh", "cfg.yaml", "train.py"], |dir| {
        let path = dir.join("run.sh");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return;
        };
        check_fix_in(Format::Shell, &path, hardware, &text);
    });
}

/// A config over the bases it names (`_base_` in Python, `_BASE_` in YAML), linted and fixed.
pub fn check_inherit(bytes: &[u8]) {
    let Some((selector, rest)) = bytes.split_first() else {
        return;
    };
    let hardware = usize::from(*selector) / 64;
    let (format, names) = if selector % 2 == 0 {
        (Format::Python, ["a.py", "b.py", "d/c.py"])
    } else {
        (Format::Yaml, ["a.yaml", "b.yaml", "d/c.yaml"])
    };
    with_files(rest, &names, |dir| {
        let path = dir.join(names[0]);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return;
        };
        check_fix_in(format, &path, hardware, &text);
    });
}

/// The `fix` invariants (see [`check_fix_invariants`]) for one file's text, and its findings
/// rendered in every output format.
pub fn check_fix_in(format: Format, path: &Path, hardware: usize, raw: &str) {
    let settings = settings(path, hardware);
    let mode = FixMode::Apply(Applicability::Unsafe);

    let first = lint_source(path, raw, format, settings, mode);
    let parsed = syntax::parse(&first.original, format).is_ok();
    check_diagnostics(&first);
    render_everything(&first);

    // (a)
    if parsed {
        if let Some(d) = first
            .diagnostics
            .iter()
            .find(|d| d.message.starts_with("internal error"))
        {
            panic!(
                "(a) fixing broke a file that parsed: {}\n--- original ---\n{:?}",
                d.message, first.original
            );
        }
        if let Err(e) = syntax::parse(&first.text, format) {
            panic!(
                "(a) fixed text does not parse: {}\n--- fixed ---\n{:?}",
                e.message, first.text
            );
        }
    }

    // (e)
    check_line_breaks(&first.original, &first.text);

    // (b) On what `--fix` writes: the text after the byte-order mark hwlint took off, with
    // the mark put back (a file that starts with two marks keeps the second in its text).
    let written = String::from_utf8(first.output_bytes()).expect("the fixed text is UTF-8");
    let second = lint_source(path, &written, format, settings, mode);
    assert!(
        second.text == first.text,
        "(b) fixing is not idempotent: a second pass applied {:?}\n--- after first ---\n{:?}\n--- after second ---\n{:?}",
        second.applied,
        first.text,
        second.text
    );

    // (c), (d)
    let own = own_fix_loop(path, &first.original, format, settings);
    if parsed {
        if let Err(e) = syntax::parse(&own, format) {
            panic!(
                "(d) text after fixing does not parse: {}\n--- fixed ---\n{:?}",
                e.message, own
            );
        }
        assert!(
            own == first.text,
            "(c) lint_source and a plain fix loop disagree\n--- lint_source ---\n{:?}\n--- loop ---\n{:?}",
            first.text,
            own
        );
    }
}

/// Counts of (lone LF, CRLF, bare CR) line breaks.
fn line_breaks(text: &str) -> (usize, usize, usize) {
    let b = text.as_bytes();
    let (mut lf, mut crlf, mut cr) = (0, 0, 0);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\n' if i > 0 && b[i - 1] == b'\r' => crlf += 1,
            b'\n' => lf += 1,
            b'\r' if b.get(i + 1) != Some(&b'\n') => cr += 1,
            _ => {}
        }
    }
    (lf, crlf, cr)
}

fn check_line_breaks(original: &str, fixed: &str) {
    if original == fixed {
        return;
    }
    let (lf, crlf, cr) = line_breaks(original);
    let (fixed_lf, fixed_crlf, _) = line_breaks(fixed);
    if lf == 0 && cr == 0 && crlf > 0 {
        assert!(
            fixed_lf == 0,
            "(e) fixing a CRLF file wrote a lone LF\n--- original ---\n{original:?}\n--- fixed ---\n{fixed:?}"
        );
    }
    if lf == 0 && crlf == 0 && cr > 0 {
        assert!(
            fixed_lf == 0 && fixed_crlf == 0,
            "(e) fixing a file with bare CR line breaks wrote an LF\n--- original ---\n{original:?}\n--- fixed ---\n{fixed:?}"
        );
    }
}

fn own_fix_loop(path: &Path, text: &str, format: Format, settings: &FileSettings) -> String {
    let mut current = text.to_string();
    for pass in 0..10 {
        let (diags, _) = lint_text(&current, format, path, settings);
        let fixes: Vec<&Fix> = diags
            .iter()
            .filter_map(|d| d.fix.as_ref())
            .filter(|f| matches!(f.applicability, Applicability::Safe | Applicability::Unsafe))
            .collect();
        if fixes.is_empty() {
            break;
        }
        let (next, indices) = apply_fixes_indexed(&current, fixes.iter().copied());
        let mut chosen: Vec<&Edit> = indices.iter().flat_map(|&i| &fixes[i].edits).collect();
        chosen.sort_by_key(|e| (e.range.start, e.range.end));
        check_outside_edits_unchanged(&current, &next, &chosen, pass);
        if indices.is_empty() || next == current {
            break;
        }
        if syntax::parse(&current, format).is_ok() {
            if let Err(e) = syntax::parse(&next, format) {
                panic!(
                    "(c) fix pass {pass} made the text unparseable ({}): applied {:?}\n--- before ---\n{:?}\n--- after ---\n{:?}",
                    e.message,
                    indices.iter().map(|&i| &fixes[i].message).collect::<Vec<_>>(),
                    current,
                    next
                );
            }
        }
        current = next;
    }
    current
}

/// Walks the sorted, non-overlapping edits: every segment of `before` between edits must appear
/// unchanged in `after`, and each edit's content must sit between them.
fn check_outside_edits_unchanged(before: &str, after: &str, edits: &[&Edit], pass: usize) {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let mut pos = 0; // in `before`
    let mut out = 0; // in `after`
    let segment = |from: usize, to: usize, out: &mut usize, what: &str| {
        let kept = &b[from..to];
        let got = a.get(*out..*out + kept.len());
        assert!(
            got == Some(kept),
            "(c) pass {pass}: bytes {from}..{to} of the text ({what}) changed: {:?} became {:?}",
            String::from_utf8_lossy(kept),
            got.map(String::from_utf8_lossy)
        );
        *out += kept.len();
    };
    for e in edits {
        assert!(
            e.range.start >= pos && e.range.start <= e.range.end && e.range.end <= b.len(),
            "(c) pass {pass}: applied edits overlap or leave the text: {:?} after byte {pos}",
            e.range
        );
        segment(pos, e.range.start, &mut out, "before an edit");
        let content = e.content.as_bytes();
        assert!(
            a.get(out..out + content.len()) == Some(content),
            "(c) pass {pass}: edit {:?} did not write {:?}",
            e.range,
            e.content
        );
        out += content.len();
        pos = e.range.end;
    }
    segment(pos, b.len(), &mut out, "after the last edit");
    assert_eq!(out, a.len(), "(c) pass {pass}: text grew beyond its edits");
}
