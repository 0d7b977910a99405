//! ## What it does
//! Flags full-fp32 training on a GPU with tensor cores (compute capability 7.0 or newer).
//!
//! ## Why is this bad?
//! Tensor cores run bf16/fp16 matmuls several times faster than fp32 (up to 8-16x on Ampere
//! and newer), and mixed precision halves activation memory. fp32 training leaves most of the
//! GPU unused.
//!
//! Fires on an explicit fp32 setting (`precision: 32-true`, `bf16: false` in TRL) and on a
//! framework default only where the dialect marks it relevant.
//!
//! ## Example
//! ```yaml
//! trainer:
//!   precision: 32-true
//! ```
//!
//! Use instead:
//! ```yaml
//! trainer:
//!   precision: bf16-mixed
//! ```
//!
//! ## Fix safety
//! Unsafe: mixed precision changes numerics; most models train the same, but the change
//! should be a decision.

use super::precision::{best_mixed, gpu_phrase, precision_violation};
use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(("fp32", setting)) = ctx.setup.str(Concept::Precision) else {
        return vec![];
    };
    if !setting.origin.counts_for_efficiency() || !ctx.setup.uses_gpu() {
        return vec![];
    }
    if ctx.target.gpu.cc() < (7, 0) {
        return vec![];
    }
    let best = best_mixed(ctx);
    let message = format!(
        "{} trains in fp32 on {}, whose tensor cores run {best} matmuls several times faster",
        setting.origin.describe(),
        gpu_phrase(ctx),
    );
    precision_violation(ctx, message, best, format!("use {best}"))
}
