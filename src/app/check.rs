//! `hwlint check`: discover, lint (and fix) in parallel, report, and decide the exit code.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use miette::{IntoDiagnostic, Report};

use super::{emit, stream, use_color};
use crate::cli::CheckArgs;
use crate::discover::discover;
use crate::fix::{
    linted_roots, signals, write_atomic, write_destination, Applicability, WriteError,
};
use crate::lint::{guarded, lint_path, lint_source, FileResult, FixMode};
use crate::report::{self, OutputFormat};
use crate::settings::{ConfigResolver, Overrides};
use crate::syntax::Format;

/// The format when none is given: GitHub annotations inside GitHub Actions, else `full`.
fn default_format() -> OutputFormat {
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        OutputFormat::Github
    } else {
        OutputFormat::Full
    }
}

fn render(format: OutputFormat, results: &[FileResult], args: &CheckArgs) -> String {
    match format {
        OutputFormat::Full => report::render_full_at(
            results,
            use_color(args.color),
            args.unsafe_fixes,
            report::output_width(),
        ),
        OutputFormat::Concise => report::render_concise(results, args.unsafe_fixes),
        OutputFormat::Json => report::render_json(results),
        OutputFormat::JsonLines => report::render_json_lines(results),
        OutputFormat::Sarif => report::render_sarif(results),
        OutputFormat::Github => report::render_github(results),
    }
}

/// [`render`] for the whole set of results at once: the GitHub format closes with the memory
/// notice, which a file-by-file render leaves to the end of the run.
fn render_all(format: OutputFormat, results: &[FileResult], args: &CheckArgs) -> String {
    let mut out = render(format, results, args);
    if format == OutputFormat::Github && !args.statistics {
        out.push_str(&report::github_memory_notice(
            &report::counts(results).memory,
        ));
    }
    out
}

/// Formats a person reads get the summary line; machine formats do not.
fn is_human(format: OutputFormat) -> bool {
    matches!(format, OutputFormat::Full | OutputFormat::Concise)
}

/// The summary line follows human formats and the statistics table; the JSON statistics hold
/// its counts themselves.
fn summary_wanted(format: OutputFormat, args: &CheckArgs) -> bool {
    !args.quiet
        && (is_human(format)
            || (args.statistics && !matches!(format, OutputFormat::Json | OutputFormat::JsonLines)))
}

