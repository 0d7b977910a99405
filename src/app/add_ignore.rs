//! `hwlint check --add-ignore`: a suppression comment for every finding, where the file's
//! format lets one stand without changing what the file says.
//!
//! Appending `# hwlint: ignore[..]` to a finding's line is right most of the time, but not
//! everywhere: after a shell `\` the comment ends the command (the next line's flags become a
//! command of their own), and inside a string that goes on onto the next line (a Python
//! triple-quoted string, a Rust raw string, a YAML quoted scalar over several lines) it becomes
//! part of the value. So the end of a line is taken as it is only where nothing can go on past
//! it (no continuation, no value of the tree spanning the line break); a line where something
//! may is tried at each place in turn, each kept only when the file, parsed again, says the same
//! thing and the new comment covers the finding: the end of the line, the end of a continued
//! line (which covers all of it), a comment line of its own above it. Where none holds, nothing
//! is written for that line and the run says why. All the comments together are checked once
//! more before the file is written.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use crate::fix::{apply_fixes, Applicability, Edit, Fix};
use crate::lint::{lint_text, FileResult};
use crate::syntax::comments::{ends_continued, line_of, suppressions, LineComments, Scope};
use crate::syntax::{self, Format, LineIndex};

/// The comments placed, each with the line it covers, and the lines left without one.
type Placed = (Vec<(usize, Edit)>, Vec<usize>);

/// Lines of one file checked one by one (a parse and a lint each) at the most.
const MAX_CHECKED_LINES: usize = 2000;

/// What `--add-ignore` did: comments written, lines it found no place for, and whether a write
/// failed.
#[derive(Debug, Default)]
pub struct Added {
    pub comments: usize,
    pub refused: usize,
    pub write_failed: bool,
}

pub(super) fn add_ignores(results: &[FileResult], roots: &[PathBuf]) -> Added {
    crate::fix::signals::install();
    let mut added = Added::default();
    let mut written = HashSet::new();
    for r in results {
        let Some(format) = Format::from_path(&r.path) else {
            continue;
        };
        let Some(plan) = Plan::of(r, format) else {
            continue;
        };
        let Some((edits, refused)) = plan.checked_edits() else {
            continue;
        };
        added.refused += refused.len();
        for line in refused {
            super::emit_err(&format!(
                "warning: {}:{}: no `hwlint: ignore` comment added: a comment that covers this line would change what the file says here (inside a string or a command that goes on onto the next line); suppress it with `per-file-ignores` in hwlint.toml\n",
                crate::lint::shown_path(&r.path).display(),
                line + 1
            ));
        }
        if edits.is_empty() {
            continue;
        }
        let n = edits.len();
        let edits: Vec<Edit> = edits.into_iter().map(|(_, e)| e).collect();
        let Some(text) = plan.applied(&edits) else {
            continue;
        };
        let mut new = Vec::new();
        if r.bom {
            new.extend_from_slice("\u{feff}".as_bytes());
        }
        new.extend_from_slice(text.as_bytes());
        match super::check::write_fixed(&r.path, &r.input_bytes(), &new, roots, &mut written) {
            Ok(()) => added.comments += n,
            Err(e) => {
                super::emit_err(&format!("error: {e}\n"));
                added.write_failed = true;
            }
        }
    }
    added
}

/// One file's findings by line, and what it takes to check a placement.
struct Plan<'r> {
    r: &'r FileResult,
    format: Format,
    marker: &'static str,
    index: LineIndex,
    doc: syntax::Document,
    /// 0-based line -> the codes to suppress there.
    by_line: BTreeMap<usize, Vec<&'static str>>,
    /// The suppressions already in the file.
    existing: Vec<crate::syntax::comments::Suppression>,
    /// The file's lines, line breaks included.
    physical: Vec<&'r str>,
    /// Byte offsets of line breaks some value of the tree spans (a multi-line string, a call
    /// whose arguments go on over several lines): a comment there may land inside it.
    spanned_breaks: Vec<usize>,
}

