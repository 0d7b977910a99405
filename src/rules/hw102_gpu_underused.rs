//! ## What it does
//! Flags a step that is launch-bound: by hwlint's step-time model the GPU finishes its work
//! for the micro-batch faster than the host can issue the step's kernels (about 36 µs per
//! eager PyTorch op), while memory has room for a larger micro-batch.
//!
//! ## Why is this bad?
//! The GPU idles between small kernels; a larger micro-batch (with less accumulation) does more
//! work per launch and trains the same effective batch in less time.
//!
//! Fires only when the micro-batch is written in the file. A warning when gradient
//! accumulation can be folded into the micro-batch (same effective batch); information
//! otherwise, since a recipe's batch size is a training choice, not a defect.
//!
//! ## Example
//! ```yaml
//! per_device_train_batch_size: 1
//! gradient_accumulation_steps: 16   # GPT-2 small at 128 tokens on an 80 GB card
//! ```
//!
//! Use instead:
//! ```yaml
//! per_device_train_batch_size: 16
//! gradient_accumulation_steps: 1
//! ```
//!
//! ## Fix safety
//! Safe when gradient accumulation is above 1: accumulation is folded into the micro-batch,
//! keeping micro-batch x accumulation, and the new micro-batch stays under 90% of usable
//! memory. Shown but not applied under the built-in default target. Without accumulation to
//! fold there is no fix: a larger batch changes the effective batch, its learning rate and the
//! recipe's results, a choice for the author, not an edit hwlint should make.

use super::memory::{
    batch_fix, batch_phrase, for_target, gib, gpu_named, largest_divisor_at_most, per_device_batch,
};
use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::throughput::{dispatch_seconds, gpu_seconds};
use crate::estimate::verdict::{max_micro_batch, HEADROOM_LINE};

/// The GPU is called launch-bound when its work takes less than this share of the host's time
/// to issue the step: it idles at least a quarter of the step.
const LAUNCH_BOUND_SHARE: f64 = 0.75;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(m) = ctx.gpu_memory() else {
        return vec![];
    };
    // Waste must hold even without sharding.
    let m = &m.most;
    let Some((_, micro_set)) = ctx.setup.int(Concept::MicroBatch) else {
        return vec![];
    };
    if !micro_set.origin.is_explicit() {
        return vec![];
    }
    // Launch-bound: the GPU's own time for the step is well below the host's time to issue
    // it (the step-time model is a roofline; near the line it cannot tell).
    let busy = gpu_seconds(&m.plan, &m.estimate, &ctx.target.gpu);
    let issue = dispatch_seconds(&m.plan);
    if busy >= LAUNCH_BOUND_SHARE * issue {
        return vec![];
    }
    let fitting = max_micro_batch(&m.plan, m.verdict.usable_bytes, HEADROOM_LINE) as i64;
    let micro = m.plan.batch as i64;
    if fitting <= micro {
        return vec![];
    }
    // When HW103 will turn checkpointing off, the batch that fits changes: wait for that fix
    // (when HW103 runs: a fix that never comes is no reason to wait).
    let ckpt_goes =
        ctx.runs("HW103") && super::hw103_checkpointing_unneeded::unneeded(ctx).is_some();
    let fix = for_target(
        ctx,
        match per_device_batch(ctx) {
            _ if ckpt_goes => None,
            // Only accumulation is folded: the largest divisor of the per-device batch that
            // fits is over the micro-batch only when there is some. Without it, a larger batch
            // would change the effective batch, and with it the learning rate and the
            // recipe's results, which is the author's call (the message says what fits).
            Some(per_device) => {
                let target = largest_divisor_at_most(per_device, fitting);
                (target > micro)
                    .then(|| {
                        batch_fix(
                            ctx,
                            target,
                            per_device,
                            "accumulation folded into the micro-batch",
                        )
                    })
                    .flatten()
            }
            // The per-device batch is not known.
            None => None,
        },
    );
    vec![Violation {
        message: format!(
            "{} at {} is launch-bound on {}: its kernels keep the GPU busy ~{:.1} ms per step, but the host needs ~{:.1} ms to issue them; up to micro-batch {fitting} fits in the {} GiB usable (this one needs ~{} GiB)",
            m.plan.model,
            batch_phrase(&m.plan),
            gpu_named(ctx),
            busy * 1e3,
            issue * 1e3,
            gib(m.verdict.usable_bytes),
            gib(m.verdict.need_bytes),
        ),
        span: ctx.batch_span(),
        fix,
    }]
}
