//! ## What it does
//! Reports a warmup at least as long as the whole run.
//!
//! ## Why is this bad?
//! The learning rate is still ramping up when training stops: the run never trains at its
//! peak LR and never decays. This is almost always a warmup copied from a longer recipe, or a
//! run shortened for a test.
//!
//! Fractions are resolved first (`warmup_steps: 0.1` in the Hugging Face Trainer is 10% of
//! the run), and LeRobot's scheduler, which shrinks warmup with a short run, is honoured. Runs
//! under 100 steps are smoke tests and are left alone.
//!
//! ## Example
//! ```yaml
//! max_steps: 500
//! warmup_steps: 1000
//! ```
//!
//! Use instead:
//! ```yaml
//! max_steps: 500
//! warmup_steps: 50
//! ```
//!
//! ## Fix safety
//! Unsafe: it sets warmup to 10% of the run, which changes the LR curve.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((warmup, warmup_set)) = ctx.setup.float(Concept::WarmupSteps) else {
        return vec![];
    };
    let Some((total, total_set)) = super::interval::run_steps(ctx) else {
        return vec![];
    };
    if total <= 0 {
        return vec![];
    }
    if ctx.dialect.semantics.decay_rescales_to_shorter_runs {
        // LeRobot scales warmup by steps / decay_steps when the run is shorter than the decay.
        if let Some((decay, _)) = ctx.setup.int(Concept::DecaySteps) {
            if total < decay {
                return vec![];
            }
        }
    }
    if warmup < total as f64 {
        return vec![];
    }
    let suggested = (total / 10).max(1);
    let message = format!(
        "warmup {} {warmup} steps >= the whole run {} {total} steps: the LR never reaches its peak",
        warmup_set.origin.describe(),
        total_set.origin.describe(),
    );
    let fix = ctx.set(
        Concept::WarmupSteps,
        NewValue::Int(suggested),
        Applicability::Unsafe,
        format!(
            "set `{}` to {suggested} (10% of the run)",
            warmup_set.origin.key()
        ),
    );
    vec![Violation {
        message,
        span: ctx.span_of(Concept::WarmupSteps),
        fix,
    }]
}
