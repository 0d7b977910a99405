//! ## What it does
//! Compares the storage read bandwidth the training loop needs with what the target's storage
//! delivers: bytes read per sample x samples per second (all processes of a node) against the
//! host's read bandwidth.
//!
//! Bytes per sample come from `bytes_per_sample` in hwlint.toml (top level or `[[per-path]]`):
//! the size of one sample as stored (an encoded video clip, a JPEG, a shard's share). Samples per
//! second come from `samples_per_second` in hwlint.toml when you have measured it, else from
//! the estimated step time (matmul FLOPs at a fraction of the GPU's peak plus memory traffic).
//! The storage bandwidth is the target's `storage_mb_s`. Silent when any of them is unknown.
//!
//! ## Why is this bad?
//! When the disk or network share cannot feed the GPUs, every step waits on I/O; more
//! dataloader workers do not help. Video and image training on network storage is the usual
//! case (V-JEPA 2: 8 MB clips at 64 samples/s need 512 MB/s).
//!
//! ## Example
//! ```toml
//! # hwlint.toml
//! bytes_per_sample = 8_000_000
//! samples_per_second = 64
//! [target]
//! gpu = "h100-sxm"
//! storage_mb_s = 250      # a network share
//! ```
//!
//! Copy the dataset to local NVMe, store smaller samples (lower resolution, fewer frames,
//! re-encoded), or cache decoded samples in RAM.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::throughput::step_seconds;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(bytes) = ctx.options.bytes_per_sample else {
        return vec![];
    };
    let Some(storage) = ctx.target.host.storage_mb_s else {
        return vec![];
    };
    let procs = ctx.processes_per_node() as f64;
    let (per_process, source) = match ctx.options.samples_per_second {
        Some(s) => (s, "measured, hwlint.toml".to_string()),
        None => {
            let Some(m) = ctx.gpu_memory() else {
                return vec![];
            };
            let e = &m.most;
            let step = step_seconds(&e.plan, &e.estimate, &ctx.target.gpu);
            (
                e.plan.batch as f64 / step,
                format!(
                    "estimated: micro-batch {} every {:.0} ms on {}",
                    e.plan.batch,
                    step * 1e3,
                    ctx.target.gpu.key
                ),
            )
        }
    };
    let needed = bytes * per_process * procs / 1e6;
    if needed <= storage {
        return vec![];
    }
    vec![Violation {
        message: format!(
            "{:.2} MB per sample x {:.0} samples/s ({source}) x {procs} process{} = {needed:.0} MB/s > {storage:.0} MB/s storage read bandwidth of the target: the GPUs wait on I/O",
            bytes / 1e6,
            per_process,
            if procs == 1.0 { "" } else { "es" },
        ),
        span: ctx.span_of(Concept::MicroBatch),
        fix: None,
    }]
}