pub(super) fn check(args: CheckArgs) -> Result<u8, Report> {
    let overrides = Overrides {
        config: args.config.clone(),
        no_config: args.no_config,
        target: args.target.clone(),
        gpus: args.gpus,
        cpu_cores: args.cpu_cores,
        ram_gb: args.ram_gb,
        select: args.select.clone(),
        ignore: args.ignore.clone(),
        extend_select: args.extend_select.clone().unwrap_or_default(),
        exclude: args.exclude.clone(),
        extend_exclude: args.extend_exclude.clone().unwrap_or_default(),
    };
    // Left to the OS at exit: freeing every dialect and catalog entry one by one was a tenth of
    // a one-file run.
    let configs = std::mem::ManuallyDrop::new(ConfigResolver::new(overrides)?);
    let format = args.output_format.unwrap_or_else(default_format);
    let min = if args.unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    };
    let mode = if args.fix || args.diff {
        FixMode::Apply(min)
    } else {
        FixMode::Off
    };
    if args.paths.len() == 1 && args.paths[0].as_os_str() == "-" {
        return check_stdin(&args, &configs, format, mode);
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let found = discover(&paths, &configs, args.force_exclude)?;
    leftovers(&found.temporaries, args.fix && !args.diff, args.quiet);
    let files = found.files;
    if args.show_files {
        let mut out = String::new();
        for f in &files {
            out.push_str(&format!("{}\n", f.display()));
        }
        emit(&out)?;
        return Ok(0);
    }
    if files.is_empty() && !args.quiet {
        // As ruff says it: nothing was checked, which "All checks passed" alone would hide.
        super::emit_err(
            "warning: no files to check under the given paths (hwlint reads .yaml .yml .toml .json .jsonc .py .rs .sh .bash)\n",
        );
    }
    let linted: std::sync::Arc<std::collections::BTreeSet<PathBuf>> =
        std::sync::Arc::new(files.iter().filter_map(|f| f.canonicalize().ok()).collect());
    let lint = |path: &PathBuf| -> Result<FileResult, crate::settings::ConfigError> {
        let config = configs.config_for(path)?;
        let mut settings = config.for_file(path, configs.overrides())?;
        settings.linted = Some(linted.clone());
        let format = Format::from_path(path).unwrap_or(Format::Yaml);
        Ok(guarded(path, || lint_path(path, format, settings, mode)))
    };
    // The usual run streams: each file is reported (and fixed) as soon as it and the files
    // before it are done, then dropped. The other modes need every result at once.
    if !(args.show_settings || args.add_ignore || args.diff) {
        return streamed(&args, &files, &paths, &configs, format, lint);
    }
    let mut results: Vec<FileResult> = Vec::with_capacity(files.len());
    stream::in_order(&files, lint, |r| {
        results.push(r);
        Ok(())
    })?;
    let results = once_per_model(results);
    let failed = results.iter().any(|r| r.internal_error);
    if args.verbose {
        super::emit_err(&verbose(&results));
    }
    super::emit_err(&withheld(&results));

    if args.show_settings {
        let shown = match format {
            OutputFormat::Json => super::show_settings::render_json(&results),
            _ => super::show_settings::render_text(&results),
        };
        emit(&shown)?;
        return Ok(0);
    }
    if args.add_ignore {
        let added = super::add_ignore::add_ignores(&results, &linted_roots(&paths));
        if !args.quiet {
            let mut said = format!(
                "Added {} suppression comment{}",
                added.comments,
                if added.comments == 1 { "" } else { "s" }
            );
            if added.refused > 0 {
                said.push_str(&format!(
                    "; {} line{} left without one (see the warnings above)",
                    added.refused,
                    if added.refused == 1 { "" } else { "s" }
                ));
            }
            super::emit_err(&format!("{said}\n"));
        }
        return Ok(if added.write_failed { 2 } else { 0 });
    }
    // `--diff`: the unified diff of what `--fix` would write, nothing written.
    let mut code = 0u8;
    let mut diff = String::new();
    for r in results.iter().filter(|r| r.changed()) {
        let name = r.path.display().to_string();
        diff.push_str(
            &similar::TextDiff::from_lines(&r.original, &r.text)
                .unified_diff()
                .header(&format!("a/{name}"), &format!("b/{name}"))
                .to_string(),
        );
    }
    emit(&diff)?;
    if !diff.is_empty() {
        code = 1;
    }
    if summary_wanted(format, &args) {
        let line = report::summary(
            &results,
            &target_text(&results, &configs)?,
            args.unsafe_fixes,
            true,
        );
        super::emit_err(&format!("{line}\n"));
    }
    let counts = report::counts(&results);
    if counts.failing > 0 || (args.exit_non_zero_on_fix && counts.fixed > 0) {
        code = 1;
    }
    if failed {
        // hwlint itself failed on a file (a crash, or a fix it could not write).
        return Ok(2);
    }
    Ok(if args.exit_zero { 0 } else { code })
}

/// Where a streamed report goes: standard output (a closed pipe ends it quietly) or
/// `--output-file`, buffered.
struct Out {
    sink: Box<dyn std::io::Write>,
    /// Standard output was closed (`hwlint | head`): nothing more is written.
    closed: bool,
    path: Option<PathBuf>,
    /// A terminal reads along: each file's report is flushed as it comes.
    interactive: bool,
}

impl Out {
    fn new(path: Option<&Path>) -> Result<Out, Report> {
        let sink: Box<dyn std::io::Write> = match path {
            Some(p) => Box::new(std::io::BufWriter::new(
                std::fs::File::create(p)
                    .into_diagnostic()
                    .map_err(|e| e.wrap_err(format!("cannot write {}", p.display())))?,
            )),
            None => Box::new(std::io::BufWriter::new(std::io::stdout())),
        };
        Ok(Out {
            sink,
            closed: false,
            path: path.map(Path::to_path_buf),
            interactive: path.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()),
        })
    }

    fn write(&mut self, text: &str) -> Result<(), Report> {
        if self.closed || text.is_empty() {
            return Ok(());
        }
        let r = self.sink.write_all(text.as_bytes());
        self.result(r)?;
        if self.interactive {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Report> {
        if self.closed {
            return Ok(());
        }
        let r = self.sink.flush();
        self.result(r)
    }

    fn result(&mut self, r: std::io::Result<()>) -> Result<(), Report> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && self.path.is_none() => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(e).into_diagnostic().map_err(|e| match &self.path {
                Some(p) => e.wrap_err(format!("cannot write {}", p.display())),
                None => e,
            }),
            Ok(()) => Ok(()),
        }
    }
}

