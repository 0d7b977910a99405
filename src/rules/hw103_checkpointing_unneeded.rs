//! ## What it does
//! Flags activation checkpointing that is turned on although the step fits comfortably
//! without it (at most 85% of usable memory).
//!
//! ## Why is this bad?
//! Checkpointing recomputes every block's forward pass during backward: about 20-40% more
//! time per step, paid for memory the run does not need.
//!
//! Fires only when checkpointing is written in the file (TRL turns it on by default; that
//! default is not reported).
//!
//! ## Example
//! ```yaml
//! gradient_checkpointing: true   # a 0.5B model at batch 4 on an 80 GB card
//! ```
//!
//! Use instead:
//! ```yaml
//! gradient_checkpointing: false
//! ```
//!
//! ## Fix safety
//! Safe: checkpointing changes memory and speed, not the result of training.

use super::memory::{for_target, gib, gpu_named, need_with};
use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::memory::Checkpointing;
use crate::estimate::verdict::CHECKPOINTING_UNNEEDED_LINE;
use crate::fix::Applicability;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(m) = ctx.gpu_memory() else {
        return vec![];
    };
    // Waste must hold even without sharding.
    let m = &m.most;
    let Some((_, setting)) = ctx.setup.str(Concept::ActivationCheckpointing) else {
        return vec![];
    };
    if m.plan.checkpointing != Checkpointing::Full || !setting.origin.is_explicit() {
        return vec![];
    }
    let usable = m.verdict.usable_bytes;
    let without = need_with(&m.plan, m.plan.batch, Checkpointing::None);
    if without > usable * CHECKPOINTING_UNNEEDED_LINE {
        return vec![];
    }
    let fix = for_target(
        ctx,
        ctx.set_mapped(
            Concept::ActivationCheckpointing,
            "none",
            Applicability::Safe,
            "turn activation checkpointing off".to_string(),
        ),
    );
    vec![Violation {
        message: format!(
            "{} is on, but without it the step needs only ~{} GiB ({:.0}% of {} GiB usable on {}): recomputation costs ~20-40% of step time for nothing",
            setting.origin.describe(),
            gib(without),
            100.0 * without / usable,
            gib(usable),
            gpu_named(ctx),
        ),
        span: ctx.span_of(Concept::ActivationCheckpointing),
        fix,
    }]
}
