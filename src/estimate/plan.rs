//! From a config's TrainingSetup to the estimator's Plan. Every input that is not in the file
//! and not a framework default is a gap: the memory rules then stay silent.

use std::path::Path;

use serde::Serialize;

use super::memory::{
    estimate, Attention, Checkpointing, MemoryEstimate, Optimizer, Plan, Precision,
};
use super::models::{cached_hf_config, lookup, read_hf_config, Architecture, Family};
use super::verdict::{need_bytes, usable_bytes, verdict, Verdict};
use crate::dialect::{Concept, TrainingSetup};
use crate::hardware::Target;

/// Why the memory rules cannot run on a config.
#[derive(Debug, Clone, PartialEq)]
pub enum Gap {
    /// The model is named but hwlint does not know its architecture (HW901).
    UnknownModel(String),
    /// Some other input is missing or symbolic; the rules stay silent.
    Missing(&'static str),
    /// The run uses something the estimator has no recipe for (experts run on the CPU).
    Unsupported(&'static str),
}

/// An input the estimator does not have exactly, and the range it used for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// `activation checkpointing not set in the file: between full checkpointing and none`.
    pub what: String,
    /// What would narrow the range to one value.
    pub decided_by: Decider,
}

/// What a user can do to turn a bounded estimate into one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    /// The number of GPUs (`--gpus`, or the file's own count).
    Gpus,
    /// A setting of the config (its key is the dialect's).
    Setting(Concept),
    /// Nothing the user sets: hwlint does not model this option exactly.
    Unmodelled,
    /// The training script chooses (a trainer class), which hwlint does not read.
    Script,
    /// The run's own steps: some reach the low end and some the high one (V-JEPA's random
    /// masks), so a run sized for the high end is the one that does not stop.
    Steps,
    /// The data the run reads, which the file does not describe (a LeRobot dataset's
    /// cameras): the file decides it by listing them.
    Data,
    /// The driver moves paged optimizer state (bitsandbytes' paged optimizers) to host
    /// memory when the GPU fills: the low end runs, slower, rather than stopping.
    Paging,
}

impl Bound {
    fn new(what: impl Into<String>, decided_by: Decider) -> Self {
        Bound {
            what: what.into(),
            decided_by,
        }
    }
}

impl Serialize for Bound {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.what)
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

/// One estimate and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Estimated {
    pub plan: Plan,
    pub estimate: MemoryEstimate,
    pub verdict: Verdict,
}

/// The estimate for one config on its target.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryContext {
    /// The most memory the step can need: without any sharding the file does not state, and
    /// with each option hwlint bounds (see `bounded`) at its most. Rules that report waste use
    /// this.
    pub most: Estimated,
    /// The least memory the step can need, when that differs: model states sharded over many
    /// GPUs when sharding is unknown, and bounded options at their least. Rules that report a
    /// shortage use this.
    pub least: Option<Estimated>,
    /// Inputs hwlint assumed (not written in the file), for messages.
    pub assumptions: Vec<String>,
    /// Options the estimator does not model exactly, with the bound it used.
    pub bounded: Vec<Bound>,
    /// Whether sharding over an unknown number of GPUs is why `least` exists.
    pub sharding_unknown: bool,
    /// The settings the plan was read from, named for `hwlint estimate`'s `inputs` line.
    #[serde(skip)]
    pub used: Vec<(&'static str, Concept)>,
}

impl MemoryContext {
    /// The estimate a shortage must hold for.
    pub fn least(&self) -> &Estimated {
        self.least.as_ref().unwrap_or(&self.most)
    }

    /// The verdict the memory rules act on: `fits` at the most the step can need, `may fit`
    /// at its least only (HW101 stays silent), `does not fit` even at its least (HW101).
    pub fn verdict_word(&self) -> &'static str {
        if self.most.verdict.fits {
            "fits"
        } else if self.least().verdict.fits {
            "may fit"
        } else {
            "does not fit"
        }
    }

    /// What the least estimate assumes, for messages and reports.
    pub fn least_reasons(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.sharding_unknown {
            why.push("the model states sharded over any number of GPUs".to_string());
        }
        why.extend(self.bounded.iter().map(|b| b.what.clone()));
        why
    }

    /// True when one verdict holds (sharding known, every option modelled).
    pub fn exact(&self) -> bool {
        self.least.is_none()
    }

    /// True when the range comes only from paged optimizer state (sharding known, nothing
    /// else bounded): the step that does not fit on the GPU still runs, its state paged out.
    pub fn paging_only(&self) -> bool {
        !self.exact()
            && !self.sharding_unknown
            && self.bounded.iter().all(|b| b.decided_by == Decider::Paging)
    }

    /// True when the range comes only from the run's own steps (V-JEPA's random masks): the
    /// high end will be reached, so it is the figure to size the batch and the headroom by.
    pub fn steps_only(&self) -> bool {
        !self.exact()
            && !self.sharding_unknown
            && self.bounded.iter().all(|b| b.decided_by == Decider::Steps)
    }
}

/// Finds an architecture by name: `[models.NAME]` in hwlint.toml first, then the catalog, then a
/// local model folder or config.json (relative to the config file), then the model's config.json
/// in the local Hugging Face cache (never the network).
pub fn find_model(name: &str, declared: &[Architecture], base: &Path) -> Option<Architecture> {
    if let Some(a) = declared.iter().find(|a| a.name == name) {
        return Some(a.clone());
    }
    if let Some(a) = lookup(name) {
        return Some(a.clone());
    }
    let local = base.join(name);
    if local.join("config.json").is_file() || (local.is_file() && name.ends_with(".json")) {
        return read_hf_config(&local).ok();
    }
    let cached = cached_hf_config(name)?;
    read_hf_config(&cached).ok().map(|mut a| {
        a.source = format!("{} (Hugging Face cache)", cached.display());
        a
    })
}

/// The catalog entry a config's own dimensions make, when they are complete enough for the
/// memory model of its kind.
pub fn inline_architecture(inline: &crate::dialect::InlineModel) -> Option<Architecture> {
    let mut arch: Architecture = toml::Value::Table(inline.table.clone()).try_into().ok()?;
    arch.name = inline.key.clone();
    arch.source = if inline.configures_named {
        format!("{}, from the keys under `{}`", arch.source, inline.key)
    } else if !arch.source.is_empty() {
        format!(
            "{}, from the keys under `{}` and its data and mask settings",
            arch.source, inline.key
        )
    } else if inline.flat {
        format!("the dimensions the config gives (`{}`, ...)", inline.key)
    } else {
        format!("the dimensions under `{}` in the config", inline.key)
    };
    // A composite's parts: a catalog model each, or their own dimensions.
    for part in &mut arch.parts {
        if !part.resolve(lookup(&part.model)) {
            return None;
        }
    }
    let ok = match arch.family {
        Family::Composite => {
            !arch.parts.is_empty()
                && arch.parts.iter().all(|p| {
                    let sized = match p.arch.family {
                        Family::Resnet => !p.arch.depths.is_empty(),
                        // A part of parameters, or of a step's tensors alone (GR00T's
                        // backbone outputs).
                        Family::Opaque => {
                            p.arch.params > 0
                                || p.arch.kept_per_sample > 0
                                || p.arch.transient_per_sample > 0
                        }
                        _ => {
                            p.arch.hidden_size > 0 && p.arch.num_layers > 0 && p.arch.num_heads > 0
                        }
                    };
                    sized && p.arch.implausible().is_none()
                })
        }
        Family::Vit => arch.hidden_size > 0 && arch.num_layers > 0 && arch.num_heads > 0,
        // A detector's backbone (src/dialect/detector.rs).
        Family::Resnet => {
            arch.detector.is_some()
                && !arch.depths.is_empty()
                && arch.depths.len() == arch.hidden_sizes.len()
        }
        Family::Llama | Family::Gpt2 | Family::Gemma | Family::Opt => {
            arch.hidden_size > 0 && arch.num_layers > 0 && arch.num_heads > 0 && arch.vocab_size > 0
        }
        _ => false,
    };
    (ok && arch.implausible().is_none()).then_some(arch)
}

pub struct Inputs<'a> {
    pub setup: &'a TrainingSetup,
    pub linked: Option<&'a TrainingSetup>,
    pub models: &'a [Architecture],
    pub base_dir: &'a Path,
    pub target: &'a Target,
    /// Data-parallel processes, when known.
    pub data_parallel: Option<i64>,
    /// The share of the card JAX may use (`XLA_PYTHON_CLIENT_MEM_FRACTION`), for JAX runs.
    pub mem_fraction: Option<f64>,
    /// What the dialect's framework does that no key says (openpi's global batch split over
    /// the GPUs, sharding only where the file states it, TRL's row-wise log-softmax loss).
    pub semantics: &'a crate::dialect::Semantics,
}

/// A config read into the estimator's plan.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The step as configured; options hwlint bounds are at their most.
    pub plan: Plan,
    /// The same step with bounded options at their least (only when `bounded` is not empty).
    pub lower: Option<Plan>,
    /// Inputs hwlint assumed, for messages.
    pub assumed: Vec<String>,
    /// Options not modelled exactly and the bound used (`selective activation checkpointing:
    /// between full and none`).
    pub bounded: Vec<Bound>,
    /// The settings the plan was read from, in order, named for the `inputs` line.
    pub used: Vec<(&'static str, Concept)>,
    pub sharding: Sharding,
}

/// The names of a comma-separated setting (`q_proj, v_proj`), an empty entry skipped.
fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

