//! ## What it does
//! Reports an evaluation interval longer than the whole run.
//!
//! ## Why is this bad?
//! The run never evaluates while it trains, so there is no validation curve to catch
//! overfitting or divergence, even though the config asks for periodic evaluation.
//!
//! ## Example
//! ```yaml
//! max_steps: 1000
//! eval_strategy: steps
//! eval_steps: 2000
//! ```
//!
//! Use instead:
//! ```yaml
//! eval_steps: 100
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
        Concept::EvalInterval,
        "evaluation",
        "it never evaluates during training",
    )
}
