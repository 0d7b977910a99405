//! What the memory check concluded on one run: a verdict, a range whose ends disagree, or no
//! check at all. HW901 reports the last two and the summary line counts all three, so "All
//! checks passed" is never printed over a check that did not run.

use serde::Serialize;

use super::memory::{gib, gpu_named};
use super::Context;
use crate::dialect::Concept;
use crate::estimate::plan::{Decider, Gap};

/// The memory rules whose verdict the outcome stands for.
const MEMORY_RULES: [&str; 5] = ["HW101", "HW102", "HW103", "HW104", "HW105"];

/// The memory check's outcome on one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// The estimate decides: the step fits the card, or does not even at its least.
    Checked,
    /// The step fits at the least it can need and not at the most.
    Bounded {
        low_gib: f64,
        high_gib: f64,
        usable_gib: f64,
        /// What would decide it, short (`--gpus`, `` `gradient_checkpointing` ``).
        decided_by: Vec<String>,
    },
    /// No estimate: `needs` names the missing input, short (`the sequence length`).
    NotChecked { needs: String },
}

/// Whether the file describes a training step the memory rules would estimate: it runs on a
/// GPU and states a model, a batch or a sequence length. A fragment that sets none of them (a
/// schedule, a dataset, a launcher's settings) has no step to check.
fn describes_a_step(ctx: &Context) -> bool {
    if !ctx.setup.uses_gpu() || ctx.setup.not_training.is_some() {
        return false;
    }
    let stated = |c: Concept| ctx.setup.get(c).is_some_and(|s| s.origin.is_explicit());
    ctx.setup.architecture.is_some()
        || [
            Concept::Model,
            Concept::MicroBatch,
            Concept::GlobalBatch,
            Concept::SeqLen,
        ]
        .into_iter()
        .any(stated)
}

/// The outcome of the memory check on this run, or `None` when there is no check to make (the
/// memory rules are all off, or the file describes no GPU training step).
pub fn of(ctx: &Context) -> Option<Outcome> {
    if !MEMORY_RULES.iter().any(|c| ctx.runs(c)) || !describes_a_step(ctx) {
        return None;
    }
    Some(match ctx.memory() {
        Err(gap) => Outcome::NotChecked {
            needs: needs(ctx, gap),
        },
        // A step that fits only with its paged optimizer state in host memory is decided: it
        // runs, slower (HW105 says so).
        Ok(m) if m.verdict_word() != "may fit" || m.paging_only() => Outcome::Checked,
        Ok(m) => Outcome::Bounded {
            low_gib: m.least().verdict.need_bytes / GIB,
            high_gib: m.most.verdict.need_bytes / GIB,
            usable_gib: m.most.verdict.usable_bytes / GIB,
            decided_by: deciders(ctx, m)
                .into_iter()
                .filter_map(|d| d.short)
                .collect(),
        },
    })
}

const GIB: f64 = (1u64 << 30) as f64;

/// The missing input, short, for the summary line.
fn needs(ctx: &Context, gap: &Gap) -> String {
    match gap {
        Gap::UnknownModel(_) => "the model's architecture".into(),
        Gap::Missing("model") if ctx.setup.architecture_unread.is_some() => {
            "a recipe hwlint lacks".into()
        }
        Gap::Missing("model") if ctx.setup.unread.contains_key(&Concept::Model) => {
            "a model hwlint reads".into()
        }
        Gap::Missing("model") if ctx.setup.str(Concept::Model).is_none() => "the model".into(),
        // A precision the file states but the estimator has no recipe for (`fp8`).
        Gap::Missing("precision") if ctx.setup.str(Concept::Precision).is_some() => {
            "a recipe hwlint lacks".into()
        }
        Gap::Missing(what) => format!("the {what}"),
        Gap::Unsupported(_) => "a recipe hwlint lacks".into(),
    }
}

/// One thing that would decide a bounded estimate.
pub(crate) struct Decides {
    /// For the summary line: `--gpus`, `` `gradient_checkpointing` ``; none when nothing the
    /// user sets decides it.
    pub short: Option<String>,
    /// What the range comes from.
    pub what: String,
    /// How to narrow it, when something the user sets does.
    pub how: Option<String>,
}