/// A comma-separated list of names beside the adapters (`modules_to_save`,
/// `target_parameters`), read only when the run trains LoRA.
fn adapter_names(
    s: &TrainingSetup,
    lora: bool,
    concept: Concept,
    label: &'static str,
    used: &mut Vec<(&'static str, Concept)>,
) -> Vec<String> {
    let Some((names, _)) = s.str(concept).filter(|_| lora) else {
        return Vec::new();
    };
    used.push((label, concept));
    self::names(names)
}

/// Whether the quantized base's matmuls keep their input for backward: bitsandbytes' 8-bit
/// always, its 4-bit before 0.43.2 (the release the run gets, `rules/libraries.toml`), torchao's
/// NF4 never (`LinearNF4` saves only the weight: pytorch/ao@0598012
/// torchao/dtypes/nf4tensor.py, `weight = ctx.saved_tensors[0]`). A checkpoint stored in a
/// format whose training kernel hwlint has not read (GPTQ, NVFP4) is counted as keeping it:
/// the larger figure.
fn quantized_input_kept(
    s: &TrainingSetup,
    load_in_4bit: bool,
    load_in_8bit: bool,
    stored: Option<super::models::Quantization>,
) -> bool {
    use super::models::Quantization;
    let bitsandbytes = s.bitsandbytes_quantizes();
    let four_bit_keeps = crate::dialect::version::matmul_4bit_keeps_input(
        s.bitsandbytes.as_ref().map(|r| r.version.as_str()),
    );
    match stored {
        Some(Quantization::Nf4 | Quantization::Nf4Double) => bitsandbytes && four_bit_keeps,
        Some(Quantization::GptqInt4 | Quantization::Nvfp4) => true,
        None if load_in_4bit => bitsandbytes && four_bit_keeps,
        None => load_in_8bit && bitsandbytes,
    }
}

/// Reads the plan a config describes. Inputs the file lacks come from the dialect's defaults
/// (already in the setup); options the estimator does not model are bounded, not guessed.
pub fn plan_for(i: &Inputs) -> Result<Planned, Gap> {
    let s = i.setup;
    let linked = i.linked;
    let mut assumed = Vec::new();
    let mut bounded = Vec::new();
    let mut used = Vec::new();
    // An objective with no recipe is said before any missing input: naming the model would
    // not make the run estimable.
    let objective = Objective::read(s)?;
    if objective == Objective::Colocated {
        colocated_models(s)?;
    }
    // Before 0.12 TRL's `PPOTrainer` put a value head on the policy (trl/trainer/ppo_trainer.py
    // at v0.11.0; the separate value model was `PPOv2Trainer`'s).
    let pinned_before = |release: &[u64]| {
        s.version
            .as_ref()
            .and_then(|v| crate::dialect::version::parse(&v.version))
            .is_some_and(|v| crate::dialect::version::less(&v, release))
    };
    if objective == Objective::Ppo && s.dialect == "trl" && pinned_before(&[0, 12, 0]) {
        return Err(Gap::Unsupported(
            "TRL's PPOTrainer before 0.12 (a value head on the policy)",
        ));
    }
    // TRL's PPO scripts train `sft_model_path`; `model_name_or_path` names the tokenizer.
    let model_key = if objective == Objective::Ppo && s.get(Concept::PolicyModel).is_some() {
        Concept::PolicyModel
    } else {
        Concept::Model
    };
    if let (Concept::PolicyModel, Some((policy, set)), Some((named, _))) =
        (model_key, s.str(model_key), s.str(Concept::Model))
    {
        if policy != named {
            assumed.push(format!(
                "the policy is `{policy}` ({}): TRL's PPO scripts train `sft_model_path` (examples/scripts/ppo/ppo.py:76 at v1.9.0); `{named}` names only the tokenizer",
                set.origin.describe()
            ));
        }
    }
    let described;
    let inline = s.str(model_key).is_none() && s.architecture.is_some();
    let (name, arch) = match (s.str(model_key), &s.architecture) {
        // The named model as the file configures it.
        (Some((name, _)), Some(inline)) if inline.configures_named => {
            used.push(("model", model_key));
            let arch = inline_architecture(inline).ok_or(Gap::Missing("model"))?;
            (name, arch)
        }
        (Some((name, _)), _) => {
            used.push(("model", model_key));
            let Some(arch) = find_model(name, i.models, i.base_dir) else {
                return Err(Gap::UnknownModel(name.to_string()));
            };
            (name, arch)
        }
        // No model named: the one the file describes by its dimensions.
        (None, Some(inline)) => {
            let arch = inline_architecture(inline).ok_or(Gap::Missing("model"))?;
            described = if let Some(heads) = &arch.detector {
                format!("the {} {}", heads.label, inline.place())
            } else if arch.family == Family::Composite {
                let parts: Vec<String> = arch
                    .parts
                    .iter()
                    .map(|p| {
                        format!(
                            "{} ({} x {})",
                            p.name, p.arch.num_layers, p.arch.hidden_size
                        )
                    })
                    .collect();
                format!("the model {}: {}", inline.place(), parts.join(", "))
            } else {
                format!(
                    "the {}-layer, {}-wide model {}",
                    arch.num_layers,
                    arch.hidden_size,
                    inline.place()
                )
            };
            (described.as_str(), arch)
        }
        (None, None) => return Err(Gap::Missing("model")),
    };
    // KTransformers runs the routed experts on the CPU: their weights leave the GPU, and their
    // activations stay where its `kt_cpu_activation` puts them: bounded between all of them on
    // the GPU and what full checkpointing keeps.
    let cpu_experts = s.bool(Concept::CpuExperts).is_some_and(|(b, _)| b);
    let has_experts = |a: &Architecture| a.kind == super::models::Kind::Moe;
    if cpu_experts && !has_experts(&arch) && !arch.parts.iter().any(|p| has_experts(&p.arch)) {
        return Err(Gap::Unsupported(
            "experts on the CPU for a model without experts",
        ));
    }
    // A global batch each GPU takes its share of (openpi): the share when the GPUs are known,
    // else bounded between the whole batch on one GPU and one sample per GPU.
    let mut batch_lower = None;
    let batch = match s.int(Concept::MicroBatch) {
        Some((b, _)) => b,
        None => match linked.and_then(|l| l.int(Concept::MicroBatch)) {
            Some((b, _)) => b,
            None => match (
                s.int(Concept::GlobalBatch),
                i.semantics.global_batch_splits_over_devices,
            ) {
                (Some((g, _)), true) => match i.data_parallel {
                    Some(dp) if dp > 0 => g / dp + i64::from(g % dp != 0),
                    _ => {
                        if g > 1 {
                            bounded.push(Bound::new(
                                format!("the global batch {g} split over any number of GPUs"),
                                Decider::Gpus,
                            ));
                            batch_lower = Some(1);
                        }
                        g
                    }
                },
                _ => return Err(Gap::Missing("micro-batch")),
            },
        },
    };
    used.push(("batch_size", Concept::MicroBatch));
    let mut seq_lower = None;
    // The inputs list names the objective after the batch, where the step's shape is read.
    if objective != Objective::Lm {
        used.push(("objective", Concept::Objective));
    }
    let seq_len = match s.int(Concept::SeqLen) {
        // An RL trainer's sequence is its prompt and completion (below).
        _ if objective.samples() => 0,
        Some((n, _)) => {
            used.push(("seq_len", Concept::SeqLen));
            n.max(1) as u64
        }
        None if matches!(
            arch.family,
            Family::Vit | Family::Resnet | Family::Composite | Family::Opaque
        ) =>
        {
            0
        }
        // Not set and no framework default: any length from one token to the model's context.
        None if arch.max_position_embeddings > 1 => {
            let context = arch.max_position_embeddings;
            bounded.push(Bound::new(
                format!(
                    "sequence length not set: between 1 token and the model's context of {context}"
                ),
                Decider::Setting(Concept::SeqLen),
            ));
            seq_lower = Some(1);
            context
        }
        None => return Err(Gap::Missing("sequence length")),
    };
    // verl packs each micro-batch's real tokens (`use_remove_padding`): prompts are as long
    // as the data's and responses end where sampling stops, so a step holds from a token a
    // sequence up to prompt + response at their limits, which the steps whose responses run to
    // the limit approach; a run sized for the limits is the one that does not stop.
    if objective == Objective::Colocated
        && seq_len > 1
        && s.bool(Concept::PaddingRemoved).is_some_and(|(b, _)| b)
    {
        used.push(("padding removed", Concept::PaddingRemoved));
        bounded.push(Bound::new(
            format!("padding removed: a micro-batch holds its sequences' real tokens, from one each to prompt + response at their limits ({seq_len}), as long as the data and the sampling make them"),
            Decider::Steps,
        ));
        seq_lower = Some(1);
    }
    // GRPO trains on prompt + completion and computes logits for the completion only; TRL's
    // PPO computes them for the whole sequence (its `forward`, ppo_trainer.py:191-219 at
    // v1.9.0) and reads the response's (:820-823).
    let mut grpo_tokens = None;
    let (seq_len, logits_tokens) = match objective {
        Objective::Grpo | Objective::Ppo | Objective::PpoValueHead => {
            let length = if objective != Objective::Grpo {
                Concept::ResponseLength
            } else {
                Concept::CompletionLength
            };
            let (completion, _) = s.int(length).ok_or(Gap::Missing("completion length"))?;
            let completion = completion.max(1) as u64;
            used.push(("completion", length));
            let prompt = match s.int(Concept::PromptLength) {
                Some((p, _)) => {
                    used.push(("prompt", Concept::PromptLength));
                    p.max(0) as u64
                }
                None => {
                    let context = arch.max_position_embeddings.max(completion);
                    let prompt = context - completion;
                    // TRL's PPOConfig has no prompt limit: its scripts tokenize the dataset's
                    // prompts whole (examples/scripts/ppo/ppo.py:118-125 at v1.9.0).
                    let (whose, decider) = if objective == Objective::Ppo {
                        (
                            " (the script takes the dataset's prompts whole)",
                            Decider::Script,
                        )
                    } else {
                        ("", Decider::Setting(Concept::PromptLength))
                    };
                    bounded.push(Bound::new(
                        format!("prompt length not bounded by the file{whose}: between none and the model's context of {context} tokens less the completion's {completion}"),
                        decider,
                    ));
                    seq_lower = Some(completion);
                    prompt
                }
            };
            grpo_tokens = Some((prompt, completion));
            let logits = (objective == Objective::Grpo).then_some(completion);
            (prompt + completion, logits)
        }
        _ => (seq_len, None),
    };
    // A reward model scores each sequence with a one-output head in place of the LM head
    // (AutoModelForSequenceClassification): no logits over the vocabulary, no head weights.
    let arch = if objective == Objective::Reward {
        arch.with_scalar_head()
    } else {
        arch
    };
    let image_size = s
        .int(Concept::ImageSize)
        .map_or(0, |(n, _)| n.max(0) as u64);
    if s.get(Concept::ImageSize).is_some() {
        used.push(("image_size", Concept::ImageSize));
    }
    let load_in_4bit = s.bool(Concept::LoadIn4bit).is_some_and(|(b, _)| b);
    let load_in_8bit = s.bool(Concept::LoadIn8bit).is_some_and(|(b, _)| b);
    if load_in_4bit {
        used.push(("4-bit base", Concept::LoadIn4bit));
    } else if load_in_8bit {
        used.push(("8-bit base", Concept::LoadIn8bit));
    }
    // A base another library quantizes on the fly (LLaMA-Factory's HQQ or EETQ) has weights and
    // kernels hwlint has no recipe for.
    if let Some((q, _)) = s.str(Concept::Quantizer) {
        if !matches!(q, "bitsandbytes" | "torchao") {
            return Err(Gap::Unsupported(
                "a base quantized on the fly by a library other than bitsandbytes (HQQ, EETQ)",
            ));
        }
    }
    let lora_r = s.int(Concept::LoraR).filter(|(r, _)| *r > 0);
    let prequantized = arch.quantization.map(|q| q.bytes_per_weight());
    let quantized_input_kept =
        quantized_input_kept(s, load_in_4bit, load_in_8bit, arch.quantization);
    let frozen = lora_r.is_some() || load_in_4bit || load_in_8bit || prequantized.is_some();
    if frozen && lora_r.is_none() {
        return Err(Gap::Missing("LoRA rank"));
    }

    // DeepSpeed in use: the file is a DeepSpeed config, or names one hwlint read.
    let deepspeed = s.dialect == "deepspeed" || linked.is_some();
    // torchtitan's FSDP2 keeps fp32 sharded parameters and all-gathers each unit in bf16 for
    // compute (MixedPrecisionPolicy; no autocast under FSDP: torchtitan v0.2.2
    // distributed/utils.py:243-263): a 16-bit module with an fp32 master copy, like DeepSpeed.
    // With `training.dtype = "bfloat16"` the parameters themselves are bf16: no master copy.
    // A dialect that says so (Composer's `mixed_precision: DEFAULT|PURE`) does the same.
    let fsdp_on = s.str(Concept::Fsdp).is_some_and(|(f, _)| f != "none");
    let fsdp_mixed = fsdp_on
        && ((s.dialect == "torchtitan"
            && s.str(Concept::WeightDtype).is_none_or(|(w, _)| w == "fp32"))
            || s.bool(Concept::FsdpParams16).is_some_and(|(b, _)| b));
    if fsdp_mixed && s.get(Concept::FsdpParams16).is_some() {
        used.push((
            "FSDP 16-bit compute over fp32 shards",
            Concept::FsdpParams16,
        ));
    }
    let cast_by_framework = s.bool(Concept::MasterWeights).is_some_and(|(b, _)| b);
    if cast_by_framework {
        used.push(("16-bit module with fp32 masters", Concept::MasterWeights));
    }
    let module_16bit = deepspeed || fsdp_mixed || cast_by_framework;
    let compute = match s
        .str(Concept::Precision)
        .or_else(|| linked.and_then(|l| l.str(Concept::Precision)))
        .map(|(p, _)| p)
    {
        // axolotl `bf16: auto`: bf16 where the GPU has it, else fp16.
        Some("auto") if i.target.gpu.bf16 => Precision::Bf16Mixed,
        Some("auto") => Precision::Fp16Mixed,
        Some(p) => match Precision::from_canonical(p) {
            Some(p) => p,
            None => return Err(Gap::Missing("precision")),
        },
        // Neither the file nor the dialect says (a file either Trainer or TRL could run):
        // bounded by fp32 from above and pure 16-bit from below.
        None if s.get(Concept::Precision).is_none() => {
            bounded.push(Bound::new(
                "precision not set in the file: between pure 16-bit and fp32",
                Decider::Setting(Concept::Precision),
            ));
            Precision::Fp32
        }
        None => return Err(Gap::Missing("precision")),
    };
    if s.get(Concept::Precision).is_some() {
        used.push(("precision", Concept::Precision));
    }
    let weights = s.str(Concept::WeightDtype).map(|(w, _)| w);
    if weights.is_some() {
        used.push(("weight dtype", Concept::WeightDtype));
    }
    // Weight dtype and compute precision together give the regime: 16-bit weights trained under
    // autocast keep no fp32 master copy (nothing for autocast to cast), while Lightning-style
    // `-true` precision casts the model itself.
    let sixteen = |p: Precision| match p {
        Precision::Fp16Mixed | Precision::Fp16True => Precision::Fp16True,
        _ => Precision::Bf16True,
    };
    let (precision, precision_lower) = match (compute, weights) {
        (Precision::Bf16True | Precision::Fp16True, _) => (compute, compute),
        // DeepSpeed casts the module to 16 bit itself (bf16/fp16.enabled), whatever the
        // script loaded, and keeps the fp32 master copy in its optimizer; FSDP2's mixed
        // precision computes with 16-bit gathered copies of fp32 shards.
        (Precision::Bf16Mixed | Precision::Fp16Mixed, _) if module_16bit => {
            (sixteen(compute), sixteen(compute))
        }
        (_, Some("bf16")) => (Precision::Bf16True, Precision::Bf16True),
        (_, Some("fp16")) => (Precision::Fp16True, Precision::Fp16True),
        (_, Some("fp32")) => (compute, compute),
        // `auto`: the dtype of the checkpoint's config.json, when the catalog records it.
        (_, Some("auto")) => match arch.torch_dtype.as_deref() {
            Some("bfloat16") => (Precision::Bf16True, Precision::Bf16True),
            Some("float16") => (Precision::Fp16True, Precision::Fp16True),
            Some("float32") => (compute, compute),
            _ => {
                bounded.push(Bound::new(
                    format!("weight dtype `auto` (the checkpoint's own dtype, not recorded for {name}): between 16-bit weights and fp32 masters"),
                    Decider::Setting(Concept::WeightDtype),
                ));
                (compute, sixteen(compute))
            }
        },
        // A frozen LoRA/QLoRA base is loaded in 16-bit by the frameworks that read these
        // configs: nothing of it is fp32 for autocast to cast.
        (Precision::Bf16Mixed | Precision::Fp16Mixed, _) if frozen => {
            (sixteen(compute), sixteen(compute))
        }
        _ => (compute, compute),
    };
    let precision_lower = if s.get(Concept::Precision).is_none()
        && s.get(Concept::WeightDtype).is_none()
        && linked.is_none()
    {
        Precision::Bf16True
    } else {
        precision_lower
    };
    // A converter's FP8/MX matmuls keep low-precision casts hwlint has no recipe for: said, not
    // hidden behind a confident figure.
    // torchao's float8 and MX linears save their high-precision input and weight for backward
    // and cast both again there (pytorch/ao@36027d8 torchao/float8/float8_linear.py:45,
    // torchao/prototype/moe_training/mxfp8_linear.py:108; its grouped MoE matmuls save the
    // padded high-precision input, fp8_grouped_mm.py:155, mxfp8_grouped_mm.py:223): what a step
    // keeps is the higher precision's, and each cast lives for one matmul.
    if let Some((formats, _)) = s.str(Concept::LowPrecisionMatmuls) {
        assumed.push(format!(
            "{} matmuls keep what {} ones keep (torchao saves their high-precision inputs and casts again in backward); the 8- or 4-bit copy each matmul makes while it runs is not counted",
            formats.replace(',', " and ").to_ascii_uppercase(),
            // `bf16-true` / `bf16-mixed`: the dtype the matmuls would otherwise run in.
            precision.as_str().split('-').next().unwrap_or_default()
        ));
    }
    // DeepSpeed keeps 16-bit module weights and gives the optimizer an fp32 master copy.
    let master_weights =
        module_16bit && !frozen && matches!(compute, Precision::Bf16Mixed | Precision::Fp16Mixed);

    let ckpt = match s.get(Concept::ActivationCheckpointing) {
        // TRL's PPOTrainer overrides `train` and never calls `gradient_checkpointing_enable`
        // (trl/experimental/ppo/ppo_trainer.py at v1.9.0: the wrapper's method, :283-285, is
        // never called): whatever the file says, neither model is checkpointed.
        _ if objective == Objective::Ppo => {
            if s.str(Concept::ActivationCheckpointing)
                .is_some_and(|(c, _)| c != "none")
            {
                assumed.push(
                    "`gradient_checkpointing` has no effect under TRL's PPOTrainer, which never turns it on: neither the policy nor the value model is checkpointed".to_string(),
                );
            }
            "none"
        }
        // The framework rematerialises every block, whatever a key says.
        _ if arch.remat => {
            assumed.push(format!(
                "every block rematerialised: {} checkpoints its blocks whatever the config says",
                s.dialect
            ));
            "full"
        }
        // A ResNet or a detector has no blocks hwlint counts as checkpointed: nothing to bound.
        None if arch.family == Family::Resnet => "none",
        // Not in the file and no framework default: bounded by none and full.
        None => {
            bounded.push(Bound::new(
                "activation checkpointing not set in the file: between full checkpointing and none",
                Decider::Setting(Concept::ActivationCheckpointing),
            ));
            "bounded"
        }
        Some(_) => {
            used.push(("checkpointing", Concept::ActivationCheckpointing));
            s.str(Concept::ActivationCheckpointing)
                .map(|(c, _)| c)
                .ok_or(Gap::Missing("activation checkpointing"))?
        }
    };
    // torchtitan spells its mode and option as `selective/op` or `selective/2` (the option
    // defaults to "2": every second block fully checkpointed, v0.2.2 config/job_config.py:651-659).
    let (mode, option) = ckpt.split_once('/').unwrap_or((ckpt, ""));
    let mut checkpoint_every = 1;
    let (checkpointing, checkpointing_lower) = match (mode, option) {
        ("bounded", _) => (Checkpointing::None, Checkpointing::Full),
        ("none", _) => (Checkpointing::None, Checkpointing::None),
        ("full" | "offload", _) => (Checkpointing::Full, Checkpointing::Full),
        ("selective", "op") => (Checkpointing::Selective, Checkpointing::Selective),
        // Megatron's selective recomputation recomputes only the core attention (its score
        // matrix and softmax: `recompute_modules` ["core_attn"]), which a fused attention never
        // keeps: every other activation is kept, as without checkpointing.
        ("selective", "attention") => (Checkpointing::None, Checkpointing::None),
        ("selective", n) if n.is_empty() || n.parse::<u64>().is_ok_and(|n| n > 0) => {
            checkpoint_every = n.parse().unwrap_or(2);
            (Checkpointing::Full, Checkpointing::Full)
        }
        // A memory budget (torchtitan `memory_budget`, compiled) or an option the estimator does
        // not know: it keeps at most what no checkpointing keeps and at least what full
        // checkpointing keeps.
        (other, _) => {
            bounded.push(Bound::new(
                format!("activation checkpointing `{other}`: between full checkpointing and none"),
                Decider::Unmodelled,
            ));
            (Checkpointing::None, Checkpointing::Full)
        }
    };
    // Fused attention unless the file says eager; flex attention keeps no score matrix either
    // but is bounded by eager from above.
    let (attention, attention_lower) = match s.str(Concept::Attention) {
        Some((a, _)) => {
            used.push(("attention", Concept::Attention));
            match Attention::from_canonical(a) {
                Some(a) => (a, a),
                None => {
                    bounded.push(Bound::new(
                        format!("attention `{a}`: between fused (SDPA) and eager attention"),
                        Decider::Unmodelled,
                    ));
                    (Attention::Eager, Attention::Sdpa)
                }
            }
        }
        // transformers runs a model without SDPA eager unless the file asks for flash-attn.
        None if arch.eager_attention => {
            assumed.push(format!(
                "attention eager: transformers has no fused (SDPA) attention for {}, so with no `attn_implementation` it keeps each head's score matrix",
                arch.name
            ));
            (Attention::Eager, Attention::Eager)
        }
        None => (Attention::Sdpa, Attention::Sdpa),
    };
    // Megatron's selective recomputation drops the score matrix eager attention would keep.
    let (attention, attention_lower) = if ckpt == "selective/attention" {
        (Attention::Sdpa, Attention::Sdpa)
    } else {
        (attention, attention_lower)
    };
    // TRL's chunked loss is SFT's default; preference and RL trainers compute log-probabilities
    // from full logits unless the file asks for a fused loss itself.
    let chunked_loss = s
        .bool(Concept::ChunkedLoss)
        .is_some_and(|(b, set)| b && (set.origin.is_explicit() || objective == Objective::Lm));
    if chunked_loss {
        used.push(("chunked loss", Concept::ChunkedLoss));
    }
    let fused_loss = !chunked_loss && s.bool(Concept::FusedLoss).is_some_and(|(b, _)| b);
    if fused_loss {
        used.push(("fused loss", Concept::FusedLoss));
        bounded.push(Bound::new(
            "a fused cross-entropy (`fused_loss`: flash-attn's kernel, no fp32 softmax kept): logits between a chunked loss and the unfused one",
            Decider::Unmodelled,
        ));
    }
    let fused_lower = if s.bool(Concept::FusedKernels).is_some_and(|(b, _)| b)
        || s.is_unknown(Concept::FusedKernels)
    {
        bounded.push(Bound::new(
            "fused kernels (Liger RMSNorm/SwiGLU): activations between full checkpointing and none",
            Decider::Unmodelled,
        ));
        Some(Checkpointing::Full)
    } else {
        None
    };
    let step_in_backward = s.bool(Concept::StepInBackward).is_some_and(|(b, _)| b);
    if step_in_backward {
        used.push(("optimizer in backward", Concept::StepInBackward));
    }
    let optimizer_name = s
        .str(Concept::Optimizer)
        .or_else(|| linked.and_then(|l| l.str(Concept::Optimizer)));
    // Under GaLore the Trainer names the optimizer with its projection (`galore_adamw_8bit`,
    // `_layerwise`): its moments are the base optimizer's, over the projected gradients.
    let galore_on = lora_r.is_none() && s.int(Concept::GaloreRank).is_some_and(|(r, _)| r > 0);
    let (optimizer, optimizer_lower) = match optimizer_name {
        Some((o, _)) => {
            used.push(("optimizer", Concept::Optimizer));
            let base = if galore_on {
                let lower = o.to_ascii_lowercase();
                let stripped = lower.strip_prefix("galore_").unwrap_or(&lower);
                stripped
                    .strip_suffix("_layerwise")
                    .unwrap_or(stripped)
                    .to_string()
            } else {
                o.to_string()
            };
            match Optimizer::from_name(&base) {
                // DeepSpeed builds FusedAdam for Adam/AdamW: no foreach temporary.
                Some(Optimizer::Adamw) if deepspeed => {
                    (Optimizer::AdamwFused, Optimizer::AdamwFused)
                }
                // bitsandbytes pages its state in CUDA unified memory, which the driver moves to
                // host memory under pressure: for a full fine-tune (whose state is most of the
                // need) the GPU holds between all of it and none.
                Some(paged) if paged.paged() && !frozen => {
                    bounded.push(Bound::new(
                        format!("optimizer `{o}` pages its state: between all of it on the GPU and all of it moved to host memory"),
                        Decider::Paging,
                    ));
                    (paged, Optimizer::Sgd)
                }
                Some(o) => (o, o),
                None => {
                    bounded.push(Bound::new(
                        format!("optimizer `{o}`: between no state (SGD) and AdamW with a foreach temporary"),
                        Decider::Unmodelled,
                    ));
                    (Optimizer::Adamw, Optimizer::Sgd)
                }
            }
        }
        None => {
            assumed.push("optimizer AdamW (not set)".into());
            (Optimizer::Adamw, Optimizer::Adamw)
        }
    };
    let lora = match lora_r {
        Some((r, _)) => {
            used.push(("lora", Concept::LoraR));
            let targets: Vec<String> = match s.str(Concept::LoraTargets) {
                Some((t, _)) if t.contains('(') => lora_pattern_modules(t),
                Some((t, _)) => names(t),
                None => {
                    assumed.push("LoRA on q_proj, v_proj (peft's default)".into());
                    vec!["q_proj".into(), "v_proj".into()]
                }
            };
            Some((r as u64, targets))
        }
        None => None,
    };
    // LoRA on stacked expert weights: counted for a MoE model's experts; what peft's
    // parametrization materializes per layer is bounded (a fused MoE kernel never does).
    let lora_parameters = adapter_names(
        s,
        lora.is_some(),
        Concept::LoraTargetParameters,
        "LoRA on parameters",
        &mut used,
    );
    for name in &lora_parameters {
        if super::memory::expert_dims(&arch, name).is_none() {
            assumed.push(format!(
                "LoRA on the parameter `{name}` is not counted: hwlint sizes a MoE model's stacked expert weights only"
            ));
        }
    }
    let merged_experts = lora_parameters
        .iter()
        .any(|n| super::memory::expert_dims(&arch, n).is_some());
    if merged_experts {
        bounded.push(Bound::new(
            "LoRA on expert weights (`target_parameters`): between a fused MoE kernel that never builds W + dW and peft's parametrization, which keeps each layer's merged expert weights for backward",
            Decider::Unmodelled,
        ));
    }
    // The adapters' dropout keeps a mask per adapted input; under DoRA it also recomputes the
    // base matmul on the dropped-out input, and backward keeps the weight copy it ran on
    // (variants.py:233-237, dora.py:141-163). Without dropout DoRA reuses the layer's output.
    let dora = lora.is_some() && s.bool(Concept::Dora).is_some_and(|(b, _)| b);
    if dora {
        used.push(("DoRA", Concept::Dora));
    }
    let lora_dropout =
        lora.is_some() && s.float(Concept::LoraDropout).is_some_and(|(p, _)| p > 0.0);
    if lora_dropout {
        used.push(("LoRA dropout", Concept::LoraDropout));
        if dora && !precision.regime().autocast {
            assumed.push(
                "DoRA's dropout keeps fp32 copies of the adapted weights (16-bit weights with no autocast); a trainer that autocasts keeps them in 16 bit, half as much"
                    .into(),
            );
        }
    }
    // GaLore trains every parameter, projecting the targeted matrices' optimizer state; its
    // layer-wise form steps each parameter in backward (a hook per parameter).
    let galore = match (lora.is_none(), s.int(Concept::GaloreRank)) {
        (true, Some((r, _))) if r > 0 => {
            used.push(("GaLore", Concept::GaloreRank));
            let targets = s
                .str(Concept::GaloreTargets)
                .map_or(vec!["all".to_string()], |(t, _)| names(t));
            Some((r as u64, targets))
        }
        _ => None,
    };
    let galore_layerwise =
        galore.is_some() && s.bool(Concept::GaloreLayerwise).is_some_and(|(b, _)| b);
    let modules_to_save = adapter_names(
        s,
        lora.is_some(),
        Concept::LoraModulesToSave,
        "modules trained whole",
        &mut used,
    );
    for m in &modules_to_save {
        if super::memory::saved_modules(&arch, std::slice::from_ref(m)) == 0 {
            assumed.push(format!(
                "`{m}` trained whole (modules_to_save) is not counted: hwlint sizes only embeddings and the LM head"
            ));
        }
    }
    // Sharding: what the file states, and over how many GPUs. A launcher (accelerate, torchrun
    // wrappers) can add ZeRO/FSDP that the file never mentions, so sharding is known only when
    // the run is on one GPU, or the file states it and the number of GPUs is known.
    let stated = s
        .int(Concept::ZeroStage)
        .or_else(|| linked.and_then(|l| l.int(Concept::ZeroStage)))
        .map(|(z, _)| z.clamp(0, 3) as u8);
    let fsdp = s.str(Concept::Fsdp).map(|(f, _)| f != "none");
    let deepspeed_unread = s.str(Concept::DeepspeedConfig).is_some() && linked.is_none();
    // A stage given on the command line (`hwlint estimate --zero`) wins over the file's FSDP.
    let flagged = matches!(
        s.get(Concept::ZeroStage).map(|z| &z.origin),
        Some(crate::dialect::Origin::Flag { .. })
    );
    let stage = match (fsdp, stated) {
        (_, Some(z)) if flagged => Some(z),
        (Some(true), _) => Some(3),
        (_, Some(z)) => Some(z),
        (Some(false), None) => Some(0),
        (None, None) => None,
    };
    let unknown =
        s.is_unknown(Concept::ZeroStage) || s.is_unknown(Concept::Fsdp) || deepspeed_unread;
    let sharding = match (i.data_parallel, stage) {
        (Some(1), _) => Sharding::Known { stage: 0, gpus: 1 },
        // A file that names no sharding where only the file can shard runs unsharded.
        (_, Some(0) | None) if i.semantics.sharding_in_file_only && !unknown => {
            Sharding::Known { stage: 0, gpus: 1 }
        }
        (Some(n), Some(z)) if !unknown => Sharding::Known {
            stage: z,
            gpus: n.max(1) as u64,
        },
        _ => Sharding::Unknown,
    };
    let (zero_stage, gpus) = match sharding {
        Sharding::Known { stage, gpus } => (stage, gpus),
        Sharding::Unknown => (0, 1),
    };
    // FSDP1 with `use_orig_params` lets a flat parameter mix the frozen base with adapters, and
    // then allocates its gradient at full size; without it each flat parameter is uniform
    // (torch "Must flatten tensors with uniform requires_grad when use_orig_params=False").
    let fsdp1 =
        frozen && fsdp == Some(true) && s.int(Concept::FsdpVersion).is_some_and(|(v, _)| v == 1);
    let orig_params = s.bool(Concept::FsdpOrigParams).map(|(b, _)| b);
    let fsdp1_mixed_flat = fsdp1 && orig_params != Some(false);
    let fsdp1_flat_unknown = fsdp1 && orig_params.is_none();
    // With LoRA the reference is the policy with its adapters disabled: no second copy. Its
    // forward runs in the step of paired preference and KTO training (GRPO's runs while the
    // completions are scored, between steps).
    let reference = s.bool(Concept::ReferenceModel).is_some_and(|(b, _)| b);
    let reference_copy = s.bool(Concept::ReferenceCopy).is_some_and(|(b, _)| b);
    let may_have_reference = reference && (lora_r.is_none() || reference_copy);
    if reference {
        used.push(("reference", Concept::ReferenceModel));
    }
    if may_have_reference && lora_r.is_some() {
        used.push(("reference copy", Concept::ReferenceCopy));
    }
    // A reference loaded from another model is that model's size (its forward's working set is
    // counted as the policy's).
    let reference_params = match s.str(Concept::ReferenceModelName) {
        Some((other, _)) if may_have_reference && other != name => {
            match find_model(other, i.models, i.base_dir) {
                Some(a) => {
                    used.push(("reference model", Concept::ReferenceModelName));
                    Some(super::params::count(&a).total)
                }
                None => {
                    assumed.push(format!(
                        "the reference `{other}` is not in hwlint's catalog: sized as the policy"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    if may_have_reference
        && lora_r.is_some()
        && (load_in_4bit || load_in_8bit || prequantized.is_some())
    {
        assumed.push(
            "the reference, its own copy of the model, is counted unquantized at 16 bit per weight: the upper side where it loads quantized like the policy".to_string(),
        );
    }
    let reference_forward = reference
        && matches!(
            objective,
            Objective::Paired | Objective::Preference | Objective::Kto
        );
    let flag = |c: Concept| {
        s.bool(c)
            .or_else(|| linked.and_then(|l| l.bool(c)))
            .is_some_and(|(b, _)| b)
    };
    let deepspeed_zero3 = zero_stage >= 3 && fsdp != Some(true);
    let sampled = grpo_tokens.map_or_else(Sampling::default, |tokens| {
        sampling(
            i,
            batch.max(1) as u64,
            tokens,
            checkpointing != Checkpointing::None,
            deepspeed_zero3,
        )
    });
    assumed.extend(sampled.assumed);
    bounded.extend(sampled.bound);
    used.extend(sampled.used);
    let (generation, generation_rows_lower) = (sampled.generation, sampled.rows_lower);
    let mut phases = phases(i, objective, reference)?;
    assumed.extend(phases.assumed.iter().cloned());
    bounded.extend(phases.bound.clone());
    used.extend(phases.used.iter().copied());
    // The bytes of a stored weight: a 16-bit module's under DeepSpeed's or FSDP's fp32 masters,
    // else the weights' own. PPO rollouts call their models outside the training autocast, in
    // this dtype.
    let stored = if master_weights {
        precision.regime().compute
    } else {
        precision.regime().residual
    };
    // TRL's PPO rollout: the prompts of a whole update (micro-batch x accumulation) are
    // sampled `local_rollout_forward_batch_size` at a time, and their no-grad forwards run as
    // many rows at once.
    let generation = match (objective, generation) {
        (Objective::Ppo, Some(g)) => {
            let local = (batch.max(1) as u64).saturating_mul(
                s.int(Concept::GradAccum)
                    .or_else(|| linked.and_then(|l| l.int(Concept::GradAccum)))
                    .map_or(1, |(g, _)| g.max(1) as u64),
            );
            let rows = s
                .int(Concept::RolloutBatch)
                .map_or(local, |(r, _)| (r.max(1) as u64).min(local));
            if s.get(Concept::RolloutBatch).is_some() {
                used.push(("rollout batch", Concept::RolloutBatch));
            }
            phases.logprob_forward = Some(super::step::LogprobForward {
                rows,
                logits_copies: 1,
                optimizer_kept: true,
                compute_bytes: Some(stored),
                layers_kept: true,
                cache_kept: true,
                scores_held: true,
            });
            Some(super::step::Generation {
                rows: Some(rows),
                steps: 1,
                scores_rows: local,
                dtype_bytes: Some(stored as u64),
                ..g
            })
        }
        // LLaMA-Factory's PPO calls `generate` on the unwrapped model outside its autocast
        // (train/ppo/trainer.py:359-366), in the weights' dtype.
        (Objective::PpoValueHead, Some(g)) => Some(super::step::Generation {
            dtype_bytes: Some(stored as u64),
            ..g
        }),
        (_, g) => g,
    };
    let plan = Plan {
        model: name.to_string(),
        xla_buffers: false,
        arch,
        batch: batch.max(1) as u64,
        seq_len,
        image_size,
        precision,
        optimizer,
        checkpointing,
        attention,
        lora,
        lora_parameters,
        merged_experts,
        dora,
        lora_dropout,
        modules_to_save,
        galore,
        load_in_4bit,
        double_quant: s.bool(Concept::DoubleQuant).is_some_and(|(b, _)| b),
        load_in_8bit,
        prequantized,
        quantized_input_kept,
        master_weights,
        // FSDP2 reduce-scatters gradients in fp32 (`mixed_precision_reduce`) into the fp32
        // shards the optimizer steps in place.
        fp32_reduce: master_weights && fsdp_mixed,
        chunked_loss,
        step_in_backward: step_in_backward || galore_layerwise,
        checkpoint_every,
        cpu_experts,
        // verl's reference is moved to the CPU between its forwards (below).
        reference_model: may_have_reference && objective != Objective::Colocated,
        sequences: objective.sequences(),
        reference_forward,
        // verl's actor reads the log-probabilities of every token's logits with flash-attn's
        // cross-entropy or a log-softmax (verl/utils/torch_functional.py:72-100 at
        // verl@b178a3cd5), as TRL's row-wise one keeps them.
        logits_in_place: phases.logits_in_place,
        logprob_loss: objective == Objective::Colocated
            || i.semantics.row_log_softmax_loss
                && matches!(
                    objective,
                    Objective::Preference
                        | Objective::Paired
                        | Objective::Kto
                        | Objective::Grpo
                        | Objective::Ppo
                )
            // TRL 0.9's PPO reads every token's log-softmax (see `value_head`).
            || objective == Objective::PpoValueHead,
        value_head: matches!(
            objective,
            Objective::RewardValueHead | Objective::PpoValueHead
        ),
        logits_tokens,
        logprob_tokens: match (objective, grpo_tokens) {
            (Objective::Ppo, Some((_, completion))) => Some(completion),
            _ => None,
        },
        scorer_params: 0,
        scorer_bytes: 2.0,
        reference_params,
        reference_bytes: i
            .semantics
            .frozen_models_in_compute_dtype
            .then(|| precision.regime().compute),
        checkpointing_fixed: objective == Objective::Ppo,
        unmodelled_kernels: false,
        flat_grads: fsdp1_mixed_flat,
        // verl accumulates its per-GPU mini-batch's micro-batches (see `phases`).
        accumulating: objective == Objective::Colocated
            || s.int(Concept::GradAccum)
                .or_else(|| linked.and_then(|l| l.int(Concept::GradAccum)))
                .is_some_and(|(g, _)| g > 1),
        // Only where the dialect has read that its trainer wraps the model in plain DDP.
        ddp_buckets: i.semantics.ddp_gradient_buckets
            && zero_stage == 0
            && i.data_parallel.is_some_and(|d| d > 1),
        zero_stage,
        gpus,
        offload_optimizer: flag(Concept::OffloadOptimizer),
        offload_params: flag(Concept::OffloadParams),
        tensor_parallel: s
            .int(Concept::TensorParallel)
            .map_or(1, |(t, _)| t.max(1) as u64),
        pipeline_parallel: s
            .int(Concept::PipelineParallel)
            .map_or(1, |(t, _)| t.max(1) as u64),
        context_parallel: s
            .int(Concept::ContextParallel)
            .map_or(1, |(c, _)| c.max(1) as u64),
        generation,
        engine: phases.engine,
        logprob_forward: phases.logprob_forward,
        critic: None,
        reward_forward: None,
        reward_engine: phases.reward_engine,
    };
    let critic =
        if objective == Objective::Colocated && s.bool(Concept::Critic).is_some_and(|(b, _)| b) {
            Some(critic_for(i, &plan, &mut used, &mut assumed)?)
        } else if objective == Objective::Ppo {
            Some(joint_critic_for(i, &plan, &mut used)?)
        } else {
            None
        };
    let scorer_params = if matches!(objective, Objective::Ppo | Objective::PpoValueHead) {
        scorer_params(i, &mut used)?
    } else {
        0
    };
    // TRL's PPO scripts load the reward model with the policy's dtype (ppo.py:57-75 at v1.9.0);
    // LLaMA-Factory loads it frozen in the compute dtype (`load_model(is_trainable=False)`,
    // train/trainer_utils.py:185-187, model/loader.py).
    let scorer_bytes = if objective == Objective::Ppo && !i.semantics.frozen_models_in_compute_dtype
    {
        stored
    } else {
        precision.regime().compute
    };
    if objective == Objective::PpoValueHead {
        assumed.push(
            "the value head (hidden size + 1 weights) is not counted; the rollout's no-grad forwards of the policy, the reference and the reward model run the micro-batch's rows without gradients, less than the update, and are not counted".to_string(),
        );
    }
    // The legacy worker's forward; the reward loop's engine is an instant of `phases`.
    let reward_forward = if objective == Objective::Colocated
        && s.bool(Concept::RewardModel).is_some_and(|(b, _)| b)
        && !reward_loop(s)
    {
        if s.bool(Concept::RewardPaddingRemoved)
            .is_some_and(|(b, _)| b)
        {
            assumed.push(
                "the reward model's forward is counted at its full rows (padding removed, it holds their real tokens only: less)".to_string(),
            );
        }
        Some(reward_forward_for(i, &plan, &mut used)?)
    } else {
        None
    };
    let plan = Plan {
        critic,
        scorer_params,
        scorer_bytes,
        reward_forward,
        // JAX runs: the dialects that read XLA_PYTHON_CLIENT_MEM_FRACTION (`mem_fraction` also
        // carries the share TRL leaves beside vLLM, which is no JAX run).
        xla_buffers: s.get(Concept::MemFraction).is_some(),
        ..plan
    };
    let flat_lower = fsdp1_flat_unknown.then(|| {
        bounded.push(Bound::new(
            "FSDP1 `use_orig_params` not set: the frozen base's flat parameters with or without gradients",
            Decider::Setting(Concept::FsdpOrigParams),
        ));
        false
    });
    // The file names the trainer's loss only where the dialect says which trainer runs it
    // (LLaMA-Factory's `stage` and `pref_loss`); a TRL recipe with a `beta` can be DPO's, KTO's,
    // ORPO's or CPO's.
    if reference && objective == Objective::Preference {
        bounded.push(Bound::new(
            "preference training: with or without a reference model (DPO and KTO run one, ORPO and SimPO do not)",
            Decider::Script,
        ));
    }
    // A model the config describes runs the framework's own block code (OLMo's fused q/k/v
    // projection and norms), not the Hugging Face modules the activation recipes were measured
    // on: its activations are bounded, as fused kernels are.
    // V-JEPA's ViT blocks and llm-foundry's MPT are the catalog's recipes' own modules.
    let own_blocks = inline && s.architecture.as_ref().is_some_and(|m| m.own_blocks);
    let own_blocks_lower = own_blocks.then(|| {
        bounded.push(Bound::new(
            "the framework's own blocks (dimensions from the config, not a catalog model): activations between full checkpointing and none",
            Decider::Unmodelled,
        ));
        Checkpointing::Full
    });
    // Parts whose tokens vary from step to step (V-JEPA's random masks): bounded between a
    // typical step and the most a step keeps.
    let varying: Vec<String> = plan
        .arch
        .parts
        .iter()
        .flat_map(|p| {
            let tokens = p
                .tokens_least
                .zip(p.tokens)
                .filter(|(least, most)| least < most)
                .map(|(least, most)| format!("{} ~{least}-{most} tokens", p.name));
            let count = p
                .count_least
                .filter(|least| *least < p.count)
                .map(|least| match least {
                    0 => format!("{} at the high end only", p.name),
                    _ => format!("{} x {least}-{}", p.name, p.count),
                });
            let image = p
                .image_size_least
                .zip(p.image_size)
                .filter(|(least, most)| least < most)
                .map(|(least, most)| format!("{} images {least}-{most} px", p.name));
            count.into_iter().chain(image).chain(tokens)
        })
        .collect();
    if !varying.is_empty() {
        bounded.push(match &plan.arch.least_when {
            Some(when) => Bound::new(format!("{when} ({})", varying.join(", ")), Decider::Data),
            None => Bound::new(
                format!(
                    "tokens the random masks leave per sample, from a typical step's to the most a step keeps ({})",
                    varying.join(", ")
                ),
                Decider::Steps,
            ),
        });
    }
    let experts_lower = cpu_experts.then(|| {
        bounded.push(Bound::new(
            "routed experts on the CPU (KTransformers): their activations between all on the GPU and none",
            Decider::Unmodelled,
        ));
        Checkpointing::Full
    });
    // A bound on the activations themselves (kernels or blocks hwlint does not model) has
    // every block checkpointed at its low end, whatever share of blocks the file checkpoints.
    let activations_lower = experts_lower.or(fused_lower).or(own_blocks_lower);
    let sure_reference = objective != Objective::Preference;
    let lower = (!bounded.is_empty()).then(|| Plan {
        unmodelled_kernels: fused_lower.is_some(),
        reference_model: plan.reference_model && sure_reference,
        reference_forward: plan.reference_forward && sure_reference,
        flat_grads: flat_lower.unwrap_or(plan.flat_grads),
        precision: precision_lower,
        checkpoint_every: if activations_lower.is_some() {
            1
        } else {
            plan.checkpoint_every
        },
        checkpointing: activations_lower.unwrap_or(checkpointing_lower),
        attention: attention_lower,
        optimizer: optimizer_lower,
        batch: batch_lower.unwrap_or(plan.batch),
        seq_len: seq_lower.unwrap_or(plan.seq_len),
        chunked_loss: plan.chunked_loss || fused_loss,
        merged_experts: false,
        logprob_forward: plan.logprob_forward.map(|f| super::step::LogprobForward {
            logits_copies: phases.logits_copies_lower.unwrap_or(f.logits_copies),
            ..f
        }),
        logits_in_place: plan.logits_in_place || phases.logits_copies_lower.is_some(),
        // A prompt the file does not bound is none at the low end, as in training.
        generation: plan.generation.map(|g| super::step::Generation {
            prompt: if seq_lower.is_some() { 0 } else { g.prompt },
            rows: generation_rows_lower.or(g.rows),
            ..g
        }),
        ..plan.clone()
    });
    // At the low end, a critic that packs its tokens too holds one a sequence, as the actor;
    // one trained in the policy's step (TRL's PPO value model) reads the policy's sequences.
    let critic_packs = s
        .bool(Concept::CriticPaddingRemoved)
        .is_some_and(|(b, _)| b);
    let lower = lower.map(|mut l| {
        if let (Some(c), Some(seq)) = (&mut l.critic, seq_lower) {
            if critic_packs || c.joint {
                c.plan.seq_len = seq;
            }
        }
        l
    });
    // At the low end, the parts whose tokens vary see a typical step's.
    let lower = lower.map(|mut l| {
        // A part only the high end has (a camera's own encoder past the least count).
        l.arch.parts.retain(|p| p.count_least != Some(0));
        for p in &mut l.arch.parts {
            if let Some(t) = p.tokens_least {
                p.tokens = Some(t);
            }
            if let Some(n) = p.count_least {
                p.count = n;
            }
            if let Some(side) = p.image_size_least {
                p.image_size = Some(side);
            }
        }
        l
    });
    Ok(Planned {
        plan,
        lower,
        assumed,
        bounded,
        used,
        sharding,
    })
}

/// verl's runs beside the actor that hwlint has no recipe for: a critic it cannot tell runs
/// (`need_critic`, verl/trainer/ppo/utils.py:86-97 at verl@b178a3cd5, on a run-time value), a
/// reward model on the same GPUs (main_ppo.py:221-244), the TensorRT-LLM rollout, the Megatron
/// actor, LoRA.
fn colocated_models(s: &TrainingSetup) -> Result<(), Gap> {
    if s.is_unknown(Concept::Critic) {
        return Err(Gap::Missing("critic"));
    }
    // Since v0.7.0 an inference engine serves the reward model by default (the reward loop:
    // `use_reward_loop`, _generated_ppo_trainer.yaml:537 at verl@b178a3cd5). It sleeps between
    // its scorings unless `free_cache_engine` is false, when it keeps its share through every
    // phase (vllm_async_server.py:564-565), beside the rollout engine's: not estimated.
    if reward_loop(s) && s.bool(Concept::RewardEngineSleeps).is_some_and(|(b, _)| !b) {
        return Err(Gap::Unsupported(
            "verl's reward loop with `free_cache_engine: false` (its engine keeps its share of each card through every phase, beside the rollout engine's)",
        ));
    }
    // TensorRT-LLM sizes its KV cache to a fraction of the memory free when it starts.
    if s.str(Concept::Generator)
        .is_some_and(|(g, _)| g == "trtllm")
    {
        return Err(Gap::Unsupported(
            "verl's TensorRT-LLM rollout, which takes its share of the memory free when it starts",
        ));
    }
    // The Megatron actor keeps bf16 weights and its distributed optimizer's fp32 shards, with
    // offload switches of its own (megatron_workers.py:344-374): not read.
    if s.str(Concept::Fsdp).is_some_and(|(f, _)| f == "none") {
        return Err(Gap::Unsupported(
            "verl's Megatron actor (its distributed optimizer and offload switches are not read)",
        ));
    }
    // LoRA on an actor verl loads in fp32 (fsdp_workers.py:324-327): a frozen fp32 base.
    if s.int(Concept::LoraR).is_some_and(|(r, _)| r > 0) || s.is_unknown(Concept::LoraR) {
        return Err(Gap::Unsupported(
            "LoRA on verl's actor, whose frozen base stays in fp32",
        ));
    }
    Ok(())
}

/// verl's critic: its model with a one-output head (`AutoModelForTokenClassification`,
/// `num_labels = 1`, fsdp_workers.py:1307 at verl@b178a3cd5: no vocabulary logits), trained like
/// the actor (fp32 weights unless `model_dtype`, fsdp_workers.py:1289; bf16 compute under FSDP's
/// mixed precision, :1395-1403; sharded over the same GPUs) on the actor's sequences, with its
/// own micro-batch and checkpointing (critic/dp_critic.yaml). Its optimizer frees the gradients
/// after each update (dp_critic.py:262), and its offload switches move its states off the GPUs
/// outside its own phases (fsdp_workers.py:1560-1586).
fn critic_for(
    i: &Inputs,
    actor: &Plan,
    used: &mut Vec<(&'static str, Concept)>,
    assumed: &mut Vec<String>,
) -> Result<super::step::Critic, Gap> {
    let s = i.setup;
    let yes = |c: Concept| s.bool(c).is_some_and(|(b, _)| b);
    let (name, _) = s
        .str(Concept::CriticModel)
        .ok_or(Gap::Missing("critic model"))?;
    let arch = find_model(name, i.models, i.base_dir).ok_or(Gap::Missing("critic model"))?;
    let batch = s
        .int(Concept::CriticMicroBatch)
        .map(|(b, _)| b.max(1) as u64)
        .ok_or(Gap::Missing("critic micro-batch"))?;
    let checkpointing = match s.str(Concept::CriticCheckpointing).map(|(c, _)| c) {
        Some("full") => Checkpointing::Full,
        Some("none") => Checkpointing::None,
        _ => return Err(Gap::Missing("critic checkpointing")),
    };
    used.extend([
        ("critic", Concept::Critic),
        ("critic model", Concept::CriticModel),
        ("critic batch_size", Concept::CriticMicroBatch),
        ("critic checkpointing", Concept::CriticCheckpointing),
    ]);
    for (what, c) in [
        ("critic parameters offloaded", Concept::CriticOffloadParams),
        (
            "critic optimizer offloaded",
            Concept::CriticOffloadOptimizer,
        ),
    ] {
        if s.get(c).is_some() {
            used.push((what, c));
        }
    }
    assumed.push(
        "the critic computes as the actor does (16-bit over fp32 shards, on the actor's sequences); its no-grad value forward, with no vocabulary logits, is less than its update and not counted".to_string(),
    );
    let mut p = value_model_plan(name, arch, actor);
    p.batch = batch;
    p.checkpointing = checkpointing;
    Ok(super::step::Critic {
        plan: Box::new(p),
        params_kept: !yes(Concept::CriticOffloadParams),
        optimizer_kept: !yes(Concept::CriticOffloadOptimizer),
        actor_params_kept: !yes(Concept::PhaseOffloadParams),
        actor_optimizer_kept: !yes(Concept::PhaseOffloadOptimizer),
        joint: false,
    })
}

/// A value model trained beside the policy: its model with a one-output head in place of the
/// LM head, stepping as the policy does (micro-batch, sequences, precision, optimizer,
/// sharding, accumulation).
fn value_model_plan(name: &str, arch: Architecture, actor: &Plan) -> Plan {
    let mut p = Plan::new(name, arch.with_scalar_head());
    p.batch = actor.batch;
    p.seq_len = actor.seq_len;
    p.precision = actor.precision;
    p.optimizer = actor.optimizer;
    p.attention = actor.attention;
    p.master_weights = actor.master_weights;
    p.fp32_reduce = actor.fp32_reduce;
    p.zero_stage = actor.zero_stage;
    p.gpus = actor.gpus;
    p.accumulating = actor.accumulating;
    p
}

/// The model a setting names beside the trained one (a value or reward model) and its
/// architecture; `what` names it when the file does not.
fn model_named<'i>(
    i: &'i Inputs,
    concept: Concept,
    what: &'static str,
) -> Result<(&'i str, Architecture), Gap> {
    let (name, _) = i.setup.str(concept).ok_or(Gap::Missing(what))?;
    let arch = find_model(name, i.models, i.base_dir)
        .ok_or_else(|| Gap::UnknownModel(name.to_string()))?;
    Ok((name, arch))
}

/// TRL's PPO value model: `AutoModelForSequenceClassification` with one label, loaded from
/// `reward_model_path` with the policy's dtype (examples/scripts/ppo/ppo.py:70-72 at v1.9.0),
/// trained whole (peft wraps only the policy, ppo_trainer.py:431) in the policy's step on the
/// same micro-batch of sequences, and never checkpointed (the wrapper's
/// `gradient_checkpointing_enable` reaches the policy only, :283-285).
fn joint_critic_for(
    i: &Inputs,
    actor: &Plan,
    used: &mut Vec<(&'static str, Concept)>,
) -> Result<super::step::Critic, Gap> {
    let (name, arch) = model_named(i, Concept::CriticModel, "value model")?;
    used.push(("value model", Concept::CriticModel));
    let mut p = value_model_plan(name, arch, actor);
    p.checkpointing = Checkpointing::None;
    p.offload_optimizer = actor.offload_optimizer;
    p.offload_params = actor.offload_params;
    // Its no-grad forward over the rollout (`get_reward`, experimental/utils.py at v1.9.0:
    // every hidden state, `use_cache=False`, its one-output head) while the samples' scores are
    // held; the reward model's, loaded from the same path, has the same shape.
    p.generation = actor.generation;
    p.logprob_forward = actor.logprob_forward.map(|f| super::step::LogprobForward {
        logits_copies: 0,
        cache_kept: false,
        ..f
    });
    Ok(super::step::Critic {
        plan: Box::new(p),
        params_kept: true,
        optimizer_kept: true,
        actor_params_kept: true,
        actor_optimizer_kept: true,
        joint: true,
    })
}

/// verl's legacy reward worker (`use_reward_loop: false`; the only one before v0.7.0): the
/// reward model as a token classifier with one output, loaded in bf16 and wrapped in FSDP with
/// its parameters offloaded to the CPU (fsdp_workers.py:1626 `RewardModelWorker`, :1729,
/// :1755 `CPUOffload(offload_params=True)` at verl@b178a3cd5; the same in v0.4.1-v0.7.0),
/// scoring `micro_batch_size_per_gpu` sequences at a time without gradients under bf16 autocast
/// (`_forward_micro_batch`, :1781), re-tokenized to `max_length` or the actor's prompt +
/// response (`_switch_chat_template`).
fn reward_forward_for(
    i: &Inputs,
    actor: &Plan,
    used: &mut Vec<(&'static str, Concept)>,
) -> Result<super::step::RewardForward, Gap> {
    let s = i.setup;
    let (name, arch) = model_named(i, Concept::RewardScorer, "reward model")?;
    let rows = s
        .int(Concept::RewardMicroBatch)
        .map(|(b, _)| b.max(1) as u64)
        .ok_or(Gap::Missing("reward model micro-batch"))?;
    used.extend([
        ("reward model", Concept::RewardScorer),
        ("reward model batch_size", Concept::RewardMicroBatch),
    ]);
    let seq_len = match s.int(Concept::RewardSeqLen) {
        Some((n, _)) => {
            used.push(("reward model seq_len", Concept::RewardSeqLen));
            n.max(1) as u64
        }
        None => actor.seq_len,
    };
    let mut p = Plan::new(name, arch.with_scalar_head());
    p.batch = rows;
    p.seq_len = seq_len;
    p.precision = Precision::Bf16True;
    p.attention = actor.attention;
    let yes = |c: Concept| s.bool(c).is_some_and(|(b, _)| b);
    Ok(super::step::RewardForward {
        plan: Box::new(p),
        actor_params_kept: !yes(Concept::PhaseOffloadParams),
        actor_optimizer_kept: !yes(Concept::PhaseOffloadOptimizer),
    })
}

/// TRL's PPO reward model: `AutoModelForSequenceClassification` with one label from
/// `reward_model_path` (ppo.py:73-75 at v1.9.0), frozen on the training GPUs (ppo_trainer.py:
/// 553-568), or LLaMA-Factory's `reward_model_type: full` (train/trainer_utils.py:177-190):
/// its parameter count, without an LM head. TRL's reward forward has the value model's shape
/// (`joint_critic_for`).
fn scorer_params(i: &Inputs, used: &mut Vec<(&'static str, Concept)>) -> Result<u64, Gap> {
    if i.setup.str(Concept::RewardScorer).is_none() {
        return Ok(0);
    }
    let (_, arch) = model_named(i, Concept::RewardScorer, "reward model")?;
    used.push(("reward model", Concept::RewardScorer));
    Ok(super::params::count(&arch.with_scalar_head()).total)
}

/// verl's reward model is served by the reward loop's engine on the actor's GPUs.
fn reward_loop(s: &TrainingSetup) -> bool {
    s.bool(Concept::RewardModel).is_some_and(|(b, _)| b)
        && s.bool(Concept::RewardLoop).is_none_or(|(b, _)| b)
}

/// The instants of an RL loop beside the update: a colocated engine's sampling when it sleeps
/// through the update, and verl's log-prob forwards.
#[derive(Default)]
struct Phases {
    engine: Option<super::step::Engine>,
    /// verl's reward loop engine, awake while it scores.
    reward_engine: Option<super::step::Engine>,
    logprob_forward: Option<super::step::LogprobForward>,
    /// The log-prob forward's vocabulary-wide copies at the low end, when bounded (and then
    /// the update's logits in place at the low end too).
    logits_copies_lower: Option<u64>,
    /// flash-attn's cross-entropy reads the logits in place (see [`Plan`]).
    logits_in_place: bool,
    assumed: Vec<String>,
    bound: Option<Bound>,
    used: Vec<(&'static str, Concept)>,
}

fn phases(i: &Inputs, objective: Objective, reference: bool) -> Result<Phases, Gap> {
    let s = i.setup;
    let mut out = Phases::default();
    let yes = |c: Concept| s.bool(c).is_some_and(|(b, _)| b);
    let engine_on = match objective {
        Objective::Colocated => true,
        Objective::Grpo => s.str(Concept::Generator).is_some_and(|(g, _)| g == "vllm"),
        _ => false,
    };
    let share = s
        .float(Concept::ColocatedShare)
        .map(|(f, _)| f)
        .filter(|f| *f > 0.0 && *f < 1.0);
    if let (true, Some(share), true) = (engine_on, share, yes(Concept::EngineSleeps)) {
        // vLLM reserves its share of the whole card, context included (gpu_worker.py:183-195
        // at vLLM 0.11.0), and sleeps through the update (level 1 or 2: its weights and KV
        // cache leave the GPU).
        out.engine = Some(super::step::Engine {
            reserved: share * i.target.gpu.vram_bytes as f64,
            params_kept: !yes(Concept::PhaseOffloadParams),
            optimizer_kept: !yes(Concept::PhaseOffloadOptimizer),
        });
        out.used.push(("engine share", Concept::ColocatedShare));
        out.used.push(("engine sleeps", Concept::EngineSleeps));
        for (name, c) in [
            (
                "parameters offloaded between phases",
                Concept::PhaseOffloadParams,
            ),
            (
                "optimizer offloaded between phases",
                Concept::PhaseOffloadOptimizer,
            ),
        ] {
            if s.get(c).is_some() {
                out.used.push((name, c));
            }
        }
        out.assumed.push(
            "what the sleeping engine keeps through the update (its CUDA graphs, unless it runs eagerly) is not counted".to_string(),
        );
    }
    if objective != Objective::Colocated {
        return Ok(out);
    }
    // The reward loop's engine (a vLLM or SGLang server of its own, one TP shard on every GPU
    // of the actor's pool: reward_model.py:50-87, ray_trainer.py:811-826 at verl@b178a3cd5)
    // wakes to score after the rollout engine has gone to sleep, then sleeps at vLLM's level 1,
    // its weights to pinned host memory and its KV cache freed (ray_trainer.py:1397, 1466-1484;
    // experimental/reward_loop/reward_loop.py:282-311; vllm_async_server.py:570-571). Awake it
    // holds the share of each card it was started with (`reward_model.rollout.
    // gpu_memory_utilization`, default 0.5), beside the trainer's states that their offload
    // switches leave on the GPUs; it never overlaps sampling or an update.
    if reward_loop(s) {
        let share = s
            .float(Concept::RewardEngineShare)
            .map(|(f, _)| f)
            .filter(|f| *f > 0.0 && *f < 1.0)
            .ok_or(Gap::Missing("reward engine share"))?;
        out.reward_engine = Some(super::step::Engine {
            reserved: share * i.target.gpu.vram_bytes as f64,
            params_kept: !yes(Concept::PhaseOffloadParams),
            optimizer_kept: !yes(Concept::PhaseOffloadOptimizer),
        });
        out.used
            .push(("reward engine share", Concept::RewardEngineShare));
        out.used
            .push(("reward engine sleeps", Concept::RewardEngineSleeps));
        out.assumed.push(
            "what the sleeping reward engine keeps on each GPU through the other phases (its processes' CUDA contexts) is not counted".to_string(),
        );
    }
    out.assumed.push(
        "each update accumulates micro-batches (the per-GPU mini-batch, `ppo_mini_batch_size` x `rollout.n` over the GPUs, is split into them: dp_actor.py:551-558), so the gradient shards stay allocated through each one".to_string(),
    );
    // The old log-probs (the actor, no grad) and, with a KL term, the reference's: each runs
    // its rows per GPU with the actor's states where the offload switches leave them
    // (fsdp_workers.py:994-1034, 1058). The reference's parameters live on the CPU and are
    // gathered unit by unit like the actor's (fsdp_workers.py:526, 552).
    let rows = |c: Concept| s.int(c).map(|(n, _)| n.max(1) as u64);
    let actor_rows =
        rows(Concept::LogprobMicroBatch).ok_or(Gap::Missing("log-prob micro-batch"))?;
    out.used.push(("log-prob rows", Concept::LogprobMicroBatch));
    let ref_rows = if reference {
        let r = rows(Concept::ReferenceLogprobMicroBatch);
        if r.is_some() {
            out.used.push((
                "reference log-prob rows",
                Concept::ReferenceLogprobMicroBatch,
            ));
        }
        r
    } else {
        None
    };
    // flash-attn's cross-entropy reads the logits in place, in the update (its gradient written
    // into them) and in the log-prob forward; without flash-attn a log-softmax copy of them is
    // made and kept (verl/utils/torch_functional.py:31-38, 72-100). verl's padding-free path
    // imports flash-attn on a GPU (verl/utils/attention_utils.py:30), so with it flash-attn is
    // there. verl's fused kernels never make the logits (dp_actor.py:252-254).
    let fused = yes(Concept::ChunkedLoss);
    let in_place = yes(Concept::LogitsInPlace);
    if in_place {
        out.used.push(("logits in place", Concept::LogitsInPlace));
    }
    out.logits_in_place = in_place;
    out.logprob_forward = Some(super::step::LogprobForward {
        rows: actor_rows.max(ref_rows.unwrap_or(0)),
        logits_copies: match (fused, in_place) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        },
        optimizer_kept: !yes(Concept::PhaseOffloadOptimizer),
        compute_bytes: None,
        layers_kept: false,
        cache_kept: false,
        scores_held: false,
    });
    if !fused && !in_place {
        out.logits_copies_lower = Some(1);
        out.bound = Some(Bound::new(
            "the loss's logits alone (flash-attn's cross-entropy, when installed) or with a log-softmax copy of them",
            Decider::Unmodelled,
        ));
    }
    if reference {
        out.assumed.push(
            "the reference model sits on the CPU between its forwards (verl offloads it): only its units in flight are on the GPUs".to_string(),
        );
    }
    Ok(out)
}

/// What an RL trainer's sampling between updates holds on the training GPUs, read by
/// [`sampling`], with what the plan says of it.
#[derive(Default)]
struct Sampling {
    generation: Option<super::step::Generation>,
    /// The rows sampled at once at the low end, when the file leaves them to the GPU count.
    rows_lower: Option<u64>,
    assumed: Option<String>,
    bound: Option<Bound>,
    used: Vec<(&'static str, Concept)>,
}

/// What an RL trainer's sampling between updates holds on the training GPUs. vLLM samples
/// elsewhere or in the colocated share HW101 already takes off the card; transformers'
/// `model.generate` runs in the training process (TRL: grpo_trainer.py:1852-1863 at v1.9.0).
fn sampling(
    i: &Inputs,
    batch: u64,
    (prompt, completion): (u64, u64),
    checkpointed: bool,
    deepspeed_zero3: bool,
) -> Sampling {
    let s = i.setup;
    let int = |c: Concept| {
        s.int(c)
            .or_else(|| i.linked.and_then(|l| l.int(c)))
            .map(|(n, _)| n.max(1) as u64)
    };
    let yes = |c: Concept| s.bool(c).map(|(b, _)| b);
    let not_counted = |why: &str| {
        Sampling {
        assumed: Some(format!(
            "the sampling between updates is not counted ({why}): the figures are the training step's"
        )),
        ..Sampling::default()
    }
    };
    match s.str(Concept::Generator).map(|(g, _)| g) {
        Some("generate") => {}
        Some("vllm") => return Sampling::default(),
        Some("paged") => {
            return not_counted("transformers' continuous batching sizes its paged cache itself")
        }
        _ => return not_counted("what generates the completions is not read"),
    }
    let mut out = Sampling {
        used: vec![("sampled by", Concept::Generator)],
        ..Sampling::default()
    };
    // The rows sampled at once on each GPU: the micro-batches one generation serves (TRL
    // `steps_per_generation`), or `generation_batch_size` over the GPUs, or by default the
    // accumulation steps' micro-batches; before `steps_per_generation` existed, each
    // micro-batch's own.
    let (rows, steps) = if yes(Concept::GenerationPerMicroBatch) == Some(true) {
        (None, 1)
    } else if let Some(steps) = int(Concept::StepsPerGeneration) {
        out.used
            .push(("steps per generation", Concept::StepsPerGeneration));
        (None, steps)
    } else if let Some(global) = int(Concept::GenerationBatch) {
        out.used
            .push(("generation batch", Concept::GenerationBatch));
        match i.data_parallel {
            Some(dp) if dp > 0 => (Some(global.div_ceil(dp as u64)), 1),
            _ => {
                if global > batch {
                    out.bound = Some(Bound::new(
                        format!("the generation batch {global} split over any number of GPUs"),
                        Decider::Gpus,
                    ));
                    out.rows_lower = Some(batch);
                }
                (Some(global), 1)
            }
        }
    } else {
        (
            Some(batch.saturating_mul(int(Concept::GradAccum).unwrap_or(1))),
            1,
        )
    };
    // Since TRL 0.22 generation turns checkpointing off and keeps its cache
    // (models/utils.py:133-136 at v1.9.0); before, a checkpointed model in training mode
    // generated without one.
    let cache = !checkpointed || yes(Concept::GenerationKeepsCache) != Some(false);
    let whole_model = deepspeed_zero3 && yes(Concept::GenerationGathersWhole) == Some(true);
    if whole_model {
        out.used
            .push(("gathered to generate", Concept::GenerationGathersWhole));
    }
    out.generation = Some(super::step::Generation {
        prompt,
        completion,
        rows,
        steps,
        cache,
        whole_model,
        scores_rows: 0,
        dtype_bytes: None,
    });
    out
}

/// The modules a peft regex target (`model.layers.[\d]+.(mlp|self_attn).(up|down|q)_proj`)
/// adapts: its last path component with each alternation group expanded.
fn lora_pattern_modules(pattern: &str) -> Vec<String> {
    // The last component: after the last `.` that is outside a group.
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in pattern.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '.' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let mut names = vec![String::new()];
    let mut rest = &pattern[start..];
    while !rest.is_empty() {
        match (rest.find('('), rest.find(')')) {
            (Some(open), Some(close)) if open < close => {
                let prefix = &rest[..open];
                let options: Vec<&str> = rest[open + 1..close].split('|').collect();
                names = names
                    .iter()
                    .flat_map(|n| options.iter().map(move |o| format!("{n}{prefix}{o}")))
                    .take(256)
                    .collect();
                rest = &rest[close + 1..];
            }
            _ => {
                for n in &mut names {
                    n.push_str(rest);
                }
                rest = "";
            }
        }
    }
    names
}

/// Whether the number of GPUs the model states are sharded over is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharding {
    Known {
        stage: u8,
        gpus: u64,
    },
    /// Could be anything from none to ZeRO-3 over many GPUs.
    Unknown,
}

/// GPUs the floor estimate shards over when sharding is unknown: enough that the sharded model
/// states are negligible, leaving what no sharding removes (activations, logits, a gathered
/// block).
const FLOOR_SHARDS: u64 = 1024;

fn estimated(plan: Plan, target: &Target, mem_fraction: Option<f64>) -> Estimated {
    let estimate = estimate(&plan);
    let usable = usable_bytes(&target.gpu, mem_fraction);
    let verdict = verdict(&estimate, usable);
    Estimated {
        plan,
        estimate,
        verdict,
    }
}

/// The step at the least memory it can need, when that differs from the plan: bounded options
/// at their least, and the model states sharded over many GPUs when sharding is unknown.
pub fn least_plan(planned: &Planned) -> Option<Plan> {
    let sharding_unknown = planned.sharding == Sharding::Unknown;
    (sharding_unknown || planned.lower.is_some()).then(|| {
        let mut p = planned
            .lower
            .clone()
            .unwrap_or_else(|| planned.plan.clone());
        if sharding_unknown {
            p.zero_stage = 3;
            p.gpus = FLOOR_SHARDS;
            if let Some(c) = &mut p.critic {
                c.plan.zero_stage = 3;
                c.plan.gpus = FLOOR_SHARDS;
            }
        }
        p
    })
}

/// The plan, its estimate and the verdict on the target, or why there is none.
pub fn memory_for(i: &Inputs) -> Result<MemoryContext, Gap> {
    let planned = plan_for(i)?;
    let sharding_unknown = planned.sharding == Sharding::Unknown;
    // Sharding cannot make a step need more than it does unsharded (a gathered block can
    // outweigh a small model's whole shard): the least is the smaller of the two.
    let unsharded_lower = planned
        .lower
        .clone()
        .unwrap_or_else(|| planned.plan.clone());
    let least = least_plan(&planned).map(|p| {
        let sharded = estimated(p, i.target, i.mem_fraction);
        let unsharded = estimated(unsharded_lower, i.target, i.mem_fraction);
        if need_bytes(&unsharded.estimate) < need_bytes(&sharded.estimate) {
            unsharded
        } else {
            sharded
        }
    });
    Ok(MemoryContext {
        most: estimated(planned.plan, i.target, i.mem_fraction),
        least,
        assumptions: planned.assumed,
        bounded: planned.bounded,
        sharding_unknown,
        used: planned.used,
    })
}

/// What the trainer optimises, from the dialect's `objective` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Next-token training on one sequence per sample (SFT, pretraining).
    Lm,
    /// Preference pairs whose trainer the file does not name (TRL's `beta`: DPO, ORPO or CPO):
    /// whether a reference model runs is bounded.
    Preference,
    /// Preference pairs with the reference model the dialect's setting gives (LLaMA-Factory).
    Paired,
    /// A reward model trained on pairs: two sequences per sample, a scalar head.
    Reward,
    /// A reward model over the causal LM with a value head beside its LM head (LLaMA-Factory
    /// `stage: rm`): two sequences per sample, and logits computed and dropped.
    RewardValueHead,
    /// Unpaired preference (KTO): one sequence, a no-grad reference forward.
    Kto,
    /// Online RL on sampled completions (GRPO, RLOO).
    Grpo,
    /// PPO whose value model trains in the policy's step (TRL's `PPOTrainer` since 0.12): the
    /// policy on prompt + response beside a value model, a frozen reward model and a reference;
    /// the rollout samples with `model.generate` and runs their no-grad forwards.
    Ppo,
    /// PPO over TRL 0.9's value-head trainer (LLaMA-Factory's `stage: ppo`): a value head on
    /// the policy, the reference and reward as adapters or models of their own, and
    /// `model.generate` for each micro-batch between updates.
    PpoValueHead,
    /// Online RL whose phases take turns on the same GPUs (verl's hybrid engine): the actor's
    /// update on prompt + response, the rollout engine's sampling and the no-grad log-prob
    /// forwards, each the peak of its own instant.
    Colocated,
}

impl Objective {
    fn read(s: &TrainingSetup) -> Result<Objective, Gap> {
        // An objective known only at run time (`${adv_estimator}`) is none hwlint can read as
        // plain training.
        if s.is_unknown(Concept::Objective) {
            return Err(Gap::Missing("training objective"));
        }
        let Some((name, _)) = s.str(Concept::Objective) else {
            return Ok(Objective::Lm);
        };
        let objective = match name {
            "sft" => Objective::Lm,
            "preference" => Objective::Preference,
            "paired" => Objective::Paired,
            "reward" => Objective::Reward,
            "reward-value-head" => Objective::RewardValueHead,
            "kto" => Objective::Kto,
            "grpo" => Objective::Grpo,
            "ppo" => Objective::Ppo,
            "ppo-value-head" => Objective::PpoValueHead,
            // verl's hybrid engine: the actor's update, the reference, the critic and the
            // rollout engine take turns on the same GPUs, moving states on and off them.
            "colocated-rl" => Objective::Colocated,
            "online-rl" => {
                return Err(Gap::Unsupported(
                    "online RL on sampled completions whose sampling settings hwlint does not read for this framework",
                ))
            }
            _ => return Err(Gap::Unsupported("this training objective")),
        };
        Ok(objective)
    }

    /// The trainer samples completions between updates and trains on prompt + completion.
    fn samples(self) -> bool {
        matches!(
            self,
            Objective::Grpo | Objective::Ppo | Objective::PpoValueHead
        )
    }

    /// Sequences each sample runs as: a pair's chosen and rejected answers run together.
    fn sequences(self) -> u64 {
        match self {
            Objective::Preference
            | Objective::Paired
            | Objective::Reward
            | Objective::RewardValueHead => 2,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_model_needs_its_dimensions() {
        let table: toml::Table = toml::from_str(
            "family = \"llama\"\nhidden_size = 512\nnum_layers = 8\nnum_heads = 8\nintermediate_size = 2048\nvocab_size = 50304\n",
        )
        .unwrap();
        let inline = crate::dialect::InlineModel {
            table: table.clone(),
            key: "model".into(),
            span: 0..0,
            flat: false,
            own_blocks: true,
            configures_named: false,
        };
        let arch = inline_architecture(&inline).unwrap();
        assert_eq!((arch.num_layers, arch.hidden_size), (8, 512));
        // Without a vocabulary a language model has no LM head to count: no estimate.
        let mut partial = table;
        partial.remove("vocab_size");
        let inline = crate::dialect::InlineModel {
            table: partial,
            ..inline
        };
        assert!(inline_architecture(&inline).is_none());
    }

    #[test]
    fn a_regex_lora_target_names_the_modules_of_its_last_component() {
        assert_eq!(
            lora_pattern_modules(
                r"model.text_model.layers.[\d]+.(mlp|cross_attn|self_attn).(up|down|gate|q|k|v|o)_proj"
            ),
            [
                "up_proj",
                "down_proj",
                "gate_proj",
                "q_proj",
                "k_proj",
                "v_proj",
                "o_proj"
            ]
        );
        assert_eq!(lora_pattern_modules("(q|v)_proj"), ["q_proj", "v_proj"]);
    }
}
