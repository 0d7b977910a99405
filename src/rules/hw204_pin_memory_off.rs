//! ## What it does
//! Flags GPU training with `pin_memory` turned off in the dataloader.
//!
//! ## Why is this bad?
//! Without pinned (page-locked) host memory every batch is first copied to a staging buffer
//! before it can go to the GPU, and the copy cannot overlap with compute. Pinning costs a
//! little host RAM and makes host-to-device copies faster and asynchronous.
//!
//! Fires on an explicit `false`, and on a framework default of `false` only where the
//! dialect marks it relevant.
//!
//! ## Example
//! ```yaml
//! dataloader_pin_memory: false
//! ```
//!
//! Use instead:
//! ```yaml
//! dataloader_pin_memory: true
//! ```
//!
//! ## Fix safety
//! Safe: pinning changes only how batches are copied, not what is trained.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((false, setting)) = ctx.setup.bool(Concept::PinMemory) else {
        return vec![];
    };
    if !setting.origin.counts_for_efficiency() || !ctx.setup.uses_gpu() {
        return vec![];
    }
    let message = format!(
        "{} is false: host-to-GPU copies go through an extra staging copy and cannot overlap compute",
        setting.origin.describe()
    );
    let fix = ctx.set(
        Concept::PinMemory,
        NewValue::Bool(true),
        Applicability::Safe,
        format!("set `{}` to true", setting.origin.key()),
    );
    vec![Violation {
        message,
        span: ctx.span_of(Concept::PinMemory),
        fix,
    }]
}
