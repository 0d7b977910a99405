//! Shared pieces of the precision rules (HW401, HW402, HW404).

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;

/// The mixed precision a GPU does best: bf16 where it has it, else fp16.
pub(crate) fn best_mixed(ctx: &Context) -> &'static str {
    if ctx.target.gpu.bf16 {
        "bf16-mixed"
    } else {
        "fp16-mixed"
    }
}

/// `NVIDIA Tesla V100 (compute capability 7.0)`.
pub(crate) fn gpu_phrase(ctx: &Context) -> String {
    format!(
        "{} (compute capability {})",
        ctx.target.gpu.key, ctx.target.gpu.compute_capability
    )
}

/// A diagnostic on the precision setting with the unsafe fix that switches it to `to`
/// (written through the dialect's own keys and spellings).
pub(crate) fn precision_violation(
    ctx: &Context,
    message: String,
    to: &str,
    fix_message: String,
) -> Vec<Violation> {
    let fix = ctx.set_mapped(Concept::Precision, to, Applicability::Unsafe, fix_message);
    vec![Violation {
        message,
        span: ctx.span_of(Concept::Precision),
        fix,
    }]
}
