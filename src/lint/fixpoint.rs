//! Fixes applied to a fixpoint: pass after pass, each re-linted, until nothing changes. A fix
//! whose finding is still there after its pass is undone and never offered again; positions
//! are carried across passes so that findings that read alike are told apart by place.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;

use super::{lint_text, Diagnostic};
use crate::fix::{apply_fixes_indexed, Applicability, Fix};
use crate::settings::FileSettings;
use crate::syntax::{self, Format};

/// Passes a fix run may make before giving up on a fixpoint (a pass redone without a fix that
/// did not take counts as one). Each pass made is checked by a lint of its own.
const MAX_FIX_PASSES: usize = 20;

/// What a fix run did to a text.
pub(super) struct FixOutcome {
    pub text: String,
    /// `HW202 set ...` per fix applied, in order.
    pub applied: Vec<String>,
    /// Set when a pass broke parsing: the text is then the original, and nothing is applied.
    pub broke: Option<String>,
    /// Some pass had a fix below the applicability asked for (an unsafe one in a safe run).
    pub passed_over: bool,
    /// Fixes that were applied and left their own finding in place (the edit landed where
    /// the file's reader cannot see it): taken back, and never offered again. Each is the
    /// finding and where it starts in `text`.
    pub stuck: Vec<(FindingId, usize)>,
    /// The same findings, where they start in the original text (one that an earlier fix
    /// brought about is carried back to where that fix was made).
    pub stuck_in_original: Vec<(FindingId, usize)>,
    /// Fixes not applied because the text they make reads back otherwise than they say
    /// (src/lint/reread.rs): `HW101 set ...: after it, GradAccum does not read ...`. Each is a
    /// bug of hwlint's; tests fail on any.
    pub dropped: Vec<String>,
}

impl FixOutcome {
    /// The text as it is: nothing applied.
    pub fn unchanged(text: &str) -> FixOutcome {
        FixOutcome {
            text: text.to_string(),
            applied: Vec::new(),
            broke: None,
            passed_over: false,
            stuck: Vec::new(),
            stuck_in_original: Vec::new(),
            dropped: Vec::new(),
        }
    }
}

/// A finding and its fix as a later lint would give them again: rule, message, fix message.
/// Spans are kept apart (see [`Stuck`]): they move as other fixes change the text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct FindingId(&'static str, String, String);

impl FindingId {
    fn of(d: &Diagnostic) -> Option<FindingId> {
        let f = d.fix.as_ref()?;
        Some(FindingId(d.rule.code, d.message.clone(), f.message.clone()))
    }

    /// `HW202 set ...`, as the list of fixes applied says it.
    fn label(&self) -> String {
        format!("{} {}", self.0, self.2)
    }
}

/// Drops the fixes of findings whose fix did not take: the finding stays, as what `--fix`
/// cannot do. `stuck` gives each such finding with where it starts in the text linted.
/// Two findings may read alike (two unused suppressions of the same codes): only the one at
/// the place recorded loses its fix.
pub(super) fn without_stuck_fixes(diagnostics: &mut [Diagnostic], stuck: &[(FindingId, usize)]) {
    if stuck.is_empty() {
        return;
    }
    let stuck: HashSet<(&FindingId, usize)> = stuck.iter().map(|(id, at)| (id, *at)).collect();
    for d in diagnostics {
        if FindingId::of(d).is_some_and(|id| stuck.contains(&(&id, d.span.start))) {
            d.fix = None;
        }
    }
}

/// The edits one pass applied, in the text before it, sorted: each replaced range and the
/// length of what replaced it, with how far the text had moved before each. Carries a
/// position in the text from one side of the pass to the other, in logarithmic time (a pass
/// may apply 100k fixes, each of whose findings is carried).
struct Shift {
    edits: Vec<(Range<usize>, usize)>,
    /// `moved[i]`: the change in length made by the edits before the `i`th; one more entry
    /// than `edits`, its last the whole pass's.
    moved: Vec<isize>,
}

impl Shift {
    fn new(mut edits: Vec<(Range<usize>, usize)>) -> Shift {
        // Stable: a fix's inserts at one point stay in its order, as they were applied.
        edits.sort_by_key(|(r, _)| (r.start, r.end));
        let mut moved = Vec::with_capacity(edits.len() + 1);
        let mut delta: isize = 0;
        moved.push(0);
        for (r, len) in &edits {
            delta += *len as isize - r.len() as isize;
            moved.push(delta);
        }
        Shift { edits, moved }
    }

