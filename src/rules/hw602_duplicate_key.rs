//! ## What it does
//! Reports a key that appears twice in the same mapping of a training config.
//!
//! ## Why is this bad?
//! PyYAML, json and most loaders silently keep the last value, so the first one (often the
//! one a reader sees) has no effect. The run uses a value the reader did not expect.
//!
//! Some loaders refuse the file instead: OmegaConf (LLaMA-Factory, Hydra) and DeepSpeed's own
//! JSON loader. For those frameworks a duplicate key is reported as HW902 (parse-error, an
//! error), since the run stops before it starts.
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
use crate::dialect::DuplicateKeys;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let load = ctx.dialect.load.get(&ctx.doc.format);
    let keeps = match load.map(|l| (l.duplicate_keys, &l.call)) {
        Some((Some(DuplicateKeys::KeepLast), call)) => format!("{call} keeps only this last value"),
        // A loader that refuses the file is HW902's to report.
        Some((Some(DuplicateKeys::Refuse), _)) => return Vec::new(),
        _ => "most loaders keep only this last value".to_string(),
    };
    ctx.doc
        .duplicates
        .iter()
        .filter(|d| ctx.root.span.start <= d.second.start && d.second.end <= ctx.root.span.end)
        .map(|d| {
            let (line, _) = ctx.lines().position(ctx.text, d.first.start);
            Violation {
                message: format!(
                    "`{}` is set twice in the same mapping (first on line {line}); {keeps}",
                    d.key
                ),
                span: d.second.clone(),
                fix: None,
            }
        })
        .collect()
}
