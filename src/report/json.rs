//! A JSON array of diagnostics: code, severity, message, filename, locations, fix.

use serde::Serialize;

use super::location;
use crate::fix::Applicability;
use crate::lint::FileResult;

#[derive(Serialize)]
struct Location {
    row: usize,
    column: usize,
}

#[derive(Serialize)]
struct JsonEdit {
    content: String,
    location: Location,
    end_location: Location,
}

#[derive(Serialize)]
struct JsonFix {
    applicability: Applicability,
    message: String,
    edits: Vec<JsonEdit>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    name: &'a str,
    severity: &'a str,
    message: &'a str,
    filename: String,
    location: Location,
    end_location: Location,
    fix: Option<JsonFix>,
}

fn loc((row, column): (usize, usize)) -> Location {
    Location { row, column }
}

fn diagnostics(results: &[FileResult]) -> Vec<JsonDiagnostic<'_>> {
    let mut all = Vec::new();
    for r in results {
        for d in &r.diagnostics {
            let (start, end) = location(r, &d.span);
            let fix = d.fix.as_ref().map(|f| JsonFix {
                applicability: f.applicability,
                message: f.message.clone(),
                edits: f
                    .edits
                    .iter()
                    .map(|e| {
                        let (s, en) = location(r, &e.range);
                        JsonEdit {
                            content: e.content.clone(),
                            location: loc(s),
                            end_location: loc(en),
                        }
                    })
                    .collect(),
            });
            all.push(JsonDiagnostic {
                code: d.rule.code,
                name: d.rule.name,
                severity: d.severity().as_str(),
                message: &d.message,
                filename: r.path.display().to_string(),
                location: loc(start),
                end_location: loc(end),
                fix,
            });
        }
    }
    all
}

pub fn render_json(results: &[FileResult]) -> String {
    json_array(&json_elements(results))
}

/// Each diagnostic of `results` as it appears inside [`render_json`]'s array (pretty-printed
/// and indented), so a streamed run keeps strings, not the files' texts.
pub fn json_elements(results: &[FileResult]) -> Vec<String> {
    diagnostics(results)
        .iter()
        .filter_map(|d| serde_json::to_string_pretty(d).ok())
        .map(|e| e.replace('\n', "\n  "))
        .collect()
}

/// The array of [`json_elements`], as `serde_json::to_string_pretty` prints a list.
pub fn json_array(elements: &[String]) -> String {
    if elements.is_empty() {
        return "[]\n".into();
    }
    format!("[\n  {}\n]\n", elements.join(",\n  "))
}

/// One object per line, the fields of `render_json`.
pub fn render_json_lines(results: &[FileResult]) -> String {
    diagnostics(results)
        .iter()
        .filter_map(|d| serde_json::to_string(d).ok())
        .map(|l| l + "\n")
        .collect()
}