/// The usual `check` (with or without `--fix`), streamed: each file's findings are printed (and
/// its fixes written) in path order as soon as it is linted, and its text dropped. What the
/// report needs of the whole run (counts, `--statistics`, the JSON and SARIF documents) is
/// kept without the texts.
fn streamed<L>(
    args: &CheckArgs,
    files: &[PathBuf],
    paths: &[PathBuf],
    configs: &ConfigResolver,
    format: OutputFormat,
    lint: L,
) -> Result<u8, Report>
where
    L: Fn(&PathBuf) -> Result<FileResult, crate::settings::ConfigError> + Sync,
{
    let roots = linted_roots(paths);
    if args.fix {
        signals::install();
    }
    let mut out = Out::new(args.output_file.as_deref())?;
    let mut once = OncePerModel::default();
    let mut written = HashSet::new();
    let mut counts = report::Counts::default();
    let mut statistics = report::Statistics::default();
    let mut json = Vec::new();
    let mut sarif = (format == OutputFormat::Sarif && !args.statistics)
        .then(|| report::Sarif::new(files.first().map(PathBuf::as_path)));
    let mut fixes_shown = String::new();
    let mut failed = false;
    let mut targets = Targets::default();
    stream::in_order(
        files,
        |p| lint(p).map_err(Report::new),
        |r| {
            let mut r = r;
            once.keep_first(&mut r);
            failed |= r.internal_error;
            if args.verbose {
                super::emit_err(&verbose(std::slice::from_ref(&r)));
            }
            super::emit_err(&withheld(std::slice::from_ref(&r)));
            if args.fix && r.changed() {
                if let Err(e) = write_fixed(
                    &r.path,
                    &r.input_bytes(),
                    &r.output_bytes(),
                    &roots,
                    &mut written,
                ) {
                    // Reported, and the file is shown as it still is on disk; the run goes on.
                    super::emit_err(&format!("error: {e}\n"));
                    failed = true;
                    r = unfixed(&r);
                }
            }
            targets.add(&r);
            let one = std::slice::from_ref(&r);
            counts.add(report::counts(one));
            if args.statistics {
                statistics.add(one);
            } else {
                match format {
                    OutputFormat::Json => json.extend(report::json_elements(one)),
                    OutputFormat::Sarif => {
                        if let Some(s) = sarif.as_mut() {
                            s.add(one);
                        }
                    }
                    _ => out.write(&render(format, one, args))?,
                }
            }
            if args.show_fixes && args.fix && is_human(format) {
                fixes_shown.push_str(&applied_fixes(one));
            }
            Ok(())
        },
    )?;
    if args.statistics && matches!(format, OutputFormat::Json | OutputFormat::JsonLines) {
        out.write(&statistics.render_json(&counts.memory))?;
    } else if args.statistics {
        out.write(&statistics.render())?;
    } else if format == OutputFormat::Json {
        out.write(&report::json_array(&json))?;
    } else if let Some(s) = sarif {
        out.write(&s.finish())?;
    } else if format == OutputFormat::Github {
        out.write(&report::github_memory_notice(&counts.memory))?;
    }
    out.write(&fixes_shown)?;
    if summary_wanted(format, args) {
        let line = report::summary_of(
            counts.clone(),
            &targets.text(configs)?,
            args.unsafe_fixes,
            false,
        );
        if args.output_file.is_some() {
            out.flush()?;
            super::emit_err(&format!("{line}\n"));
        } else {
            out.write(&format!("{line}\n"))?;
        }
    }
    out.flush()?;
    if failed {
        // hwlint itself failed on a file (a crash, or a fix it could not write).
        return Ok(2);
    }
    let code = u8::from(counts.failing > 0 || (args.exit_non_zero_on_fix && counts.fixed > 0));
    Ok(if args.exit_zero { 0 } else { code })
}

/// Writes one fixed file (through a symlink only per [`write_destination`]); a file reached
/// by two names is written once.
pub(super) fn write_fixed(
    path: &Path,
    expected: &[u8],
    content: &[u8],
    roots: &[PathBuf],
    written: &mut HashSet<PathBuf>,
) -> Result<(), WriteError> {
    let dest = write_destination(path, roots)?;
    let key = std::fs::canonicalize(&dest).unwrap_or_else(|_| dest.clone());
    if !written.insert(key) {
        return Ok(());
    }
    write_atomic(&dest, expected, content)
}

/// The result of a file whose fixes could not be written: linted as it is on disk.
fn unfixed(r: &FileResult) -> FileResult {
    let Some(settings) = r.settings.clone() else {
        return r.clone();
    };
    let format = Format::from_path(&r.path).unwrap_or(Format::Yaml);
    let raw = String::from_utf8_lossy(&r.input_bytes()).into_owned();
    let mut fresh = lint_source(&r.path, &raw, format, &settings, FixMode::Off);
    fresh.settings = Some(settings);
    fresh
}

