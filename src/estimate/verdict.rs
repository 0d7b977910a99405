//! Does a step fit? CUDA context + the allocator's reserved memory against the card.

use serde::Serialize;

use super::memory::{estimate, MemoryEstimate, Plan};
use crate::hardware::{catalog, Allocator, Gpu};

/// HW105 warns above this share of usable memory; fixes aim below it.
pub const HEADROOM_LINE: f64 = 0.90;
/// HW103: checkpointing is unneeded when the step without it stays under this share.
pub const CHECKPOINTING_UNNEEDED_LINE: f64 = 0.85;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verdict {
    /// Memory the step may use on one GPU, bytes.
    pub usable_bytes: f64,
    /// What the caching allocator reserves at the peak ([`need_bytes`]), bytes.
    pub need_bytes: f64,
    pub fits: bool,
}

impl Verdict {
    pub fn share(&self) -> f64 {
        self.need_bytes / self.usable_bytes.max(1.0)
    }
}

/// Memory a training process can use on `gpu`: what the driver reports minus the CUDA context,
/// or, for JAX, the preallocated fraction of the card (XLA_PYTHON_CLIENT_MEM_FRACTION).
pub fn usable_bytes(gpu: &Gpu, mem_fraction: Option<f64>) -> f64 {
    let vram = gpu.vram_bytes as f64;
    let cuda = vram - gpu.context_bytes as f64;
    match mem_fraction {
        Some(f) if f > 0.0 && f <= 1.0 => (f * vram).min(cuda),
        _ => cuda,
    }
}

/// What PyTorch's caching allocator reserves at the step's peak. Model states (weights,
/// gradients, optimizer state) are allocated once in blocks of their own size and do not
/// fragment; the transient part of forward and backward (activations, logits, autocast copies,
/// working buffers) is freed and reallocated in many sizes and does. The optimizer step cannot
/// reuse the blocks backward freed when its temporaries are larger, so they stay reserved:
///
/// need = max(fwd/bwd peak + a x transient, optimizer step + b x transient, loading,
///            generation + a x its transient, a colocated engine's sampling,
///            log-prob forward + a x its transient, a reward model's forward + a x its
///            transient, a critic's update as a step) + c
///
/// with a, b, c fitted on measured steps (rules/hardware.toml `[allocator]`,
/// tests/calibration.rs).
pub fn need_bytes(est: &MemoryEstimate) -> f64 {
    need_with(est, &catalog().allocator)
}

/// [`need_bytes`] with given allocator constants (the calibration test fits them).
///
/// A JAX step (`xla_buffers`) is one compiled program whose buffers XLA assigns ahead of time
/// inside the memory JAX preallocated: its need is its peak of live buffers. The margins above
/// were fitted on PyTorch steps and are not applied to it; no JAX step has been measured.
pub fn need_with(est: &MemoryEstimate, a: &Allocator) -> f64 {
    if est.xla_buffers {
        return est.peak_bytes;
    }
    step_need(
        (est.fwd_bwd_bytes, est.fwd_bwd_transient_bytes),
        est.step_bytes,
        est.checkpointed,
        a,
    )
    .max(est.loading_bytes)
    // Sampling in the training process follows a step whose blocks the allocator still
    // holds; its cache grows token by token, fragmenting as activations do.
    .max(est.generating.map_or(0.0, |g| {
        g.total() + a.transient * (g.kv_cache + g.temporary)
    }))
    // A colocated engine allocates its share in one piece beside states that do not move:
    // nothing of it fragments.
    .max(est.engine_sampling.map_or(0.0, |e| e.total()))
    // So does the reward loop's engine when it wakes to score.
    .max(est.reward_engine.map_or(0.0, |e| e.total()))
    // The log-prob forward follows the update's frees, its logits and working set as
    // transient as a forward's.
    .max(
        est.logprob_forward
            .map_or(0.0, |f| f.total() + a.transient * (f.logits + f.temporary)),
    )
    // The reward model's forward, its working set as transient as a forward's.
    .max(
        est.reward_forward
            .map_or(0.0, |f| f.total() + a.transient * f.temporary),
    )
    // A critic's update reserves as a step does, beside the actor's kept states.
    .max(est.critic_update.map_or(0.0, |c| {
        step_need(
            (c.fwd_bwd_bytes, c.fwd_bwd_transient_bytes),
            c.step_bytes,
            c.checkpointed,
            a,
        )
    })) + a.overhead_bytes
}

/// What the allocator reserves over a training step's instants, before its fixed overhead:
/// the forward/backward peak with its transient part fragmented, or the optimizer step, which
/// cannot reuse what backward freed.
fn step_need(
    (fwd_bwd, transient): (f64, f64),
    step: f64,
    checkpointed: bool,
    a: &Allocator,
) -> f64 {
    let fb = if checkpointed {
        a.transient_checkpointed
    } else {
        a.transient
    };
    (fwd_bwd + fb * transient).max(step + a.step_transient * transient)
}

pub fn verdict(est: &MemoryEstimate, usable: f64) -> Verdict {
    let need = need_bytes(est);
    Verdict {
        usable_bytes: usable,
        need_bytes: need,
        fits: need <= usable,
    }
}

/// The largest `n` in `[lo, hi)` for which `fits` holds, given that it holds at `lo` and not at
/// `hi` (memory grows with `n`): a bisection, so any `hi` a file writes is cheap.
pub fn largest_below(lo: u64, hi: u64, fits: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (lo, hi);
    while hi.saturating_sub(lo) > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The largest micro-batch whose need stays under `share` of `usable` (0 if not even 1 does).
pub fn max_micro_batch(plan: &Plan, usable: f64, share: f64) -> u64 {
    let fits = |b: u64| {
        let mut p = plan.clone();
        p.batch = b;
        need_bytes(&estimate(&p)) <= usable * share
    };
    if !fits(1) {
        return 0;
    }
    // Memory grows with the batch, so the largest fitting one is found by bisection.
    let (mut lo, mut hi) = (1u64, 2u64);
    while fits(hi) {
        lo = hi;
        hi *= 2;
        if hi > 1 << 16 {
            return lo;
        }
    }
    largest_below(lo, hi, fits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usable_memory_subtracts_the_context_or_takes_the_jax_fraction() {
        let h100 = catalog().gpu("h100-sxm").unwrap();
        let cuda = usable_bytes(h100, None);
        assert_eq!(cuda, (85017493504u64 - 648871936) as f64);
        let jax = usable_bytes(h100, Some(0.75));
        assert_eq!(jax, 0.75 * 85017493504.0);
        // A fraction above what CUDA leaves is capped by the context.
        assert_eq!(usable_bytes(h100, Some(1.0)), cuda);
        assert_eq!(usable_bytes(h100, Some(1.5)), cuda);
    }
}
