//! ## What it does
//! Checks that the batch sizes a config states agree:
//! global batch = micro-batch x gradient accumulation x data-parallel processes.
//!
//! - DeepSpeed: `train_batch_size` must equal `train_micro_batch_size_per_gpu` x
//!   `gradient_accumulation_steps` x world size / `sequence_parallel_size` (the ranks that
//!   split one sequence take one sample between them); whatever the world size, it must be
//!   divisible by micro-batch x accumulation.
//! - axolotl: `batch_size` (per GPU) must equal `micro_batch_size` x
//!   `gradient_accumulation_steps`.
//! - torchtitan: `global_batch_size` must be divisible by `local_batch_size` x the
//!   data-parallel degree (world size / (tensor x pipeline x context parallel degrees)).
//! - Hugging Face Trainer, TRL and axolotl with `deepspeed: ds_config.json`: a literal
//!   `train_micro_batch_size_per_gpu` or `gradient_accumulation_steps` in the JSON must equal
//!   the per-device batch and accumulation of the training arguments (the Trainer stops with
//!   "mismatch" otherwise); `"auto"` always agrees.
//!
//! `"auto"` values (filled in by the Hugging Face integration) are never a mismatch; the world
//! size is used only when the file, `--gpus` or a chosen target states it.
//!
//! ## Why is this bad?
//! DeepSpeed raises an assertion at start-up; other frameworks silently derive a different
//! accumulation than the one written, so the effective batch (and the LR it was tuned for)
//! is not what the file says.
//!
//! ## Example
//! ```json
//! { "train_batch_size": 64, "train_micro_batch_size_per_gpu": 6, "gradient_accumulation_steps": 4 }
//! ```
//!
//! Use instead:
//! ```json
//! { "train_batch_size": 48, "train_micro_batch_size_per_gpu": 6, "gradient_accumulation_steps": 4 }
//! ```
//!
//! ## Fix safety
//! Unsafe, and only where the global batch is the derived side and the world size is known: it
//! is set to micro-batch x accumulation x data-parallel size, which changes the batch the
//! optimizer steps on (and so the learning-rate scale the recipe was tuned for). Otherwise no
//! fix: which side is wrong is the author's call.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let mut out = linked_mismatches(ctx);
    out.extend(own_arithmetic(ctx));
    out
}

/// The training arguments against the DeepSpeed JSON they name.
fn linked_mismatches(ctx: &Context) -> Vec<Violation> {
    let Some(linked) = ctx.linked else {
        return vec![];
    };
    let mut out = Vec::new();
    for (concept, ds_key) in [
        (Concept::MicroBatch, "train_micro_batch_size_per_gpu"),
        (Concept::GradAccum, "gradient_accumulation_steps"),
    ] {
        let (Some((ours, set)), Some((theirs, _))) =
            (ctx.setup.int(concept), linked.setup.int(concept))
        else {
            continue;
        };
        if ours != theirs {
            out.push(Violation {
                message: format!(
                    "{} {ours} but `{ds_key}` is {theirs} in {}: the Trainer refuses DeepSpeed values that disagree with its arguments; write \"auto\" there",
                    set.origin.describe(),
                    linked.path
                ),
                span: ctx.span_of(concept),
                fix: None,
            });
        }
    }
    out
}

fn own_arithmetic(ctx: &Context) -> Vec<Violation> {
    let s = ctx.setup;
    let Some((micro, micro_set)) = s.int(Concept::MicroBatch) else {
        return vec![];
    };
    if micro <= 0 {
        return vec![];
    }
    // axolotl: per-device batch including accumulation.
    if let (Some((device, device_set)), Some((accum, accum_set))) =
        (s.int(Concept::DeviceBatch), s.int(Concept::GradAccum))
    {
        // In i128: products of two i64 never overflow it.
        let product = i128::from(micro) * i128::from(accum);
        if device_set.origin.is_explicit()
            && accum_set.origin.is_explicit()
            && i128::from(device) != product
        {
            return vec![Violation {
                message: format!(
                    "{} {device} != {} {micro} x {} {accum} = {}",
                    device_set.origin.describe(),
                    micro_set.origin.describe(),
                    accum_set.origin.describe(),
                    product
                ),
                span: ctx.span_of(Concept::DeviceBatch),
                fix: None,
            }];
        }
    }
    let Some((global, global_set)) = s.int(Concept::GlobalBatch) else {
        return vec![];
    };
    // Accumulation the file does not state is derived by the framework from the other two.
    let accum = match s.get(Concept::GradAccum) {
        None => None,
        Some(a) => match s.int(Concept::GradAccum) {
            Some((v, _)) => Some((v.max(1), format!("{} {v}", a.origin.describe()))),
            None => return vec![],
        },
    };
    // Data-parallel GPUs that are none (or fewer) say nothing a batch can be checked against.
    let ws = ctx.data_parallel().filter(|(n, _)| *n > 0);
    // Products in i128: each factor is an i64, and three of them fit.
    let per_step = i128::from(micro) * i128::from(accum.as_ref().map_or(1, |(a, _)| *a));
    let global_wide = i128::from(global);
    let accum_text = accum
        .as_ref()
        .map_or(String::new(), |(_, t)| format!(" x {t}"));
    let violation = |message: String, fix| {
        vec![Violation {
            message,
            span: ctx.span_of(Concept::GlobalBatch),
            fix,
        }]
    };
    match (&accum, ws) {
        (Some(_), Some((ws, ws_source))) if global_wide != per_step * i128::from(ws) => {
            let fixed = per_step * i128::from(ws);
            // A global batch past i64 is no number to write.
            let fix = i64::try_from(fixed).ok().and_then(|fixed| {
                ctx.set(
                    Concept::GlobalBatch,
                    NewValue::Int(fixed),
                    // The global batch is what the optimizer sees: changing it is never safe.
                    Applicability::Unsafe,
                    format!("set `{}` to {fixed}", global_set.origin.key()),
                )
            });
            violation(
                format!(
                    "{} {global} != {} {micro}{accum_text} x {} ({ws_source}) = {fixed}",
                    global_set.origin.describe(),
                    micro_set.origin.describe(),
                    super::processes(ws),
                ),
                fix,
            )
        }
        (None, Some((ws, ws_source)))
            if global_wide % (i128::from(micro) * i128::from(ws)) != 0 =>
        {
            violation(
                format!(
                    "{} {global} is not divisible by {} {micro} x {} ({ws_source}) = {}: no whole gradient accumulation gives it",
                    global_set.origin.describe(),
                    micro_set.origin.describe(),
                    super::processes(ws),
                    i128::from(micro) * i128::from(ws)
                ),
                None,
            )
        }
        (_, None) if global_wide % per_step != 0 => violation(
            format!(
                "{} {global} is not divisible by {} {micro}{}, whatever the number of processes",
                global_set.origin.describe(),
                micro_set.origin.describe(),
                if accum_text.is_empty() {
                    String::new()
                } else {
                    format!("{accum_text} = {per_step}")
                },
            ),
            None,
        ),
        _ => vec![],
    }
}