/// The key a dialect reads a concept from, for "set `KEY`".
pub(crate) fn key_of(ctx: &Context, c: Concept) -> Option<String> {
    match ctx.setup.get(c).map(|s| &s.origin) {
        Some(o) if o.is_explicit() => Some(o.describe()),
        _ => ctx
            .dialect
            .settings
            .get(&c)
            .and_then(|s| s.from.first())
            .map(|spec| format!("`{}`", spec.key)),
    }
}

/// What would narrow each bound of the estimate to one figure, in the order the bounds came.
pub(crate) fn deciders(ctx: &Context, m: &crate::estimate::plan::MemoryContext) -> Vec<Decides> {
    let mut out = Vec::new();
    let gpus_known = ctx.world_size().is_some();
    // The GPUs are known, but not whether anything shards over them: the program that runs the
    // file decides (torchtune's recipe), or a launcher's config the file does not name.
    let named_by = ctx.dialect.recipe.iter().find_map(|r| r.command.as_deref());
    let unread = ctx.setup.unread.get(&Concept::Fsdp);
    if m.sharding_unknown && gpus_known {
        out.push(match (unread, named_by) {
            (Some(why), _) => Decides {
                short: None,
                what: format!("the model states may be sharded over some of the GPUs: {why}"),
                how: None,
            },
            (None, Some(command)) => Decides {
                short: Some("the recipe".into()),
                what: "the model states may or may not be sharded over the GPUs: the recipe that runs the file decides, and the file does not name it".into(),
                how: Some(format!("name it in a header comment (`# {command} <recipe> --config ...`)")),
            },
            (None, None) => Decides {
                short: None,
                what: "the model states may be sharded (ZeRO-3/FSDP) over the GPUs by a launcher's config the file does not name".into(),
                how: None,
            },
        });
    } else if m.sharding_unknown {
        out.push(Decides {
            short: Some("--gpus".into()),
            what: "the model states may be sharded (ZeRO-3/FSDP) over a number of GPUs hwlint does not know".into(),
            how: Some("pass --gpus N (or `gpus` under [target] in hwlint.toml)".into()),
        });
    }
    for b in &m.bounded {
        let (short, how) = match b.decided_by {
            Decider::Gpus => (
                Some("--gpus".to_string()),
                Some("pass --gpus N".to_string()),
            ),
            Decider::Setting(c) => match key_of(ctx, c) {
                Some(key) => (Some(key.clone()), Some(format!("set {key}"))),
                None => (None, None),
            },
            // The data the file does not describe: listing it decides.
            Decider::Data => (None, Some("list them in the file".to_string())),
            Decider::Unmodelled | Decider::Script | Decider::Steps | Decider::Paging => {
                (None, None)
            }
        };
        out.push(Decides {
            short,
            what: b.what.clone(),
            how,
        });
    }
    out
}

/// The HW901 message for a run whose estimate does not decide.
pub(crate) fn bounded_message(ctx: &Context, m: &crate::estimate::plan::MemoryContext) -> String {
    let low = &m.least().verdict;
    let high = &m.most.verdict;
    let all = deciders(ctx, m);
    let decide: Vec<String> = all
        .iter()
        .filter_map(|d| d.how.as_ref().map(|how| format!("{}: {how}", d.what)))
        .collect();
    let ranges: Vec<&str> = all
        .iter()
        .filter(|d| d.how.is_none())
        .map(|d| d.what.as_str())
        .collect();
    let mut message = format!(
        "memory not decided: one step of {} needs ~{}-{} GiB against {} GiB usable on {}, so it fits only at the low end.",
        m.most.plan.model,
        gib(low.need_bytes),
        gib(high.need_bytes),
        gib(high.usable_bytes),
        gpu_named(ctx),
    );
    if !decide.is_empty() {
        message.push_str(&format!(" To decide it: {}.", decide.join("; ")));
    }
    if !ranges.is_empty() {
        message.push_str(&format!(
            " Ranges no setting narrows: {}.",
            ranges.join("; ")
        ));
    }
    message
}
