//! ## What it does
//! Flags GPU training whose dataloader runs in the training process itself (`num_workers: 0`).
//!
//! ## Why is this bad?
//! With no workers, every batch is read, decoded and augmented in the main process between
//! GPU steps, so the GPU idles while the CPU works. For image and video training this often
//! halves throughput or worse.
//!
//! It fires on an explicit `0`, and on a framework default of 0 only where the dialect marks
//! that default as relevant (image or video pipelines); tokenised text loads fast enough that
//! the Trainer's default of 0 is not reported.
//!
//! ## Example
//! ```yaml
//! dataloader_num_workers: 0
//! ```
//!
//! Use instead:
//! ```yaml
//! dataloader_num_workers: 8
//! ```
//!
//! The same in a training script, and on the line that launches it:
//! ```python
//! loader = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=0)
//! ```
//! ```sh
//! lerobot-train --policy.type=act --dataset.repo_id=lerobot/aloha_sim_insertion_human --num_workers=0
//! ```
//!
//! ## Fix safety
//! Safe when the host's cores are known: it sets min(8, cores per process - 1) workers, which
//! HW201 accepts. Unsafe (4 workers) when the host is unknown. Under the built-in default
//! target the cores are a guess: the fix is shown, not applied (as HW201's and HW203's).

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::fix::Applicability;
use crate::syntax::edit::NewValue;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Some((0, setting)) = ctx.setup.int(Concept::NumWorkers) else {
        return vec![];
    };
    if !setting.origin.counts_for_efficiency() || !ctx.setup.uses_gpu() {
        return vec![];
    }
    let (workers, applicability, why) = match ctx.cores_per_process() {
        Some((cores, _)) => {
            let per_proc = cores.saturating_sub(1);
            if per_proc < 1 {
                return vec![];
            }
            (
                per_proc.min(8),
                Applicability::Safe,
                format!("min(8, {cores} cores per process - 1)"),
            )
        }
        None => (4, Applicability::Unsafe, "host cores unknown".to_string()),
    };
    let message = format!(
        "{} is 0: batches are loaded in the training process and the GPU waits for them",
        setting.origin.describe()
    );
    let fix = ctx.set(
        Concept::NumWorkers,
        NewValue::Int(workers),
        applicability,
        format!("set `{}` to {workers} ({why})", setting.origin.key()),
    );
    // Cores from the built-in default target are a guess: the fix is shown, not applied,
    // unless the file states the cores each process gets.
    let fix = if ctx.setup.get(Concept::CpusPerProcess).is_none() {
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
