//! `hwlint estimate`: a plan from a config and/or flags, estimated on one or more targets.

use std::path::Path;

use miette::Diagnostic;
use serde::Serialize;

use super::memory::{MemoryEstimate, Plan, Precision};
use super::models::{read_hf_config, Architecture, ModelError};
use super::plan::{find_model, memory_for, Gap, MemoryContext};
use super::throughput::step_seconds;
use super::verdict::{max_micro_batch, HEADROOM_LINE};
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
    /// `None` when the GPU cannot run the plan's precision (see `step_note`).
    pub step_seconds: Option<f64>,
    /// Steps x step time, when the number of steps is known.
    pub run_seconds: Option<f64>,
    /// Why there is no step time.
    pub step_note: Option<String>,
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
    /// When the config gives no sequence length: the need at a few lengths and the longest
    /// sequence that fits each target.
    pub by_length: Option<ByLength>,
}

/// The need of a step whose sequence length is not known, length by length.
#[derive(Debug, Clone, Serialize)]
pub struct ByLength {
    /// The model's context, the longest length counted.
    pub context: u64,
    /// (tokens, need at the most, need at the least), bytes.
    pub needs: Vec<(u64, f64, f64)>,
    /// Per target: the longest sequence that fits at the most the step can need, and at the
    /// least (0: not even one token).
    pub longest: Vec<LongestFit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LongestFit {
    pub gpu: String,
    pub certain: u64,
    pub possible: u64,
}

/// The longest sequence, from 0 to `context`, whose step fits `usable` (the need grows with
/// the length).
fn longest_fitting(plan: &Plan, context: u64, usable: f64) -> u64 {
    let fits = |n: u64| {
        let mut p = plan.clone();
        p.seq_len = n;
        crate::estimate::verdict::need_bytes(&super::memory::estimate(&p)) <= usable
    };
    if fits(context) {
        return context;
    }
    // fits(0) holds (0 stands for none), fits(context) does not.
    crate::estimate::verdict::largest_below(0, context, fits)
}

/// [`ByLength`] for an estimate whose sequence length is bounded (not given by the config).
fn by_length(answers: &[Answer]) -> Option<ByLength> {
    let first = answers.first()?;
    let m = &first.memory;
    let bounded = m
        .bounded
        .iter()
        .any(|b| b.decided_by == super::plan::Decider::Setting(Concept::SeqLen));
    if !bounded {
        return None;
    }
    let most = &m.most.plan;
    let least = &m.least().plan;
    let context = most.seq_len;
    let need = |p: &Plan, n: u64| {
        let mut p = p.clone();
        p.seq_len = n;
        crate::estimate::verdict::need_bytes(&super::memory::estimate(&p))
    };
    let mut lengths: Vec<u64> = (9..=20)
        .map(|k| 1u64 << k)
        .filter(|&n| n < context)
        .collect();
    lengths.push(context);
    Some(ByLength {
        context,
        needs: lengths
            .into_iter()
            .map(|n| (n, need(most, n), need(least, n)))
            .collect(),
        longest: answers
            .iter()
            .map(|a| {
                let usable = a.memory.most.verdict.usable_bytes;
                LongestFit {
                    gpu: a.target.gpu.key.clone(),
                    certain: longest_fitting(most, context, usable),
                    possible: longest_fitting(least, context, usable),
                }
            })
            .collect(),
    })
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
    // `--zero` states the sharding over the file's `fsdp` key (the plan reads a flag's stage
    // first), but leaves what FSDP says about precision (torchtitan's fp32 shards with bf16
    // compute) to the file; `--zero 0` is no FSDP at all.
    if args.zero == Some(0) && setup.get(Concept::Fsdp).is_some() {
        setup.settings.insert(
            Concept::Fsdp,
            flag_setting("zero", SettingValue::Str("none".into())),
        );
    }
    // `--precision` names the whole regime (`bf16-mixed` = fp32 masters + autocast): the
    // file's weight dtype no longer applies.
    if args.precision.is_some() {
        setup.settings.remove(&Concept::WeightDtype);
    }
    if let Some(v) = &args.bitsandbytes {
        setup.bitsandbytes = Some(crate::dialect::version::Resolved {
            version: v.clone(),
            from: "--bitsandbytes".into(),
            pinned: true,
        });
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
                caveat: None,
                ignored: None,
            },
        });
    }
}