/// `--show-fixes`: what `--fix` changed, file by file.
fn applied_fixes(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results.iter().filter(|r| !r.applied.is_empty()) {
        out.push_str(&format!(
            "Fixed {} in {}:\n",
            r.applied.len(),
            r.path.display()
        ));
        for a in &r.applied {
            out.push_str(&format!("  - {a}\n"));
        }
    }
    out
}

/// Temporary files an interrupted `--fix` left beside the files linted (a run killed between
/// writing one and swapping it in cannot remove it): a `--fix` run removes them, any other run
/// names them. Each is said on standard error, so that none goes unnoticed.
fn leftovers(temporaries: &[PathBuf], fix: bool, quiet: bool) {
    for t in temporaries.iter().filter(|t| crate::fix::leftover(t)) {
        let said = if !fix {
            format!(
                "warning: {} is a temporary file an interrupted `hwlint --fix` left (the file it was writing is whole, original or fixed); `hwlint --fix` removes it\n",
                t.display()
            )
        } else {
            match std::fs::remove_file(t) {
                Ok(()) => format!(
                    "hwlint: removed {}, a temporary file an interrupted `hwlint --fix` left (the file it was writing is whole, original or fixed)\n",
                    t.display()
                ),
                Err(e) => format!(
                    "warning: cannot remove {}, a temporary file an interrupted `hwlint --fix` left: {e}\n",
                    t.display()
                ),
            }
        };
        if !quiet {
            super::emit_err(&said);
        }
    }
}

/// `hwlint -` : lint standard input as `--stdin-filename` (for editors). With `--fix` the fixed
/// text goes to standard output and the diagnostics to standard error.
fn check_stdin(
    args: &CheckArgs,
    configs: &ConfigResolver,
    format: OutputFormat,
    mode: FixMode,
) -> Result<u8, Report> {
    let name = args
        .stdin_filename
        .clone()
        .unwrap_or_else(|| PathBuf::from("stdin.yaml"));
    let Some(file_format) = Format::from_path(&name) else {
        // Not a format hwlint reads: pass the text through untouched, as it comes.
        let mut out: Box<dyn std::io::Write> = if args.fix {
            Box::new(std::io::stdout().lock())
        } else {
            Box::new(std::io::sink())
        };
        std::io::copy(&mut std::io::stdin().lock(), &mut out).into_diagnostic()?;
        return Ok(0);
    };
    let settings = configs
        .config_for(&name)?
        .for_file(&name, configs.overrides())?;
    // Read as a file is: to the size limit, and as UTF-8 text. What cannot be linted is HW902
    // on it, and with --fix passes through unchanged (an editor replaces its buffer with it).
    let (mut result, unchanged) = match crate::source::read_stdin(settings.max_file_bytes)
        .into_diagnostic()?
    {
        Ok(bytes) => match crate::source::decode(bytes.clone()) {
            Ok(text) => (
                guarded(&name, || {
                    lint_source(&name, &text, file_format, &settings, mode)
                }),
                None,
            ),
            Err(message) => (
                crate::lint::unreadable(&name, message),
                Some((bytes, false)),
            ),
        },
        Err(read) => (
            crate::lint::unreadable(&name, crate::source::stdin_too_big(settings.max_file_bytes)),
            Some((read, true)),
        ),
    };
    if let Some((bytes, more)) = &unchanged {
        if args.fix {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).into_diagnostic()?;
            if *more {
                std::io::copy(&mut std::io::stdin().lock(), &mut out).into_diagnostic()?;
            }
            out.flush().into_diagnostic()?;
        }
    }
    result.settings = Some(settings);
    let results = vec![result];
    let mut rendered = render_all(format, &results, args);
    if summary_wanted(format, args) {
        // The same summary line as for files; with --fix it goes with the diagnostics to
        // standard error, since standard output is the fixed text.
        rendered.push_str(&report::summary(
            &results,
            &target_text(&results, configs)?,
            args.unsafe_fixes,
            false,
        ));
        rendered.push('\n');
    }
    if args.fix {
        if unchanged.is_none() {
            emit(&String::from_utf8_lossy(&results[0].output_bytes()))?;
        }
        super::emit_err(&rendered);
    } else {
        emit(&rendered)?;
    }
    if results[0].internal_error {
        return Ok(2);
    }
    let counts = report::counts(&results);
    let failing = counts.failing > 0 || (args.exit_non_zero_on_fix && counts.fixed > 0);
    Ok(if args.exit_zero || !failing { 0 } else { 1 })
}

