//! ## What it does
//! Reports bf16 training (mixed or pure) on a GPU without bf16 support (compute capability
//! below 8.0: V100, T4, older).
//!
//! ## Why is this bad?
//! PyTorch refuses bf16 autocast on such GPUs or emulates it at a fraction of the speed, and
//! frameworks stop at start-up ("bf16 is not supported on your device"). TRL turns bf16 on by
//! default, so a recipe without `bf16:` fails on a T4.
//!
//! `bf16: auto` (axolotl) is not reported: it picks fp16 on such GPUs by itself.
//!
//! ## Example
//! ```yaml
//! # target: v100-32gb
//! bf16: true
//! ```
//!
//! Use instead:
//! ```yaml
//! bf16: false
//! fp16: true
//! ```
//!
//! ## Fix safety
//! Unsafe: fp16 has a narrower range than bf16 and needs loss scaling; a run that was stable
//! in bf16 can overflow in fp16.

use super::precision::{gpu_phrase, precision_violation};
use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((precision, setting)) = ctx.setup.str(Concept::Precision) else {
        return vec![];
    };
    if !matches!(precision, "bf16-mixed" | "bf16-true")
        || ctx.target.gpu.bf16
        || !ctx.setup.uses_gpu()
    {
        return vec![];
    }
    let message = format!(
        "{} asks for {precision}, but {} has no bf16 support (needs compute capability 8.0+)",
        setting.origin.describe(),
        gpu_phrase(ctx),
    );
    precision_violation(
        ctx,
        message,
        "fp16-mixed",
        "use fp16 mixed precision instead".to_string(),
    )
}
