//! One file through the flow: read, parse, recognise the dialect, run the rules, and (when
//! asked) apply fixes to a fixpoint.

mod fixpoint;
mod reread;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::dialect::{self, detect, Dialect, Documents, DuplicateKeys, TrainingSetup};
use crate::estimate::plan::{Gap, MemoryContext};
use crate::fix::{Applicability, Fix};
use crate::launch::{self, Run};
use crate::rules::outcome::Outcome;
use crate::rules::{self, Context, Rule, Severity, RULES};
use crate::settings::FileSettings;
use crate::syntax::{self, comments, Format, Span};
use fixpoint::{fix_to_fixpoint, without_stuck_fixes, FixOutcome};

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    #[serde(skip)]
    pub rule: &'static Rule,
    pub message: String,
    pub span: Span,
    pub fix: Option<Fix>,
}

/// Rules whose finding is a warning only when a safe fix comes with it: without one the remedy
/// changes a training choice (the effective batch), so the finding is information.
const INFO_WITHOUT_SAFE_FIX: [&str; 1] = ["HW102"];

impl Diagnostic {
    pub fn severity(&self) -> Severity {
        let safe_fix = self
            .fix
            .as_ref()
            .is_some_and(|f| f.applicability == crate::fix::Applicability::Safe);
        if INFO_WITHOUT_SAFE_FIX.contains(&self.rule.code) && !safe_fix {
            return Severity::Info;
        }
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
    /// What `--fix` would do, counted when fixes were not applied.
    pub would_fix: WouldFix,
    /// hwlint failed on this file (a caught panic, or a fix that broke parsing): exit 2.
    pub internal_error: bool,
    /// The memory check's outcome on each run of the file that describes a GPU training step.
    pub memory: Vec<Outcome>,
    /// Fixes left unapplied because the text they make reads back otherwise than they say
    /// (src/lint/reread.rs), with why: a bug of hwlint's, which tests fail on.
    pub dropped_fixes: Vec<String>,
    /// Line starts of `text`, built on first use and shared by every report format.
    lines: std::sync::OnceLock<syntax::LineIndex>,
}

/// How many fixes a `--fix` run would apply to a file, to its fixpoint: one fix may make
/// another rule fire with a fix of its own, so this can exceed the fixable findings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WouldFix {
    /// With `--fix`.
    pub safe: usize,
    /// With `--fix --unsafe-fixes`.
    pub unsafe_too: usize,
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

    /// The file's bytes as read (BOM included).
    pub fn input_bytes(&self) -> Vec<u8> {
        with_bom(self.bom, &self.original)
    }

    /// The file's bytes as they should be written back.
    pub fn output_bytes(&self) -> Vec<u8> {
        with_bom(self.bom, &self.text)
    }
}

fn with_bom(bom: bool, text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 3);
    if bom {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    out.extend_from_slice(text.as_bytes());
    out
}

fn parse_error_rule() -> &'static Rule {
    rules::by_code("HW902").expect("HW902 is registered")
}

/// The result for a file (or standard input) that cannot be linted: HW902 saying why.
pub fn unreadable(path: &Path, message: String) -> FileResult {
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
        would_fix: WouldFix::default(),
        internal_error: false,
        memory: Vec::new(),
        dropped_fixes: Vec::new(),
        lines: Default::default(),
    }
}

/// Files at least this big are linted one at a time: each may take up to
/// [`syntax::budget::BUDGET`] to read, and a folder of them on every core at once would take
/// that many times over.
const BIG_FILE_BYTES: usize = 4 << 20;

