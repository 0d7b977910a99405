//! Every rule against its fixtures in fixtures/rules/<CODE>/: each fixture file produces
//! exactly its expected set of rule codes: a `bad-*` file fires the folder's rule, a `clean-*`
//! file does not, and any other code a fixture fires is listed, with the reason, in the
//! folder's `expect.toml` (a listed code that does not fire fails too); snapshots of the
//! concise, full and json output and of each fixed file; and a fix round trip for every bad
//! file whose diagnostic carries a fix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hwlint::fix::Applicability;
use hwlint::lint::{lint_path, lint_source, FileResult, FixMode};
use hwlint::report;
use hwlint::settings::{ConfigResolver, Overrides};
use hwlint::syntax::{parse, Format};

fn lint(path: &Path, mode: FixMode) -> FileResult {
    let configs = ConfigResolver::new(Overrides::default()).unwrap();
    let settings = configs
        .config_for(path)
        .unwrap()
        .for_file(path, &Overrides::default())
        .unwrap();
    lint_path(path, Format::from_path(path).unwrap(), settings, mode)
}

fn rule_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("fixtures/rules")
        .expect("fixtures/rules exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The fixture files of a rule, including those in sub-folders (which carry their own
/// hwlint.toml, e.g. a multi-GPU target).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files.extend(self::files(&p));
        } else if !["hwlint.toml", EXPECT].contains(&&*p.file_name().unwrap().to_string_lossy())
            && Format::from_path(&p).is_some()
        {
            files.push(p);
        }
    }
    files.sort();
    files
}

/// The per-folder list of the other codes a fixture fires: `"<path relative to the folder>" =
/// ["HW204", ...]`, each entry with a comment saying why that finding is right.
const EXPECT: &str = "expect.toml";

/// The other codes each fixture of `dir` is expected to fire, keyed by the fixture's path.
fn other_codes(dir: &Path) -> BTreeMap<PathBuf, BTreeSet<String>> {
    let p = dir.join(EXPECT);
    let Ok(text) = std::fs::read_to_string(&p) else {
        return BTreeMap::new();
    };
    let table: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    table
        .into_iter()
        .map(|(file, codes)| {
            let codes = codes
                .as_array()
                .unwrap_or_else(|| panic!("{}: `{file}` is not a list of codes", p.display()))
                .iter()
                .map(|c| {
                    c.as_str()
                        .unwrap_or_else(|| panic!("{}: `{file}`: {c} is not a code", p.display()))
                        .to_string()
                })
                .collect();
            (dir.join(file), codes)
        })
        .collect()
}

fn is_bad(p: &Path) -> bool {
    p.file_name().unwrap().to_string_lossy().starts_with("bad-")
}

#[test]
fn every_rule_has_fixtures() {
    let dirs: Vec<String> = rule_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for rule in hwlint::rules::RULES {
        assert!(
            dirs.contains(&rule.code.to_string()),
            "no fixtures for {}",
            rule.code
        );
    }
}

