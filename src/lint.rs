//! One file through the flow: read, parse, recognise the dialect, run the rules, and (when
//! asked) apply fixes to a fixpoint.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::dialect::{self, detect};
use crate::fix::{apply_fixes_indexed, Applicability, Fix};
use crate::rules::{self, Context, Rule, Severity, RULES};
use crate::settings::FileSettings;
use crate::syntax::{self, comments, Format, Span};

/// Files larger than this are reported, not parsed: no training config is this big.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Fix passes before giving up on reaching a fixpoint.
const MAX_FIX_PASSES: usize = 10;

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    #[serde(skip)]
    pub rule: &'static Rule,
    pub message: String,
    pub span: Span,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    pub fn severity(&self) -> Severity {
        self.rule.severity
    }
}

/// Which fixes to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixMode {
    /// Report only.
    Off,
    /// Apply fixes at or above this applicability.
    Apply(Applicability),
}

/// The outcome for one file.
#[derive(Debug, Clone)]
pub struct FileResult {
    pub path: PathBuf,
    /// The text the diagnostics refer to (after fixes, BOM removed); empty if unreadable.
    pub text: String,
    pub original: String,
    pub bom: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// Number of fixes applied.
    pub fixed: usize,
    /// The fixes applied, as `HW202 set ...`, in order.
    pub applied: Vec<String>,
    /// The dialect recognised, if any.
    pub dialect: Option<String>,
    pub settings: Option<FileSettings>,
    /// Line starts of `text`, built on first use and shared by every report format.
    lines: std::sync::OnceLock<syntax::LineIndex>,
}

impl FileResult {
    /// The line index of `text` (built once).
    pub fn lines(&self) -> &syntax::LineIndex {
        self.lines
            .get_or_init(|| syntax::LineIndex::new(&self.text))
    }

    pub fn changed(&self) -> bool {
        self.text != self.original
    }

    /// The file's bytes as they should be written back.
    pub fn output_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 3);
        if self.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        out.extend_from_slice(self.text.as_bytes());
        out
    }
}

fn parse_error_rule() -> &'static Rule {
    rules::by_code("HW902").expect("HW902 is registered")
}

fn unreadable(path: &Path, message: String) -> FileResult {
    FileResult {
        path: path.to_path_buf(),
        text: String::new(),
        original: String::new(),
        bom: false,
        diagnostics: vec![Diagnostic {
            rule: parse_error_rule(),
            message,
            span: 0..0,
            fix: None,
        }],
        fixed: 0,
        applied: Vec::new(),
        dialect: None,
        settings: None,
        lines: Default::default(),
    }
}

/// Reads a file as UTF-8 text, or says why it cannot be linted.
pub fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read file: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "file is {} MiB, over hwlint's {} MiB limit for a config file",
            meta.len() >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read file: {e}"))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err("not a text file (binary content)".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not a text file: invalid UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Lints one file on disk.
pub fn lint_path(path: &Path, format: Format, settings: FileSettings, mode: FixMode) -> FileResult {
    let raw = match read_text(path) {
        Ok(t) => t,
        Err(message) => return unreadable(path, message),
    };
    let mut r = lint_source(path, &raw, format, &settings, mode);
    r.settings = Some(settings);
    r
}

/// Lints text (a file's content or standard input), applying fixes to a fixpoint if asked.
pub fn lint_source(
    path: &Path,
    raw: &str,
    format: Format,
    settings: &FileSettings,
    mode: FixMode,
) -> FileResult {
    let (text, bom_len) = syntax::strip_bom(raw);
    let original = text.to_string();
    let mut current = original.clone();
    let mut fixed = 0;
    let mut applied = Vec::new();
    let mut extra = Vec::new();
    if let FixMode::Apply(min) = mode {
        for _ in 0..MAX_FIX_PASSES {
            let (diags, _) = lint_text(&current, format, path, settings);
            let fixes: Vec<(&str, &Fix)> = diags
                .iter()
                .filter_map(|d| d.fix.as_ref().map(|f| (d.rule.code, f)))
                .filter(|(_, f)| {
                    f.applicability >= min && f.applicability != Applicability::DisplayOnly
                })
                .collect();
            if fixes.is_empty() {
                break;
            }
            let (next, indices) = apply_fixes_indexed(&current, fixes.iter().map(|(_, f)| *f));
            let n = indices.len();
            if n == 0 || next == current {
                break;
            }
            let pass: Vec<String> = indices
                .iter()
                .map(|&i| format!("{} {}", fixes[i].0, fixes[i].1.message))
                .collect();
            if let Err(e) = syntax::parse(&next, format) {
                // A fix must never break a file: keep the original and say so.
                current = original.clone();
                fixed = 0;
                applied.clear();
                extra.push(Diagnostic {
                    rule: parse_error_rule(),
                    message: format!(
                        "internal error: applying fixes made the file unparseable ({}); the file was left unchanged, please report this",
                        e.message
                    ),
                    span: 0..0,
                    fix: None,
                });
                break;
            }
            current = next;
            fixed += n;
            applied.extend(pass);
        }
    }
    let (mut diagnostics, dialect) = lint_text(&current, format, path, settings);
    diagnostics.extend(extra);
    FileResult {
        path: path.to_path_buf(),
        text: current,
        original,
        bom: bom_len > 0,
        diagnostics,
        fixed,
        applied,
        dialect,
        settings: None,
        lines: Default::default(),
    }
}

