//! From a config's TrainingSetup to the estimator's Plan. Every input that is not in the file
//! and not a framework default is a gap: the memory rules then stay silent.

use std::path::Path;

use serde::Serialize;

use super::memory::{
    estimate, Attention, Checkpointing, MemoryEstimate, Optimizer, Plan, Precision,
};
use super::models::{lookup, read_hf_config, Architecture, Family};
use super::verdict::{usable_bytes, verdict, Verdict};
use crate::dialect::{Concept, TrainingSetup};
use crate::hardware::Target;

/// Why the memory rules cannot run on a config.
#[derive(Debug, Clone, PartialEq)]
pub enum Gap {
    /// The model is named but hwlint does not know its architecture (HW901).
    UnknownModel(String),
    /// Some other input is missing or symbolic; the rules stay silent.
    Missing(&'static str),
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
    /// Without any sharding the file does not state (the most memory the step can need).
    pub unsharded: Estimated,
    /// When sharding is unknown: with model states sharded over many GPUs (the least memory
    /// the step can need). Rules that report a shortage use this; rules that report waste use
    /// `unsharded`.
    pub floor: Option<Estimated>,
    /// Inputs hwlint assumed (not written in the file), for messages.
    pub assumptions: Vec<String>,
}

impl MemoryContext {
    /// The estimate a shortage must hold for (the floor when sharding is unknown).
    pub fn least(&self) -> &Estimated {
        self.floor.as_ref().unwrap_or(&self.unsharded)
    }

    /// True when sharding is known, so one verdict holds.
    pub fn exact(&self) -> bool {
        self.floor.is_none()
    }
}

/// Finds an architecture by name: `[models.NAME]` in hwlint.toml first, then the catalog, then a
/// local model folder or config.json (relative to the config file).
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
    None
}

pub struct Inputs<'a> {
    pub setup: &'a TrainingSetup,
    pub linked: Option<&'a TrainingSetup>,
    pub models: &'a [Architecture],
    pub base_dir: &'a Path,
    pub target: &'a Target,
    /// Data-parallel processes, when known.
    pub data_parallel: Option<i64>,
}

