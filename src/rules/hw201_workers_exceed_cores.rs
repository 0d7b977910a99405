//! ## What it does
//! Checks that the dataloader workers of every training process on a node fit the node's CPU
//! cores: `num_workers` x processes per node <= CPU cores.
//!
//! ## Why is this bad?
//! Each worker is a process that decodes and augments samples. With more workers than cores
//! they preempt each other and the training processes themselves, so data loading gets slower,
//! not faster, and the GPU waits. On 8-GPU nodes a per-process `num_workers: 32` means 256
//! workers.
//!
//! The host must be known (`--cpu-cores`, `[target]` in hwlint.toml, or the default
//! `workstation` target); processes per node come from the file, `--gpus` or the target, and
//! count as one when nothing says more.
//!
//! ## Example
//! ```yaml
//! # 8 processes on a 64-core node
//! dataloader_num_workers: 32
//! ```
//!
//! Use instead:
//! ```yaml
//! dataloader_num_workers: 7
//! ```
//!
//! ## Fix safety
//! Safe: it sets `num_workers` to cores per process - 1 (at least 1), which keeps loading
//! parallel and leaves a core for each training process. Under the built-in default target the
//! host is a guess: the fix is shown, not applied, until the host is named.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((workers, setting)) = ctx.setup.int(Concept::NumWorkers) else {
        return vec![];
    };
    let Some((cores, cores_from)) = ctx.cores_per_process() else {
        return vec![];
    };
    if workers <= cores {
        return vec![];
    }
    let (procs, procs_from) = ctx.processes_per_node_from();
    let suggested = cores.saturating_sub(1).max(1);
    let message = match ctx.setup.get(Concept::CpusPerProcess) {
        Some(_) => format!(
            "{} {workers} dataloader workers per process > {cores} CPU cores per process ({cores_from})",
            setting.origin.describe(),
        ),
        None => format!(
            "{} {workers} x {procs} process{} per node ({procs_from}) = {} dataloader workers > {} CPU cores on {}{}",
            setting.origin.describe(),
            if procs == 1 { "" } else { "es" },
            i128::from(workers) * i128::from(procs),
            ctx.target.host.cpu_cores.unwrap_or_default(),
            ctx.target.describe(),
            if ctx.target.is_default {
                super::memory::HOST_GUESS
            } else {
                ""
            },
        ),
    };
    // Cores the scheduler gives each process are the file's own word, not the target's guess.
    let host_guessed = ctx.setup.get(Concept::CpusPerProcess).is_none();
    // With fewer cores than processes the floor of one worker is already what is set: there
    // is no lower count to offer (0 would trade this finding for HW202).
    let fix = (suggested < workers)
        .then(|| {
            ctx.set(
                Concept::NumWorkers,
                NewValue::Int(suggested),
                Applicability::Safe,
                format!(
                    "set `{}` to {suggested} (cores per process - 1)",
                    setting.origin.key()
                ),
            )
        })
        .flatten();
    let fix = if host_guessed {
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
