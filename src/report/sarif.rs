//! SARIF 2.1.0 (one run): every rule with its documentation, results with regions, and fixes as
//! artifact changes. What GitHub code scanning and other SARIF viewers read.

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

/// A file path as a URI: relative with forward slashes, or `file:///...` for an absolute path
/// (a relative reference must not begin with a slash).
fn uri(path: &std::path::Path) -> String {
    let s = path.display().to_string().replace('\\', "/");
    let s = s.strip_prefix("./").unwrap_or(&s);
    let encoded = s.replace('%', "%25").replace(' ', "%20");
    if path.is_absolute() {
        format!(
            "file://{}{encoded}",
            if encoded.starts_with('/') { "" } else { "/" }
        )
    } else {
        encoded
    }
}

fn region(r: &FileResult, span: &std::ops::Range<usize>) -> Value {
    let ((sl, sc), (el, ec)) = location(r, span);
    json!({ "startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec })
}

pub fn render_sarif(results: &[FileResult]) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            let doc = r.doc();
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": { "text": r.summary() },
                "fullDescription": { "text": r.summary() },
                "help": { "text": doc, "markdown": doc },
                "defaultConfiguration": { "level": level(r.severity) },
            })
        })
        .collect();
    let mut out = Vec::new();
    for r in results {
        for d in &r.diagnostics {
            let file = uri(&r.path);
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
                        "artifactLocation": { "uri": file },
                        "region": region(r, &d.span),
                    }
                }],
            });
            if let Some(fix) = &d.fix {
                result["fixes"] = json!([{
                    "description": { "text": fix.message },
                    "artifactChanges": [{
                        "artifactLocation": { "uri": file },
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
    let mut driver = json!({
        "name": "hwlint",
        "version": env!("CARGO_PKG_VERSION"),
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    let repository = env!("CARGO_PKG_REPOSITORY");
    if !repository.is_empty() {
        driver["informationUri"] = json!(repository);
    }
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver },
            "columnKind": "unicodeCodePoints",
            "results": out,
        }],
    });
    let mut s = serde_json::to_string_pretty(&sarif).unwrap_or_default();
    s.push('\n');
    s
}