/// Held while a big file is linted.
static BIG_FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Lints one file on disk.
pub fn lint_path(path: &Path, format: Format, settings: FileSettings, mode: FixMode) -> FileResult {
    let raw = match crate::source::read_text(path, settings.max_file_bytes) {
        Ok(t) => t,
        Err(message) => return unreadable(path, message),
    };
    let _one_at_a_time = (raw.len() >= BIG_FILE_BYTES).then(|| {
        BIG_FILE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    let mut r = lint_source(path, &raw, format, &settings, mode);
    r.settings = Some(settings);
    r
}

/// Lints text (a file's content or standard input), applying fixes to a fixpoint if asked.
/// Without fixes, it still works out how many fixes `--fix` (and `--unsafe-fixes`) would
/// apply, since one fix can make another rule fire with a fix of its own.
pub fn lint_source(
    path: &Path,
    raw: &str,
    format: Format,
    settings: &FileSettings,
    mode: FixMode,
) -> FileResult {
    launch::new_file();
    let (text, bom_len) = syntax::strip_bom(raw);
    let original = text.to_string();
    let mut outcome = FixOutcome::unchanged(&original);
    let mut would_fix = WouldFix::default();
    let mut dropped_fixes = Vec::new();
    let Linted {
        mut diagnostics,
        dialect,
        memory,
    } = match mode {
        FixMode::Apply(min) => {
            outcome = fix_to_fixpoint(&original, format, path, settings, min, None);
            dropped_fixes.extend(outcome.dropped.iter().cloned());
            let mut linted = lint_runs(&outcome.text, format, path, settings);
            without_stuck_fixes(&mut linted.diagnostics, &outcome.stuck);
            linted
        }
        FixMode::Off => {
            // The text stays the original: its one lint serves both the report and the count.
            let linted = lint_runs(&original, format, path, settings);
            let has = |min: Applicability| {
                linted.diagnostics.iter().any(|d| {
                    d.fix.as_ref().is_some_and(|f| {
                        f.applicability >= min && f.applicability != Applicability::DisplayOnly
                    })
                })
            };
            let run = |min| {
                fix_to_fixpoint(
                    &original,
                    format,
                    path,
                    settings,
                    min,
                    Some(&linted.diagnostics),
                )
            };
            // A safe run that met no unsafe fix in any pass is the unsafe run too.
            let mut unsafe_differs = true;
            let mut stuck = Vec::new();
            if has(Applicability::Safe) {
                let safe = run(Applicability::Safe);
                dropped_fixes.extend(safe.dropped);
                would_fix.safe = safe.applied.len();
                if !safe.passed_over {
                    would_fix.unsafe_too = would_fix.safe;
                    unsafe_differs = false;
                }
                stuck.extend(safe.stuck_in_original);
            }
            if unsafe_differs && has(Applicability::Unsafe) {
                let all = run(Applicability::Unsafe);
                dropped_fixes.extend(all.dropped);
                would_fix.unsafe_too = all.applied.len();
                stuck.extend(all.stuck_in_original);
            }
            let mut linted = linted;
            without_stuck_fixes(&mut linted.diagnostics, &stuck);
            linted
        }
    };
    let internal_error = outcome.broke.is_some();
    if let Some(message) = outcome.broke {
        diagnostics.push(Diagnostic {
            rule: parse_error_rule(),
            message: format!(
                "internal error: applying fixes made the file unparseable ({message}); the file was left unchanged, please report this"
            ),
            span: 0..0,
            fix: None,
        });
    }
    FileResult {
        path: path.to_path_buf(),
        fixed: outcome.applied.len(),
        text: outcome.text,
        original,
        bom: bom_len > 0,
        diagnostics,
        applied: outcome.applied,
        dialect,
        settings: None,
        would_fix,
        internal_error,
        memory,
        dropped_fixes,
        lines: Default::default(),
    }
}

/// Runs one file's lint; a panic becomes an internal-error finding on that file, so the other
/// files are still linted and reported (exit 2). Every caught panic is a bug: the message asks
/// for a report, and no test relies on this.
pub fn guarded(path: &Path, run: impl FnOnce() -> FileResult) -> FileResult {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            let mut r = unreadable(
                path,
                format!(
                    "internal error: hwlint crashed on this file ({what}); nothing was written. Please report this to the hwlint issue tracker with the file"
                ),
            );
            r.internal_error = true;
            r
        }
    }
}

