//! Shared check of HW303 and HW304: an interval longer than the run.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

/// An interval setting greater than the total steps; `what` names the event ("checkpoint").
pub(crate) fn interval_exceeds_run(
    ctx: &Context,
    concept: Concept,
    what: &str,
    consequence: &str,
) -> Vec<Violation> {
    let Some((interval, interval_set)) = ctx.setup.int(concept) else {
        return vec![];
    };
    let Some((total, total_set)) = ctx.setup.int(Concept::TotalSteps) else {
        return vec![];
    };
    if total <= 0 || interval <= total {
        return vec![];
    }
    let message = format!(
        "{what} every {} {interval} steps, but the run is {} {total} steps: {consequence}",
        interval_set.origin.describe(),
        total_set.origin.describe(),
    );
    let fix = ctx.set(
        concept,
        NewValue::Int(total),
        Applicability::Unsafe,
        format!("set `{}` to {total}", interval_set.origin.key()),
    );
    vec![Violation {
        message,
        span: ctx.span_of(concept),
        fix,
    }]
}
