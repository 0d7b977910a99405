//! `hwlint estimate`: a plan from a config and/or flags, estimated on one or more targets.

use std::path::Path;

use miette::Diagnostic;
use serde::Serialize;

use super::memory::{estimate, MemoryEstimate, Plan};
use super::models::{read_hf_config, Architecture, ModelError};
use super::plan::{find_model, least_plan, least_reasons, plan_for, Gap, Planned};
use super::throughput::step_seconds;
use super::verdict::{max_micro_batch, need_bytes, usable_bytes};
use crate::cli::EstimateArgs;
use crate::dialect::{Concept, Origin, Setting, SettingValue, TrainingSetup};
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
    /// When some option is bounded rather than modelled: the need at its least.
    pub least_need_bytes: Option<f64>,
    /// Fits even at the most the step can need.
    pub fits: bool,
    /// `fits`, `does not fit`, or `may fit` (between the bounds).
    pub verdict: &'static str,
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
    /// What the caching allocator reserves at the peak.
    pub need_bytes: f64,
    /// The estimate with bounded options at their least (see `bounded`).
    pub least: Option<MemoryEstimate>,
    /// Options not modelled exactly, and the bound used.
    pub bounded: Vec<String>,
    /// Inputs hwlint assumed.
    pub assumed: Vec<String>,
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

/// A setting given by a flag.
fn flag_setting(flag: &str, value: SettingValue) -> Setting {
    Setting {
        value,
        origin: Origin::Flag {
            flag: format!("--{flag}"),
        },
    }
}

/// Puts the flags into the setup, each over the one input it names.
fn overlay_flags(setup: &mut TrainingSetup, args: &EstimateArgs) {
    let mut set = |c: Concept, flag: &str, v: SettingValue| {
        setup.settings.insert(c, flag_setting(flag, v));
    };
    if let Some(m) = &args.model {
        set(Concept::Model, "model", SettingValue::Str(m.clone()));
    }
    if let Some(b) = args.batch_size {
        set(
            Concept::MicroBatch,
            "batch-size",
            SettingValue::Int(b.max(1) as i64),
        );
    }
    if let Some(n) = args.seq_len {
        set(Concept::SeqLen, "seq-len", SettingValue::Int(n as i64));
    }
    if let Some(n) = args.image_size {
        set(
            Concept::ImageSize,
            "image-size",
            SettingValue::Int(n as i64),
        );
    }
    if let Some(p) = args.precision {
        set(
            Concept::Precision,
            "precision",
            SettingValue::Str(p.as_str().into()),
        );
    }
    if let Some(o) = args.optimizer {
        set(
            Concept::Optimizer,
            "optimizer",
            SettingValue::Str(value_name(o)),
        );
    }
    if let Some(c) = args.checkpointing {
        set(
            Concept::ActivationCheckpointing,
            "checkpointing",
            SettingValue::Str(value_name(c)),
        );
    }
    if let Some(a) = args.attention {
        set(
            Concept::Attention,
            "attention",
            SettingValue::Str(value_name(a)),
        );
    }
    if let Some(r) = args.lora_r {
        set(Concept::LoraR, "lora-r", SettingValue::Int(r as i64));
    }
    if let Some(t) = &args.lora_targets {
        set(
            Concept::LoraTargets,
            "lora-targets",
            SettingValue::Str(t.join(",")),
        );
    }
    if let Some(g) = args.grad_accum {
        set(
            Concept::GradAccum,
            "grad-accum",
            SettingValue::Int(g.max(1) as i64),
        );
    }
    if args.load_in_4bit {
        set(
            Concept::LoadIn4bit,
            "load-in-4bit",
            SettingValue::Bool(true),
        );
    }
    if let Some(z) = args.zero {
        set(
            Concept::ZeroStage,
            "zero",
            SettingValue::Int(i64::from(z.min(3))),
        );
    }
    if args.offload_optimizer {
        set(
            Concept::OffloadOptimizer,
            "offload-optimizer",
            SettingValue::Bool(true),
        );
    }
    if args.offload_params {
        set(
            Concept::OffloadParams,
            "offload-params",
            SettingValue::Bool(true),
        );
    }
    // The `--zero` flag states the sharding: a `fsdp` key in the file no longer decides it.
    if args.zero.is_some() {
        setup.settings.remove(&Concept::Fsdp);
    }
    // `--precision` names the whole regime (`bf16-mixed` = fp32 masters + autocast): the
    // file's weight dtype no longer applies.
    if args.precision.is_some() {
        setup.settings.remove(&Concept::WeightDtype);
    }
}

