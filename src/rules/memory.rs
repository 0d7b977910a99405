//! Shared pieces of the memory rules (HW101-HW105): numbers in GiB, the breakdown text, and
//! the fix that changes the micro-batch while keeping the effective batch.

use super::context::KeyWrite;
use super::Context;
use crate::dialect::Concept;
use crate::estimate::memory::{estimate, Checkpointing, MemoryEstimate, Plan};
use crate::estimate::verdict::need_bytes;
use crate::fix::{Applicability, Fix};
use crate::syntax::edit::NewValue;

pub(crate) fn gib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1u64 << 30) as f64)
}

/// What a need of `need` bytes is made of: `logits 18.5 + activations 4.1 + weights 1.0 +
/// other 0.3 GiB allocated at its peak (start of backward) + 7.3 GiB the allocator reserves` (the three
/// largest kinds at the peak instant, the rest, and what the caching allocator holds beyond
/// them), so the figures add up to the need.
pub(crate) fn largest_terms(est: &MemoryEstimate, need: f64) -> String {
    // What rounds to 0.0 GiB is not worth naming.
    let shown = |b: f64| b >= 0.05 * (1u64 << 30) as f64;
    let kinds = est.at_peak.breakdown();
    let mut parts: Vec<String> = kinds
        .iter()
        .filter(|(_, b)| shown(*b))
        .take(3)
        .map(|(n, b)| format!("{n} {}", gib(*b)))
        .collect();
    let named: f64 = kinds
        .iter()
        .filter(|(_, b)| shown(*b))
        .take(3)
        .map(|(_, b)| b)
        .sum();
    let other = est.at_peak.total() - named;
    if shown(other) {
        parts.push(format!("other {}", gib(other)));
    }
    let mut text = format!(
        "{} GiB allocated at its peak ({})",
        parts.join(" + "),
        est.peak_at
    );
    let reserve = need - est.peak_bytes;
    if shown(reserve) {
        text.push_str(&format!(" + {} GiB the allocator reserves", gib(reserve)));
    }
    text
}

/// `micro-batch 8 x 2048 tokens` / `micro-batch 64 images`.
pub(crate) fn batch_phrase(plan: &Plan) -> String {
    let batch = crate::report::batch_words(plan);
    if plan.seq_len > 0 {
        format!("micro-batch {batch} x {} tokens", plan.seq_len)
    } else {
        format!("micro-batch {batch}")
    }
}

/// Need of the plan with another micro-batch or checkpointing mode.
pub(crate) fn need_with(plan: &Plan, batch: u64, ckpt: Checkpointing) -> f64 {
    let mut p = plan.clone();
    p.batch = batch;
    p.checkpointing = ckpt;
    need_bytes(&estimate(&p))
}