/// Parses and lints text once. Returns the diagnostics and the dialect recognised.
pub fn lint_text(
    text: &str,
    format: Format,
    path: &Path,
    settings: &FileSettings,
) -> (Vec<Diagnostic>, Option<String>) {
    let linted = lint_runs(text, format, path, settings);
    (linted.diagnostics, linted.dialect)
}

/// One lint of a text: its diagnostics, the dialect recognised, and the memory check's outcome
/// on each run that describes a GPU training step.
pub struct Linted {
    pub diagnostics: Vec<Diagnostic>,
    pub dialect: Option<String>,
    pub memory: Vec<Outcome>,
}

/// [`lint_text`] with the memory outcome of each run.
pub fn lint_runs(text: &str, format: Format, path: &Path, settings: &FileSettings) -> Linted {
    let mut memory = Vec::new();
    let (diagnostics, dialect) = lint_text_into(text, format, path, settings, &mut memory);
    Linted {
        diagnostics,
        dialect,
        memory,
    }
}

fn lint_text_into(
    text: &str,
    format: Format,
    path: &Path,
    settings: &FileSettings,
    memory: &mut Vec<Outcome>,
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
    // Built only if a rule or a suppression needs line numbers.
    let lines = std::cell::OnceCell::new();
    let mut out = Vec::new();
    let mut dialect_name = None;
    // Each document's dialect, recognised once. A file goes to one framework: the first
    // document a dialect recognises says which, and so which loader reads the file.
    let hydra = hydra_run(&doc, text, path, &settings.dialects);
    let detected: Vec<Option<(&Dialect, std::borrow::Cow<syntax::Node>)>> = if hydra.is_some() {
        Vec::new()
    } else {
        doc.roots
            .iter()
            .map(|root| detect(&settings.dialects, root, format, path))
            .collect()
    };
    let first = hydra
        .as_ref()
        .map(|r| r.dialect)
        .or_else(|| detected.iter().flatten().next().map(|(d, _)| *d));
    if let Some(d) = first {
        let refused = loader_refusals(d, &doc, text, &lines);
        if !refused.is_empty() {
            // The framework stops at loading: nothing else in the file is checked.
            let refused = if enabled(parse_error_rule()) {
                refused
            } else {
                Vec::new()
            };
            let mut out = apply_suppressions(refused, text, &lines, format, &enabled);
            out.retain(|d| d.rule.code != "HW903");
            return (out, Some(d.name.clone()));
        }
    }
    let runs = match hydra {
        Some(run) => vec![(0, run)],
        None => runs_of(&doc, detected, text, path, &settings.dialects),
    };
    for (index, run) in runs {
        let d = run.dialect;
        dialect_name.get_or_insert_with(|| d.name.clone());
        // A loop in the chain of files stops the framework's loader, as a refused file does:
        // the chain is what to fix, and nothing else in the run is checked.
        if !run.cycles.is_empty() {
            if enabled(parse_error_rule()) {
                for (span, chain) in &run.cycles {
                    out.push(Diagnostic {
                        rule: parse_error_rule(),
                        message: format!(
                            "{chain}: {} cannot load a config that includes itself",
                            d.title
                        ),
                        span: span.clone(),
                        fix: None,
                    });
                }
            }
            continue;
        }
        let mut found = with_context(&run, index, &doc, path, settings, &lines, |ctx| {
            memory.extend(rules::outcome::of(ctx));
            let mut found = Vec::new();
            for rule in RULES.iter().filter(|r| enabled(r)) {
                let Some(check) = rule.check else { continue };
                for v in check(ctx) {
                    found.push(Diagnostic {
                        rule,
                        message: v.message,
                        span: v.span,
                        fix: v.fix,
                    });
                }
            }
            found
        });
        // A launch line already names its setup; a config module's roots need saying which.
        let named = (format != Format::Shell)
            .then(|| setup_named(d, &run.root))
            .flatten();
        // A finding with no place of its own (a default) points at the setup it is about: the
        // named setup's call in a config module, the config a launch line names.
        if run.composed {
            keep_composed(&run, &mut found);
        }
        for d in &mut found {
            if d.span == (0..0) && !run.composed {
                if let Some(m) = run.merged.first() {
                    d.span = m.named_at.clone();
                } else if matches!(format, Format::Python | Format::Rust)
                    && run.root.span.start > 0
                    && run.root.span.end <= run.own_len
                {
                    d.span = run.root.span.start..run.root.span.start;
                }
            }
        }
        for mut diag in settle(&run, found, settings) {
            if let Some(named) = &named {
                diag.message.push_str(&format!(" (in {named})"));
            }
            out.push(diag);
        }
    }
    // A multi-document file that names one model in each document hears about it once.
    let mut noted = std::collections::HashSet::new();
    out.retain(|d| d.rule.code != "HW901" || noted.insert(d.message.clone()));
    if dialect_name.is_some() {
        out = apply_suppressions(out, text, &lines, format, &enabled);
    }
    out.sort_by(|a, b| (a.span.start, a.rule.code).cmp(&(b.span.start, b.rule.code)));
    (out, dialect_name)
}