/// The spelling clap uses for a value (`adamw-8bit`).
pub(crate) fn value_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

/// What the estimate of flags alone assumes for inputs no flag gives.
fn flag_defaults(setup: &mut TrainingSetup) {
    for (c, flag, v) in [
        (
            Concept::Precision,
            "--precision",
            SettingValue::Str("bf16-mixed".into()),
        ),
        (
            Concept::ActivationCheckpointing,
            "--checkpointing",
            SettingValue::Str("none".into()),
        ),
        (
            Concept::Optimizer,
            "--optimizer",
            SettingValue::Str("adamw".into()),
        ),
        // No sharding unless --zero says so.
        (Concept::ZeroStage, "--zero", SettingValue::Int(0)),
    ] {
        setup.settings.entry(c).or_insert(Setting {
            value: v,
            origin: Origin::Default {
                key: flag.into(),
                relevant: false,
                framework: "hwlint estimate".into(),
            },
        });
    }
}

/// The JAX memory fraction a config's run uses (`XLA_PYTHON_CLIENT_MEM_FRACTION`), when valid.
fn config_fraction(setup: &TrainingSetup) -> Option<f64> {
    setup
        .float(crate::dialect::Concept::MemFraction)
        .map(|(f, _)| f)
        .filter(|f| *f > 0.0 && *f <= 1.0)
}

/// The flag that gives an input a config lacks.
fn flag_for(missing: &str) -> &'static str {
    match missing {
        "micro-batch" => "--batch-size N",
        "sequence length" => "--seq-len N",
        "precision" => "--precision",
        "activation checkpointing" => "--checkpointing",
        "LoRA rank" => "--lora-r N",
        _ => "--model",
    }
}

