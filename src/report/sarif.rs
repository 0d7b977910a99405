//! SARIF 2.1.0 (one run): every rule with its documentation, results with regions, and fixes as
//! artifact changes. What GitHub code scanning and other SARIF viewers read.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::location;
use crate::lint::FileResult;
use crate::rules::{Severity, RULES};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The folder SARIF paths are relative to (`%SRCROOT%`): the repository holding the working
/// directory (the closest folder with `.git`); run from outside any repository, the one holding
/// the first linted file; else the working directory. Code scanning matches results to files by
/// their path from the repository root, so a run from a subfolder must still say `sub/x.yaml`.
fn source_root(first: Option<&Path>) -> Option<PathBuf> {
    let repository = |dir: &Path| {
        let dir = std::path::absolute(dir).ok()?;
        dir.ancestors()
            .find(|d| d.join(".git").exists())
            .map(Path::to_path_buf)
    };
    let cwd = std::env::current_dir().ok()?;
    let root = repository(&cwd)
        .or_else(|| repository(first?.parent().unwrap_or(Path::new("."))))
        .unwrap_or(cwd);
    Some(std::fs::canonicalize(&root).unwrap_or(root))
}

/// Percent-encodes a path for a URI: every byte but the unreserved characters and `/`
/// (RFC 3986), so `#`, `?`, spaces and non-ASCII names survive the validator and the viewer.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where a file is: relative to `%SRCROOT%` when it is inside it, else an absolute `file://` URI.
fn artifact_location(path: &Path, root: Option<&Path>) -> Value {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    // The folder resolved (symlinks, `..`), the file's own name kept.
    let abs = match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(abs.clone()),
        _ => abs,
    };
    let slashed = |p: &Path| p.to_string_lossy().replace('\\', "/");
    if let Some(rel) = root.and_then(|r| abs.strip_prefix(r).ok()) {
        return json!({ "uri": encode(&slashed(rel)), "uriBaseId": "%SRCROOT%" });
    }
    json!({ "uri": format!("file://{}", encode(&slashed(&abs))) })
}

/// The folder URI of `%SRCROOT%`, which must end with a slash.
fn root_uri(root: &Path) -> String {
    let mut s = format!(
        "file://{}",
        encode(&root.to_string_lossy().replace('\\', "/"))
    );
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

/// The repository's page for a path (`informationUri`, a rule's `helpUri`), when Cargo.toml
/// names the repository.
fn repository_page(path: &str) -> Option<String> {
    let repository = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    (!repository.is_empty()).then(|| format!("{repository}{path}"))
}

/// The rule documentation's "Why is this bad?" section, as one paragraph.
fn why(doc: &str) -> Option<String> {
    let section = doc.split("## Why is this bad?").nth(1)?;
    let section = section.split("\n## ").next()?.trim();
    (!section.is_empty()).then(|| section.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn region(r: &FileResult, span: &std::ops::Range<usize>) -> Value {
    let ((sl, sc), (el, ec)) = location(r, span);
    json!({ "startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec })
}

pub fn render_sarif(results: &[FileResult]) -> String {
    let mut sarif = Sarif::new(results.first().map(|r| r.path.as_path()));
    sarif.add(results);
    sarif.finish()
}

/// A SARIF log built file by file: the results keep only what the log says of them, not the
/// files' texts. The source root is decided from the first file, as [`render_sarif`] does.
pub struct Sarif {
    root: Option<PathBuf>,
    results: Vec<Value>,
    memory: super::MemoryCounts,
}

impl Sarif {
    pub fn new(first: Option<&Path>) -> Sarif {
        Sarif {
            root: source_root(first),
            results: Vec::new(),
            memory: Default::default(),
        }
    }

    pub fn add(&mut self, results: &[FileResult]) {
        self.memory.add(&super::counts(results).memory);
        let root = self.root.as_deref();
        let out = &mut self.results;
        for r in results {
            let file = artifact_location(&r.path, root);
            for d in &r.diagnostics {
                let index = RULES
                    .iter()
                    .position(|x| x.code == d.rule.code)
                    .unwrap_or(0);
                let mut result = json!({
                    "ruleId": d.rule.code,
                    "ruleIndex": index,
                    "level": level(d.severity()),
                    "message": { "text": d.message },
                    "locations": [{
                        "physicalLocation": {
                            "artifactLocation": file,
                            "region": region(r, &d.span),
                        }
                    }],
                });
                if let Some(fix) = &d.fix {
                    let safe = fix.applicability == crate::fix::Applicability::Safe;
                    let kind = if safe {
                        "safe: `hwlint --fix` applies it"
                    } else {
                        "unsafe, since it changes what the run does: `hwlint --fix --unsafe-fixes` applies it"
                    };
                    result["fixes"] = json!([{
                        "description": { "text": format!("{}; {kind}", fix.message) },
                        "properties": { "applicability": if safe { "safe" } else { "unsafe" } },
                        "artifactChanges": [{
                            "artifactLocation": file,
                            "replacements": fix.edits.iter().map(|e| json!({
                                "deletedRegion": region(r, &e.range),
                                "insertedContent": { "text": e.content },
                            })).collect::<Vec<_>>(),
                        }],
                    }]);
                }
                out.push(result);
            }
        }
    }

    pub fn finish(self) -> String {
        let (root, out) = (self.root, self.results);
        let rules: Vec<Value> = RULES
            .iter()
            .map(|r| {
                let doc = r.doc();
                let mut rule = json!({
                    "id": r.code,
                    "name": r.name,
                    "shortDescription": { "text": r.summary() },
                    "fullDescription": { "text": why(&doc).unwrap_or_else(|| r.summary()) },
                    "help": { "text": doc, "markdown": doc },
                    "defaultConfiguration": { "level": level(r.severity) },
                });
                if let Some(page) = repository_page(&format!("/blob/main/docs/rules/{}.md", r.code))
                {
                    rule["helpUri"] = json!(page);
                }
                rule
            })
            .collect();
        let mut driver = json!({
            "name": "hwlint",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        });
        if let Some(home) = repository_page("") {
            driver["informationUri"] = json!(home);
        }
        let mut run = json!({
            "tool": { "driver": driver },
            "columnKind": "unicodeCodePoints",
            "results": out,
        });
        if let Some(root) = &root {
            run["originalUriBaseIds"] = json!({ "%SRCROOT%": { "uri": root_uri(root) } });
        }
        // What the memory check concluded over the runs: checked, not decided (with what
        // decides it) or not checked (with what it needs); HW901 notes are each run's own.
        run["properties"] = json!({ "memory": self.memory.to_json() });
        let sarif = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [run],
        });
        let mut s = serde_json::to_string_pretty(&sarif).unwrap_or_default();
        s.push('\n');
        s
    }
}