/// The training runs of a parsed file, each with the index of the document root it comes from:
/// one per root a dialect recognises (`detected`, as [`detect`] gives it per root), and, in a
/// launch script, one per line that runs a training script of the tree.
pub fn runs_of<'a>(
    doc: &'a syntax::Document,
    detected: Vec<Option<(&'a Dialect, std::borrow::Cow<'a, syntax::Node>)>>,
    text: &'a str,
    path: &Path,
    dialects: &'a [Dialect],
) -> Vec<(usize, Run<'a>)> {
    let mut out = Vec::new();
    for (index, found) in detected.into_iter().enumerate() {
        let front = &doc.roots[index];
        let mut run = match found {
            Some((d, view)) => {
                let mut run = launch::assemble(dialects, d, view, front, doc.format, path, text);
                dialect::version::apply(&mut run.setup, run.dialect, path);
                run
            }
            None if doc.format == Format::Shell => {
                match launch::script_run(dialects, front, path, text) {
                    Some(run) => run,
                    None => continue,
                }
            }
            None => continue,
        };
        run.setup.bitsandbytes = Some(dialect::version::bitsandbytes_at(path));
        out.push((index, run));
    }
    out
}

/// The runs of a file's text as `hwlint check --show-settings` lists them.
pub fn runs_in_text<'a>(
    doc: &'a syntax::Document,
    text: &'a str,
    path: &Path,
    dialects: &'a [Dialect],
) -> Vec<(usize, Run<'a>)> {
    if let Some(run) = hydra_run(doc, text, path, dialects) {
        return vec![(0, run)];
    }
    let detected = doc
        .roots
        .iter()
        .map(|root| detect(dialects, root, doc.format, path))
        .collect();
    runs_of(doc, detected, text, path, dialects)
}

/// The one run of a single-document YAML file that Hydra composes (see
/// [`launch::hydra_run`]).
fn hydra_run<'a>(
    doc: &syntax::Document,
    text: &'a str,
    path: &Path,
    dialects: &'a [Dialect],
) -> Option<Run<'a>> {
    if doc.format != Format::Yaml || doc.roots.len() != 1 || !dialects.iter().any(|d| d.hydra) {
        return None;
    }
    let mut run = launch::hydra_run(dialects, &doc.roots[0], text, path)?;
    run.setup.bitsandbytes = Some(dialect::version::bitsandbytes_at(path));
    Some(run)
}

