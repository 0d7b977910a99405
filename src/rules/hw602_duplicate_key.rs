//! ## What it does
//! Reports a key that appears twice in the same mapping of a training config.
//!
//! ## Why is this bad?
//! PyYAML, json and most loaders silently keep the last value, so the first one (often the
//! one a reader sees) has no effect. The run uses a value the reader did not expect.
//!
//! ## Example
//! ```yaml
//! learning_rate: 1.0e-4
//! batch_size: 8
//! learning_rate: 3.0e-4
//! ```
//!
//! Use instead: keep one `learning_rate`.

use super::{Context, Violation};

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    ctx.doc
        .duplicates
        .iter()
        .filter(|d| ctx.root.span.start <= d.second.start && d.second.end <= ctx.root.span.end)
        .map(|d| {
            let (line, _) = ctx.lines().position(ctx.text, d.first.start);
            Violation {
                message: format!(
                    "`{}` is set twice in the same mapping (first on line {line}); the loader keeps only this last value",
                    d.key
                ),
                span: d.second.clone(),
                fix: None,
            }
        })
        .collect()
}