/// The largest divisor of `n` that is at most `limit`.
pub(crate) fn largest_divisor_at_most(n: i64, limit: i64) -> i64 {
    (1..=limit.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// The micro-batch a fix sets, out of `fitting` (the largest that fits): a divisor of the
/// per-device batch where accumulation can keep it, else the largest that fits, since the
/// effective batch changes whatever the fix writes (V-JEPA has no accumulation).
pub(crate) fn micro_batch_to_set(ctx: &Context, per_device: i64, fitting: i64) -> i64 {
    let keeps = ctx.setup.get(Concept::GradAccum).is_some()
        || ctx.dialect.semantics.accumulation_derived
        || ctx.dialect.semantics.global_batch_minus_one_is_derived
        || global_batch_keeps(ctx, per_device).is_some();
    if keeps {
        largest_divisor_at_most(per_device, fitting)
    } else {
        fitting.clamp(1, per_device.max(1))
    }
}

/// A fix that sets the micro-batch to `micro` and the accumulation so that micro-batch x
/// accumulation stays `per_device` (exact: `micro` divides it). Safe when both keys can be
/// written; unsafe (micro-batch only) when the dialect has no accumulation key.
pub(crate) fn batch_fix(ctx: &Context, micro: i64, per_device: i64, why: &str) -> Option<Fix> {
    if micro < 1 || per_device < micro {
        return None;
    }
    let micro_setting = ctx.setup.get(Concept::MicroBatch)?;
    let micro_key = micro_setting.origin.key().to_string();
    let accum = per_device / micro;
    let mut writes = vec![KeyWrite::of(
        Concept::MicroBatch,
        micro_setting,
        NewValue::Int(micro),
    )];
    let mut applicability = Applicability::Safe;
    let message = match ctx.setup.get(Concept::GradAccum) {
        Some(a) => {
            // An accumulation that cannot be read (a string, an interpolation) gives no
            // per-device batch to keep, so no fix.
            let (current, _) = ctx.setup.int(Concept::GradAccum)?;
            let accum_key = a.origin.key().to_string();
            if current != accum {
                writes.push(KeyWrite::of(Concept::GradAccum, a, NewValue::Int(accum)));
            }
            format!(
                "set `{micro_key}` to {micro} and `{accum_key}` to {accum} ({micro} x {accum} = {per_device} per device, as before; {why})"
            )
        }
        None => match global_batch_keeps(ctx, per_device) {
            // The framework derives accumulation from a stated global batch (torchtitan): a
            // smaller micro-batch keeps the effective batch by itself, or once the derived
            // global batch is written out.
            Some(write) => {
                writes.extend(write);
                let before = per_device / ctx.setup.int(Concept::MicroBatch).map_or(1, |(m, _)| m.max(1));
                let moves = if accum > before { "rises" } else { "falls" };
                match (ctx.setup.int(Concept::GlobalBatch), ctx.data_parallel()) {
                    // The file states the global batch: that is the batch that stays, whatever
                    // the number of GPUs; the accumulation follows it only once that is known.
                    (Some((global, g)), None) => format!(
                        "set `{micro_key}` to {micro}; {} stays {global}, so {} {} gradient accumulation to keep it ({why})",
                        g.origin.describe(),
                        ctx.dialect.title,
                        if accum > before { "raises" } else { "lowers" }
                    ),
                    _ => format!(
                        "set `{micro_key}` to {micro}; the global batch stays {} so accumulation {moves} to {accum} ({why})",
                        i128::from(per_device) * i128::from(ctx.data_parallel().map_or(1, |(n, _)| n))
                    ),
                }
            }
            None if ctx.dialect.semantics.accumulation_derived => format!(
                "set `{micro_key}` to {micro}; {} derives gradient accumulation from the batch per optimizer step it is given, so that batch stays ({why})",
                ctx.dialect.title
            ),
            None => {
                applicability = Applicability::Unsafe;
                match ctx.dialect.settings.get(&Concept::GlobalBatch) {
                    // Accumulation follows a global batch that is derived from the number of
                    // GPUs, which is not known: writing it out would be a guess.
                    Some(spec) if ctx.dialect.semantics.global_batch_minus_one_is_derived => {
                        format!(
                            "set `{micro_key}` to {micro} ({why}); the effective batch changes: to keep it, also set `{}` to {per_device} x the data-parallel GPUs (the number of GPUs is not known here)",
                            spec.from.first().map_or("the global batch", |s| s.key.as_str())
                        )
                    }
                    _ => format!(
                        "set `{micro_key}` to {micro} ({why}); this config has no gradient accumulation key, so the effective batch changes"
                    ),
                }
            }
        },
    };
    Some(Fix {
        edits: ctx.write_keys(&writes)?,
        applicability,
        message,
        sets: writes.iter().map(KeyWrite::intent).collect(),
    })
}

/// A fix for a framework whose only batch is the global one, split over the GPUs (detectron2's
/// `SOLVER.IMS_PER_BATCH`): the global batch that gives each of the data-parallel GPUs
/// `micro`, and the learning rate scaled by the same ratio where the framework documents that
/// rule (`lr_scales_with_batch`). Unsafe: the optimisation changes, and the run's iterations
/// stay, so it sees fewer samples.
pub(crate) fn global_batch_fix(ctx: &Context, micro: i64, why: &str) -> Option<Fix> {
    let (dp, _) = ctx.data_parallel()?;
    let (global, g) = ctx.setup.int(Concept::GlobalBatch)?;
    let new = micro.checked_mul(dp)?;
    if new < 1 || new >= global {
        return None;
    }
    let gpus = if dp == 1 {
        "1 GPU".to_string()
    } else {
        format!("{dp} GPUs")
    };
    let mut writes = vec![KeyWrite::of(Concept::GlobalBatch, g, NewValue::Int(new))];
    let mut message = format!(
        "set `{}` to {new} ({micro} per GPU on {gpus}; {why})",
        g.origin.key()
    );
    let scaled = ctx
        .dialect
        .semantics
        .lr_scales_with_batch
        .as_deref()
        .and_then(|rule| {
            let (lr, l) = ctx.setup.float(Concept::LearningRate)?;
            let to = lr * new as f64 / global as f64;
            (to.is_finite() && to > 0.0).then_some((rule, lr, l, to))
        });
    match scaled {
        Some((rule, lr, l, to)) => {
            // Six significant digits: the ratio of two batches, not a new hyperparameter.
            let text = format!("{}", (to * 1e6).round() / 1e6);
            let text = if text.parse::<f64>().is_ok_and(|t| t > 0.0) {
                text
            } else {
                format!("{to:e}")
            };
            message.push_str(&format!(
                " and `{}` to {text} ({lr} x {new}/{global}: {rule})",
                l.origin.key()
            ));
            writes.push(KeyWrite::of(Concept::LearningRate, l, NewValue::Raw(text)));
        }
        None => message.push_str("; the learning rate was tuned for the larger batch"),
    }
    let steps = ctx
        .setup
        .get(Concept::TotalSteps)
        .map_or("the number of steps".to_string(), |s| {
            format!("`{}`", s.origin.key())
        });
    message.push_str(&format!(
        "; {steps} stays, so the run sees {new}/{global} of the samples it did"
    ));
    Some(Fix {
        edits: ctx.write_keys(&writes)?,
        applicability: Applicability::Unsafe,
        message,
        sets: writes.iter().map(KeyWrite::intent).collect(),
    })
}

/// The write that keeps the global batch when the micro-batch shrinks, for dialects whose
/// accumulation is derived from a global batch: none needed when the global batch is written,
/// else the derived value written out. `None` when the dialect has no global batch.
fn global_batch_keeps(ctx: &Context, per_device: i64) -> Option<Option<KeyWrite>> {
    if !ctx.dialect.settings.contains_key(&Concept::GlobalBatch) {
        return None;
    }
    if ctx.setup.int(Concept::GlobalBatch).is_some() {
        return Some(None);
    }
    if !ctx.dialect.semantics.global_batch_minus_one_is_derived {
        return None;
    }
    let (dp, _) = ctx.data_parallel()?;
    let spec = ctx.dialect.settings.get(&Concept::GlobalBatch)?;
    let key = spec.from.first()?.key.clone();
    Some(Some(KeyWrite {
        concept: Concept::GlobalBatch,
        key,
        value: NewValue::Int(per_device.checked_mul(dp)?),
        // Derived, not read: written over a `-1` the file has, else inserted.
        from_file: false,
    }))
}

/// The per-device batch per optimizer step (micro-batch x accumulation), when known.
pub(crate) fn per_device_batch(ctx: &Context) -> Option<i64> {
    let (micro, _) = ctx.setup.int(Concept::MicroBatch)?;
    let accum = match ctx.setup.get(Concept::GradAccum) {
        // No accumulation key: the framework derives it from a stated global batch (LitGPT's
        // `global_batch_size` / (devices x micro-batch)) when one is, else there is none.
        None => match (ctx.setup.int(Concept::GlobalBatch), ctx.data_parallel()) {
            (Some((global, _)), Some((dp, _))) => {
                let step = micro.checked_mul(dp).filter(|s| *s > 0)?;
                // A global batch that no whole accumulation gives is refused (torchtitan,
                // NeMo, LlamaFactory v1) or floored (LitGPT): HW501 says which; the batch a
                // fix would keep is not known.
                if global % step != 0 {
                    return None;
                }
                (global / step).max(1)
            }
            _ => 1,
        },
        Some(_) => ctx.setup.int(Concept::GradAccum)?.0.max(1),
    };
    // Numbers past i64 are no batch a framework runs: no per-device batch is known.
    micro.checked_mul(accum)
}

/// Under the built-in default target the GPU is a guess: a memory fix is shown, never applied
/// (DESIGN.md "World size").
pub(crate) fn for_target(ctx: &Context, fix: Option<Fix>) -> Option<Fix> {
    shown_while_guessed(
        ctx,
        fix,
        "the GPU is a guess: name the target for --fix to apply it",
    )
}

/// Under the built-in default target the host (cores, RAM) is a guess as much as the GPU: a
/// fix that sizes the dataloader to it is shown, never applied (`--fix` acts only on a target
/// the user chose).
pub(crate) fn for_host(ctx: &Context, fix: Option<Fix>) -> Option<Fix> {
    shown_while_guessed(
        ctx,
        fix,
        "the host is a guess: name it (--cpu-cores/--ram-gb, --target or hwlint.toml) for --fix to apply it",
    )
}

fn shown_while_guessed(ctx: &Context, fix: Option<Fix>, why: &str) -> Option<Fix> {
    if !ctx.target.is_default {
        return fix;
    }
    fix.map(|mut f| {
        f.applicability = Applicability::DisplayOnly;
        f.message.push_str("; shown, not applied, while ");
        f.message.push_str(why);
        f
    })
}

/// How a message names the host when it is the default target's guess.
pub(crate) const HOST_GUESS: &str =
    " (hwlint's default guess of the host: name yours with --cpu-cores/--ram-gb, --target or in hwlint.toml)";

/// The target GPU as messages name it: under the built-in default target, saying that it is a
/// guess (DESIGN.md "World size").
pub(crate) fn gpu_named(ctx: &Context) -> String {
    let gpu = if ctx.target.is_default {
        format!(
            "{} (hwlint's default guess of the GPU: name yours with --target or in hwlint.toml)",
            ctx.target.gpu.key
        )
    } else {
        ctx.target.gpu.key.clone()
    };
    if let (None, Some((share, set))) = (ctx.mem_fraction(), ctx.held_share()) {
        return format!(
            "{gpu} less the {share} of its memory vLLM takes beside training ({})",
            set.origin.describe()
        );
    }
    match ctx.mem_fraction() {
        Some((f, set)) => {
            let cap = match ctx.setup.bool(Concept::MemPreallocate) {
                Some((false, _)) => ", a cap since XLA_PYTHON_CLIENT_PREALLOCATE is false",
                _ => "",
            };
            if set.origin.is_explicit() {
                format!(
                    "{gpu} at the {f} of its memory JAX takes ({}{cap})",
                    set.origin.describe()
                )
            } else {
                format!("{gpu} at the {f} of its memory JAX takes when XLA_PYTHON_CLIENT_MEM_FRACTION is not set{cap}")
            }
        }
        None => gpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_terms(terms: [f64; 6]) -> MemoryEstimate {
        let [weights, gradients, optimizer, activations, logits, temporary] =
            terms.map(|g| g * (1u64 << 30) as f64);
        let at_peak = crate::estimate::memory::AtPeak {
            weights,
            gradients,
            optimizer,
            activations,
            logits,
            kv_cache: 0.0,
            engine: 0.0,
            reward_engine: 0.0,
            temporary,
        };
        MemoryEstimate {
            at_peak,
            params: 0,
            trainable_params: 0,
            weights_bytes: weights,
            gradients_bytes: gradients,
            optimizer_bytes: optimizer,
            activations_bytes: activations,
            logits_bytes: logits,
            temporary_bytes: temporary,
            peak_bytes: at_peak.total(),
            peak_at: "end of forward",
            fwd_bwd_bytes: 0.0,
            fwd_bwd_transient_bytes: 0.0,
            step_bytes: 0.0,
            paged_bytes: 0.0,
            loading_bytes: 0.0,
            generating: None,
            generation_kv_bytes: 0.0,
            engine_sampling: None,
            logprob_forward: None,
            critic_update: None,
            reward_forward: None,
            reward_engine: None,
            checkpointed: false,
            xla_buffers: false,
        }
    }

    /// A message names the three largest terms at the peak, the rest and the allocator's
    /// reserve, so they add up to the need; never a term that is nothing (a frozen model has
    /// no gradients or optimizer state to name).
    #[test]
    fn largest_terms_add_up_to_the_need_and_are_never_zero() {
        let g = (1u64 << 30) as f64;
        assert_eq!(
            largest_terms(&with_terms([4.0, 4.0, 8.0, 20.0, 2.0, 1.0]), 45.5 * g),
            "activations 20.0 + optimizer 8.0 + weights 4.0 + other 7.0 GiB allocated at its peak (end of forward) + 6.5 GiB the allocator reserves"
        );
        assert_eq!(
            largest_terms(&with_terms([12.0, 0.0, 0.0, 3.5, 0.0, 0.0]), 15.5 * g),
            "weights 12.0 + activations 3.5 GiB allocated at its peak (end of forward)"
        );
    }

    #[test]
    fn largest_divisor_at_most_stays_within_both_bounds() {
        assert_eq!(largest_divisor_at_most(32, 5), 4);
        assert_eq!(largest_divisor_at_most(32, 64), 32);
        assert_eq!(largest_divisor_at_most(7, 6), 1);
        assert_eq!(largest_divisor_at_most(12, 0), 1);
    }
}