/// Runs `f` on what the rules see of one run (its setup, the DeepSpeed JSON it names, the
/// target), for `check` and [`run_memories`] alike. `lines` is the line index of the file's
/// own text, which is the run's text (merged sources' texts lie apart).
fn with_context<T>(
    run: &Run<'_>,
    index: usize,
    doc: &syntax::Document,
    path: &Path,
    settings: &FileSettings,
    lines: &std::cell::OnceCell<syntax::LineIndex>,
    f: impl FnOnce(&Context) -> T,
) -> T {
    let linked = dialect::linked_deepspeed(&run.setup, path, &settings.dialects);
    let ctx = Context {
        linked: linked.as_ref(),
        setup: &run.setup,
        dialect: run.dialect,
        target: &settings.target,
        text: &run.text,
        lines,
        doc,
        root: &run.root,
        front: &doc.roots[index],
        options: &settings.options,
        path,
        models: &settings.models,
        memory: Default::default(),
        selection: (&settings.select, &settings.ignore),
    };
    f(&ctx)
}

/// One training run of a file with its memory estimate, as the memory rules see it.
pub struct RunMemory<'a> {
    /// The index of the document root the run comes from.
    pub index: usize,
    pub run: Run<'a>,
    /// The DeepSpeed JSON the run names, as the rules read it.
    pub linked: Option<dialect::LinkedConfig>,
    pub memory: Result<MemoryContext, Gap>,
    /// What the memory check concludes on the run, as the summary line counts it.
    pub outcome: Option<Outcome>,
}

impl RunMemory<'_> {
    /// `TrainConfig \`pi0_libero\``, where the file holds several setups.
    pub fn name(&self) -> Option<String> {
        setup_named(self.run.dialect, &self.run.root)
    }

    /// The estimate the memory rules act on: none when the run does not train (`not_training`
    /// says why) or not on the target's GPUs, since no memory rule looks at such a run.
    pub fn checked(&self) -> Option<&Result<MemoryContext, Gap>> {
        let setup = &self.run.setup;
        (setup.uses_gpu() && setup.not_training.is_none()).then_some(&self.memory)
    }
}

/// The memory estimate of each run of a parsed file exactly as `check` computes it for
/// HW101-HW105: the same runs, merged launch sources, linked DeepSpeed config, target and world
/// size. `hwlint estimate FILE` and `--show-settings --output-format json` answer from this, so
/// they cannot disagree with `check`. `adjust` changes a run's setup first (`estimate`'s flags).
pub fn run_memories<'a>(
    doc: &'a syntax::Document,
    text: &'a str,
    path: &Path,
    settings: &'a FileSettings,
    adjust: &dyn Fn(&mut TrainingSetup),
) -> Vec<RunMemory<'a>> {
    let lines = std::cell::OnceCell::new();
    runs_in_text(doc, text, path, &settings.dialects)
        .into_iter()
        .map(|(index, mut run)| {
            adjust(&mut run.setup);
            let (linked, memory, outcome) =
                with_context(&run, index, doc, path, settings, &lines, |ctx| {
                    (
                        ctx.linked.cloned(),
                        ctx.memory().clone(),
                        rules::outcome::of(ctx),
                    )
                });
            RunMemory {
                index,
                run,
                linked,
                memory,
                outcome,
            }
        })
        .collect()
}

/// How a message names the setup a root holds, where the dialect's files hold several
/// (openpi's `TrainConfig(name="pi0_libero", ...)` list): `TrainConfig \`pi0_libero\``.
fn setup_named(d: &Dialect, root: &syntax::Node) -> Option<String> {
    let key = d.setup_name.as_deref()?;
    let name = root.get_path(&[key])?.as_scalar()?;
    let callee = root
        .tag
        .as_deref()
        .and_then(|t| t.strip_prefix("call:"))
        .map_or("setup", |c| c.rsplit('.').next().unwrap_or(c));
    Some(format!("{callee} `{}`", name.text))
}