/// The flag that gives an input a config lacks.
fn flag_for(missing: &str) -> Option<&'static str> {
    Some(match missing {
        "micro-batch" => "--batch-size N",
        "sequence length" => "--seq-len N",
        "precision" => "--precision",
        "activation checkpointing" => "--checkpointing",
        "LoRA rank" => "--lora-r N",
        "model" => "--model",
        _ => return None,
    })
}

/// The error for a run the estimator cannot plan, naming the input to give.
fn gap_error(gap: Gap, config: Option<&Path>) -> EstimateError {
    match gap {
        Gap::UnknownModel(m) => usage(format!(
            "model `{m}` is not in hwlint's catalog: pass --model with a config.json, or declare [models.\"{m}\"] in hwlint.toml"
        )),
        Gap::Missing("model") => usage(
            "say which model: --model NAME|config.json (or give a training config that names one)",
        ),
        Gap::Unsupported(what) => usage(format!(
            "the estimator has no recipe for {what}, so it cannot estimate this run"
        )),
        Gap::Missing(what) => usage(match (config, flag_for(what)) {
            (Some(p), Some(flag)) => format!(
                "{} does not give the {what}, and its framework has no default: pass {flag}",
                p.display(),
            ),
            (Some(p), None) => format!(
                "{} does not give the {what}, and its framework has no default: set it in the file",
                p.display(),
            ),
            (None, Some(flag)) => format!("the {what} is not known: pass {flag}"),
            (None, None) => format!("the {what} is not known"),
        }),
    }
}

