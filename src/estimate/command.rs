//! `hwlint estimate`: a plan from a config and/or flags, estimated on one or more targets.

use std::path::Path;

use miette::Diagnostic;
use serde::Serialize;

use super::memory::{estimate, Checkpointing, MemoryEstimate, Plan};
use super::models::{read_hf_config, ModelError};
use super::plan::{find_model, plan_for, Gap};
use super::throughput::step_seconds;
use super::verdict::{max_micro_batch, need_bytes, usable_bytes};
use crate::cli::EstimateArgs;
use crate::dialect::Concept;
use crate::hardware::{catalog, Target};
use crate::settings::{resolve_target, ConfigError, ConfigResolver, Overrides};

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum EstimateError {
    #[error("{0}")]
    #[diagnostic(code(hwlint::estimate))]
    Usage(String),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Model(#[from] ModelError),
}

/// One target's answer.
#[derive(Debug, Clone, Serialize)]
pub struct TargetResult {
    pub target: String,
    pub gpu: String,
    pub usable_bytes: f64,
    pub need_bytes: f64,
    pub fits: bool,
    /// Largest micro-batch whose need fits the usable memory (0: none).
    pub max_micro_batch: u64,
    pub step_seconds: f64,
    /// Steps x step time, when the number of steps is known.
    pub run_seconds: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EstimateReport {
    pub plan: Plan,
    pub estimate: MemoryEstimate,
    pub allocator_factor: f64,
    pub steps: Option<u64>,
    /// Where each input came from (`flag`, the config key, or `default`).
    pub inputs: Vec<(String, String)>,
    pub targets: Vec<TargetResult>,
}

fn usage(msg: impl Into<String>) -> EstimateError {
    EstimateError::Usage(msg.into())
}

/// Where each input came from: (input, `flag` / config key / `default (...)`).
type Inputs = Vec<(String, String)>;

/// Builds the plan: the config's setup first, flags over it.
fn build_plan(
    args: &EstimateArgs,
    target: &Target,
) -> Result<(Plan, Option<u64>, Inputs), EstimateError> {
    let mut inputs = Vec::new();
    let mut from_config: Option<(Plan, Option<u64>)> = None;
    if let Some(path) = &args.config {
        let configs = ConfigResolver::new(Overrides::default())?;
        let settings = configs
            .config_for(path)?
            .for_file(path, &Overrides::default())?;
        let text = crate::lint::read_text(path, crate::lint::MAX_FILE_BYTES)
            .map_err(|m| usage(format!("{}: {m}", path.display())))?;
        let format = crate::syntax::Format::from_path(path)
            .ok_or_else(|| usage(format!("{}: not a format hwlint reads", path.display())))?;
        let doc = crate::syntax::parse(&text, format)
            .map_err(|e| usage(format!("{}: {}", path.display(), e.message)))?;
        let (dialect, root) = doc
            .roots
            .iter()
            .find_map(|r| {
                crate::dialect::detect(&settings.dialects, r, format, path).map(|d| (d, r))
            })
            .ok_or_else(|| {
                usage(format!(
                    "{}: not a training config hwlint recognises",
                    path.display()
                ))
            })?;
        let setup = crate::dialect::resolve(dialect, root);
        let linked = crate::dialect::linked_deepspeed(&setup, path, &settings.dialects);
        let plan_inputs = super::plan::Inputs {
            setup: &setup,
            linked: linked.as_ref().map(|l| &l.setup),
            models: &settings.models,
            base_dir: path.parent().unwrap_or(Path::new(".")),
            target,
            // The GPUs the config's target states (hwlint.toml), unless --gpus says otherwise.
            data_parallel: args.gpus.map(|g| g as i64).or(target.gpus.map(i64::from)),
        };
        for (concept, name) in [
            (Concept::Model, "model"),
            (Concept::MicroBatch, "batch_size"),
            (Concept::SeqLen, "seq_len"),
            (Concept::Precision, "precision"),
            (Concept::ActivationCheckpointing, "checkpointing"),
            (Concept::Optimizer, "optimizer"),
        ] {
            if let Some(s) = setup.get(concept) {
                inputs.push((name.to_string(), s.origin.describe()));
            }
        }
        match plan_for(&plan_inputs) {
            Ok((plan, _, _)) => {
                from_config = Some((plan, setup.int(Concept::TotalSteps).map(|(s, _)| s.max(0) as u64)));
            }
            // Flags may fill what the file lacks; without them this is the error to report.
            Err(Gap::UnknownModel(m)) if args.model.is_none() => {
                return Err(usage(format!(
                    "model `{m}` is not in hwlint's catalog: pass --model with a config.json, or declare [models.\"{m}\"] in hwlint.toml"
                )))
            }
            Err(_) => {}
        }
    }
    let (mut plan, steps) = match from_config {
        Some(p) => p,
        None => {
            let name = args.model.as_deref().ok_or_else(|| {
                usage("say which model: --model NAME|config.json (or give a training config)")
            })?;
            let arch = model_from_flag(name)?;
            let plan = Plan::new(name, arch);
            for (k, v) in [
                ("precision", "default (bf16-mixed)"),
                ("optimizer", "default (adamw)"),
                ("checkpointing", "default (none)"),
            ] {
                inputs.push((k.into(), v.into()));
            }
            (plan, None)
        }
    };
    let mut flag = |name: &str| inputs.push((name.to_string(), "flag".to_string()));
    if let Some(m) = &args.model {
        if args.config.is_some() {
            plan.arch = model_from_flag(m)?;
            plan.model = m.clone();
        }
        flag("model");
    }
    if let Some(b) = args.batch_size {
        plan.batch = b.max(1);
        flag("batch_size");
    }
    if let Some(s) = args.seq_len {
        plan.seq_len = s;
        flag("seq_len");
    }
    if let Some(i) = args.image_size {
        plan.image_size = i;
        flag("image_size");
    }
    if let Some(p) = args.precision {
        plan.precision = p;
        flag("precision");
    }
    if let Some(o) = args.optimizer {
        plan.optimizer = o;
        flag("optimizer");
    }
    if let Some(c) = args.checkpointing {
        plan.checkpointing = c;
        flag("checkpointing");
    }
    if let Some(a) = args.attention {
        plan.attention = a;
        flag("attention");
    }
    if let Some(r) = args.lora_r {
        let targets = args
            .lora_targets
            .clone()
            .unwrap_or_else(|| vec!["q_proj".into(), "v_proj".into()]);
        plan.lora = Some((r, targets));
        flag("lora");
    }
    if args.load_in_4bit {
        plan.load_in_4bit = true;
        flag("load_in_4bit");
    }
    if let Some(z) = args.zero {
        plan.zero_stage = z.min(3);
        flag("zero");
    }
    if args.offload_optimizer {
        plan.offload_optimizer = true;
        flag("offload_optimizer");
    }
    if args.offload_params {
        plan.offload_params = true;
        flag("offload_params");
    }
    if let Some(g) = args.gpus {
        plan.gpus = g.max(1);
        flag("gpus");
    }
    let sequence_model =
        plan.arch.is_causal_lm() || plan.arch.family == super::models::Family::Bert;
    if sequence_model && plan.seq_len == 0 {
        return Err(usage("say how long the samples are: --seq-len N"));
    }
    // A flag overrides what the config or a default said: keep the last word per input.
    let mut merged: Vec<(String, String)> = Vec::new();
    for (k, v) in inputs {
        match merged.iter_mut().find(|(mk, _)| *mk == k) {
            Some(slot) => slot.1 = v,
            None => merged.push((k, v)),
        }
    }
    Ok((plan, args.steps.or(steps), merged))
}

fn model_from_flag(name: &str) -> Result<super::models::Architecture, EstimateError> {
    let p = Path::new(name);
    if p.is_file() || p.join("config.json").is_file() {
        return Ok(read_hf_config(p)?);
    }
    find_model(name, &[], Path::new(".")).ok_or_else(|| {
        usage(format!(
            "unknown model `{name}`: give a catalog name (see rules/models.toml), a Hugging Face id hwlint knows, or a config.json"
        ))
    })
}

fn targets_of(args: &EstimateArgs) -> Result<Vec<Target>, EstimateError> {
    let list = match &args.targets {
        Some(l) if l.iter().any(|t| t == "all") => {
            catalog().gpus.iter().map(|g| g.key.clone()).collect()
        }
        Some(l) => l.clone(),
        None => match &args.target {
            Some(t) => vec![t.clone()],
            None => {
                let configs = ConfigResolver::new(Overrides::default())?;
                let here = args
                    .config
                    .clone()
                    .unwrap_or_else(|| Path::new("./x").to_path_buf());
                return Ok(vec![
                    configs
                        .config_for(&here)?
                        .for_file(&here, &Overrides::default())?
                        .target,
                ]);
            }
        },
    };
    list.iter()
        .map(|t| resolve_target(t, Path::new("."), "--target").map_err(EstimateError::from))
        .collect()
}

pub fn run(args: &EstimateArgs) -> Result<EstimateReport, EstimateError> {
    if let Some(f) = args.memory_fraction {
        if !(f > 0.0 && f <= 1.0) {
            return Err(usage(format!("--memory-fraction {f} is outside (0, 1]")));
        }
    }
    let targets = targets_of(args)?;
    let (plan, steps, inputs) = build_plan(args, &targets[0])?;
    let est = estimate(&plan);
    let need = need_bytes(&est, plan.checkpointing);
    let a = catalog().allocator;
    let results = targets
        .iter()
        .map(|t| {
            let usable = usable_bytes(&t.gpu, args.memory_fraction);
            let step = step_seconds(&plan, &est, &t.gpu);
            TargetResult {
                target: t.name.clone(),
                gpu: t.gpu.key.clone(),
                usable_bytes: usable,
                need_bytes: need,
                fits: need <= usable,
                max_micro_batch: max_micro_batch(&plan, usable, 1.0),
                step_seconds: step,
                run_seconds: steps.map(|s| s as f64 * step),
            }
        })
        .collect();
    Ok(EstimateReport {
        allocator_factor: if plan.checkpointing == Checkpointing::Full {
            a.fragmentation_checkpointing
        } else {
            a.fragmentation
        },
        plan,
        estimate: est,
        steps,
        inputs,
        targets: results,
    })
}