/// The plan and the inputs it assumed.
pub fn plan_for(i: &Inputs) -> Result<(Plan, Vec<String>, Sharding), Gap> {
    let s = i.setup;
    let mut assumed = Vec::new();
    let Some((name, _)) = s.str(Concept::Model) else {
        return Err(Gap::Missing("model"));
    };
    let Some(arch) = find_model(name, i.models, i.base_dir) else {
        return Err(Gap::UnknownModel(name.to_string()));
    };
    let Some((batch, _)) = s.int(Concept::MicroBatch) else {
        return Err(Gap::Missing("micro-batch"));
    };
    let seq_len = match s.int(Concept::SeqLen) {
        Some((n, _)) => n.max(1) as u64,
        None if matches!(
            arch.family,
            Family::Vit | Family::Resnet | Family::Composite | Family::Opaque
        ) =>
        {
            0
        }
        None => return Err(Gap::Missing("sequence length")),
    };
    if s.bool(Concept::FusedKernels).is_some_and(|(b, _)| b) || s.is_unknown(Concept::FusedKernels)
    {
        return Err(Gap::Missing("fused kernels (Liger)"));
    }
    let image_size = s
        .int(Concept::ImageSize)
        .map_or(0, |(n, _)| n.max(0) as u64);
    let frozen = s.int(Concept::LoraR).is_some_and(|(r, _)| r > 0)
        || s.bool(Concept::LoadIn4bit).is_some_and(|(b, _)| b);
    let precision = match s.str(Concept::Precision).map(|(p, _)| p) {
        // axolotl `bf16: auto`: bf16 where the GPU has it, else fp16.
        Some("auto") if i.target.gpu.bf16 => Precision::Bf16Mixed,
        Some("auto") => Precision::Fp16Mixed,
        Some(p) => match Precision::from_canonical(p) {
            Some(p) => p,
            None => return Err(Gap::Missing("precision")),
        },
        None => return Err(Gap::Missing("precision")),
    };
    // A frozen LoRA/QLoRA base is loaded in 16-bit when mixed precision is on: nothing of it is
    // fp32 for autocast to cast.
    let precision = match (frozen, precision) {
        (true, Precision::Bf16Mixed) => Precision::Bf16True,
        (true, Precision::Fp16Mixed) => Precision::Fp16True,
        (_, p) => p,
    };
    let checkpointing = match s.str(Concept::ActivationCheckpointing).map(|(c, _)| c) {
        Some("none") => Checkpointing::None,
        Some("full") | Some("offload") => Checkpointing::Full,
        // torchtitan's selective checkpointing saves a policy-chosen subset of ops; the
        // op-level recipe does not describe it yet.
        Some("selective") => return Err(Gap::Missing("selective activation checkpointing")),
        _ => return Err(Gap::Missing("activation checkpointing")),
    };
    // Fused attention unless the file says eager; an implementation the estimator does not
    // know (flex attention) leaves it silent.
    let attention = match s.str(Concept::Attention) {
        Some((a, _)) => match Attention::from_canonical(a) {
            Some(a) => a,
            None => return Err(Gap::Missing("attention implementation")),
        },
        None => Attention::Sdpa,
    };
    let optimizer = match s.str(Concept::Optimizer) {
        Some((o, _)) => match Optimizer::from_name(o) {
            Some(o) => o,
            None => return Err(Gap::Missing("optimizer")),
        },
        None => {
            assumed.push("optimizer AdamW (not set)".into());
            Optimizer::Adamw
        }
    };
    let lora = match s.int(Concept::LoraR) {
        Some((r, _)) if r > 0 => {
            let targets: Vec<String> = match s.str(Concept::LoraTargets) {
                Some((t, _)) => t.split(',').map(|x| x.trim().to_string()).collect(),
                None => {
                    assumed.push("LoRA on q_proj, v_proj (peft's default)".into());
                    vec!["q_proj".into(), "v_proj".into()]
                }
            };
            Some((r as u64, targets))
        }
        _ => None,
    };
    let load_in_4bit = s.bool(Concept::LoadIn4bit).is_some_and(|(b, _)| b);
    if frozen && lora.is_none() {
        return Err(Gap::Missing("LoRA rank"));
    }
    // Sharding: what the file states, and over how many GPUs. A launcher (accelerate, torchrun
    // wrappers) can add ZeRO/FSDP that the file never mentions, so sharding is known only when
    // the run is on one GPU, or the file states it and the number of GPUs is known.
    let stated = s
        .int(Concept::ZeroStage)
        .or_else(|| i.linked.and_then(|l| l.int(Concept::ZeroStage)))
        .map(|(z, _)| z.clamp(0, 3) as u8);
    let fsdp = s.str(Concept::Fsdp).map(|(f, _)| f != "none");
    let deepspeed_unread = s.str(Concept::DeepspeedConfig).is_some() && i.linked.is_none();
    let stage = match (fsdp, stated) {
        (Some(true), _) => Some(3),
        (_, Some(z)) => Some(z),
        (Some(false), None) => Some(0),
        (None, None) => None,
    };
    let unknown =
        s.is_unknown(Concept::ZeroStage) || s.is_unknown(Concept::Fsdp) || deepspeed_unread;
    let sharding = match (i.data_parallel, stage) {
        (Some(1), _) => Sharding::Known { stage: 0, gpus: 1 },
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
    let plan = Plan {
        model: name.to_string(),
        arch,
        batch: batch.max(1) as u64,
        seq_len,
        image_size,
        precision,
        optimizer,
        checkpointing,
        attention,
        lora,
        load_in_4bit,
        zero_stage,
        gpus,
        offload_optimizer: s.bool(Concept::OffloadOptimizer).is_some_and(|(b, _)| b),
        offload_params: s.bool(Concept::OffloadParams).is_some_and(|(b, _)| b),
        tensor_parallel: s
            .int(Concept::TensorParallel)
            .map_or(1, |(t, _)| t.max(1) as u64),
        context_parallel: s
            .int(Concept::ContextParallel)
            .map_or(1, |(c, _)| c.max(1) as u64),
    };
    Ok((plan, assumed, sharding))
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

fn estimated(plan: Plan, target: &Target) -> Estimated {
    let estimate = estimate(&plan);
    let usable = usable_bytes(&target.gpu, None);
    let verdict = verdict(&plan, &estimate, usable);
    Estimated {
        plan,
        estimate,
        verdict,
    }
}

/// The plan, its estimate and the verdict on the target, or why there is none.
pub fn memory_for(i: &Inputs) -> Result<MemoryContext, Gap> {
    let (plan, assumptions, sharding) = plan_for(i)?;
    let floor = (sharding == Sharding::Unknown).then(|| {
        let mut p = plan.clone();
        p.zero_stage = 3;
        p.gpus = FLOOR_SHARDS;
        estimated(p, i.target)
    });
    Ok(MemoryContext {
        unsharded: estimated(plan, i.target),
        floor,
        assumptions,
    })
}