/// Where each input of the plan came from: `flag`, the config key, or `default (...)`.
fn input_origins(
    used: &[(&'static str, Concept)],
    setup: &TrainingSetup,
    linked: Option<&TrainingSetup>,
) -> Inputs {
    used.iter()
        .filter_map(|(name, c)| {
            let from = setup.get(*c).or_else(|| linked.and_then(|l| l.get(*c)))?;
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
        .collect()
}

/// One target's memory context with what the report needs besides.
struct Answer {
    target: Target,
    memory: MemoryContext,
}

/// A run described by flags alone: one GPU unless `--gpus` says more.
fn from_flags(
    args: &EstimateArgs,
    targets: &[Target],
) -> Result<(Vec<Answer>, Option<u64>, Inputs), EstimateError> {
    let mut models: Vec<Architecture> = Vec::new();
    if let Some(m) = &args.model {
        models.push(Architecture {
            name: m.clone(),
            ..model_from_flag(m)?
        });
    }
    let mut setup = TrainingSetup {
        dialect: "flags".into(),
        ..TrainingSetup::default()
    };
    overlay_flags(&mut setup, args);
    flag_defaults(&mut setup);
    let mut answers = Vec::new();
    for target in targets {
        let inputs = super::plan::Inputs {
            setup: &setup,
            linked: None,
            models: &models,
            base_dir: Path::new("."),
            target,
            data_parallel: Some(args.gpus.map_or(1, |g| g as i64)),
            mem_fraction: args.memory_fraction,
            semantics: &Default::default(),
        };
        let memory = memory_for(&inputs).map_err(|g| gap_error(g, None))?;
        answers.push(Answer {
            target: target.clone(),
            memory,
        });
    }
    let used = answers
        .first()
        .map(|a| a.memory.used.clone())
        .unwrap_or_default();
    Ok((answers, args.steps, input_origins(&used, &setup, None)))
}

/// A run read from a config file, through the same function `check`'s memory rules use
/// ([`crate::lint::run_memories`]): the same runs, launch lines, linked DeepSpeed config, world
/// size and JAX memory fraction, with each flag over the one input it names.
fn from_config(
    args: &EstimateArgs,
    path: &Path,
    targets: &[Target],
) -> Result<(Vec<Answer>, Option<u64>, Inputs), EstimateError> {
    let configs = ConfigResolver::new(Overrides::default())?;
    let mut settings = configs
        .config_for(path)?
        .for_file(path, &Overrides::default())?;
    // A model given by flag is found from the working directory, not the config's folder.
    if let Some(m) = &args.model {
        let mut models = settings.models.to_vec();
        models.insert(
            0,
            Architecture {
                name: m.clone(),
                ..model_from_flag(m)?
            },
        );
        settings.models = std::sync::Arc::new(models);
    }
    let text = crate::source::read_text(path, settings.max_file_bytes)
        .map_err(|m| usage(format!("{}: {m}", path.display())))?;
    let format = crate::syntax::Format::from_path(path)
        .ok_or_else(|| usage(format!("{}: not a format hwlint reads", path.display())))?;
    let adjust = |setup: &mut TrainingSetup| {
        overlay_flags(setup, args);
        if let Some(f) = args.memory_fraction {
            setup.settings.insert(
                Concept::MemFraction,
                flag_setting("memory-fraction", SettingValue::Float(f)),
            );
        }
    };
    let doc = crate::syntax::parse(&text, format)
        .map_err(|e| usage(format!("{}: {}", path.display(), e.message)))?;
    let mut answers = Vec::new();
    let mut steps = None;
    let mut origins = Vec::new();
    for target in targets {
        settings.target = target.clone();
        if let Some(g) = args.gpus {
            settings.target.gpus = Some(u32::try_from(g).unwrap_or(u32::MAX));
        }
        let runs = crate::lint::run_memories(&doc, &text, path, &settings, &adjust);
        let Some(first) = runs.into_iter().next() else {
            return Err(usage(format!(
                "{}: not a training config hwlint recognises",
                path.display()
            )));
        };
        let setup = &first.run.setup;
        if let Some(why) = &setup.not_training {
            return Err(usage(format!(
                "{}: not a training run, so there is no training step to estimate: {why}",
                path.display()
            )));
        }
        if !setup.uses_gpu() {
            return Err(usage(format!(
                "{}: the run does not train on a GPU (its device setting says otherwise), so there is no GPU memory to estimate",
                path.display()
            )));
        }
        let memory = first.memory.map_err(|g| gap_error(g, Some(path)))?;
        if answers.is_empty() {
            steps = args
                .steps
                .or(setup.int(Concept::TotalSteps).map(|(s, _)| s.max(0) as u64));
            origins = input_origins(&memory.used, setup, first.linked.as_ref().map(|l| &l.setup));
        }
        answers.push(Answer {
            target: settings.target.clone(),
            memory,
        });
    }
    Ok((answers, steps, origins))
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
    if let Some(v) = &args.bitsandbytes {
        if crate::dialect::version::parse(v).is_none() {
            return Err(usage(format!(
                "--bitsandbytes {v}: not a release number (e.g. 0.43.1)"
            )));
        }
    }
    let targets = targets_of(args)?;
    let (answers, steps, inputs) = match &args.config {
        Some(path) => from_config(args, path, &targets)?,
        None => from_flags(args, &targets)?,
    };
    let Some(first) = answers.first() else {
        return Err(usage("no target to estimate on"));
    };
    let m = &first.memory;
    let plan = m.most.plan.clone();
    let est = m.most.estimate;
    let need = m.most.verdict.need_bytes;
    let bounded = m.least_reasons();
    let results = answers
        .iter()
        .map(|a| {
            let most = &a.memory.most;
            let usable = most.verdict.usable_bytes;
            // The rules' verdict: HW101 reports a shortage only when even the least the step
            // can need does not fit.
            let verdict = a.memory.verdict_word();
            let step = runnable_step_seconds(&most.plan, &most.estimate, &a.target.gpu);
            TargetResult {
                target: a.target.name.clone(),
                gpu: a.target.gpu.key.clone(),
                usable_bytes: usable,
                need_bytes: most.verdict.need_bytes,
                least_need_bytes: a.memory.least.as_ref().map(|l| l.verdict.need_bytes),
                fits: most.verdict.fits,
                verdict,
                max_micro_batch: max_micro_batch(&most.plan, usable, HEADROOM_LINE),
                step_seconds: step,
                run_seconds: step.zip(steps).map(|(t, s)| s as f64 * t),
                step_note: step.is_none().then(|| {
                    format!(
                        "{} cannot run {}: no bf16 (compute capability {})",
                        a.target.gpu.key,
                        most.plan.precision_label(),
                        a.target.gpu.compute_capability
                    )
                }),
            }
        })
        .collect();
    Ok(EstimateReport {
        need_bytes: need,
        plan,
        estimate: est,
        least: m.least.as_ref().map(|l| l.estimate),
        bounded,
        assumed: m.assumptions.clone(),
        steps,
        inputs,
        targets: results,
        by_length: by_length(&answers),
    })
}

/// The step time on `gpu`, or `None` when the GPU cannot run the plan's precision at all (bf16
/// on a T4 or V100: the framework refuses it, HW401), rather than a time for a run that stops.
pub fn runnable_step_seconds(
    plan: &Plan,
    est: &MemoryEstimate,
    gpu: &crate::hardware::Gpu,
) -> Option<f64> {
    let bf16 = matches!(plan.precision, Precision::Bf16Mixed | Precision::Bf16True);
    (gpu.bf16 || !bf16).then(|| step_seconds(plan, est, gpu))
}
