//! The standing review of hwlint on the real corpus: every error and warning hwlint gives on
//! `../shared/corpus`, and every fix `--fix` and `--fix --unsafe-fixes` apply, on three targets,
//! must be listed in `tests/corpus/REVIEW.md` with a one-line reason a reviewer accepted. A new
//! finding or fix that the review does not list fails this test, so a false alarm cannot land
//! unnoticed; an entry that no longer happens fails it too, so the review stays exact.
//!
//! `UPDATE_REVIEW=1 cargo test --test corpus_review` rewrites the file from what hwlint does
//! now, keeping every reason whose entry still happens and marking new entries `UNREVIEWED`,
//! which fails until a person replaces it with a reason (or fixes the bug it shows).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hwlint::fix::Applicability;
use hwlint::lint::{lint_path, FixMode};
use hwlint::rules::Severity;
use hwlint::settings::{LoadedConfig, Overrides};
use hwlint::syntax::Format;

#[path = "support/shared.rs"]
mod shared;

const REVIEW: &str = "tests/corpus/REVIEW.md";
const UNREVIEWED: &str = "UNREVIEWED";

/// The targets a new user tries first: the default, one named consumer card, a full node.
fn targets() -> Vec<(&'static str, Overrides)> {
    vec![
        (
            "default target (1 x rtx-4090 guessed, GPU count unknown)",
            Overrides::default(),
        ),
        (
            "--target rtx-4090",
            Overrides {
                target: Some("rtx-4090".into()),
                ..Overrides::default()
            },
        ),
        (
            "--target h100-sxm --gpus 8",
            Overrides {
                target: Some("h100-sxm".into()),
                gpus: Some(8),
                ..Overrides::default()
            },
        ),
    ]
}

/// One reviewed line: what hwlint did, and why that is right.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    /// `target / kind`, the section it is listed under.
    section: String,
    /// `path:line CODE severity` for a finding, `path CODE` for a fix.
    key: String,
    /// The message or the fix, as hwlint prints it (kept current by UPDATE_REVIEW).
    text: String,
}

const FINDINGS: &str = "findings (errors and warnings)";
const SAFE: &str = "fixes applied by --fix";
const UNSAFE: &str = "fixes applied by --fix --unsafe-fixes (beyond --fix)";

