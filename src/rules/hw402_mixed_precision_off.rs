//! ## What it does
//! Flags full-fp32 training on a GPU with tensor cores (compute capability 7.0 or newer).
//!
//! ## Why is this bad?
//! Tensor cores run bf16/fp16 matmuls faster than fp32: by the catalog's dense datasheet
//! figures 2x on an RTX 4090 (165 against 82.6 TFLOPS), 8x on a V100 (fp16), 16x on an A100
//! (312 against 19.5: PyTorch leaves TF32 matmuls off by default) and 15x on an H100. The
//! message quotes the target's own ratio. Mixed precision also halves activation memory.
//!
//! Fires on an explicit fp32 setting (`precision: 32-true`, `bf16: false` in TRL) and on a
//! framework default only where the dialect marks it relevant; not when the weights are loaded
//! in 16 bit (`torch_dtype: float16`) or in the checkpoint's own dtype (`auto`), whose matmuls
//! do not run in fp32.
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
    // Weights loaded in 16 bit (`torch_dtype: float16`) run their matmuls in 16 bit without
    // any mixed-precision switch; `auto` loads whatever the checkpoint holds. Either way the
    // run is not known to train in fp32.
    if ctx
        .setup
        .str(Concept::WeightDtype)
        .is_some_and(|(d, _)| d != "fp32")
        || ctx.setup.is_unknown(Concept::WeightDtype)
    {
        return vec![];
    }
    let best = best_mixed(ctx);
    // The catalog's own figures: dense tensor-core 16-bit (fp16 where bf16 is missing) against
    // plain fp32 (rules/hardware.toml).
    let gpu = &ctx.target.gpu;
    let message = format!(
        "{} trains in fp32 on {}, whose tensor cores run {best} matmuls at {} TFLOPS against {} TFLOPS in fp32 ({:.1}x, dense datasheet figures)",
        setting.origin.describe(),
        gpu_phrase(ctx),
        gpu.bf16_tflops,
        gpu.fp32_tflops,
        gpu.bf16_tflops / gpu.fp32_tflops.max(f64::MIN_POSITIVE),
    );
    precision_violation(ctx, message, best, format!("use {best}"))
}