impl<'r> Plan<'r> {
    fn of(r: &'r FileResult, format: Format) -> Option<Plan<'r>> {
        let marker = *format.comment_markers().first()?;
        let index = LineIndex::new(&r.text);
        let mut by_line: BTreeMap<usize, Vec<&'static str>> = BTreeMap::new();
        for d in &r.diagnostics {
            if matches!(d.rule.code, "HW902" | "HW903") {
                continue;
            }
            let line = line_of(&index, &r.text, d.span.start);
            by_line.entry(line).or_default().push(d.rule.code);
        }
        if by_line.is_empty() || r.settings.is_none() {
            return None;
        }
        let doc = syntax::parse(&r.text, format).ok()?;
        let mut spanned_breaks = Vec::new();
        for root in &doc.roots {
            scalar_breaks(root, &r.text, &mut spanned_breaks, 0);
        }
        spanned_breaks.sort_unstable();
        Some(Plan {
            r,
            format,
            marker,
            index,
            existing: suppressions(&r.text, format),
            physical: syntax::lines_inclusive(&r.text).collect(),
            spanned_breaks,
            doc,
            by_line,
        })
    }

    /// Whether a comment at the end of `line` could be anything but a comment covering it: the
    /// line goes on (a `\`) or a value of the tree spans its break.
    fn may_be_unsafe(&self, line: usize) -> bool {
        let markers = self.format.comment_markers();
        let continued = self
            .physical
            .get(line)
            .is_some_and(|l| ends_continued(l, markers));
        let end = self.line_end(line);
        continued || self.spanned_breaks.binary_search(&end).is_ok()
    }

    fn text(&self) -> &str {
        &self.r.text
    }

    /// Where a line ends, before its line break (`\n`, `\r\n` or `\r`).
    fn line_end(&self, line: usize) -> usize {
        let start = self.index.line_start(line).unwrap_or(0);
        start
            + self.text()[start..]
                .find(['\n', '\r'])
                .unwrap_or(self.text().len() - start)
    }

    /// The comment's text for `codes`, sorted, once each.
    fn comment(&self, mut codes: Vec<&str>) -> String {
        codes.sort_unstable();
        codes.dedup();
        format!("{} hwlint: ignore[{}]", self.marker, codes.join(", "))
    }

    /// The places to try for a comment covering `line`, best first.
    fn candidates(&self, line: usize, codes: &[&'static str]) -> Vec<Edit> {
        let text = self.text();
        // A comment already ending the line takes the codes too.
        let same_line = self
            .existing
            .iter()
            .find(|s| matches!(s.scope, Scope::Line { line: l, alone: false, .. } if l == line));
        if let Some(s) = same_line {
            let Some(old) = &s.codes else {
                return Vec::new();
            };
            let mut all = codes.to_vec();
            let olds: Vec<&str> = old.iter().map(String::as_str).collect();
            let merged = self.comment(all.drain(..).chain(olds).collect());
            return vec![Edit::replace(s.span.clone(), merged)];
        }
        let comment = self.comment(codes.to_vec());
        let mut out = vec![Edit::insert(self.line_end(line), format!("  {comment}"))];
        // The end of the continued line this one is part of.
        let physical = &self.physical;
        let markers = self.format.comment_markers();
        let mut last = line;
        while physical
            .get(last)
            .is_some_and(|l| ends_continued(l, markers))
        {
            last += 1;
        }
        if last != line && last < physical.len() {
            out.push(Edit::insert(self.line_end(last), format!("  {comment}")));
        }
        // A line of its own above (above the first line of a continued one).
        let mut first = line;
        while first > 0
            && physical
                .get(first - 1)
                .is_some_and(|l| ends_continued(l, markers))
        {
            first -= 1;
        }
        let start = self.index.line_start(first).unwrap_or(0);
        let indent: String = text[start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let nl = syntax::newline_style(text);
        out.push(Edit::insert(start, format!("{indent}{comment}{nl}")));
        out
    }

    /// Whether `edits` leave the file saying what it said, and leave none of the findings of
    /// `lines` reported.
    fn holds(&self, edits: &[Edit], lines: &[usize]) -> bool {
        let Some(text) = self.applied(edits) else {
            return false;
        };
        let Ok(doc) = syntax::parse(&text, self.format) else {
            return false;
        };
        let same = doc.roots.len() == self.doc.roots.len()
            && doc
                .roots
                .iter()
                .zip(&self.doc.roots)
                .all(|(a, b)| a.same_value(b));
        if !same {
            return false;
        }
        let Some(settings) = &self.r.settings else {
            return false;
        };
        let (after, _) = lint_text(&text, self.format, &self.r.path, settings);
        // Where a finding now starts: moved on by what the edits before it insert.
        let moved = |at: usize| -> usize {
            edits
                .iter()
                .filter(|e| e.range.end <= at)
                .fold(at, |a, e| a + e.content.len() - e.range.len())
        };
        // A finding meant to be covered must not be reported at its (moved) place.
        !self.r.diagnostics.iter().any(|d| {
            let line = line_of(&self.index, self.text(), d.span.start);
            let at = if d.span == (0..0) {
                0
            } else {
                moved(d.span.start)
            };
            lines.contains(&line)
                && after.iter().any(|a| {
                    a.rule.code == d.rule.code && a.message == d.message && a.span.start == at
                })
        })
    }

    fn applied(&self, edits: &[Edit]) -> Option<String> {
        let fix = Fix {
            edits: edits.to_vec(),
            applicability: Applicability::Safe,
            message: String::new(),
            sets: Vec::new(),
        };
        let (text, n) = apply_fixes(self.text(), [&fix]);
        (n == 1).then_some(text)
    }

    /// For each line, the first place that holds, with the line; and the lines with none. A
    /// line where the end can only be a comment takes it unchecked: the check of all of them
    /// together (in [`Plan::apply`]) is then one parse and one lint for the file, not one a line.
    fn edits(&self, check_every_line: bool) -> Placed {
        let mut chosen: Vec<(usize, Edit)> = Vec::new();
        let mut refused = Vec::new();
        for (&line, codes) in &self.by_line {
            let candidates = self.candidates(line, codes);
            if !check_every_line && !self.may_be_unsafe(line) {
                if let Some(first) = candidates.into_iter().next() {
                    chosen.push((line, first));
                }
                continue;
            }
            let found = candidates.into_iter().find(|e| {
                !chosen.iter().any(|(_, c)| c.range == e.range)
                    && self.holds(std::slice::from_ref(e), &[line])
            });
            match found {
                Some(e) => chosen.push((line, e)),
                None => refused.push(line),
            }
        }
        (chosen, refused)
    }

    /// [`Plan::edits`], checked together; where they do not hold together (a line end the
    /// tree did not show to be unsafe was), every line checked on its own, then together again.
    /// `None` (said in a warning) when no set holds, or when more lines than
    /// [`MAX_CHECKED_LINES`] would be checked one by one.
    fn checked_edits(&self) -> Option<Placed> {
        let quick = self.edits(false);
        if self.together(&quick.0) {
            return Some(quick);
        }
        let shown = crate::lint::shown_path(&self.r.path);
        if self.by_line.len() > MAX_CHECKED_LINES {
            super::emit_err(&format!(
                "warning: {}: the `hwlint: ignore` comments, added together, would change the file, and it has too many findings ({}) to place them one by one; none added\n",
                shown.display(),
                self.by_line.len()
            ));
            return None;
        }
        let each = self.edits(true);
        if self.together(&each.0) {
            return Some(each);
        }
        super::emit_err(&format!(
            "warning: {}: the `hwlint: ignore` comments, added together, would change the file; none added\n",
            shown.display()
        ));
        None
    }

    fn together(&self, chosen: &[(usize, Edit)]) -> bool {
        let lines: Vec<usize> = chosen.iter().map(|(l, _)| *l).collect();
        let edits: Vec<Edit> = chosen.iter().map(|(_, e)| e.clone()).collect();
        self.holds(&edits, &lines)
    }
}

/// Collects the line breaks (their offsets) that a scalar of the tree spans: a string over
/// several lines, or an expression a code front-end keeps whole (a call's source text).
fn scalar_breaks(node: &syntax::Node, text: &str, out: &mut Vec<usize>, depth: usize) {
    if depth > syntax::MAX_DEPTH {
        return;
    }
    match &node.kind {
        syntax::NodeKind::Scalar(_) => {
            let Some(inside) = text.get(node.span.clone()) else {
                return;
            };
            out.extend(
                inside
                    .match_indices(['\n', '\r'])
                    .map(|(i, _)| node.span.start + i),
            );
        }
        syntax::NodeKind::Seq(items) => {
            for i in items {
                scalar_breaks(i, text, out, depth + 1);
            }
        }
        syntax::NodeKind::Map(m) => {
            for e in &m.entries {
                scalar_breaks(&e.value, text, out, depth + 1);
            }
        }
    }
}
