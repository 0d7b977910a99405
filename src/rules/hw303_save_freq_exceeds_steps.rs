//! ## What it does
//! Reports a checkpoint interval longer than the whole run.
//!
//! ## Why is this bad?
//! No checkpoint is written during training: at best the framework saves once at the end, and
//! a crash, preemption or OOM late in the run loses everything.
//!
//! ## Example
//! ```yaml
//! max_steps: 1000
//! save_steps: 5000
//! ```
//!
//! Use instead:
//! ```yaml
//! max_steps: 1000
//! save_steps: 1000
//! ```
//!
//! ## Fix safety
//! Unsafe: it sets the interval to the total steps; you may want a shorter one.

use super::interval::interval_exceeds_run;
use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    interval_exceeds_run(
        ctx,
        Concept::SaveInterval,
        "checkpoint",
        "no checkpoint is written before the end",
    )
}
