//! ## What it does
//! Says, once per run, when the memory check (HW101-HW105) gave no verdict. Each training run
//! that states a model, a batch or a sequence length ends in one of three outcomes:
//!
//! - **checked**: the estimate decides (the step fits, or does not even at its least). HW901
//!   says nothing; HW101-HW105 report what they find.
//! - **not decided**: the step fits at the least it can need and not at the most. The note
//!   gives the range (`needs ~5.4-25.9 GiB against 23.1 GiB usable`), what would decide it
//!   (`--gpus N` where the model states may be sharded over GPUs hwlint does not know, the key
//!   of an option the file leaves unset) and the ranges no setting narrows (a framework's own
//!   blocks, fused kernels).
//! - **not checked**: no estimate. The note names what is missing and what supplies it: a
//!   model not in the catalog (declare it), a model key the file does not set, an input no
//!   framework default gives, a model the dialect does not read (and why: `` `fused_loss` is
//!   `true` ``, `` `model.use_dora` is `true` ``), a training loop the estimator has no recipe
//!   for (TRL's PPO before 0.12, whose value head sat on the policy; an online RL trainer whose
//!   sampling settings hwlint does not read; in verl, whose actor update, rollout engine,
//!   log-prob forwards, critic and legacy reward worker are estimated, the reward loop (an
//!   inference engine serving the reward model on the same GPUs), the TensorRT-LLM rollout,
//!   LoRA on the fp32 actor and the Megatron actor). A loop with no recipe
//!   is said first: naming the model would not make the run estimable. For a PPO run the model
//!   named is the policy (TRL's `sft_model_path`), or the value or reward model the catalog
//!   lacks. A robot policy loaded from a checkpoint the catalog does not hold (LeRobot's
//!   `--policy.path`) takes its config from the checkpoint, which hwlint does not read: the
//!   note says which keys would let it size the policy from the file.
//!
//! An unknown sequence length is bounded by the model's context, so it decides where it can
//! (a small model fits at any length). The summary line counts the outcomes
//! (`memory not decided for 2 runs (2 decided by --gpus)`) and never says "All checks passed"
//! when a check did not run. Silent on a run that uses no GPU (`use_cpu: true`, a CPU
//! accelerator) or does not train, where the memory rules have nothing to check.
//!
//! ## Why is this bad?
//! It is not: it says what hwlint could not check or decide, and how to let it. Informational;
//! it never fails a run, and the summary counts it apart from the problems.
//!
//! ## Example
//! ```yaml
//! model_name_or_path: our-org/internal-7b
//! ```
//!
//! Declare the architecture in hwlint.toml:
//! ```toml
//! [models."our-org/internal-7b"]
//! family = "llama"
//! hidden_size = 4096
//! num_layers = 32
//! num_heads = 32
//! num_kv_heads = 8
//! intermediate_size = 14336
//! vocab_size = 128256
//! ```
//! or point `model_name_or_path` at a local folder holding the model's `config.json` (a model
//! in the local Hugging Face cache is read from there).

use super::outcome::{key_of, Outcome};
use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::plan::Gap;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    // One outcome decides what is said, so HW901 and the summary line never disagree.
    match super::outcome::of(ctx) {
        Some(Outcome::Bounded { .. }) => {
            let Ok(m) = ctx.memory() else { return vec![] };
            vec![Violation {
                message: super::outcome::bounded_message(ctx, m),
                span: first_stated(ctx),
                fix: None,
            }]
        }
        Some(Outcome::NotChecked { .. }) => match ctx.memory() {
            Err(Gap::UnknownModel(name)) => unknown(ctx, name),
            Err(Gap::Missing("model")) if ctx.setup.str(Concept::Model).is_none() => unnamed(ctx),
            Err(Gap::Missing(what)) => missing(ctx, what),
            Err(Gap::Unsupported(what)) => unsupported(ctx, what),
            Ok(_) => vec![],
        },
        Some(Outcome::Checked) | None => vec![],
    }
}

/// The words that end HW901's note on a model the catalog does not hold.
const NOT_IN_CATALOG: &str = "is not in hwlint's catalog, so the memory rules";

/// Whether a diagnostic is HW901's note on a model the catalog does not hold, which every file
/// naming that model would repeat.
pub(crate) fn names_unknown_model(code: &str, message: &str) -> bool {
    code == "HW901" && message.contains(NOT_IN_CATALOG)
}

