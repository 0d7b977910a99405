//! ## What it does
//! Notes epoch-based training whose dataloader workers are shut down and started again at
//! every epoch (`persistent_workers` off with `num_workers` > 0 and more than one epoch).
//!
//! ## Why is this bad?
//! Starting workers re-imports modules, re-opens files and rebuilds the dataset object in
//! each worker; for short epochs or heavy datasets that pause shows up at every epoch.
//!
//! Fires on an explicit `false`, and on a framework default of `false` only where the
//! dialect marks it relevant. Informational: it never fails a run.
//!
//! ## Example
//! ```yaml
//! num_train_epochs: 10
//! dataloader_num_workers: 8
//! dataloader_persistent_workers: false
//! ```
//!
//! Use instead:
//! ```yaml
//! dataloader_persistent_workers: true
//! ```
//!
//! ## Fix safety
//! Safe: workers keep their state between epochs; the data they produce is the same.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((false, setting)) = ctx.setup.bool(Concept::PersistentWorkers) else {
        return vec![];
    };
    if !setting.origin.counts_for_efficiency() {
        return vec![];
    }
    let Some((workers, _)) = ctx.setup.int(Concept::NumWorkers) else {
        return vec![];
    };
    let Some((epochs, _)) = ctx.setup.float(Concept::Epochs) else {
        return vec![];
    };
    if workers <= 0 || epochs <= 1.0 || ctx.setup.int(Concept::TotalSteps).is_some() {
        return vec![];
    }
    let message = format!(
        "{} is false: {workers} workers are restarted at each of {epochs} epochs",
        setting.origin.describe()
    );
    let fix = ctx.set(
        Concept::PersistentWorkers,
        NewValue::Bool(true),
        Applicability::Safe,
        format!("set `{}` to true", setting.origin.key()),
    );
    vec![Violation {
        message,
        span: ctx.span_of(Concept::PersistentWorkers),
        fix,
    }]
}