thread_local! {
    /// Set while [`settle`] lints a run's merged sources on their own: a file linted there
    /// settles nothing itself (its sources may name the file being settled: it would lint it
    /// again), and a Hydra-composed one says only what its own text sets.
    static NESTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// What a file Hydra composes reports itself: a value another file of the tree writes is
/// that file's to report (it is linted as part of the same composition). A group option
/// (composed inside its primary config, which comes first among its merged sources, named
/// nowhere in it) leaves the findings with no place of their own, the framework defaults, to
/// its primary config.
fn keep_composed(run: &Run, found: &mut Vec<Diagnostic>) {
    let option = run.merged.first().is_some_and(|m| m.named_at == (0..0));
    if option || NESTED.with(|n| n.get()) {
        found.retain(|d| d.span != (0..0));
    }
    if NESTED.with(|n| n.get()) {
        found.retain(|d| d.span.end <= run.own_len);
    }
}

/// The findings on a run with merged sources, as the launch file reports them. A finding that
/// the merged config gives on its own, word for word, is the config's to report where this
/// invocation lints it too: it is dropped here. One the line changes, but that points into the config, is
/// reported at the place the line names the config, saying where the value is written. A fix
/// that would edit another file is dropped (this file is the one being fixed).
fn settle(run: &Run, found: Vec<Diagnostic>, settings: &FileSettings) -> Vec<Diagnostic> {
    // Nested, only the merged file's own findings are compared: settling its sources in turn
    // would lint the file being settled again (a chain of bases that loops never ends).
    if run.merged.is_empty() || NESTED.with(|n| n.get()) {
        return found;
    }
    // What each merged file this invocation lints says on its own. A base or a launched
    // config it does not lint says nothing on its own, so its findings are said here; the
    // files of a Hydra tree are the parts of one composition, each reporting its own values.
    let was = NESTED.with(|n| n.replace(true));
    let alone: Vec<Option<Vec<Diagnostic>>> =
        run.merged
            .iter()
            .map(|m| {
                let linted = run.composed
                    || settings.linted.as_ref().is_none_or(|files| {
                        m.path.canonicalize().is_ok_and(|p| files.contains(&p))
                    });
                linted.then(|| lint_text(run.source_text(m), m.format, &m.path, settings).0)
            })
            .collect();
    NESTED.with(|n| n.set(was));
    let mut out = Vec::new();
    for mut d in found {
        if d.fix
            .as_ref()
            .is_some_and(|f| f.edits.iter().any(|e| e.range.end > run.own_len))
        {
            d.fix = None;
        }
        let Some((i, m)) = run
            .merged
            .iter()
            .enumerate()
            .find(|(_, m)| d.span.start >= m.start && d.span.start <= m.start + m.len)
            .filter(|_| d.span.start >= run.own_len)
        else {
            out.push(d);
            continue;
        };
        let local = d.span.start - m.start..d.span.end - m.start;
        // HW901 is this run's memory outcome, not a finding on the merged file's value: every
        // run that ends without a verdict says so itself.
        let said_alone = d.rule.code != "HW901"
            && alone[i]
                .iter()
                .flatten()
                .any(|a| a.rule.code == d.rule.code && a.span == local && a.message == d.message);
        if said_alone {
            continue;
        }
        let own = run.source_text(m);
        let (line, _) = syntax::LineIndex::new(own).position(own, local.start);
        d.message = format!(
            "{} (from {} in {}:{line})",
            d.message,
            m.what,
            shown_path(&m.path).display()
        );
        d.span = m.named_at.clone();
        out.push(d);
    }
    out
}

/// A path as a message shows it: relative to the working folder when under it.
pub fn shown_path(p: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf())
}