fn observe(root: &Path) -> Vec<Entry> {
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let config = LoadedConfig::empty().unwrap();
    let mut out = Vec::new();
    for (target, overrides) in targets() {
        for line in manifest.lines().skip(1) {
            let rel = line.split('\t').next().unwrap();
            let path = root.join(rel);
            let format = Format::from_path(&path).unwrap();
            let settings = config.for_file(&path, &overrides).unwrap();
            let r = lint_path(&path, format, settings.clone(), FixMode::Off);
            let mut fixable = false;
            for d in &r.diagnostics {
                fixable |= d.fix.is_some();
                if d.severity() == Severity::Info {
                    continue;
                }
                let (row, _) = r.lines().position(&r.text, d.span.start);
                out.push(Entry {
                    section: format!("{target} / {FINDINGS}"),
                    key: format!(
                        "{rel}:{row} {} {}",
                        d.rule.code,
                        severity_name(d.severity())
                    ),
                    text: d.message.clone(),
                });
            }
            if !fixable {
                continue;
            }
            let safe = lint_path(
                &path,
                format,
                settings.clone(),
                FixMode::Apply(Applicability::Safe),
            );
            let all = lint_path(
                &path,
                format,
                settings,
                FixMode::Apply(Applicability::Unsafe),
            );
            let mut beyond = all.applied.clone();
            for done in &safe.applied {
                if let Some(i) = beyond.iter().position(|a| a == done) {
                    beyond.remove(i);
                }
            }
            for (kind, applied) in [(SAFE, &safe.applied), (UNSAFE, &beyond)] {
                for a in applied {
                    let (code, what) = a.split_once(' ').unwrap_or((a, ""));
                    out.push(Entry {
                        section: format!("{target} / {kind}"),
                        key: format!("{rel} {code}"),
                        text: what.to_string(),
                    });
                }
            }
        }
    }
    out.sort();
    out
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// The review file: `## section` headers, then per entry a `- `key`: text` line and an
/// indented `- why: reason` line.
fn parse(review: &str) -> Vec<(Entry, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut pending: Option<Entry> = None;
    for (n, line) in review.lines().enumerate() {
        if let Some(s) = line.strip_prefix("## ") {
            section = s.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("- `") {
            assert!(pending.is_none(), "{REVIEW}:{}: entry without a reason", n);
            let (key, text) = rest
                .split_once("`: ")
                .unwrap_or_else(|| panic!("{REVIEW}:{}: expected - `key`: text", n + 1));
            pending = Some(Entry {
                section: section.clone(),
                key: key.to_string(),
                text: text.to_string(),
            });
        } else if let Some(why) = line.strip_prefix("  - why: ") {
            let entry = pending
                .take()
                .unwrap_or_else(|| panic!("{REVIEW}:{}: a reason without an entry", n + 1));
            out.push((entry, why.trim().to_string()));
        }
    }
    assert!(pending.is_none(), "{REVIEW}: the last entry has no reason");
    out
}

fn render(entries: &[(Entry, String)]) -> String {
    let mut s = String::from(
        "# hwlint on ../shared/corpus: the reviewed findings and fixes\n\n\
         Every error and warning hwlint gives on the 600 corpus configs, and every fix that\n\
         `--fix` and `--fix --unsafe-fixes` apply, on three targets, each with the reason a\n\
         reviewer accepted it. `tests/corpus_review.rs` fails when hwlint does anything this file\n\
         does not list, or stops doing something it lists. Regenerate the entries with\n\
         `UPDATE_REVIEW=1 cargo test --test corpus_review` (reasons are kept; new entries read\n\
         `UNREVIEWED` and fail until reviewed). A finding or fix nobody would defend here is a bug\n\
         to fix, not a line to add.\n",
    );
    let mut by_section: BTreeMap<&str, Vec<&(Entry, String)>> = BTreeMap::new();
    for e in entries {
        by_section.entry(&e.0.section).or_default().push(e);
    }
    for (target, _) in targets() {
        for kind in [FINDINGS, SAFE, UNSAFE] {
            let section = format!("{target} / {kind}");
            let list = by_section
                .get(section.as_str())
                .cloned()
                .unwrap_or_default();
            write!(s, "\n## {section}\n\n").unwrap();
            if list.is_empty() {
                s.push_str("(none)\n");
            }
            for (e, why) in list {
                writeln!(s, "- `{}`: {}\n  - why: {why}", e.key, e.text).unwrap();
            }
        }
    }
    s
}

fn review_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(REVIEW)
}

#[test]
fn corpus_findings_and_fixes_match_the_review() {
    let Some(root) = shared::shared_path("corpus") else {
        return;
    };
    let observed = observe(&root);
    let text = std::fs::read_to_string(review_path()).unwrap_or_default();
    let reviewed = parse(&text);
    if std::env::var_os("UPDATE_REVIEW").is_some() {
        // A finding keeps its reason when its message changes its figures; a fix that writes
        // something else is a new fix and is reviewed again.
        let identity = |e: &Entry| {
            let text = if e.section.ends_with(FINDINGS) {
                String::new()
            } else {
                e.text.clone()
            };
            (e.section.clone(), e.key.clone(), text)
        };
        let mut reasons: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
        for (e, why) in &reviewed {
            reasons.entry(identity(e)).or_default().push(why.clone());
        }
        let entries: Vec<(Entry, String)> = observed
            .iter()
            .map(|e| {
                let why = reasons
                    .get_mut(&identity(e))
                    .and_then(|v| (!v.is_empty()).then(|| v.remove(0)))
                    .unwrap_or_else(|| UNREVIEWED.to_string());
                (e.clone(), why)
            })
            .collect();
        std::fs::write(review_path(), render(&entries)).unwrap();
        eprintln!("{REVIEW} rewritten with {} entries", entries.len());
    }
    let text = std::fs::read_to_string(review_path()).unwrap_or_default();
    let reviewed = parse(&text);
    let mut listed: Vec<Entry> = reviewed.iter().map(|(e, _)| e.clone()).collect();
    listed.sort();
    let unreviewed: Vec<String> = reviewed
        .iter()
        .filter(|(_, why)| why == UNREVIEWED || why.is_empty())
        .map(|(e, _)| format!("  [{}] {}: {}", e.section, e.key, e.text))
        .collect();
    let new: Vec<String> = observed
        .iter()
        .filter(|e| !listed.contains(e))
        .map(|e| format!("  [{}] {}: {}", e.section, e.key, e.text))
        .collect();
    let gone: Vec<String> = listed
        .iter()
        .filter(|e| !observed.contains(e))
        .map(|e| format!("  [{}] {}: {}", e.section, e.key, e.text))
        .collect();
    let mut per_section: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &observed {
        *per_section.entry(&e.section).or_default() += 1;
    }
    for (section, n) in &per_section {
        eprintln!("{n:>4}  {section}");
    }
    assert!(
        new.is_empty() && gone.is_empty() && unreviewed.is_empty(),
        "the corpus review ({REVIEW}) is not what hwlint does \
         (UPDATE_REVIEW=1 rewrites it; then review every UNREVIEWED line):\n\
         not in the review ({}):\n{}\nin the review but no longer happening ({}):\n{}\n\
         not reviewed yet ({}):\n{}",
        new.len(),
        new.join("\n"),
        gone.len(),
        gone.join("\n"),
        unreviewed.len(),
        unreviewed.join("\n"),
    );
}

#[test]
fn review_parser_round_trips() {
    let entries = vec![(
        Entry {
            section: format!("--target rtx-4090 / {FINDINGS}"),
            key: "a/b.yaml:3 HW202 warning".into(),
            text: "`num_workers` is 0: the GPU waits".into(),
        },
        "LeRobot runs one process; 0 workers load in it".to_string(),
    )];
    let parsed = parse(&render(&entries));
    assert_eq!(parsed, entries);
}
