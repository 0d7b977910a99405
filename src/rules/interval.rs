//! Shared check of HW303 and HW304: an interval longer than the run; and the run length the
//! schedule rules (HW301-HW304) compare against.

use super::{Context, Violation};
use crate::dialect::{Concept, Setting};
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

/// Runs shorter than this are smoke tests (openpi's `debug` configs run 10 steps): their LR
/// schedule and checkpoint intervals are beside the point, so HW301-HW304 leave them alone.
pub(crate) const SMOKE_TEST_STEPS: i64 = 100;

/// The run's optimizer steps, for the schedule rules: `None` when unknown, or a smoke test.
pub(crate) fn run_steps<'s>(ctx: &'s Context) -> Option<(i64, &'s Setting)> {
    ctx.setup
        .int(Concept::TotalSteps)
        .filter(|(t, _)| *t >= SMOKE_TEST_STEPS)
}

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
    let Some((total, total_set)) = run_steps(ctx) else {
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
    // Setting the interval to the run length would only silence the rule: the event would
    // still happen at the end alone. A tenth of the run gives ten events during it.
    let fix = during_run(total).and_then(|every| {
        ctx.set(
            concept,
            NewValue::Int(every),
            Applicability::Unsafe,
            format!(
                "set `{}` to {every} (about a tenth of the {total}-step run: ten {what}s \
                 during it instead of none before its end)",
                interval_set.origin.key()
            ),
        )
    });
    vec![Violation {
        message,
        span: ctx.span_of(concept),
        fix,
    }]
}

/// An interval that fires about ten times during a run of `total` steps, rounded down to two
/// significant digits (2000 -> 200, 80000 -> 8000, 1234 -> 120); `None` for runs under 100
/// steps, where an event every few steps would cost more than it saves (a smoke test).
fn during_run(total: i64) -> Option<i64> {
    let tenth = total / 10;
    if tenth < 10 {
        return None;
    }
    let mut unit = 1;
    while tenth / unit >= 100 {
        unit *= 10;
    }
    Some(tenth / unit * unit)
}

#[cfg(test)]
mod tests {
    use super::during_run;

    #[test]
    fn a_tenth_rounded_to_two_significant_digits() {
        assert_eq!(during_run(2000), Some(200));
        assert_eq!(during_run(80_000), Some(8000));
        assert_eq!(during_run(1234), Some(120));
        assert_eq!(during_run(987_654), Some(98_000));
        assert_eq!(during_run(100), Some(10));
        assert_eq!(during_run(99), None);
    }

    #[test]
    fn always_inside_the_run() {
        for total in 100..5000 {
            let every = during_run(total).unwrap();
            assert!(every >= 1 && every * 10 <= total, "{total} -> {every}");
        }
    }
}