/// A model the catalog does not hold.
fn unknown(ctx: &Context, name: &str) -> Vec<Violation> {
    // The key that names it: the trained model's, or a PPO run's policy, value or reward
    // model's (TRL's `sft_model_path`, `reward_model_path`).
    let concept = [
        Concept::PolicyModel,
        Concept::CriticModel,
        Concept::RewardScorer,
    ]
    .into_iter()
    .find(|c| ctx.setup.str(*c).is_some_and(|(n, _)| n == name))
    .unwrap_or(Concept::Model);
    // A policy loaded from a checkpoint (LeRobot's `--policy.path`): its config is the
    // checkpoint's, and a policy is sized from its keys, not from an architecture.
    if let Some(spec) = &ctx.dialect.policy {
        let setting = ctx.setup.get(concept);
        let key = setting
            .map(|s| s.origin.key().to_string())
            .unwrap_or_default();
        if concept == Concept::Model && !spec.type_keys.contains(&key) {
            return vec![Violation {
                message: format!(
                    "policy `{name}` {NOT_IN_CATALOG} (HW101-HW105) were skipped: its config is the checkpoint's, which hwlint does not read; name the policy in the file ({}) with the keys its size depends on (cameras under `{}`, chunk, freeze flags) to have it sized",
                    spec.type_keys
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    spec.type_keys
                        .first()
                        .and_then(|k| k.rsplit_once('.'))
                        .map_or(spec.features.clone(), |(p, _)| format!("{p}.{}", spec.features))
                ),
                span: ctx.span_of(concept),
                fix: None,
            }];
        }
    }
    // A Hugging Face id or a path can also be a local folder with config.json.
    let folder = if name.contains('/') {
        format!(
            ", or point {} at a local folder with its config.json",
            ctx.setup
                .get(concept)
                .map_or("the model key".to_string(), |s| s.origin.describe())
        )
    } else {
        String::new()
    };
    vec![Violation {
        message: format!(
            "model `{name}` {NOT_IN_CATALOG} (HW101-HW105) were skipped: declare its architecture as [models.\"{name}\"] in hwlint.toml (family, hidden_size, num_layers, num_heads, intermediate_size, vocab_size){folder}"
        ),
        span: ctx.span_of(concept),
        fix: None,
    }]
}

/// Where the file would name its model, for advice: in code whose dialect reads the trainer's
/// `model` argument, that argument (the config class has no model key: `TrainingArguments(
/// model_name_or_path=...)` is a TypeError); else the model's key.
fn model_key(ctx: &Context) -> Option<String> {
    let reads_trainer = ctx
        .dialect
        .settings
        .get(&Concept::Model)
        .is_some_and(|s| s.from.iter().any(|f| f.key.starts_with("trainer_model")));
    if ctx.doc.format == crate::syntax::Format::Python && reads_trainer {
        return Some(
            "the trainer's `model` to a Hub id, or build it with `from_pretrained(\"org/name\")` bound once at module level"
                .to_string(),
        );
    }
    key_of(ctx, Concept::Model)
}

/// A run that states its batch or length but not which model it trains, or describes a model
/// the estimator has no recipe for.
fn unnamed(ctx: &Context) -> Vec<Violation> {
    let why = match (
        model_key(ctx),
        ctx.setup.architecture.as_ref(),
        ctx.setup.architecture_unread.as_deref(),
    ) {
        (_, None, Some(unread)) => format!(
            "the model the file describes is one the estimator has no recipe for ({unread})"
        ),
        (_, Some(inline), _) => format!(
            "the model's dimensions {} are not complete enough to estimate (a family, hidden size, layers, heads and vocabulary are needed)",
            inline.place()
        ),
        (_, None, None) if ctx.setup.unread.contains_key(&Concept::Model) => format!(
            "the model was not read ({})",
            ctx.setup.unread[&Concept::Model]
        ),
        (Some(key), None, None) => {
            format!("the file does not say which model it trains (set {key})")
        }
        (None, None, None) => format!(
            "hwlint reads no model from {} configs (the training script or the framework's own model description chooses it)",
            ctx.dialect.title
        ),
    };
    vec![Violation {
        message: format!("the memory rules (HW101-HW105) were skipped: {why}"),
        span: first_stated(ctx),
        fix: None,
    }]
}

