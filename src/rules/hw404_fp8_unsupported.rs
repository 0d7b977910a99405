//! ## What it does
//! Reports FP8 training on a GPU without FP8 tensor cores (compute capability below 8.9:
//! everything before Ada Lovelace and Hopper, including the A100).
//!
//! ## Why is this bad?
//! Transformer Engine, torchao and accelerate's FP8 paths refuse to run (or fall back to
//! emulation that is slower than bf16) on such GPUs.
//!
//! ## Example
//! ```yaml
//! # target: a100-80gb
//! mixed_precision: fp8
//! ```
//!
//! Use instead:
//! ```yaml
//! mixed_precision: bf16
//! ```
//!
//! ## Fix safety
//! Unsafe: it switches to bf16 mixed precision (fp16 where bf16 is missing), which uses more
//! memory and compute than FP8 would on a GPU that had it.

use super::precision::{best_mixed, gpu_phrase, precision_violation};
use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(("fp8", setting)) = ctx.setup.str(Concept::Precision) else {
        return vec![];
    };
    if ctx.target.gpu.fp8 || !ctx.setup.uses_gpu() {
        return vec![];
    }
    let best = best_mixed(ctx);
    let message = format!(
        "{} asks for FP8, but {} has no FP8 tensor cores (needs compute capability 8.9+)",
        setting.origin.describe(),
        gpu_phrase(ctx),
    );
    precision_violation(ctx, message, best, format!("use {best}"))
}
