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
pub use github::{github_memory_notice, render_github};
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

/// The memory check's outcomes over the runs linted, for the summary line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemoryCounts {
    pub checked: usize,
    /// Bounded runs, and how many of them each decider would decide (`--gpus`: 2).
    pub bounded: usize,
    pub decided_by: std::collections::BTreeMap<String, usize>,
    /// Runs not checked, and how many lack each input (`the sequence length`: 1).
    pub not_checked: usize,
    pub needs: std::collections::BTreeMap<String, usize>,
}

impl MemoryCounts {
    pub fn add(&mut self, o: &MemoryCounts) {
        self.checked += o.checked;
        self.bounded += o.bounded;
        self.not_checked += o.not_checked;
        for (k, n) in &o.decided_by {
            *self.decided_by.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &o.needs {
            *self.needs.entry(k.clone()).or_default() += n;
        }
    }

    /// The counts as JSON (SARIF's run properties, `--statistics` JSON): runs checked, not
    /// decided (and by what), not checked (and for want of what).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "checked": self.checked,
            "bounded": self.bounded,
            "decided_by": self.decided_by,
            "not_checked": self.not_checked,
            "needs": self.needs,
        })
    }

    fn count(&mut self, o: &crate::rules::outcome::Outcome) {
        use crate::rules::outcome::Outcome;
        match o {
            Outcome::Checked => self.checked += 1,
            Outcome::Bounded { decided_by, .. } => {
                self.bounded += 1;
                if decided_by.is_empty() {
                    *self.decided_by.entry("no setting".into()).or_default() += 1;
                }
                for d in decided_by {
                    *self.decided_by.entry(d.clone()).or_default() += 1;
                }
            }
            Outcome::NotChecked { needs } => {
                self.not_checked += 1;
                *self.needs.entry(needs.clone()).or_default() += 1;
            }
        }
    }

    /// `memory not decided for 2 runs (2 by --gpus) · not checked for 1 run (1 needs the
    /// sequence length)`, or nothing when every run was checked.
    pub fn line(&self) -> Option<String> {
        let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
        let list = |m: &std::collections::BTreeMap<String, usize>, verb: (&str, &str)| {
            let mut v: Vec<(&String, &usize)> = m.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            v.iter()
                .map(|(k, n)| format!("{n} {} {k}", if **n == 1 { verb.0 } else { verb.1 }))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if self.bounded > 0 {
            parts.push(format!(
                "memory not decided for {} ({})",
                runs(self.bounded),
                list(&self.decided_by, ("decided by", "decided by"))
            ));
        }
        if self.not_checked > 0 {
            parts.push(format!(
                "{}not checked for {} ({})",
                if parts.is_empty() { "memory " } else { "" },
                runs(self.not_checked),
                list(&self.needs, ("needs", "need"))
            ));
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// Counts for the summary line.
#[derive(Debug, Default, Clone)]
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
    pub memory: MemoryCounts,
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
        self.memory.add(&o.memory);
    }
}

pub fn counts(results: &[FileResult]) -> Counts {
    let mut c = Counts::default();
    for r in results {
        c.fixed += r.fixed;
        c.would_fix_safe += r.would_fix.safe;
        c.would_fix_unsafe += r.would_fix.unsafe_too;
        for o in &r.memory {
            c.memory.count(o);
        }
        for d in &r.diagnostics {
            // HW901 is what the summary's memory part counts, not a problem of the file.
            if d.rule.code == "HW901" {
                continue;
            }
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
    let memory = c.memory.line();
    if c.problems == 0 {
        s.push_str(match (c.fixed > 0, &memory) {
            (true, _) => "No problems remain",
            // "All checks passed" only when every check ran.
            (false, Some(_)) => "No problems found",
            (false, None) => "All checks passed",
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
    if let Some(m) = memory {
        s.push_str(&format!(" · {m}"));
    }
    s.push_str(&format!(" · target {target}"));
    s
}

/// The micro-batch as a reader counts it: `8`, or `4 pairs (8 sequences)` where each sample
/// runs as several sequences (preference pairs).
pub(crate) fn batch_words(plan: &crate::estimate::step::Plan) -> String {
    match plan.sequences {
        0 | 1 => plan.batch.to_string(),
        2 => format!(
            "{} pair{} ({} sequences)",
            plan.batch,
            if plan.batch == 1 { "" } else { "s" },
            plan.sequences_per_forward()
        ),
        n => format!("{} ({} sequences each)", plan.batch, n),
    }
}