/// Why the dialect's loader refuses a file that parses (DESIGN.md, "Which files"): a YAML
/// stream of several documents given to a single-document loader, or a duplicate key given to
/// a loader that rejects them. Empty when the loader takes the file.
fn loader_refusals(
    d: &Dialect,
    doc: &syntax::Document,
    text: &str,
    lines: &std::cell::OnceCell<syntax::LineIndex>,
) -> Vec<Diagnostic> {
    let Some(load) = d.load.get(&doc.format) else {
        return Vec::new();
    };
    let rule = parse_error_rule();
    if load.documents == Some(Documents::Single) && doc.roots.len() > 1 {
        return vec![Diagnostic {
            rule,
            message: format!(
                "{} reads this file with {}, which accepts a single document; this file has {} (the second starts here): the framework refuses it",
                d.title,
                load.call,
                doc.roots.len()
            ),
            span: second_document(text, &doc.roots),
            fix: None,
        }];
    }
    if load.duplicate_keys != Some(DuplicateKeys::Refuse) {
        return Vec::new();
    }
    let lines = lines.get_or_init(|| syntax::LineIndex::new(text));
    doc.duplicates
        .iter()
        .map(|dup| {
            let (first, _) = lines.position(text, dup.first.start);
            let (second, _) = lines.position(text, dup.second.start);
            Diagnostic {
                rule,
                message: format!(
                    "`{}` is set twice in the same mapping (lines {first} and {second}); {} reads this file with {}, which refuses a duplicate key: the framework refuses the file",
                    dup.key, d.title, load.call
                ),
                span: dup.second.clone(),
                fix: None,
            }
        })
        .collect()
}

/// Where a YAML stream's second document starts: its `---` marker, or its first byte when
/// the first document ended with `...` and the second has no marker.
fn second_document(text: &str, roots: &[syntax::Node]) -> Span {
    let start = roots[1].span.start;
    let from = roots[0].span.end.min(start);
    let bytes = text.as_bytes();
    text.get(from..start)
        .and_then(|between| {
            between
                .match_indices("---")
                .map(|(i, _)| from + i)
                .find(|&at| {
                    (at == 0 || matches!(bytes[at - 1], b'\n' | b'\r'))
                        && bytes.get(at + 3).is_none_or(|c| c.is_ascii_whitespace())
                })
        })
        .map_or(start..start, |at| at..at + 3)
}

