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
use crate::dialect::{Concept, Setting};
use crate::estimate::memory::Checkpointing;
use crate::estimate::verdict::CHECKPOINTING_UNNEEDED_LINE;
use crate::fix::Applicability;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(Unneeded {
        without,
        usable,
        setting,
    }) = unneeded(ctx)
    else {
        return vec![];
    };
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

/// What [`unneeded`] found: the step's need without checkpointing, the usable memory it is
/// held against, and the setting that turns checkpointing on.
pub(crate) struct Unneeded<'c> {
    pub without: f64,
    pub usable: f64,
    pub setting: &'c Setting,
}

/// The step's need without checkpointing, and the setting that turns it on, when the file
/// turns full checkpointing on and the step fits in 85% of usable memory without it (HW102
/// waits for this rule's fix, as the batch that fits depends on it).
pub(crate) fn unneeded<'c>(ctx: &'c Context) -> Option<Unneeded<'c>> {
    // Waste must hold even without sharding.
    let m = &ctx.gpu_memory()?.most;
    let (_, setting) = ctx.setup.str(Concept::ActivationCheckpointing)?;
    if m.plan.checkpointing != Checkpointing::Full || !setting.origin.is_explicit() {
        return None;
    }
    // Checkpointing the framework ties to the number of devices (LitGPT's multi-device
    // finetunes): no key turns it off but the world size itself.
    if ctx.world_size_keys().contains(&setting.origin.key()) {
        return None;
    }
    let without = need_with(&m.plan, m.plan.batch, Checkpointing::None);
    let usable = m.verdict.usable_bytes;
    (without <= usable * CHECKPOINTING_UNNEEDED_LINE).then_some(Unneeded {
        without,
        usable,
        setting,
    })
}
