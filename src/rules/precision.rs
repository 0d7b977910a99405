//! Shared pieces of the precision rules (HW401, HW402, HW404).

use super::Context;

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