/// Drops what `hwlint: ignore` comments cover, and reports the comments that cover nothing or
/// name a code that does not exist (HW903).
fn apply_suppressions(
    diagnostics: Vec<Diagnostic>,
    text: &str,
    lines: &std::cell::OnceCell<syntax::LineIndex>,
    format: Format,
    enabled: &dyn Fn(&Rule) -> bool,
) -> Vec<Diagnostic> {
    let sups = comments::suppressions(text, format);
    if sups.is_empty() {
        return diagnostics;
    }
    let lines = lines.get_or_init(|| syntax::LineIndex::new(text));
    // Each diagnostic looks only at the suppressions that can reach its line: those of the file
    // and those covering its line (its own, the line above, a continued line's).
    let mut file_wide = Vec::new();
    let mut by_line: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (i, s) in sups.iter().enumerate() {
        match s.scope {
            comments::Scope::File => file_wide.push(i),
            comments::Scope::Line {
                covers: (first, last),
                ..
            } => {
                for line in first..=last {
                    by_line.entry(line).or_default().push(i);
                }
            }
        }
    }
    let mut used = vec![false; sups.len()];
    let mut out: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| {
            let line = comments::line_of(lines, text, d.span.start);
            let candidates = by_line.get(&line).into_iter().flatten().chain(&file_wide);
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
                sets: Vec::new(),
            }),
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The settings a file gets with no hwlint.toml (the built-in default target).
    pub(crate) fn settings(path: &Path) -> FileSettings {
        let o = crate::settings::Overrides {
            no_config: true,
            ..Default::default()
        };
        let configs = crate::settings::ConfigResolver::new(o.clone()).unwrap();
        configs
            .config_for(path)
            .unwrap()
            .for_file(path, &o)
            .unwrap()
    }

    fn codes(text: &str, settings: &FileSettings) -> Vec<(&'static str, usize)> {
        let (diags, _) = lint_text(text, Format::Yaml, Path::new("x.yaml"), settings);
        diags.iter().map(|d| (d.rule.code, d.span.start)).collect()
    }

    const TRL: &str = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\noutput_dir: out\nmax_length: 2048\nper_device_train_batch_size: 4\ndataloader_num_workers: 0\n";

    #[test]
    fn a_single_document_loader_refuses_a_stream_and_nothing_else_is_checked() {
        let s = settings(Path::new("x.yaml"));
        // The first document no dialect knows; the second is TRL's, so TRL reads the file.
        let text = format!("kind: notes\n---\n{TRL}");
        assert_eq!(codes(&text, &s), [("HW902", 12)]);
        // `...` ends the first document; the second has no `---` of its own.
        let text = format!("{TRL}...\nlearning_rate: 1.0e-4\n");
        assert_eq!(codes(&text, &s), [("HW902", TRL.len() + 4)]);
        // One document between markers is one document.
        let text = format!("---\n{TRL}...\n");
        assert!(!codes(&text, &s).iter().any(|(c, _)| *c == "HW902"));
        // HW902 ignored: the file is still not linted any further.
        let mut quiet = s.clone();
        quiet.ignore = vec!["HW902".into()];
        assert_eq!(codes(&format!("{TRL}---\n{TRL}"), &quiet), []);
    }

    #[test]
    fn a_dialect_that_does_not_say_how_it_loads_keeps_linting_each_document() {
        let mut s = settings(Path::new("x.yaml"));
        let mut dialects = (*s.dialects).clone();
        dialects.iter_mut().for_each(|d| d.load.clear());
        s.dialects = std::sync::Arc::new(dialects);
        let text = format!("{TRL}dataloader_num_workers: 0\n---\n{TRL}");
        let found = codes(&text, &s);
        assert!(!found.iter().any(|(c, _)| *c == "HW902"), "{found:?}");
        assert!(found.iter().any(|(c, _)| *c == "HW602"), "{found:?}");
    }

    #[test]
    fn a_panic_becomes_an_internal_error_on_its_file() {
        // Silence the default hook's message for this deliberate panic.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = guarded(Path::new("bad.yaml"), || panic!("index out of range"));
        std::panic::set_hook(hook);
        assert!(r.internal_error);
        assert_eq!(r.diagnostics.len(), 1);
        let d = &r.diagnostics[0];
        assert_eq!(d.rule.code, "HW902");
        assert!(d.message.contains("index out of range"), "{}", d.message);
        assert!(d.message.contains("Please report"), "{}", d.message);
        assert!(!r.changed());
    }

    #[test]
    fn a_fix_that_unuses_a_suppression_lets_its_removal_be_fixed_too() {
        // torchtitan, 3 GPUs: lowering the workers (HW203) leaves the suppression above them
        // unused, reading word for word as the one above `lr`. Both are then removed: the
        // first is not taken for the second's removal having failed.
        let text = "# hwlint: ignore[HW202, HW201]\ntraining.dataloader.num_workers = 11\n\n[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n\n[optimizer]\nname = \"AdamW\"\n# hwlint: ignore[HW202, HW201]\nlr = 2.0e-5";
        let path = Path::new("train.toml");
        let o = crate::settings::Overrides {
            no_config: true,
            gpus: Some(3),
            ..Default::default()
        };
        let configs = crate::settings::ConfigResolver::new(o.clone()).unwrap();
        let s = configs
            .config_for(path)
            .unwrap()
            .for_file(path, &o)
            .unwrap();
        let r = lint_source(
            path,
            text,
            Format::Toml,
            &s,
            FixMode::Apply(Applicability::Safe),
        );
        assert_eq!(r.diagnostics.len(), 0, "{:?}", r.diagnostics);
        assert!(!r.text.contains("hwlint: ignore"), "{}", r.text);
        assert!(r.text.contains("num_workers = 5"), "{}", r.text);
        let again = lint_source(
            path,
            &r.text,
            Format::Toml,
            &s,
            FixMode::Apply(Applicability::Unsafe),
        );
        assert!(again.applied.is_empty(), "{:?}", again.applied);
    }
}
