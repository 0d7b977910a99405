//! ## What it does
//! Reports a warmup at least as long as the whole run.
//!
//! ## Why is this bad?
//! The learning rate is still ramping up when training stops: the run never trains at its
//! peak LR and never decays. This is almost always a warmup copied from a longer recipe, or a
//! run shortened for a test.
//!
//! Fractions are resolved first (`warmup_steps: 0.1` in the Hugging Face Trainer is 10% of
//! the run), and LeRobot's scheduler, which shrinks warmup with a short run, is honoured: a run
//! shorter than its decay scales the warmup by steps / decay_steps (`int(...)`,
//! `CosineDecayWithWarmupSchedulerConfig.build` in lerobot/optim/schedulers.py, 2025-26), and
//! it is the scaled warmup that is held against the run. Runs under 100 steps are smoke tests
//! and are left alone.
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
    // LeRobot scales warmup by steps / decay_steps (truncated) when the run is shorter than
    // the decay: the scaled warmup is the one the run has.
    let mut scaled = None;
    if ctx.dialect.semantics.decay_rescales_to_shorter_runs {
        if let Some((decay, decay_set)) = ctx.setup.int(Concept::DecaySteps) {
            if total < decay {
                let actual = (warmup * total as f64 / decay as f64).trunc();
                scaled = Some((actual, decay, decay_set));
            }
        }
    }
    let effective = scaled.as_ref().map_or(warmup, |(a, _, _)| *a);
    if effective < total as f64 {
        return vec![];
    }
    let suggested = (total / 10).max(1);
    let message = match &scaled {
        None => format!(
            "warmup {} {warmup} steps >= the whole run {} {total} steps: the LR never reaches its peak",
            warmup_set.origin.describe(),
            total_set.origin.describe(),
        ),
        Some((actual, decay, decay_set)) => format!(
            "warmup {} {warmup} steps, which {} scales to {actual} for a run shorter than the decay {} {decay}, >= the whole run {} {total} steps: the LR never reaches its peak",
            warmup_set.origin.describe(),
            ctx.dialect.title,
            decay_set.origin.describe(),
            total_set.origin.describe(),
        ),
    };
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
