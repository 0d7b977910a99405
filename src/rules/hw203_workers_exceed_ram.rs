//! ## What it does
//! Checks that dataloader workers fit in host RAM: workers x processes x RAM per worker, plus
//! the training processes themselves, must stay under the host's RAM.
//!
//! ## Why is this bad?
//! Each worker holds its own copy of the dataset object, decoded samples and prefetched
//! batches (`ram_per_worker_gb`, 2.5 GB by default). When they outgrow RAM the kernel's OOM
//! killer ends a worker, and the run dies with "DataLoader worker killed" hours in.
//!
//! Each training process is counted at 8 GB of host RAM (framework, CUDA host allocations,
//! pinned buffers, model copy while loading). Silent when the host's RAM is unknown.
//!
//! ## Example
//! ```yaml
//! # 4 processes on a host with 64 GB
//! num_workers: 8     # 4 x 8 x 2.5 GB + 4 x 8 GB = 112 GB
//! ```
//!
//! Use instead:
//! ```yaml
//! num_workers: 3
//! ```
//!
//! ## Fix safety
//! Safe: it lowers `num_workers` to the most that fits (at least 1); no fix when even one
//! worker per process does not fit. Under the built-in default target the host is a guess: the
//! fix is shown, not applied, until the host is named.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

/// Host RAM of one training process, GB (see the documentation above).
const TRAINING_PROCESS_RAM_GB: f64 = 8.0;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((workers, setting)) = ctx.setup.int(Concept::NumWorkers) else {
        return vec![];
    };
    if workers <= 0 {
        return vec![];
    }
    // RAM the scheduler gives each process (SLURM `mem_per_gpu`) stands for one process's host.
    let (ram, procs, ram_from) = match ctx.setup.float(Concept::RamPerProcessGb) {
        Some((r, s)) => (r, 1.0, s.origin.describe()),
        None if ctx.setup.is_unknown(Concept::RamPerProcessGb) => return vec![],
        None => match ctx.target.host.ram_gb {
            Some(r) => (
                r,
                ctx.processes_per_node() as f64,
                format!(
                    "host RAM{}",
                    if ctx.target.is_default {
                        super::memory::HOST_GUESS
                    } else {
                        ""
                    }
                ),
            ),
            None => return vec![],
        },
    };
    let per_worker = ctx.options.ram_per_worker_gb;
    let need = workers as f64 * procs * per_worker + procs * TRAINING_PROCESS_RAM_GB;
    if need <= ram {
        return vec![];
    }
    let fitting = ((ram - procs * TRAINING_PROCESS_RAM_GB) / (procs * per_worker)).floor() as i64;
    // The two per-unit figures are estimates, not readings: the message says so and where to
    // change the one that depends on the dataset.
    let message = format!(
        "{} {workers} x {procs} process{} x {per_worker} GB per worker + {procs} x {TRAINING_PROCESS_RAM_GB} GB per process = {need:.0} GB > {ram} GB {ram_from} (assumed: {per_worker} GB per worker, `ram_per_worker_gb` in hwlint.toml, set it for your dataset; {TRAINING_PROCESS_RAM_GB} GB per training process)",
        setting.origin.describe(),
        if procs == 1.0 { "" } else { "es" },
    );
    let fix = (fitting >= 1).then(|| {
        ctx.set(
            Concept::NumWorkers,
            NewValue::Int(fitting),
            Applicability::Safe,
            format!(
                "set `{}` to {fitting}, the most that fits in {ram} GB",
                setting.origin.key()
            ),
        )
    });
    let fix = fix.flatten();
    let fix = if ctx.setup.get(Concept::RamPerProcessGb).is_none() {
        super::memory::for_host(ctx, fix)
    } else {
        fix
    };
    vec![Violation {
        message,
        span: ctx.span_of(Concept::NumWorkers),
        fix,
    }]
}
