//! The `full` format: miette's graphical report with the source snippet and the fix as help.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode};

use crate::fix::Applicability;
use crate::lint::{Diagnostic, FileResult};
use crate::rules::Severity;

struct Rendered<'a> {
    d: &'a Diagnostic,
    src: NamedSource<String>,
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
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.d.span.is_empty() && self.d.span.start == 0 {
            return None;
        }
        let len = self.d.span.len().max(1);
        Some(Box::new(std::iter::once(LabeledSpan::new(
            Some("here".into()),
            self.d.span.start,
            len,
        ))))
    }
}

pub fn render_full(results: &[FileResult], color: bool, unsafe_enabled: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    for r in results {
        for d in &r.diagnostics {
            let rendered = Rendered {
                d,
                src: NamedSource::new(r.path.display().to_string(), r.text.clone()),
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
