//! Shared pieces of the precision rules (HW401, HW402, HW404).

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;

/// The mixed precision a GPU does best that the dialect can write: bf16 where the GPU has it
/// and the keys can say it, else fp16.
pub(crate) fn best_mixed(ctx: &Context) -> &'static str {
    // Only what the framework's keys can say: LeRobot's Hydra `use_amp: true` is fp16 autocast
    // whatever the GPU, so suggesting bf16 there would name a setting the user cannot write.
    if ctx.target.gpu.bf16 && (expressible(ctx, "bf16-mixed") || !expressible(ctx, "fp16-mixed")) {
        "bf16-mixed"
    } else {
        "fp16-mixed"
    }
}

/// Whether one of the dialect's precision keys maps a value to `canonical`.
fn expressible(ctx: &Context, canonical: &str) -> bool {
    ctx.dialect
        .settings
        .get(&Concept::Precision)
        .is_some_and(|spec| spec.from.iter().any(|src| src.maps_to(canonical)))
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
