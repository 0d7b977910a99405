//! ## What it does
//! Reports FlashAttention-2 requested on a GPU it does not run on: compute capability below
//! 8.0 (Volta, Turing). Blackwell, which the library does not target but recent builds may
//! run on, is not reported.
//!
//! ## Why is this bad?
//! `attn_implementation: flash_attention_2` makes `from_pretrained` raise at start-up on such
//! GPUs; with some versions the import fails only when the first batch arrives.
//!
//! ## Example
//! ```yaml
//! # target: t4
//! attn_implementation: flash_attention_2
//! ```
//!
//! Use instead:
//! ```yaml
//! attn_implementation: sdpa
//! ```
//!
//! ## Fix safety
//! Unsafe: PyTorch SDPA computes the same attention, but its memory use and speed differ
//! (its memory-efficient kernel still scales linearly with sequence length).

use super::precision::gpu_phrase;
use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(("flash_attention_2", setting)) = ctx.setup.str(Concept::Attention) else {
        return vec![];
    };
    if ctx.target.gpu.flash_attention_2 || ctx.target.gpu.cc() >= (8, 0) || !ctx.setup.uses_gpu() {
        return vec![];
    }
    let message = format!(
        "{} asks for FlashAttention-2, which does not run on {}",
        setting.origin.describe(),
        gpu_phrase(ctx),
    );
    let fix = ctx.set_mapped(
        Concept::Attention,
        "sdpa",
        Applicability::Unsafe,
        "use PyTorch SDPA attention".to_string(),
    );
    vec![Violation {
        message,
        span: ctx.span_of(Concept::Attention),
        fix,
    }]
}
