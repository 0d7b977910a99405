//! Time of one training step: matmul FLOPs at a fraction of the GPU's peak, plus the memory
//! traffic of activations and the optimizer at its bandwidth (a two-term roofline), or the
//! host's time to issue the step's kernels when that is longer (small batches).

use super::memory::{estimate, Checkpointing, MemoryEstimate, Plan, Precision};
use super::models::Family;
use super::params::{self, resnet_blocks};
use crate::hardware::Gpu;

/// Share of peak tensor throughput that large training matmuls reach (cuBLAS on dense shapes).
const MATMUL_EFFICIENCY: f64 = 0.6;
/// Times each saved activation byte crosses memory in a step: written in forward, read in
/// backward, and about as much again for the elementwise ops around it and their gradients.
const ACTIVATION_PASSES: f64 = 6.0;
/// Host time to dispatch one eager PyTorch op (Python, dispatcher, kernel launch). The GPU
/// cannot finish a step faster than the host issues its kernels.
const SECONDS_PER_OP: f64 = 36e-6;

/// Ops one block issues in its forward pass (norms, projections, attention, activations,
/// residual adds; Llama's Python RMSNorm and RoPE are many small ops).
fn ops_per_block(family: Family) -> f64 {
    match family {
        Family::Llama | Family::Gemma => 45.0,
        Family::Gpt2 | Family::Opt | Family::Bert => 25.0,
        Family::Vit => 20.0,
        Family::Resnet => 12.0,
        // One opaque network: count it as a few dozen ops.
        Family::Opaque => 50.0,
        Family::Composite => 0.0,
    }
}

/// Host time to issue a step's ops: forward, backward (about two forward's worth of ops) and,
/// with checkpointing, the recomputed forward plus its bookkeeping (about two more).
pub fn dispatch_seconds(plan: &Plan) -> f64 {
    let a = &plan.arch;
    if a.family == Family::Composite {
        return plan
            .part_plans()
            .iter()
            .map(|(p, _)| dispatch_seconds(p))
            .sum();
    }
    let blocks = match a.family {
        Family::Resnet => resnet_blocks(a).len() as f64,
        Family::Opaque => 1.0,
        _ => a.num_layers as f64,
    };
    // Full checkpointing re-runs the forward of the checkpointed blocks; per-op selective
    // checkpointing re-runs the cheap ops and every other matmul (about one more pass).
    let passes = match plan.checkpointing {
        Checkpointing::Full => 3.0 + 2.0 / plan.checkpoint_every.max(1) as f64,
        Checkpointing::Selective => 4.0,
        Checkpointing::None => 3.0,
    };
    ops_per_block(a.family) * blocks * passes * SECONDS_PER_OP
}

/// Floating-point operations of one forward pass over the micro-batch.
pub fn forward_flops(plan: &Plan) -> f64 {
    let a = &plan.arch;
    let b = plan.sequences_per_forward() as f64;
    match a.family {
        Family::Composite => {
            return plan
                .part_plans()
                .iter()
                .map(|(p, _)| forward_flops(p))
                .sum()
        }
        Family::Opaque => return 2.0 * a.params as f64 * b,
        _ => {}
    }
    if a.family == Family::Resnet {
        let img = if plan.image_size > 0 {
            plan.image_size
        } else {
            a.image_size
        } as f64;
        let mut side = img / 4.0;
        // Stem: 7x7 conv at half resolution.
        let mut macs = 49.0 * 3.0 * a.embedding_size as f64 * (img / 2.0).powi(2);
        for (convs, shortcut) in resnet_blocks(a) {
            let mut s = side;
            for c in &convs {
                s /= c.stride as f64;
                macs += (c.kernel * c.kernel * c.in_ch * c.out_ch) as f64 * s * s;
            }
            if let Some(sc) = shortcut {
                macs += (sc.in_ch * sc.out_ch) as f64 * s * s;
            }
            side = s;
        }
        return 2.0 * macs * b;
    }
    let counts = params::count(a);
    let t = super::activations::tokens(a, plan.seq_len, plan.image_size) as f64;
    // Causal attention computes half of the score matrix.
    let attn = if a.is_causal_lm() { 2.0 } else { 4.0 };
    // Only the weights a token passes through cost FLOPs (a mixture of experts' top-k experts).
    b * (2.0 * counts.active_matmul as f64 * t
        + attn * a.num_layers as f64 * t * t * a.q_width() as f64)
}

/// FLOPs of a whole step: forward, backward (twice the forward when the weights train, once
/// when only adapters do), and the recomputed forward under checkpointing.
pub fn step_flops(plan: &Plan) -> f64 {
    let f = forward_flops(plan);
    let frozen = plan.lora.is_some() || plan.load_in_4bit;
    let backward = if frozen { f } else { 2.0 * f };
    let recompute = match plan.checkpointing {
        Checkpointing::Full => f / plan.checkpoint_every.max(1) as f64,
        // Every other matmul is recomputed.
        Checkpointing::Selective => f / 2.0,
        Checkpointing::None => 0.0,
    };
    f + backward + recompute
}

/// Seconds one optimizer step takes on `gpu` (one micro-batch, no accumulation).
pub fn step_seconds(plan: &Plan, est: &MemoryEstimate, gpu: &Gpu) -> f64 {
    // The host issues kernels asynchronously: the slower of the two sets the pace.
    gpu_seconds(plan, est, gpu).max(dispatch_seconds(plan))
}

/// Seconds the GPU itself is busy in one step: matmuls at a share of peak plus memory traffic.
pub fn gpu_seconds(plan: &Plan, est: &MemoryEstimate, gpu: &Gpu) -> f64 {
    let peak = match plan.precision {
        Precision::Fp32 => gpu.fp32_tflops,
        _ => gpu.bf16_tflops,
    } * 1e12;
    let compute = step_flops(plan) / (peak * MATMUL_EFFICIENCY);
    // The optimizer reads weights, gradients and both moments and writes weights and moments.
    let optimizer = 2.0 * (est.weights_bytes + est.gradients_bytes + est.optimizer_bytes);
    // Checkpointing keeps little but recomputes everything: the traffic is that of the full
    // activations, once more for the recomputation.
    let (acts, passes) = if plan.checkpointing != Checkpointing::None {
        let mut full = plan.clone();
        full.checkpointing = Checkpointing::None;
        (estimate(&full).activations_bytes, ACTIVATION_PASSES + 2.0)
    } else {
        (est.activations_bytes, ACTIVATION_PASSES)
    };
    let traffic = passes * acts + 3.0 * est.logits_bytes + optimizer;
    compute + traffic / (gpu.memory_bandwidth_gb_s * 1e9)
}
