//! ## What it does
//! Notes a training config whose model hwlint does not know, so the memory rules (HW101-HW105)
//! could not run on it. Reported once per model, not per file.
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
//! or point `model_name_or_path` at a local folder holding the model's `config.json`.

use super::{Context, Violation};
use crate::dialect::Concept;
use crate::estimate::plan::Gap;

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    let Err(Gap::UnknownModel(name)) = ctx.memory() else {
        return vec![];
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