    fn of(fixes: &[(FindingId, Fix, usize)], indices: &[usize]) -> Shift {
        Shift::new(
            indices
                .iter()
                .flat_map(|&i| fixes[i].1.edits.iter())
                .map(|e| (e.range.clone(), e.content.len()))
                .collect(),
        )
    }

    /// Where the byte at `p` before the pass is after it; a position inside a replaced range
    /// goes to the start of its replacement.
    fn forward(&self, p: usize) -> usize {
        // The applied edits never overlap, so their ends rise with their starts.
        let k = self.edits.partition_point(|(r, _)| r.end <= p);
        // The first edit not before `p` ends after it: `p` is inside it, or before it.
        let at = self.edits.get(k).map_or(p, |(r, _)| r.start.min(p));
        at.saturating_add_signed(self.moved[k])
    }

    /// Where a finding that started at `p` before the pass may start after it: text inserted
    /// right at `p` may have become part of it, or stand before it. The two ends differ only
    /// by such inserts.
    fn forward_either_side(&self, p: usize) -> (usize, usize) {
        let k = self
            .edits
            .partition_point(|(r, _)| r.end < p || (r.end == p && r.start < p));
        (p.saturating_add_signed(self.moved[k]), self.forward(p))
    }

    /// Where the byte at `q` after the pass was before it; a position inside a replacement
    /// goes to the start of the range it replaced.
    fn backward(&self, q: usize) -> usize {
        let start_after = |i: usize| self.edits[i].0.start.saturating_add_signed(self.moved[i]);
        // Replacements never overlap either: the first that does not end at or before `q`.
        let (mut lo, mut hi) = (0, self.edits.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if start_after(mid) + self.edits[mid].1 <= q {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let k = lo;
        match self.edits.get(k) {
            Some((r, _)) if start_after(k) <= q => r.start,
            _ => q.saturating_add_signed(-self.moved[k]),
        }
    }
}

/// A fix that did not take: its finding, where it starts, and how many passes the text had
/// taken when it was found.
struct Stuck {
    id: FindingId,
    at: usize,
    after: usize,
}

/// Positions of stuck findings carried to the text after `history`'s passes.
fn stuck_now(stuck: &[Stuck], history: &[Shift]) -> Vec<(FindingId, usize)> {
    stuck
        .iter()
        .map(|s| {
            let at = history[s.after..]
                .iter()
                .fold(s.at, |p, shift| shift.forward(p));
            (s.id.clone(), at)
        })
        .collect()
}

/// Positions of stuck findings carried back to the original text.
fn stuck_then(stuck: &[Stuck], history: &[Shift]) -> Vec<(FindingId, usize)> {
    stuck
        .iter()
        .map(|s| {
            let at = history[..s.after]
                .iter()
                .rev()
                .fold(s.at, |p, shift| shift.backward(p));
            (s.id.clone(), at)
        })
        .collect()
}

/// Applies the fixes at or above `min`, re-linting after each pass, until nothing changes.
/// `first` is the original text's findings when the caller has them (its lint is not redone).
/// A fix whose finding is still there, word for word and at the same place, after it was
/// applied did nothing the reader of the file can see (an edit inside an unterminated quote,
/// say): the pass is redone without it and it is never applied again. Each redo takes a fix
/// out for good, so the passes end.
pub(super) fn fix_to_fixpoint(
    original: &str,
    format: Format,
    path: &Path,
    settings: &FileSettings,
    min: Applicability,
    first: Option<&[Diagnostic]>,
) -> FixOutcome {
    let lint = |text: &str| lint_text(text, format, path, settings).0;
    let misreads = |text: &str, fixes: &[&Fix]| {
        super::reread::fixes_misread(text, fixes, format, path, settings)
    };
    fix_to_fixpoint_checked(original, format, min, first, &lint, &misreads)
}

/// [`fix_to_fixpoint`] with the lint it runs after each pass.
#[cfg(test)]
fn fix_to_fixpoint_with(
    original: &str,
    format: Format,
    min: Applicability,
    first: Option<&[Diagnostic]>,
    lint: &dyn Fn(&str) -> Vec<Diagnostic>,
) -> FixOutcome {
    fix_to_fixpoint_checked(original, format, min, first, lint, &|_, _| None)
}

/// [`fix_to_fixpoint`] with the lint it runs after each pass and the check that reads each fix
/// back before it is applied (`Some(why)` drops the fix).
fn fix_to_fixpoint_checked(
    original: &str,
    format: Format,
    min: Applicability,
    mut first: Option<&[Diagnostic]>,
    lint: &dyn Fn(&str) -> Vec<Diagnostic>,
    misreads: &dyn Fn(&str, &[&Fix]) -> Option<String>,
) -> FixOutcome {
    let mut out = FixOutcome::unchanged(original);
    let mut stuck: Vec<Stuck> = Vec::new();
    // Every pass that stands, to carry positions across them.
    let mut history: Vec<Shift> = Vec::new();
    // The last pass, to check that its fixes took.
    let mut last: Option<Pass> = None;
    for round in 0..=MAX_FIX_PASSES {
        // The last round only checks the pass before it.
        let may_start = round < MAX_FIX_PASSES;
        let linted;
        let diags: &[Diagnostic] = match first.take() {
            Some(d) => d,
            None => {
                linted = lint(&out.text);
                &linted
            }
        };
        if let Some(Pass {
            before,
            fixes,
            indices,
        }) = last.take()
        {
            let shift = history.pop().unwrap_or_else(|| Shift::new(Vec::new()));
            let mut now: HashMap<FindingId, Vec<usize>> = HashMap::new();
            for d in diags {
                if let Some(id) = FindingId::of(d) {
                    now.entry(id).or_default().push(d.span.start);
                }
            }
            for starts in now.values_mut() {
                starts.sort_unstable();
            }
            let failed: Vec<usize> = indices
                .iter()
                .copied()
                .filter(|&i| {
                    let (id, _, at) = &fixes[i];
                    let (lo, hi) = shift.forward_either_side(*at);
                    now.get(id).is_some_and(|starts| {
                        starts
                            .get(starts.partition_point(|&s| s < lo))
                            .is_some_and(|&s| s <= hi)
                    })
                })
                .collect();
            if !failed.is_empty() {
                out.applied.truncate(out.applied.len() - indices.len());
                stuck.extend(failed.iter().map(|&i| Stuck {
                    id: fixes[i].0.clone(),
                    at: fixes[i].2,
                    after: history.len(),
                }));
                out.text = before;
                if !may_start {
                    break;
                }
                // The same pass again, from the same text, without what did not take.
                let mut took = vec![true; fixes.len()];
                for &i in &failed {
                    took[i] = false;
                }
                let fixes: Vec<(FindingId, Fix, usize)> = fixes
                    .into_iter()
                    .zip(took)
                    .filter_map(|(f, took)| took.then_some(f))
                    .collect();
                last = apply_pass(&mut out, &mut history, fixes, format);
                if last.is_none() {
                    break;
                }
                continue;
            }
            history.push(shift);
        }
        out.passed_over |= diags.iter().any(|d| {
            d.fix.as_ref().is_some_and(|f| {
                f.applicability < min && f.applicability != Applicability::DisplayOnly
            })
        });
        if !may_start {
            break;
        }
        let held: HashSet<(FindingId, usize)> = stuck_now(&stuck, &history).into_iter().collect();
        let mut fixes: Vec<(FindingId, Fix, usize)> = diags
            .iter()
            .filter_map(|d| Some((FindingId::of(d)?, d.fix.clone()?, d.span.start)))
            .filter(|(id, f, at)| {
                f.applicability >= min
                    && f.applicability != Applicability::DisplayOnly
                    && !held.contains(&(id.clone(), *at))
            })
            .collect();
        // A fix that reads back otherwise than it says is never applied; its finding keeps no
        // fix (as a stuck one). The pass's fixes are read back together first; only when that
        // fails is each read back alone, to say which.
        let together: Vec<&Fix> = fixes.iter().map(|(_, f, _)| f).collect();
        if together.len() < 2 || misreads(&out.text, &together).is_some() {
            fixes.retain(|(id, f, at)| match misreads(&out.text, &[f]) {
                None => true,
                Some(why) => {
                    out.dropped.push(format!("{}: {why}", id.label()));
                    stuck.push(Stuck {
                        id: id.clone(),
                        at: *at,
                        after: history.len(),
                    });
                    false
                }
            });
        }
        last = apply_pass(&mut out, &mut history, fixes, format);
        if last.is_none() {
            break;
        }
    }
    out.stuck_in_original = stuck_then(&stuck, &history);
    out.stuck = if out.broke.is_some() {
        out.text = original.to_string();
        out.applied.clear();
        out.stuck_in_original.clone()
    } else {
        stuck_now(&stuck, &history)
    };
    out
}

/// A pass of fixes, for the next lint to check that they took.
struct Pass {
    /// The text before it.
    before: String,
    /// Each fix with its finding and where that starts in `before`.
    fixes: Vec<(FindingId, Fix, usize)>,
    /// The positions in `fixes` of those applied.
    indices: Vec<usize>,
}

/// One pass: applies `fixes` to the outcome's text, and adds how it moved the text to
/// `history`. `None` when nothing changed, or when the result does not parse (then `broke`
/// says why and the caller keeps the original).
fn apply_pass(
    out: &mut FixOutcome,
    history: &mut Vec<Shift>,
    fixes: Vec<(FindingId, Fix, usize)>,
    format: Format,
) -> Option<Pass> {
    if fixes.is_empty() {
        return None;
    }
    let (next, indices) = apply_fixes_indexed(&out.text, fixes.iter().map(|(_, f, _)| f));
    // A pass that leaves the text as it was is checked like any other: its fixes did
    // nothing, so they are found not to have taken, and are offered no more.
    if indices.is_empty() {
        return None;
    }
    if let Err(e) = syntax::parse(&next, format) {
        // A fix must never break a file.
        out.broke = Some(e.message);
        return None;
    }
    out.applied
        .extend(indices.iter().map(|&i| fixes[i].0.label()));
    history.push(Shift::of(&fixes, &indices));
    let before = std::mem::replace(&mut out.text, next);
    Some(Pass {
        before,
        fixes,
        indices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules;

    /// A HW201 finding on each line starting `workers:` whose value is over 4, with a fix that
    /// rewrites the line; `stuck_when` names values whose fix lands where the reader cannot see
    /// it (the line keeps its value, a comment is added).
    fn workers_lint(text: &str, stuck_when: &'static str) -> Vec<Diagnostic> {
        let rule = rules::by_code("HW201").unwrap();
        let mut out = Vec::new();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if let Some(rest) = line.trim_end().strip_prefix("workers: ") {
                let v = rest.split(" #").next().unwrap_or(rest);
                if v.parse::<u32>().is_ok_and(|n| n > 4) {
                    let end = at + "workers: ".len() + v.len();
                    let edit = if v == stuck_when {
                        crate::fix::Edit::insert(end, " # 4")
                    } else {
                        crate::fix::Edit::replace(end - v.len()..end, "4")
                    };
                    out.push(Diagnostic {
                        rule,
                        message: format!("workers {v} > 4"),
                        span: at..end,
                        fix: Some(Fix {
                            edits: vec![edit],
                            applicability: Applicability::Safe,
                            message: "set workers to 4".into(),
                            sets: Vec::new(),
                        }),
                    });
                }
            }
            at += line.len();
        }
        out
    }

    /// The read-back check's verdict is what the fixpoint acts on: a fix it refuses is never
    /// applied, is said in `dropped`, and its finding keeps no fix; the others are applied.
    #[test]
    fn a_fix_that_reads_back_otherwise_is_withheld_and_its_finding_keeps_no_fix() {
        let text = "workers: 9\nworkers: 8\n";
        let lint = |t: &str| workers_lint(t, "none");
        // Refuses any pass holding the fix of the first line (edit at 9..10), alone or not.
        let misreads = |_: &str, fixes: &[&Fix]| {
            fixes
                .iter()
                .any(|f| f.edits.iter().any(|e| e.range == (9..10)))
                .then(|| "after it, NumWorkers does not read `4`".to_string())
        };
        let out = fix_to_fixpoint_checked(
            text,
            Format::Yaml,
            Applicability::Safe,
            None,
            &lint,
            &misreads,
        );
        assert_eq!(out.text, "workers: 9\nworkers: 4\n");
        assert_eq!(out.applied, ["HW201 set workers to 4"]);
        assert_eq!(
            out.dropped,
            ["HW201 set workers to 4: after it, NumWorkers does not read `4`"]
        );
        let mut found = lint(&out.text);
        without_stuck_fixes(&mut found, &out.stuck);
        assert_eq!(found.len(), 1);
        assert!(found[0].fix.is_none());
    }

    #[test]
    fn a_fix_that_leaves_its_finding_is_taken_back_and_never_applied_again() {
        let text = "workers: 9\nworkers: 8\n";
        let lint = |t: &str| workers_lint(t, "9");
        let out = fix_to_fixpoint_with(text, Format::Yaml, Applicability::Safe, None, &lint);
        // The fix of `9` did nothing the next lint can see: it is undone, the other kept.
        assert_eq!(out.text, "workers: 9\nworkers: 4\n");
        assert_eq!(out.applied, ["HW201 set workers to 4"]);
        assert_eq!(out.stuck.len(), 1);
        assert_eq!(out.stuck[0].0 .1, "workers 9 > 4");
        assert_eq!(out.stuck[0].1, 0);
        // Its finding stays, without a fix to offer.
        let mut found = lint(&out.text);
        without_stuck_fixes(&mut found, &out.stuck);
        assert_eq!(found.len(), 1);
        assert!(found[0].fix.is_none());
        // Alone, the stuck fix leaves the file as it was.
        let out = fix_to_fixpoint_with(
            "workers: 9\n",
            Format::Yaml,
            Applicability::Safe,
            None,
            &lint,
        );
        assert_eq!(out.text, "workers: 9\n");
        assert!(out.applied.is_empty());
    }

    #[test]
    fn findings_that_read_alike_are_told_apart_by_where_they_are() {
        // Three alike findings; only the middle one's fix lands where the reader cannot see
        // it. The other two are fixed, and only the middle one keeps its finding.
        let text = "workers: 8\nworkers: 9\nworkers: 8\n";
        let lint = |t: &str| {
            let mut found = workers_lint(t, "9");
            for d in &mut found {
                d.message = "workers over 4".into();
            }
            found
        };
        let out = fix_to_fixpoint_with(text, Format::Yaml, Applicability::Safe, None, &lint);
        assert_eq!(out.text, "workers: 4\nworkers: 9\nworkers: 4\n");
        assert_eq!(out.applied.len(), 2);
        assert_eq!(out.stuck.len(), 1);
        assert_eq!(out.stuck[0].1, "workers: 4\n".len());
        assert_eq!(out.stuck_in_original[0].1, "workers: 8\n".len());
        let mut found = lint(&out.text);
        without_stuck_fixes(&mut found, &out.stuck);
        assert_eq!(found.len(), 1);
        assert!(found[0].fix.is_none());
    }

    /// `n: K` with K over 0 (a comment may follow): one finding, whose fix lowers K by one
    /// (one pass each).
    fn countdown(text: &str) -> Vec<Diagnostic> {
        let rule = rules::by_code("HW201").unwrap();
        let value = |r: &str| r.split(" #").next().unwrap_or(r).trim().parse::<u32>().ok();
        let Some(k) = text.strip_prefix("n: ").and_then(value) else {
            return Vec::new();
        };
        if k == 0 {
            return Vec::new();
        }
        let end = "n: ".len() + k.to_string().len();
        vec![Diagnostic {
            rule,
            message: format!("n {k} > 0"),
            span: 0..end,
            fix: Some(Fix {
                edits: vec![crate::fix::Edit::replace(3..end, (k - 1).to_string())],
                applicability: Applicability::Safe,
                message: "lower n".into(),
                sets: Vec::new(),
            }),
        }]
    }

    #[test]
    fn a_run_makes_at_most_its_passes_and_checks_each() {
        let run = |k: u32| {
            fix_to_fixpoint_with(
                &format!("n: {k}\n"),
                Format::Yaml,
                Applicability::Safe,
                None,
                &countdown,
            )
        };
        let out = run(MAX_FIX_PASSES as u32);
        assert_eq!(out.text, "n: 0\n");
        assert_eq!(out.applied.len(), MAX_FIX_PASSES);
        let out = run(MAX_FIX_PASSES as u32 + 5);
        assert_eq!(out.text, "n: 5\n");
        assert_eq!(out.applied.len(), MAX_FIX_PASSES);
        // The last pass made is checked too: here its fix (at 6) lands in a comment.
        let lint = |t: &str| {
            let mut found = countdown(t);
            for d in &mut found {
                if d.message == "n 6 > 0" {
                    if let Some(f) = &mut d.fix {
                        f.edits = vec![crate::fix::Edit::insert(t.len() - 1, " # 5")];
                    }
                }
            }
            found
        };
        let start = format!("n: {}\n", MAX_FIX_PASSES + 5);
        let out = fix_to_fixpoint_with(&start, Format::Yaml, Applicability::Safe, None, &lint);
        assert_eq!(out.text, "n: 6\n");
        assert_eq!(out.applied.len(), MAX_FIX_PASSES - 1);
        assert_eq!(out.stuck.len(), 1);
    }

    #[test]
    fn a_fix_that_changes_nothing_is_not_offered() {
        let lint = |t: &str| {
            let mut found = countdown(t);
            for d in &mut found {
                if let Some(f) = &mut d.fix {
                    f.edits = vec![crate::fix::Edit::replace(3..4, &t[3..4])];
                }
            }
            found
        };
        let out = fix_to_fixpoint_with("n: 7\n", Format::Yaml, Applicability::Safe, None, &lint);
        assert_eq!(out.text, "n: 7\n");
        assert!(out.applied.is_empty());
        assert_eq!(out.stuck.len(), 1);
    }

    #[test]
    fn a_fix_below_the_applicability_asked_for_is_passed_over() {
        use Applicability::*;
        let with = |applicability: Applicability| {
            move |t: &str| {
                let mut found = countdown(t);
                for d in &mut found {
                    if let Some(f) = &mut d.fix {
                        f.applicability = applicability;
                    }
                }
                found
            }
        };
        for (min, fix, passed_over, applied) in [
            (Safe, Unsafe, true, 0),
            (Safe, Safe, false, 3),
            (Safe, DisplayOnly, false, 0),
            (Unsafe, Unsafe, false, 3),
            (Unsafe, Safe, false, 3),
            (Unsafe, DisplayOnly, false, 0),
        ] {
            let out = fix_to_fixpoint_with("n: 3\n", Format::Yaml, min, None, &with(fix));
            assert_eq!(out.passed_over, passed_over, "{min:?} {fix:?}");
            assert_eq!(out.applied.len(), applied, "{min:?} {fix:?}");
        }
    }

    #[test]
    fn a_shift_carries_positions_both_ways() {
        // "ab|cd|ef": `cd` replaced by `XYZ`, an insert of `+` before `e`... at 4, `f` deleted.
        let shift = Shift::new(vec![(2..4, 3), (4..4, 1), (5..6, 0)]);
        // Before: a0 b1 c2 d3 e4 f5 -> after: a0 b1 X2 Y3 Z4 +5 e6
        assert_eq!(shift.forward(0), 0);
        assert_eq!(shift.forward(2), 2);
        assert_eq!(shift.forward(3), 2);
        assert_eq!(shift.forward(4), 6);
        assert_eq!(shift.forward(5), 7);
        assert_eq!(shift.forward(6), 7);
        assert_eq!(shift.backward(1), 1);
        assert_eq!(shift.backward(3), 2);
        assert_eq!(shift.backward(5), 4);
        assert_eq!(shift.backward(6), 4);
        assert_eq!(shift.backward(7), 6);
        // At 4 the `+` is inserted: what started there may now start at it or after it.
        assert_eq!(shift.forward_either_side(4), (5, 6));
        assert_eq!(shift.forward_either_side(2), (2, 2));
        assert_eq!(shift.forward_either_side(0), (0, 0));
    }

    #[test]
    fn a_fix_inserting_at_its_own_finding_that_leaves_it_is_taken_back() {
        // The fix inserts at the start of the line its finding covers; the finding is then
        // reported from the start of the inserted text. It did not take all the same.
        let lint = |t: &str| {
            let rule = rules::by_code("HW201").unwrap();
            t.find("workers: 9")
                .map(|at| Diagnostic {
                    rule,
                    message: "workers 9 > 4".into(),
                    span: t[..at].rfind('\n').map_or(0, |n| n + 1)..at + 10,
                    fix: Some(Fix {
                        edits: vec![crate::fix::Edit::insert(
                            t[..at].rfind('\n').map_or(0, |n| n + 1),
                            "# ",
                        )],
                        applicability: Applicability::Safe,
                        message: "set workers to 4".into(),
                        sets: Vec::new(),
                    }),
                })
                .into_iter()
                .collect::<Vec<_>>()
        };
        let out = fix_to_fixpoint_with(
            "a: 1\nworkers: 9\n",
            Format::Yaml,
            Applicability::Safe,
            None,
            &lint,
        );
        assert_eq!(out.text, "a: 1\nworkers: 9\n");
        assert!(out.applied.is_empty(), "{:?}", out.applied);
        assert_eq!(out.stuck.len(), 1);
    }
}
