//! ## What it does
//! Compares the learning-rate schedule's decay length with the run's total steps and reports
//! when they differ by more than 10%.
//!
//! ## Why is this bad?
//! A decay longer than the run means the learning rate never comes down (the run ends at a
//! high LR); a decay much shorter than the run leaves most of the run at the floor LR (or
//! restarts the cosine, depending on the scheduler). Both usually come from copying
//! `decay_steps` from a recipe with a different `steps`.
//!
//! Framework semantics are honoured: LeRobot's `cosine_decay_with_warmup` rescales itself to
//! `steps` when the run is shorter than `scheduler_decay_steps`, so that case is not reported.
//! At least one of the two values must be written in the file, and a schedule that ends where
//! it starts (openpi's `decay_lr` equal to `peak_lr`) decays nothing. Runs under 100 steps are
//! smoke tests and are left alone.
//!
//! ## Example
//! ```yaml
//! steps: 200000
//! policy:
//!   scheduler_decay_steps: 30000
//! ```
//!
//! Use instead:
//! ```yaml
//! steps: 200000
//! policy:
//!   scheduler_decay_steps: 200000
//! ```
//!
//! In an openpi config module (`src/openpi/training/config.py`):
//! ```python
//! TrainConfig(
//!     name="pi0_my_robot",
//!     num_train_steps=100_000,
//!     lr_schedule=_optimizer.CosineDecaySchedule(warmup_steps=1_000, decay_steps=30_000),
//! )
//! ```
//!
//! ## Fix safety
//! Unsafe: it sets the decay length to the total steps, which changes the LR curve the run
//! will follow.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

/// Relative difference under which decay and run length count as equal.
const TOLERANCE: f64 = 0.10;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((decay, decay_set)) = ctx.setup.int(Concept::DecaySteps) else {
        return vec![];
    };
    let Some((total, total_set)) = super::interval::run_steps(ctx) else {
        return vec![];
    };
    if total <= 0 || decay <= 0 {
        return vec![];
    }
    if !decay_set.origin.is_explicit() && !total_set.origin.is_explicit() {
        return vec![];
    }
    let ratio = decay as f64 / total as f64;
    if (ratio - 1.0).abs() <= TOLERANCE {
        return vec![];
    }
    if decay > total && ctx.dialect.semantics.decay_rescales_to_shorter_runs {
        return vec![];
    }
    let effect = if decay > total {
        format!(
            "the LR is still at {:.0}% of the way through its decay when the run ends",
            100.0 * total as f64 / decay as f64
        )
    } else {
        format!(
            "the last {} steps ({:.0}% of the run) train at the floor LR",
            total - decay,
            100.0 * (total - decay) as f64 / total as f64
        )
    };
    let message = format!(
        "LR decay over {} {decay} steps but the run is {} {total} steps: {effect}",
        decay_set.origin.describe(),
        total_set.origin.describe(),
    );
    let fix = ctx.set(
        Concept::DecaySteps,
        NewValue::Int(total),
        Applicability::Unsafe,
        format!("set `{}` to {total}", decay_set.origin.key()),
    );
    vec![Violation {
        message,
        span: ctx.span_of(Concept::DecaySteps),
        fix,
    }]
}
