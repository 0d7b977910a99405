//! ## What it does
//! Notes a training config that names a model hwlint cannot estimate, so the memory rules
//! (HW101-HW105) could not run on it: the model is not in the catalog, or the config lacks an
//! input the estimate needs and no framework default supplies (the micro-batch, the sequence
//! length, the precision). Reported once per model and file; silent on a run that uses no
//! GPU (`use_cpu: true`, a CPU accelerator), where the memory rules have nothing to check.
//!
//! ## Why is this bad?
//! It is not: it says what hwlint could not check, and how to let it. Informational; it never
//! fails a run.
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

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::plan::Gap;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    // The memory rules do not run on a CPU or non-GPU run either: there is nothing to say.
    if !ctx.setup.uses_gpu() {
        return vec![];
    }
    let name = match ctx.memory() {
        Err(Gap::UnknownModel(name)) => name,
        Err(Gap::Missing(what)) => return missing(ctx, what),
        Err(Gap::Unsupported(what)) => return unsupported(ctx, what),
        Ok(_) => return vec![],
    };
    // A Hugging Face id or a path can also be a local folder with config.json.
    let folder = if name.contains('/') {
        format!(
            ", or point {} at a local folder with its config.json",
            ctx.setup
                .get(Concept::Model)
                .map_or("the model key".to_string(), |s| s.origin.describe())
        )
    } else {
        String::new()
    };
    vec![Violation {
        message: format!(
            "model `{name}` is not in hwlint's catalog, so the memory rules (HW101-HW105) were skipped: declare its architecture as [models.\"{name}\"] in hwlint.toml (family, hidden_size, num_layers, num_heads, intermediate_size, vocab_size){folder}"
        ),
        span: ctx.span_of(Concept::Model),
        fix: None,
    }]
}

/// The concept behind a missing estimator input, for naming the key that would give it.
fn concept_of(what: &str) -> Option<Concept> {
    Some(match what {
        "micro-batch" => Concept::MicroBatch,
        "sequence length" => Concept::SeqLen,
        "precision" => Concept::Precision,
        "activation checkpointing" => Concept::ActivationCheckpointing,
        "LoRA rank" => Concept::LoraR,
        _ => return None,
    })
}

/// A named, known model whose estimate lacks an input.
fn missing(ctx: &Context, what: &str) -> Vec<Violation> {
    use crate::dialect::SettingValue;
    let Some((name, _)) = ctx.setup.str(Concept::Model) else {
        return vec![];
    };
    let reason = match concept_of(what).map(|c| (c, ctx.setup.get(c))) {
        Some((_, Some(s))) => match &s.value {
            SettingValue::Unknown(v) => format!(
                "the {what} is only known at run time ({} is `{v}`)",
                s.origin.describe()
            ),
            SettingValue::Str(v) => format!(
                "the estimator has no recipe for {what} `{v}` (from {})",
                s.origin.describe()
            ),
            _ => format!("{} is not a {what} it can use", s.origin.describe()),
        },
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
        span: ctx.span_of(Concept::Model),
        fix: None,
    }]
}

/// A named, known model run in a way the estimator has no recipe for.
fn unsupported(ctx: &Context, what: &str) -> Vec<Violation> {
    let Some((name, _)) = ctx.setup.str(Concept::Model) else {
        return vec![];
    };
    vec![Violation {
        message: format!(
            "model `{name}` could not be estimated: the estimator has no recipe for {what}, so the memory rules (HW101-HW105) were skipped"
        ),
        span: ctx.span_of(Concept::Model),
        fix: None,
    }]
}