/// Parses and lints text once. Returns the diagnostics and the dialect recognised.
pub fn lint_text(
    text: &str,
    format: Format,
    path: &Path,
    settings: &FileSettings,
) -> (Vec<Diagnostic>, Option<String>) {
    let enabled = |r: &Rule| rules::is_enabled(r.code, &settings.select, &settings.ignore);
    let doc = match syntax::parse(text, format) {
        Ok(d) => d,
        Err(e) => {
            if !enabled(parse_error_rule()) {
                return (vec![], None);
            }
            return (
                vec![Diagnostic {
                    rule: parse_error_rule(),
                    message: format!("{} parse error: {}", format.name(), e.message),
                    span: e.span,
                    fix: None,
                }],
                None,
            );
        }
    };
    let lines = syntax::LineIndex::new(text);
    let mut out = Vec::new();
    let mut dialect_name = None;
    for root in &doc.roots {
        let Some(d) = detect(&settings.dialects, root, format, path) else {
            continue;
        };
        dialect_name.get_or_insert_with(|| d.name.clone());
        let setup = dialect::resolve(d, root);
        let linked = dialect::linked_deepspeed(&setup, path, &settings.dialects);
        let ctx = Context {
            linked: linked.as_ref(),
            setup: &setup,
            dialect: d,
            target: &settings.target,
            text,
            lines: &lines,
            doc: &doc,
            root,
            options: &settings.options,
            path,
            models: &settings.models,
            memory: Default::default(),
        };
        for rule in RULES.iter().filter(|r| enabled(r)) {
            let Some(check) = rule.check else { continue };
            for v in check(&ctx) {
                out.push(Diagnostic {
                    rule,
                    message: v.message,
                    span: v.span,
                    fix: v.fix,
                });
            }
        }
    }
    if dialect_name.is_some() {
        out = apply_suppressions(out, text, &lines, format, &enabled);
    }
    out.sort_by(|a, b| (a.span.start, a.rule.code).cmp(&(b.span.start, b.rule.code)));
    (out, dialect_name)
}

/// Drops what `hwlint: ignore` comments cover, and reports the comments that cover nothing or
/// name a code that does not exist (HW903).
fn apply_suppressions(
    diagnostics: Vec<Diagnostic>,
    text: &str,
    lines: &syntax::LineIndex,
    format: Format,
    enabled: &dyn Fn(&Rule) -> bool,
) -> Vec<Diagnostic> {
    let sups = comments::suppressions(text, format);
    if sups.is_empty() {
        return diagnostics;
    }
    // Each diagnostic looks only at the suppressions that can reach its line: those of the file,
    // of its own line, and of the line above.
    let mut file_wide = Vec::new();
    let mut by_line: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (i, s) in sups.iter().enumerate() {
        match s.scope {
            comments::Scope::File => file_wide.push(i),
            comments::Scope::Line { line, .. } => by_line.entry(line).or_default().push(i),
        }
    }
    let mut used = vec![false; sups.len()];
    let mut out: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| {
            let line = comments::line_of(lines, text, d.span.start);
            let near = [Some(line), line.checked_sub(1)];
            let candidates = near
                .iter()
                .flatten()
                .filter_map(|l| by_line.get(l))
                .flatten()
                .chain(&file_wide);
            let mut covered = false;
            for &i in candidates {
                if sups[i].covers(d.rule.code, line) {
                    used[i] = true;
                    covered = true;
                }
            }
            !covered
        })
        .collect();
    let Some(unused_rule) = rules::by_code("HW903").filter(|r| enabled(r)) else {
        return out;
    };
    for (s, used) in sups.iter().zip(used) {
        let codes = s.codes.clone().unwrap_or_default();
        let unknown: Vec<&String> = codes
            .iter()
            .filter(|c| rules::by_code(c).is_none())
            .collect();
        // A code whose rule is not selected may well be needed when it is: not "unused".
        let unselected = codes
            .iter()
            .filter_map(|c| rules::by_code(c))
            .any(|r| !enabled(r));
        let message = if !unknown.is_empty() {
            let list: Vec<&str> = unknown.iter().map(|c| c.as_str()).collect();
            format!(
                "suppression names unknown code{} {} (`hwlint rules` lists them)",
                if list.len() == 1 { "" } else { "s" },
                list.join(", ")
            )
        } else if !used && !unselected {
            match &s.codes {
                Some(c) => format!("suppression of {} matches no diagnostic", c.join(", ")),
                None => "suppression matches no diagnostic".to_string(),
            }
        } else {
            continue;
        };
        out.push(Diagnostic {
            rule: unused_rule,
            message,
            span: s.span.clone(),
            fix: (unknown.is_empty()).then(|| Fix {
                edits: vec![crate::fix::Edit::replace(s.removal.clone(), "")],
                applicability: Applicability::Safe,
                message: "remove the suppression comment".into(),
            }),
        });
    }
    out
}
