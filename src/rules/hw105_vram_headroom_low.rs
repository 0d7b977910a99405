//! ## What it does
//! Warns when one training step is estimated to use between 90% and 100% of the target GPU's
//! usable memory.
//!
//!
//! It also warns when a step fits only because a paged optimizer (bitsandbytes'
//! `paged_adamw_*`) lets the driver move its state to host memory: the run does not stop, but
//! the steps that touch the paged-out state wait on host transfers. That is never an HW101.
//!
//! ## Why is this bad?
//! The estimate already includes the allocator's usual fragmentation, but a longer sample,
//! a different library version or a second process on the GPU is enough to run out of memory
//! hours into a run. A little headroom is cheaper than a restart.
//!
//! ## Example
//! ```yaml
//! per_device_train_batch_size: 12   # ~95% of a 24 GB card
//! ```
//!
//! Use instead:
//! ```yaml
//! per_device_train_batch_size: 6
//! gradient_accumulation_steps: 2
//! ```
//!
//! ## Fix safety
//! Display-only: the suggested micro-batch (with accumulation keeping the effective batch) is
//! shown, not applied; whether the headroom is worth a slower step is the author's call.

use super::memory::{
    batch_fix, batch_phrase, gib, gpu_named, micro_batch_to_set, need_with, per_device_batch,
};
use super::{Context, Violation};
use crate::estimate::memory::Checkpointing;
use crate::estimate::memory::{ENGINE_SAMPLING, LOGPROB_FORWARD, REWARD_ENGINE};
use crate::estimate::verdict::{max_micro_batch, HEADROOM_LINE};
use crate::fix::Applicability;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(m) = ctx.gpu_memory() else {
        return vec![];
    };
    // Paged optimizer state (bitsandbytes) is moved to host memory by the driver when the GPU
    // fills: a step that fits only so runs, waiting on those transfers. Never an HW101.
    if m.paging_only() && !m.most.verdict.fits && m.least().verdict.fits {
        let most = &m.most;
        let plan = &most.plan;
        return vec![Violation {
            message: format!(
                "one step of {} at {} needs ~{} GiB with its `{}` state on the GPU, more than the {} GiB usable on {}: it runs only while the driver pages up to ~{} GiB of that state to host memory (~{} GiB with all of it there), and steps wait on those transfers",
                plan.model,
                batch_phrase(plan),
                gib(most.verdict.need_bytes),
                ctx.setup
                    .str(crate::dialect::Concept::Optimizer)
                    .map_or("paged optimizer", |(o, _)| o),
                gib(most.verdict.usable_bytes),
                gpu_named(ctx),
                gib(most.estimate.paged_bytes),
                gib(m.least().verdict.need_bytes),
            ),
            span: ctx.span_of(crate::dialect::Concept::Optimizer),
            fix: None,
        }];
    }
    // Near the line, only an exact verdict says anything: with sharding unknown, stay silent.
    // A range the run's own steps span (V-JEPA's masks) is held at its high end, which some
    // step reaches.
    // A range whose two ends need the same (a bounded option away from the peak instant)
    // is one figure.
    let one_figure = m.least().verdict.need_bytes == m.most.verdict.need_bytes;
    if !m.exact() && !m.steps_only() && !one_figure {
        return vec![];
    }
    let m = &m.most;
    let share = m.verdict.share();
    if !(HEADROOM_LINE..=1.0).contains(&share) {
        return vec![];
    }
    // A colocated engine (the rollout's or the reward loop's) sizes its KV cache to the share
    // it is given, and the log-prob forward's rows are no micro-batch: near the line at those
    // instants, no micro-batch advice holds (HW101 speaks when they do not fit).
    if [ENGINE_SAMPLING, REWARD_ENGINE, LOGPROB_FORWARD].contains(&m.estimate.peak_at) {
        return vec![];
    }
    let plan = &m.plan;
    let fitting = max_micro_batch(plan, m.verdict.usable_bytes, HEADROOM_LINE) as i64;
    let fix = match per_device_batch(ctx) {
        Some(per_device) if fitting >= 1 => {
            let micro = micro_batch_to_set(ctx, per_device, fitting);
            batch_fix(ctx, micro, per_device, "under 90% of usable memory").map(|mut f| {
                f.applicability = Applicability::DisplayOnly;
                f
            })
        }
        _ => None,
    };
    // Even micro-batch 1 is past the line: a smaller batch is no way out, so say what is.
    let way_out = if fitting >= 1 {
        String::new()
    } else if plan.checkpointing_fixed {
        "; micro-batch 1 is already the smallest, and the trainer never turns activation checkpointing on: use shorter samples or shard over more GPUs".into()
    } else if plan.checkpointing != Checkpointing::Full {
        format!(
            "; micro-batch 1 is already the smallest: full activation checkpointing would bring the step to ~{} GiB, or use shorter samples",
            gib(need_with(plan, 1, Checkpointing::Full))
        )
    } else {
        "; micro-batch 1 is already the smallest, with checkpointing on: use shorter samples or shard over more GPUs".into()
    };
    vec![Violation {
        message: format!(
            "one step of {} at {} needs ~{} GiB, {:.0}% of the {} GiB usable on {}: little headroom against fragmentation or longer samples{way_out}",
            plan.model,
            batch_phrase(plan),
            gib(m.verdict.need_bytes),
            share * 100.0,
            gib(m.verdict.usable_bytes),
            gpu_named(ctx),
        ),
        span: ctx.batch_span(),
        fix,
    }]
}
