//! The `full` format: miette's graphical report with the source snippet and the fix as help.

use std::fmt;

use std::borrow::Cow;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::fix::Applicability;
use crate::lint::{Diagnostic, FileResult};
use crate::rules::Severity;
use crate::syntax::LineIndex;

/// Longest stretch of one line shown around a finding. miette pads to the label's column with a
/// `{:width$}` argument, which panics past 65535 (a minified JSON file), and a snippet wider
/// than a terminal helps no one.
const MAX_SNIPPET_BYTES: usize = 160;
/// Longest underline; the rest of a long span is implied by the snippet.
const MAX_LABEL_BYTES: usize = 120;

/// A file's text as miette reads it: only the lines around a span, found through the file's
/// line index, so rendering N findings costs N small reads instead of N copies of the file.
struct FileSource<'a> {
    name: String,
    /// The text with lone `\r` line breaks read as `\n` (same offsets): miette's line splitter
    /// knows only `\n` and `\r\n`.
    text: &'a str,
    lines: &'a LineIndex,
}

impl SourceCode for FileSource<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        if span.offset() + span.len() > self.text.len() {
            return Err(MietteError::OutOfBounds);
        }
        // A parser may point inside a multi-byte character: widen to whole characters.
        let start = floor_char(self.text, span.offset());
        let end = ceil_char(self.text, span.offset() + span.len());
        let (line, col) = self.lines.position(self.text, start);
        let (line, col) = (line - 1, col - 1);
        let line_start = self.lines.line_start(line).unwrap_or(0);
        let line_end = self.lines.line_start(line + 1).unwrap_or(self.text.len());
        let long = line_end - line_start > MAX_SNIPPET_BYTES;
        let (from, to, first_line, column) = if before == 0 && after == 0 {
            // The header's reference point: the span itself.
            (start, end, line, col)
        } else if long {
            // Only a window of the span's own line, cut at character boundaries.
            let from = floor_char(
                self.text,
                start.saturating_sub(MAX_SNIPPET_BYTES / 2).max(line_start),
            );
            let to = ceil_char(
                self.text,
                (from + MAX_SNIPPET_BYTES)
                    .min(line_end)
                    .max(end.min(line_end)),
            );
            let column = self.lines.position(self.text, from).1 - 1;
            (from, to, line, column)
        } else {
            let (last, _) = self
                .lines
                .position(self.text, end.saturating_sub(1).max(start));
            let first_line = line.saturating_sub(before);
            let from = self.lines.line_start(first_line).unwrap_or(0);
            let to = self
                .lines
                .line_start(last + after)
                .unwrap_or(self.text.len());
            (from, to.max(end), first_line, 0)
        };
        let count = self.text[from..to].matches('\n').count() + 1;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &self.text.as_bytes()[from..to],
            SourceSpan::new(from.into(), to - from),
            first_line,
            column,
            count,
        )))
    }
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

struct Rendered<'a> {
    d: &'a Diagnostic,
    src: &'a FileSource<'a>,
    unsafe_enabled: bool,
}
impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.d.message)
    }
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.d.message)
    }
}

impl std::error::Error for Rendered<'_> {}

impl miette::Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(format!(
            "{} {}",
            self.d.rule.code, self.d.rule.name
        )))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity() {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let fix = self.d.fix.as_ref().map(|f| match f.applicability {
            Applicability::Safe => format!("fix (--fix): {}", f.message),
            Applicability::Unsafe if self.unsafe_enabled => format!("fix (--fix): {}", f.message),
            Applicability::Unsafe => format!("unsafe fix (--unsafe-fixes): {}", f.message),
            Applicability::DisplayOnly => format!("suggestion: {}", f.message),
        });
        let pointer = format!("more: hwlint rule {}", self.d.rule.code);
        Some(Box::new(match fix {
            Some(f) => format!("{f}\n{pointer}"),
            None => pointer,
        }))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let text = self.src.text;
        let span = &self.d.span;
        if span.is_empty() && span.start == 0 || span.start >= text.len() {
            return None;
        }
        let start = floor_char(text, span.start);
        let mut end = span.end.min(span.start + MAX_LABEL_BYTES).min(text.len());
        // On a long line only a window of that line is shown: the label must end inside it.
        let (line, _) = self.src.lines.position(text, start);
        let line_start = self.src.lines.line_start(line - 1).unwrap_or(0);
        let line_end = self.src.lines.line_start(line).unwrap_or(text.len());
        if line_end - line_start > MAX_SNIPPET_BYTES {
            end = end.min(
                text[..line_end]
                    .trim_end_matches(['\n', '\r'])
                    .len()
                    .max(start),
            );
        }
        let end = ceil_char(text, end);
        let len = (end - start).max(1);
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some("here".into()),
            start,
            len,
        ))))
    }
}

