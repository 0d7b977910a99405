//! ## What it does
//! Reports FP8 training on a GPU without FP8 tensor cores (compute capability below 8.9:
//! everything before Ada Lovelace and Hopper, including the A100), and the block-scaled
//! MXFP8 / NVFP4 formats on a GPU without their tensor cores (anything before Blackwell,
//! compute capability 10.0, the H100 included).
//!
//! ## Why is this bad?
//! Transformer Engine, torchao and accelerate's FP8 paths refuse to run (or fall back to
//! emulation that is slower than bf16) on such GPUs. torchtitan checks at start: its float8
//! converters raise below SM89 unless `quantize.linear.float8.emulate` is set, and its MX
//! converters assert SM100 or later.
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
//! memory and compute than FP8 would on a GPU that had it. A model converter in a list
//! (torchtitan `model.converters`) gets no fix: which of the list to drop, or whether to
//! train on another GPU, is the user's call.

use super::precision::{best_mixed, gpu_phrase, precision_violation};
use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    if !ctx.setup.uses_gpu() {
        return vec![];
    }
    let mut out = precision(ctx);
    out.extend(converters(ctx));
    out
}

/// The trainer's whole precision is FP8.
fn precision(ctx: &Context) -> Vec<Violation> {
    let Some(("fp8", setting)) = ctx.setup.str(Concept::Precision) else {
        return vec![];
    };
    if ctx.target.gpu.fp8 {
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

/// Model converters that run the matmuls in a narrower format than the precision setting.
fn converters(ctx: &Context) -> Vec<Violation> {
    let Some((formats, setting)) = ctx.setup.str(Concept::LowPrecisionMatmuls) else {
        return vec![];
    };
    let gpu = &ctx.target.gpu;
    let missing: Vec<(&str, &str)> = formats
        .split(',')
        .filter_map(|f| match f.trim() {
            "fp8" if !gpu.fp8 => Some(("FP8", "compute capability 8.9+")),
            "mxfp8" if !gpu.mx_formats => Some(("MXFP8", "Blackwell, compute capability 10.0+")),
            "nvfp4" if !gpu.mx_formats => Some(("NVFP4", "Blackwell, compute capability 10.0+")),
            _ => None,
        })
        .collect();
    let Some((name, needs)) = missing.first() else {
        return vec![];
    };
    let names: Vec<&str> = missing.iter().map(|(n, _)| *n).collect();
    // What the GPU can do instead, where it can do something.
    let instead = if gpu.fp8 && !names.contains(&"FP8") {
        "; it has FP8 tensor cores, for FP8 matmuls instead"
    } else {
        ""
    };
    vec![Violation {
        message: format!(
            "{} asks for {} matmuls, but {} has no {name} tensor cores (needs {needs}): {} stops at start{instead}",
            setting.origin.describe(),
            names.join(" and "),
            gpu_phrase(ctx),
            ctx.dialect.title,
        ),
        span: ctx.span_of(Concept::LowPrecisionMatmuls),
        fix: None,
    }]
}