/// Where a note about the whole run points: the model's key or the mapping that describes it,
/// else the first memory input the file states.
fn first_stated(ctx: &Context) -> std::ops::Range<usize> {
    // A described model's first line, not the whole mapping.
    let described = ctx.setup.architecture.as_ref().map(|a| {
        // A composed run's span can lie in another file's text: kept whole then.
        let line_end = ctx
            .text
            .get(a.span.clone())
            .and_then(|t| t.find('\n'))
            .map_or(a.span.end, |n| a.span.start + n);
        a.span.start..line_end
    });
    std::iter::once(ctx.span_of(ctx.trained_model()))
        .chain(described)
        .chain(
            [Concept::MicroBatch, Concept::GlobalBatch, Concept::SeqLen]
                .into_iter()
                .map(|c| ctx.span_of(c)),
        )
        .find(|s| *s != (0..0))
        .unwrap_or(0..0)
}

/// The concept behind a missing estimator input, for naming the key that would give it.
fn concept_of(what: &str) -> Option<Concept> {
    Some(match what {
        "micro-batch" => Concept::MicroBatch,
        "sequence length" => Concept::SeqLen,
        "precision" => Concept::Precision,
        "activation checkpointing" => Concept::ActivationCheckpointing,
        "LoRA rank" => Concept::LoraR,
        "training objective" => Concept::Objective,
        "critic" => Concept::Critic,
        "critic model" => Concept::CriticModel,
        "critic micro-batch" => Concept::CriticMicroBatch,
        "reward model" => Concept::RewardScorer,
        "reward model micro-batch" => Concept::RewardMicroBatch,
        "critic checkpointing" => Concept::CriticCheckpointing,
        "log-prob micro-batch" => Concept::LogprobMicroBatch,
        _ => return None,
    })
}

/// A named, known model whose estimate lacks an input.
fn missing(ctx: &Context, what: &str) -> Vec<Violation> {
    use crate::dialect::SettingValue;
    let Some((name, _)) = ctx.setup.str(ctx.trained_model()) else {
        return vec![];
    };
    let reason = match concept_of(what).map(|c| (c, ctx.setup.get(c))) {
        Some((_, Some(s))) => match &s.value {
            SettingValue::Unknown(v) => format!(
                "the {what} is only known at run time ({} is `{v}`)",
                s.origin.describe()
            ),
            // A critic the catalog does not know (the actor's model is known).
            SettingValue::Str(v) if what == "critic model" => format!(
                "the critic model `{v}` (from {}) is not in hwlint's catalog: declare its architecture as [models.\"{v}\"] in hwlint.toml",
                s.origin.describe()
            ),
            SettingValue::Str(v) => format!(
                "the estimator has no recipe for {what} `{v}` (from {})",
                s.origin.describe()
            ),
            _ => format!("{} is not a {what} it can use", s.origin.describe()),
        },
        Some((c, None)) if ctx.setup.unread.contains_key(&c) => {
            format!("the {what} was not read ({})", ctx.setup.unread[&c])
        }
        Some((c, None)) => match ctx.dialect.settings.get(&c).and_then(|s| s.from.first()) {
            Some(spec) => format!("the {what} is not set (set `{}`)", spec.key),
            None => format!(
                "the {what} is not known ({} has no setting for it: the training script decides)",
                ctx.dialect.title
            ),
        },
        None => format!("the {what} is not known"),
    };
    vec![Violation {
        message: format!(
            "model `{name}` could not be estimated: {reason}, so the memory rules (HW101-HW105) were skipped"
        ),
        span: ctx.span_of(ctx.trained_model()),
        fix: None,
    }]
}

/// A named, known model run in a way the estimator has no recipe for.
fn unsupported(ctx: &Context, what: &str) -> Vec<Violation> {
    // The objective is read before the model: a run that names none is not estimable either,
    // and the summary has counted it.
    let Some((name, _)) = ctx.setup.str(ctx.trained_model()) else {
        return vec![Violation {
            message: format!(
                "the memory rules (HW101-HW105) were skipped: the estimator has no recipe for {what}"
            ),
            span: first_stated(ctx),
            fix: None,
        }];
    };
    vec![Violation {
        message: format!(
            "model `{name}` could not be estimated: the estimator has no recipe for {what}, so the memory rules (HW101-HW105) were skipped"
        ),
        span: ctx.span_of(ctx.trained_model()),
        fix: None,
    }]
}