/// Columns the full format wraps at when the output is not a terminal (a file, a pipe, a
/// snapshot).
pub const DEFAULT_WIDTH: usize = 100;

/// The width to wrap at: `COLUMNS` when set, else the terminal's, else [`DEFAULT_WIDTH`]. A
/// fixed 100 breaks words on an 80-column terminal.
pub fn output_width() -> usize {
    use std::io::IsTerminal;
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok());
    let from_terminal = || {
        std::io::stdout()
            .is_terminal()
            .then(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
            .flatten()
    };
    from_env
        .or_else(from_terminal)
        .unwrap_or(DEFAULT_WIDTH)
        .clamp(40, 1000)
}

pub fn render_full(results: &[FileResult], color: bool, unsafe_enabled: bool) -> String {
    render_full_at(results, color, unsafe_enabled, DEFAULT_WIDTH)
}

/// [`render_full`] wrapped at `width` columns.
pub fn render_full_at(
    results: &[FileResult],
    color: bool,
    unsafe_enabled: bool,
    width: usize,
) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false);
    let mut out = String::new();
    for r in results {
        if r.diagnostics.is_empty() {
            continue;
        }
        let text = lone_cr_as_lf(&r.text);
        let src = FileSource {
            name: r.path.display().to_string(),
            text: &text,
            lines: r.lines(),
        };
        for d in &r.diagnostics {
            let rendered = Rendered {
                d,
                src: &src,
                unsafe_enabled,
            };
            if handler.render_report(&mut out, &rendered).is_err() {
                out.push_str(&format!(
                    "{}: {} {}\n",
                    r.path.display(),
                    d.rule.code,
                    d.message
                ));
            }
            out.push('\n');
        }
    }
    out
}

/// The same text with each lone `\r` turned into `\n`: one byte for one, so every offset holds.
fn lone_cr_as_lf(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let lone = |i: usize| b[i] == b'\r' && b.get(i + 1) != Some(&b'\n');
    if !(0..b.len()).any(lone) {
        return Cow::Borrowed(text);
    }
    let bytes: Vec<u8> = (0..b.len())
        .map(|i| if lone(i) { b'\n' } else { b[i] })
        .collect();
    // Only ASCII bytes were swapped for ASCII bytes.
    Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{LoadedConfig, Overrides};
    use std::path::Path;

    fn render(name: &str, text: &str) -> String {
        let path = Path::new(name);
        let settings = LoadedConfig::empty()
            .and_then(|c| c.for_file(path, &Overrides::default()))
            .unwrap();
        let format = crate::syntax::Format::from_path(path).unwrap();
        let r = crate::lint::lint_source(path, text, format, &settings, crate::lint::FixMode::Off);
        assert!(!r.diagnostics.is_empty());
        render_full(&[r], false, false)
    }

    #[test]
    fn a_finding_past_column_65535_shows_a_window_of_its_line() {
        // miette pads to the column with a u16 width: this used to panic.
        let pad = "x".repeat(70_000);
        let text = format!(
            "{{\"pad\": \"{pad}\", \"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 6, \"gradient_accumulation_steps\": 4}}"
        );
        let out = render("ds_config.json", &text);
        assert!(out.contains("ds_config.json:1:70"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() < 400), "{out}");
    }
}