/// HW901 says the same thing for every file that names the same unknown model: keep the first.
fn once_per_model(mut results: Vec<FileResult>) -> Vec<FileResult> {
    let mut once = OncePerModel::default();
    for r in &mut results {
        once.keep_first(r);
    }
    results
}

/// The HW901 messages already reported in a run, file by file in path order.
#[derive(Default)]
struct OncePerModel(HashSet<String>);

impl OncePerModel {
    /// Drops from `r` each HW901 an earlier file already reported.
    fn keep_first(&mut self, r: &mut FileResult) {
        // Only the unknown-model note repeats across files: a note about one run's own
        // inputs (a range, a missing length) is that run's.
        r.diagnostics.retain(|d| {
            !crate::rules::names_unknown_model(d.rule.code, &d.message)
                || self.0.insert(d.message.clone())
        });
    }
}

/// The fixes hwlint withheld because the text they make reads back otherwise than they say: a
/// bug of hwlint's, said on standard error whatever the output format.
fn withheld(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results {
        let mut seen = HashSet::new();
        for why in r.dropped_fixes.iter().filter(|w| seen.insert(*w)) {
            out.push_str(&format!(
                "warning: {}: a fix was withheld because the file it makes does not read back as it says ({why}); please report this\n",
                r.path.display()
            ));
        }
    }
    out
}

/// `--verbose`: for each file, the config file that applied, the target, the dialect and the
/// keys that decided it, and the files merged into each run.
fn verbose(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(settings) = &r.settings else {
            continue;
        };
        let config = settings.source.as_ref().map_or_else(
            || "none (built-in defaults)".to_string(),
            |p| crate::lint::shown_path(p).display().to_string(),
        );
        out.push_str(&format!(
            "hwlint: {}: config {config}; target {}\n",
            r.path.display(),
            target_label(&settings.target)
        ));
        let format = Format::from_path(&r.path).unwrap_or(Format::Yaml);
        let Ok(doc) = crate::syntax::parse(&r.text, format) else {
            out.push_str("hwlint:   not read: it does not parse\n");
            continue;
        };
        let runs = crate::lint::runs_in_text(&doc, &r.text, &r.path, &settings.dialects);
        if runs.is_empty() {
            out.push_str("hwlint:   not a training config: no dialect's signature matches\n");
        }
        for (index, run) in &runs {
            let (line, _) = r.lines().position(&r.text, doc.roots[*index].span.start);
            let why = crate::dialect::evidence(
                run.dialect,
                run.recognised_in(&doc.roots[*index]),
                format,
            )
            .to_string();
            out.push_str(&format!(
                "hwlint:   line {line}: dialect {}{}\n",
                run.dialect.name,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ));
            for m in &run.merged {
                out.push_str(&format!(
                    "hwlint:     over {}: {}\n",
                    m.what,
                    crate::lint::shown_path(&m.path).display()
                ));
            }
        }
    }
    out
}

/// The target named in the summary line: the one every file used, or a note that they differ.
fn target_text(results: &[FileResult], configs: &ConfigResolver) -> Result<String, Report> {
    let mut targets = Targets::default();
    for r in results {
        targets.add(r);
    }
    targets.text(configs)
}

/// The targets the files of a run were checked against, taken file by file: the first, and
/// whether another file had another one.
#[derive(Default)]
struct Targets {
    first: Option<crate::hardware::Target>,
    vary: bool,
}

impl Targets {
    fn add(&mut self, r: &FileResult) {
        let Some(t) = r.settings.as_ref().map(|s| &s.target) else {
            return;
        };
        match &self.first {
            None => self.first = Some(t.clone()),
            Some(first) => self.vary |= first != t,
        }
    }

    /// The summary line's target: the one every file had, the configured one when no file
    /// was linted, or "varies".
    fn text(&self, configs: &ConfigResolver) -> Result<String, Report> {
        if self.vary {
            return Ok("varies per file (hwlint.toml per-path)".into());
        }
        Ok(target_label(&match &self.first {
            Some(t) => t.clone(),
            None => {
                configs
                    .config_for(Path::new("./x"))?
                    .for_file(Path::new("./x"), configs.overrides())?
                    .target
            }
        }))
    }
}

/// `workstation: rtx-4090 (23.6 GiB), 16 cores, 64 GB RAM (default)`; a bare GPU name is its
/// own description (`rtx-4090 (23.6 GiB)`).
fn target_label(t: &crate::hardware::Target) -> String {
    let mut s = if t.describe().starts_with(&format!("{} (", t.name)) {
        t.describe()
    } else {
        format!("{}: {}", t.name, t.describe())
    };
    if t.is_default {
        s.push_str(" (default)");
    }
    s
}
