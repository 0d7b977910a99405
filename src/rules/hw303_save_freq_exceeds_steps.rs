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
//! save_steps: 100
//! ```
//!
//! ## Fix safety
//! Unsafe: it sets the interval to about a tenth of the run (rounded down to two significant
//! digits), so the event happens during the run; setting it to the run length would still
//! leave nothing before the end. How often is a trade-off only you can make (each event costs
//! time and, for checkpoints, disk). Runs under 100 steps are smoke tests and are left alone.

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