/// Builds the plan: the config's setup first, each flag over its own input.
fn build_plan(
    args: &EstimateArgs,
    target: &Target,
) -> Result<(Planned, Option<u64>, Inputs, Option<f64>), EstimateError> {
    let mut models: Vec<Architecture> = Vec::new();
    let (mut setup, linked, base_dir, global_batch_splits, sharding_in_file_only) = match &args
        .config
    {
        Some(path) => {
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
                .find_map(|r| crate::dialect::detect(&settings.dialects, r, format, path))
                .ok_or_else(|| {
                    usage(format!(
                        "{}: not a training config hwlint recognises",
                        path.display()
                    ))
                })?;
            let setup = crate::dialect::resolve(dialect, &root);
            let linked = crate::dialect::linked_deepspeed(&setup, path, &settings.dialects);
            models = settings.models.to_vec();
            (
                setup,
                linked.map(|l| l.setup),
                path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                dialect.semantics.global_batch_splits_over_devices,
                dialect.semantics.sharding_in_file_only,
            )
        }
        None => (
            TrainingSetup {
                dialect: "flags".into(),
                ..TrainingSetup::default()
            },
            None,
            Path::new(".").to_path_buf(),
            false,
            false,
        ),
    };
    // A model given by flag is found from the working directory, not the config's folder.
    if let Some(m) = &args.model {
        models.insert(
            0,
            Architecture {
                name: m.clone(),
                ..model_from_flag(m)?
            },
        );
    }
    overlay_flags(&mut setup, args);
    if args.config.is_none() {
        flag_defaults(&mut setup);
    }
    let plan_inputs = super::plan::Inputs {
        setup: &setup,
        linked: linked.as_ref(),
        models: &models,
        base_dir: &base_dir,
        target,
        // The GPUs the config's target states (hwlint.toml), unless --gpus says otherwise;
        // flags alone describe one GPU unless --gpus says more.
        data_parallel: args
            .gpus
            .map(|g| g as i64)
            .or(target.gpus.map(i64::from))
            .or(args.config.is_none().then_some(1)),
        mem_fraction: args.memory_fraction.or(config_fraction(&setup)),
        global_batch_splits,
        sharding_in_file_only,
    };
    let planned = match plan_for(&plan_inputs) {
        Ok(p) => p,
        Err(Gap::UnknownModel(m)) => {
            return Err(usage(format!(
                "model `{m}` is not in hwlint's catalog: pass --model with a config.json, or declare [models.\"{m}\"] in hwlint.toml"
            )))
        }
        Err(Gap::Missing("model")) => {
            return Err(usage(
                "say which model: --model NAME|config.json (or give a training config that names one)",
            ))
        }
        Err(Gap::Unsupported(what)) => {
            return Err(usage(format!(
                "the estimator has no recipe for {what}, so it cannot estimate this run"
            )))
        }
        Err(Gap::Missing(what)) => {
            return Err(usage(match &args.config {
                Some(p) => format!(
                    "{} does not give the {what}, and its framework has no default: pass {}",
                    p.display(),
                    flag_for(what)
                ),
                None => format!("the {what} is not known: pass {}", flag_for(what)),
            }))
        }
    };
    let inputs = planned
        .used
        .iter()
        .filter_map(|(name, c)| {
            let from = setup
                .get(*c)
                .or_else(|| linked.as_ref().and_then(|l| l.get(*c)))?;
            Some((
                name.to_string(),
                match &from.origin {
                    Origin::Flag { .. } => "flag".to_string(),
                    Origin::Default { framework, .. } if framework == "hwlint estimate" => {
                        match &from.value {
                            SettingValue::Str(v) => format!("default ({v})"),
                            _ => "default".to_string(),
                        }
                    }
                    o => o.describe(),
                },
            ))
        })
        .collect();
    let steps = args
        .steps
        .or(setup.int(Concept::TotalSteps).map(|(s, _)| s.max(0) as u64));
    Ok((planned, steps, inputs, plan_inputs.mem_fraction))
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
    let (planned, steps, inputs, mem_fraction) = build_plan(args, &targets[0])?;
    let plan = planned.plan.clone();
    let est = estimate(&plan);
    let need = need_bytes(&est);
    let reasons = least_reasons(&planned);
    let lower = least_plan(&planned).map(|p| {
        let e = estimate(&p);
        (p, e)
    });
    let least_need = lower.as_ref().map(|(_, e)| need_bytes(e));
    let results = targets
        .iter()
        .map(|t| {
            let usable = usable_bytes(&t.gpu, mem_fraction);
            let step = step_seconds(&plan, &est, &t.gpu);
            let verdict = match least_need {
                _ if need <= usable => "fits",
                Some(l) if l <= usable => "may fit",
                _ => "does not fit",
            };
            TargetResult {
                target: t.name.clone(),
                gpu: t.gpu.key.clone(),
                usable_bytes: usable,
                need_bytes: need,
                least_need_bytes: least_need,
                fits: need <= usable,
                verdict,
                max_micro_batch: max_micro_batch(&plan, usable, 1.0),
                step_seconds: step,
                run_seconds: steps.map(|s| s as f64 * step),
            }
        })
        .collect();
    Ok(EstimateReport {
        need_bytes: need,
        plan,
        estimate: est,
        least: lower.map(|(_, e)| e),
        bounded: reasons,
        assumed: planned.assumed,
        steps,
        inputs,
        targets: results,
    })
}
