//! Hostile numbers through every rule and fix: each number of every rule and dialect fixture is
//! replaced, one at a time, by 2^32, 2^62, 2^63 - 1, 2^63, 2^64, -2^63, -1, 0, a float, a huge
//! float and a string, and the file is linted, counted and fixed to its fixpoint. No arithmetic may
//! overflow (tests build with overflow checks, and so does the release profile: an overflow
//! there is a caught panic reported as an internal error, never a wrong number written), no
//! internal error may be reported, a fixed file must parse, and a number a fix writes must be
//! a count a framework takes (at least 1).

use std::path::{Path, PathBuf};

use hwlint::lint::{lint_source, FixMode};
use hwlint::settings::{ConfigResolver, Overrides};
use hwlint::syntax::{parse, Format};

/// Replacements for a number, as text each format reads (a string is quoted where needed).
const HOSTILE: &[&str] = &[
    "4294967296",
    "4611686018427387904",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775808",
    "-1",
    "0",
    "1.5",
    "1e308",
    "STRING",
];

fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![
        PathBuf::from("fixtures/rules"),
        PathBuf::from("fixtures/dialects"),
    ];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if Format::from_path(&p).is_some()
            && !p.ends_with("hwlint.toml")
            && !p.ends_with("expect.toml")
        {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The spans of the number literals of a text: a digit run (with a sign, a fraction and an
/// exponent) that is not part of a word.
fn numbers(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b"_.$".contains(&b[i - 1]));
        if b[i].is_ascii_digit() && !word_before {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.' || b[j] == b'_') {
                j += 1;
            }
            if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                let k = j + 1 + usize::from(matches!(b.get(j + 1), Some(b'-' | b'+')));
                if b.get(k).is_some_and(u8::is_ascii_digit) {
                    j = k;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                }
            }
            let word_after = j < b.len() && (b[j].is_ascii_alphabetic() || b[j] == b'_');
            if !word_after {
                out.push(start..j);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// `value` as `format` writes it in place of a number.
fn written(value: &str, format: Format) -> String {
    match (value, format) {
        ("STRING", Format::Yaml | Format::Shell) => "abc".into(),
        ("STRING", _) => "\"abc\"".into(),
        (v, _) => v.into(),
    }
}

thread_local! {
    /// Where the last panic on this thread happened.
    static WHERE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Every case of `files`: how many, and what failed.
fn run_cases(files: &[PathBuf], configs: &[ConfigResolver; 2]) -> (usize, Vec<String>) {
    let mut cases = 0;
    let mut failures = Vec::new();
    for (i, path) in files.iter().enumerate() {
        let configs = &configs[i % 2];
        let format = Format::from_path(path).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let settings = configs
            .config_for(path)
            .unwrap()
            .for_file(path, configs.overrides())
            .unwrap();
        for span in numbers(&text) {
            for value in HOSTILE {
                let mut t = text.clone();
                t.replace_range(span.clone(), &written(value, format));
                cases += 1;
                let what = format!("{}: `{}` -> {value}", path.display(), &text[span.clone()]);
                for mode in [
                    FixMode::Off,
                    FixMode::Apply(hwlint::fix::Applicability::Unsafe),
                ] {
                    let run = std::panic::catch_unwind(|| {
                        lint_source(Path::new(path), &t, format, &settings, mode)
                    });
                    let r = match run {
                        Ok(r) => r,
                        Err(e) => {
                            let m = e
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            let at = WHERE.with(|w| w.borrow().clone());
                            failures.push(format!("{what}: panicked at {at}: {m}"));
                            continue;
                        }
                    };
                    if r.internal_error {
                        failures.push(format!("{what}: internal error"));
                    }
                    if r.changed() && parse(&r.text, format).is_err() {
                        failures.push(format!("{what}: the fixed file does not parse"));
                    }
                    for d in &r.diagnostics {
                        let Some(fix) = &d.fix else { continue };
                        for e in &fix.edits {
                            let content = e.content.trim().trim_matches(['"', '\'']);
                            if content.parse::<i64>().is_ok_and(|n| n < 1) {
                                failures.push(format!(
                                    "{what}: {} would write {content}: {}",
                                    d.rule.code, fix.message
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    (cases, failures)
}

#[test]
fn hostile_numbers_through_every_rule_and_fix() {
    // A target the user named: fixes of the memory and host rules are applied, not only shown.
    // One GPU (the world size unknown) for half the files, eight for the other half: the
    // arithmetic over the data-parallel GPUs only runs when they are known.
    let overrides = |gpus| Overrides {
        target: Some("rtx-4090".into()),
        gpus,
        cpu_cores: Some(8),
        ram_gb: Some(32.0),
        ..Default::default()
    };
    let configs = [
        ConfigResolver::new(overrides(None)).unwrap(),
        ConfigResolver::new(overrides(Some(8))).unwrap(),
    ];
    let files = fixture_files();
    assert!(files.len() > 100, "{} fixtures", files.len());
    // A failure is collected with its case; the default hook would print each one's backtrace.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        if let Some(l) = info.location() {
            WHERE.with(|w| *w.borrow_mut() = format!("{}:{}", l.file(), l.line()));
        }
    }));
    // The files shared out over the cores: each case is independent.
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let (cases, mut failures) = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(files.len().div_ceil(threads))
            .map(|chunk| {
                let configs = &configs;
                s.spawn(move || run_cases(chunk, configs))
            })
            .collect();
        handles.into_iter().fold((0, Vec::new()), |(n, mut f), h| {
            let (cases, failed) = h.join().unwrap();
            f.extend(failed);
            (n + cases, f)
        })
    });
    std::panic::set_hook(hook);
    failures.sort();
    failures.dedup();
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(400)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