#[test]
fn every_fixture_fires_exactly_its_expected_codes() {
    let mut wrong = Vec::new();
    for dir in rule_dirs() {
        let code = dir.file_name().unwrap().to_string_lossy().into_owned();
        let fs = files(&dir);
        let mut others = other_codes(&dir);
        for (file, codes) in &others {
            if !fs.contains(file) {
                wrong.push(format!(
                    "{}/{EXPECT}: `{}` is not a fixture of {code}",
                    dir.display(),
                    file.display()
                ));
            }
            if codes.contains(&code) {
                wrong.push(format!(
                    "{}/{EXPECT}: `{}` lists the folder's own {code} (bad-* fires it, clean-* must not)",
                    dir.display(),
                    file.display()
                ));
            }
        }
        for path in &fs {
            let fired: BTreeSet<String> = lint(path, FixMode::Off)
                .diagnostics
                .iter()
                .map(|d| d.rule.code.to_string())
                .collect();
            let mut expected = others.remove(path).unwrap_or_default();
            if is_bad(path) {
                expected.insert(code.clone());
            }
            let unexpected: Vec<_> = fired.difference(&expected).collect();
            let stale: Vec<_> = expected.difference(&fired).collect();
            if !unexpected.is_empty() {
                let why = if unexpected.iter().any(|c| **c == code) {
                    format!("a clean-* file must not fire {code}")
                } else {
                    format!("list it in {}/{EXPECT} with the reason", dir.display())
                };
                wrong.push(format!(
                    "{} fires {unexpected:?}, not expected ({why})",
                    path.display()
                ));
            }
            if !stale.is_empty() {
                wrong.push(format!(
                    "{} does not fire {stale:?}, expected{}",
                    path.display(),
                    if stale.iter().any(|c| **c == code) {
                        String::new()
                    } else {
                        format!(" by {}/{EXPECT} (stale entry?)", dir.display())
                    }
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bad_fixtures_fire_and_clean_fixtures_do_not() {
    for dir in rule_dirs() {
        let code = dir.file_name().unwrap().to_string_lossy().into_owned();
        let fs = files(&dir);
        assert!(fs.iter().any(|p| is_bad(p)), "{code}: no bad-* fixture");
        assert!(fs.iter().any(|p| !is_bad(p)), "{code}: no clean-* fixture");
        let mut snapshot = String::new();
        for path in &fs {
            let r = lint(path, FixMode::Off);
            let fired = r.diagnostics.iter().any(|d| d.rule.code == code);
            if is_bad(path) {
                assert!(fired, "{} does not fire {code}", path.display());
            } else {
                assert!(!fired, "{} fires {code}", path.display());
            }
            snapshot.push_str(&format!(
                "## {} (dialect: {})\n",
                path.display(),
                r.dialect.as_deref().unwrap_or("-")
            ));
            snapshot.push_str(&report::render_concise(std::slice::from_ref(&r), false));
            if is_bad(path) {
                snapshot.push_str("\n### full\n");
                snapshot.push_str(&report::render_full(std::slice::from_ref(&r), false, false));
                snapshot.push_str("### json\n");
                snapshot.push_str(&report::render_json(std::slice::from_ref(&r)));
                let fixed = lint(path, FixMode::Apply(Applicability::Unsafe));
                if fixed.changed() {
                    snapshot.push_str("### fixed (--fix --unsafe-fixes)\n");
                    snapshot.push_str(&fixed.text);
                    if !fixed.text.ends_with('\n') {
                        snapshot.push_str("\n[no final newline]\n");
                    }
                }
            }
            snapshot.push('\n');
        }
        insta::assert_snapshot!(format!("rule_{code}"), snapshot);
    }
}

/// Every byte the fix did not mean to touch is unchanged: each changed region of the diff
/// lies inside (or at) one of the edits the fixes made.
fn assert_only_edits_changed(
    path: &Path,
    before: &str,
    after: &str,
    edits: &[std::ops::Range<usize>],
) {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_chars(before, after);
    for op in diff.ops() {
        if matches!(op.tag(), similar::DiffTag::Equal) {
            continue;
        }
        let old = op.old_range();
        // Offsets of the diff are in chars; convert to bytes.
        let to_byte = |c: usize| {
            before
                .char_indices()
                .nth(c)
                .map_or(before.len(), |(b, _)| b)
        };
        let (s, e) = (to_byte(old.start), to_byte(old.end));
        assert!(
            edits
                .iter()
                .any(|r| r.start <= s && e <= r.end.max(r.start)),
            "{}: bytes {s}..{e} changed outside the fix edits {edits:?}",
            path.display()
        );
    }
}

#[test]
fn fixes_round_trip() {
    let mut checked = 0;
    let mut carrying = 0;
    for dir in rule_dirs() {
        for path in files(&dir).into_iter().filter(|p| is_bad(p)) {
            let before = lint(&path, FixMode::Off);
            assert!(
                before.dropped_fixes.is_empty(),
                "{}: fixes that do not read back as they say: {:?}",
                path.display(),
                before.dropped_fixes
            );
            let fixes: Vec<_> = before
                .diagnostics
                .iter()
                .filter_map(|d| Some((d.rule.code, d.span.clone(), d.fix.clone()?)))
                .collect();
            if fixes.is_empty() {
                continue;
            }
            carrying += 1;
            let format = Format::from_path(&path).unwrap();
            let configs = ConfigResolver::new(Overrides::default()).unwrap();
            let settings = configs
                .config_for(&path)
                .unwrap()
                .for_file(&path, &Overrides::default())
                .unwrap();
            // Every fix the fixture carries, each alone and once, to check its edits precisely.
            for (code, span, fix) in fixes {
                let (once, _) = hwlint::fix::apply_fixes(&before.text, [&fix]);
                parse(&once, format).unwrap_or_else(|e| {
                    panic!("{}: {code} fix breaks the file: {e:?}", path.display())
                });
                let ranges: Vec<_> = fix.edits.iter().map(|e| e.range.clone()).collect();
                assert_only_edits_changed(&path, &before.text, &once, &ranges);
                let after = lint_source(&path, &once, format, &settings, FixMode::Off);
                // The finding is gone from where it was (the text before it kept its length
                // unless an edit came first).
                let shifted = fix
                    .edits
                    .iter()
                    .filter(|e| e.range.end <= span.start)
                    .map(|e| e.content.len() as isize - e.range.len() as isize)
                    .sum::<isize>();
                let at = (span.start as isize + shifted) as usize;
                assert!(
                    !after
                        .diagnostics
                        .iter()
                        .any(|d| d.rule.code == code && d.span.start == at),
                    "{}: {code} still fires after its fix",
                    path.display()
                );
                if ["HW101", "HW102"].contains(&code) {
                    let (was, is) = (
                        effective_batch(&path, &before.text, &settings),
                        effective_batch(&path, &once, &settings),
                    );
                    if fix.applicability == Applicability::Safe {
                        assert_eq!(
                            was,
                            is,
                            "{}: {code} fix changed micro-batch x accumulation",
                            path.display()
                        );
                    } else if was != is {
                        // An unsafe memory fix may change the samples per step only saying so.
                        assert!(
                            fix.message.contains("effective batch"),
                            "{}: {code} fix changes the effective batch ({was:?} to {is:?}) without saying so: {}",
                            path.display(),
                            fix.message
                        );
                    }
                }
                checked += 1;
            }
            // The fixer as a whole converges, is idempotent, and withholds no fix.
            let mode = FixMode::Apply(Applicability::Unsafe);
            let fixed = lint_source(&path, &before.original, format, &settings, mode);
            assert!(
                fixed.dropped_fixes.is_empty(),
                "{}: fixes that do not read back as they say: {:?}",
                path.display(),
                fixed.dropped_fixes
            );
            let again = lint_source(&path, &fixed.text, format, &settings, mode);
            assert_eq!(
                fixed.text,
                again.text,
                "{}: a second --fix changes the file",
                path.display()
            );
        }
    }
    // Most bad fixtures carry a fix of some rule; every one of those fixes is checked.
    println!("{checked} fixes of {carrying} bad fixtures read back");
    assert!(
        carrying >= 50 && checked >= carrying,
        "only {checked} fixes of {carrying} fixtures ran"
    );
}

/// Micro-batch x accumulation (or the global batch where the framework derives accumulation).
/// The samples per optimizer step, `None` where they are the framework's default global batch.
fn effective_batch(
    path: &Path,
    text: &str,
    settings: &hwlint::settings::FileSettings,
) -> Option<i64> {
    use hwlint::dialect::{detect, resolve, Concept};
    let format = Format::from_path(path).unwrap();
    let doc = parse(text, format).unwrap();
    let root = &doc.roots[0];
    let (d, root) = detect(&settings.dialects, root, format, path).unwrap();
    let s = resolve(d, &root);
    // Where the framework derives accumulation from a global batch the file leaves to its
    // default (LitGPT's script default, OLMo's 512), that batch is the effective one, and no
    // micro-batch changes it.
    if d.semantics.accumulation_derived && s.int(Concept::GlobalBatch).is_none() {
        return None;
    }
    let micro = s.int(Concept::MicroBatch).unwrap().0;
    let accum = s.int(Concept::GradAccum).map_or(1, |(a, _)| a);
    // Where the framework derives the global batch from the micro-batch (torchtitan `-1`),
    // it is micro x accumulation x data-parallel ranks.
    let ranks = if d.semantics.global_batch_minus_one_is_derived {
        i64::from(settings.target.gpus.unwrap_or(1))
    } else {
        1
    };
    Some(
        s.int(Concept::GlobalBatch)
            .map_or(micro * accum * ranks, |(g, _)| g),
    )
}
