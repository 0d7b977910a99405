//! Output formats. One place decides what is printed; exit codes are decided in `app`.

mod concise;
mod estimate;
mod full;
mod github;
mod json;
mod sarif;
mod statistics;

use crate::fix::Applicability;
use crate::lint::FileResult;

pub use concise::render_concise;
pub use estimate::{render_estimate, render_estimate_json};
pub use full::{output_width, render_full, render_full_at};
pub use github::render_github;
pub use json::{json_array, json_elements, render_json, render_json_lines};
pub use sarif::{render_sarif, Sarif};
pub use statistics::{render_statistics, Statistics};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Source snippets with the key underlined and the fix as help (miette).
    Full,
    /// One line per diagnostic: `path:row:col: CODE message [*]`.
    Concise,
    /// A JSON array of diagnostics with locations and fixes.
    Json,
    /// One JSON object per line (streams; `jq -c`).
    JsonLines,
    /// SARIF 2.1.0, for code-scanning uploads.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
}

/// 1-based (row, column) of the start and end of a span in a file's text.
pub(crate) fn location(
    r: &FileResult,
    span: &std::ops::Range<usize>,
) -> ((usize, usize), (usize, usize)) {
    let li = r.lines();
    (
        li.position(&r.text, span.start),
        li.position(&r.text, span.end),
    )
}

/// Counts for the summary line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    pub problems: usize,
    pub safe_fixable: usize,
    pub unsafe_fixable: usize,
    pub fixed: usize,
    pub failing: usize,
    /// Fixes `--fix` would apply, to the fixpoint (can exceed `safe_fixable`).
    pub would_fix_safe: usize,
    /// The same with `--unsafe-fixes`.
    pub would_fix_unsafe: usize,
}

impl Counts {
    /// Adds another batch of files' counts (a streamed run counts file by file).
    pub fn add(&mut self, o: Counts) {
        self.problems += o.problems;
        self.safe_fixable += o.safe_fixable;
        self.unsafe_fixable += o.unsafe_fixable;
        self.fixed += o.fixed;
        self.failing += o.failing;
        self.would_fix_safe += o.would_fix_safe;
        self.would_fix_unsafe += o.would_fix_unsafe;
    }
}

pub fn counts(results: &[FileResult]) -> Counts {
    let mut c = Counts::default();
    for r in results {
        c.fixed += r.fixed;
        c.would_fix_safe += r.would_fix.safe;
        c.would_fix_unsafe += r.would_fix.unsafe_too;
        for d in &r.diagnostics {
            c.problems += 1;
            if d.severity() != crate::rules::Severity::Info {
                c.failing += 1;
            }
            match d.fix.as_ref().map(|f| f.applicability) {
                Some(Applicability::Safe) => c.safe_fixable += 1,
                Some(Applicability::Unsafe) => c.unsafe_fixable += 1,
                _ => {}
            }
        }
    }
    c
}

/// `Found 7 problems (5 fixable with --fix) · target workstation: 1 x rtx-4090 (23.6 GiB), ...`
pub fn summary(
    results: &[FileResult],
    target: &str,
    unsafe_enabled: bool,
    dry_run: bool,
) -> String {
    summary_of(counts(results), target, unsafe_enabled, dry_run)
}

/// [`summary`] from counts already taken.
pub fn summary_of(c: Counts, target: &str, unsafe_enabled: bool, dry_run: bool) -> String {
    let mut s = String::new();
    if c.fixed > 0 {
        s.push_str(&format!(
            "{} {} problem{}. ",
            if dry_run { "Would fix" } else { "Fixed" },
            c.fixed,
            if c.fixed == 1 { "" } else { "s" }
        ));
    }
    if c.problems == 0 {
        s.push_str(if c.fixed > 0 {
            "No problems remain"
        } else {
            "All checks passed"
        });
    } else {
        s.push_str(&format!(
            "Found {} problem{}",
            c.problems,
            if c.problems == 1 { "" } else { "s" }
        ));
        let mut notes = Vec::new();
        // Findings with a fix, and what `--fix` would apply in all: a fix can make another
        // rule fire with a fix of its own, and the summary must not promise less than happens.
        let (fixable, would) = if unsafe_enabled {
            (c.safe_fixable + c.unsafe_fixable, c.would_fix_unsafe)
        } else {
            (c.safe_fixable, c.would_fix_safe)
        };
        if fixable > 0 && would > fixable {
            notes.push(format!(
                "{fixable} fixable with --fix, which then fixes {} more",
                would - fixable
            ));
        } else if fixable > 0 {
            notes.push(format!("{fixable} fixable with --fix"));
        }
        let more = c
            .unsafe_fixable
            .max(c.would_fix_unsafe.saturating_sub(c.would_fix_safe));
        if !unsafe_enabled && more > 0 {
            notes.push(format!("{more} more with --unsafe-fixes"));
        }
        if !notes.is_empty() {
            s.push_str(&format!(" ({})", notes.join(", ")));
        }
    }
    s.push_str(&format!(" · target {target}"));
    s
}
