//! ## What it does
//! Reports a run that asks for more GPUs per machine than the target machine has
//! (Lightning `trainer.devices`, accelerate `num_processes`).
//!
//! ## Why is this bad?
//! The launcher stops with "requested N devices but only M are available", or processes
//! queue for GPUs that never come. Silent unless the target's GPU count is known (`--gpus`,
//! `--target`, hwlint.toml), and for runs on other devices (accelerate `MULTI_CPU`,
//! `MULTI_XPU`, `use_cpu: true`; Lightning `accelerator: cpu`).
//!
//! ## Example
//! ```yaml
//! # target: 1 x rtx-4090
//! trainer:
//!   devices: 4
//! ```
//!
//! Use instead:
//! ```yaml
//! trainer:
//!   devices: 1
//! ```

use super::{Context, Violation};
use crate::dialect::Concept;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some(gpus) = ctx.target.gpus.map(i64::from) else {
        return vec![];
    };
    // Processes on CPUs, TPUs or other accelerators take none of the target's GPUs.
    if !ctx.setup.uses_gpu() {
        return vec![];
    }
    let s = ctx.setup;
    // A run on the CPU or another accelerator (accelerate's MULTI_CPU, MULTI_XPU, ...) asks
    // for none of the target's GPUs.
    if !s.uses_gpu() {
        return vec![];
    }
    let nodes = s.int(Concept::Nodes).map_or(1, |(n, _)| n.max(1));
    let (per_node, concept, setting, how) = if let Some((d, set)) = s.int(Concept::DevicesPerNode) {
        (
            d,
            Concept::DevicesPerNode,
            set,
            format!("{} {d}", set.origin.describe()),
        )
    } else if let Some((p, set)) = s.int(Concept::Processes) {
        let per = p / nodes + i64::from(p % nodes > 0);
        let how = if nodes > 1 {
            format!(
                "{} {p} over {nodes} machines = {per} per machine",
                set.origin.describe()
            )
        } else {
            format!("{} {p}", set.origin.describe())
        };
        (per, Concept::Processes, set, how)
    } else {
        return vec![];
    };
    if per_node <= gpus || !setting.origin.is_explicit() {
        return vec![];
    }
    vec![Violation {
        message: format!(
            "{how} GPUs requested, but the target {} has {gpus}",
            ctx.target.describe()
        ),
        span: ctx.span_of(concept),
        fix: None,
    }]
}
