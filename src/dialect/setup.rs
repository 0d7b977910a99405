//! The canonical training setup every rule reads, whatever framework wrote the file.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::syntax::Span;

/// A canonical setting, named in `rules/dialects/*.toml` in snake_case (`micro_batch`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Concept {
    /// Samples per device per forward/backward.
    MicroBatch,
    /// Samples per optimizer step over all ranks.
    GlobalBatch,
    /// Samples per device per optimizer step (micro x accumulation), axolotl's `batch_size`.
    DeviceBatch,
    GradAccum,
    /// Processes over all nodes (accelerate `num_processes`).
    Processes,
    /// Devices on each node (Lightning `trainer.devices`).
    DevicesPerNode,
    /// GPUs of the whole run where the file does not say how they split over nodes (MCLI's
    /// `compute.gpus`): the world size, never a count of processes on one node.
    ClusterGpus,
    Nodes,
    /// CPU cores the scheduler gives each process (SLURM `cpus_per_task`).
    CpusPerProcess,
    /// Host RAM the scheduler gives each process, GB (SLURM `mem_per_gpu`).
    RamPerProcessGb,
    NumWorkers,
    PinMemory,
    PersistentWorkers,
    PrefetchFactor,
    /// The base (peak) learning rate (detectron2's `SOLVER.BASE_LR`): read where a fix that
    /// changes the batch scales it.
    LearningRate,
    /// Optimizer steps of the whole run.
    TotalSteps,
    Epochs,
    Scheduler,
    DecaySteps,
    WarmupSteps,
    WarmupRatio,
    SaveInterval,
    EvalInterval,
    /// `fp32`, `bf16-mixed`, `fp16-mixed`, `bf16-true`, `fp16-true`, `fp8`, or `auto`.
    Precision,
    /// `none`, `full`, `selective`, `offload`.
    ActivationCheckpointing,
    /// `eager`, `sdpa`, `flash_attention_2`, `flash_attention_3`, `flex_attention`.
    Attention,
    Model,
    SeqLen,
    ImageSize,
    LoraR,
    /// Adapted modules, comma-separated (`q_proj,v_proj`, or `all-linear`).
    LoraTargets,
    /// Parameters peft adapts directly (`target_parameters`: a MoE block's stacked expert
    /// weights, `experts.gate_up_proj`), comma-separated.
    LoraTargetParameters,
    /// peft's DoRA (`use_dora`): a magnitude vector beside each adapter, whose gradient needs the
    /// adapted layer's base and LoRA outputs kept.
    Dora,
    /// The dropout before each adapter's `lora_A` (peft `lora_dropout`).
    LoraDropout,
    /// Modules peft trains whole beside the adapters (`modules_to_save`: a trainable copy of
    /// `embed_tokens`, `lm_head`, ...), comma-separated.
    LoraModulesToSave,
    #[serde(rename = "load_in_4bit")]
    LoadIn4bit,
    /// bitsandbytes LLM.int8 base weights.
    #[serde(rename = "load_in_8bit")]
    LoadIn8bit,
    /// Matmuls run in a format narrower than `precision` says, by a model converter on top of
    /// it (torchtitan `model.converters`): `fp8` (tensor-wise or row-wise float8: FP8 tensor
    /// cores), `mxfp8` or `nvfp4` (block-scaled: Blackwell); comma-joined when several.
    LowPrecisionMatmuls,
    /// The library whose layers hold a 4-bit base: `bitsandbytes` (transformers'
    /// `BitsAndBytesConfig`, Lightning's `BitsandbytesPrecision`; the default where no dialect
    /// says otherwise) or `torchao` (torchtune's NF4 linears).
    Quantizer,
    /// The dtype the model's weights are loaded in: `fp32`, `bf16`, `fp16`, or `auto` (the
    /// dtype its config.json names). Separate from `precision`, the compute precision: bf16
    /// weights trained under `bf16: true` keep no fp32 master copy.
    WeightDtype,
    ZeroStage,
    Fsdp,
    Optimizer,
    /// Whether the run trains on a GPU at all (`false` for `accelerator: cpu`).
    UsesGpu,
    /// Optimizer states kept in CPU memory.
    OffloadOptimizer,
    /// Parameters kept in CPU memory.
    OffloadParams,
    /// Fused kernels that change what is kept for backward (Liger: fused linear cross-entropy,
    /// RMSNorm, SwiGLU); the op-level memory recipe does not describe them.
    FusedKernels,
    /// A fused linear + cross-entropy loss that never materializes the logits (Liger FLCE, Cut
    /// Cross-Entropy): modelled exactly, unlike the other fused kernels.
    ChunkedLoss,
    /// The optimizer steps each parameter as backward produces its gradient and frees it
    /// (torchtune `optimizer_in_bwd`): no full set of gradients is ever held.
    StepInBackward,
    /// A fused cross-entropy that still materializes the logits but keeps no fp32 softmax of
    /// them (OLMo `fused_loss`, flash-attn's Triton kernel): less than the unfused loss keeps
    /// and more than a chunked one, so the estimate bounds it.
    FusedLoss,
    /// The framework casts the module itself to the 16-bit compute dtype and keeps fp32 master
    /// weights in the optimizer (DeepSpeed's engine in GPT-NeoX, NeMo's `megatron_amp_O2`):
    /// no autocast, and no fp32 copy of the weights outside the optimizer.
    MasterWeights,
    /// bitsandbytes nested quantization of the 4-bit scales.
    DoubleQuant,
    /// FSDP 1 (flat parameters) or 2 (per-parameter sharding).
    FsdpVersion,
    /// FSDP1 `use_orig_params`: flat parameters may mix frozen and trained tensors.
    FsdpOrigParams,
    /// FSDP keeps fp32 sharded parameters and gathers 16-bit copies to compute in (FSDP's
    /// `MixedPrecision(param_dtype=bf16)`; Composer's `mixed_precision: DEFAULT` or `PURE`):
    /// 16-bit activations, fp32 master shards and gradients.
    FsdpParams16,
    /// A frozen reference copy of the model sits next to the trained one (TRL's DPO and KTO;
    /// ORPO and SimPO use none): true when the run may load one.
    ReferenceModel,
    /// The reference is its own loaded copy of the model even under an adapter (axolotl's
    /// `rl_adapter_ref_model`, LLaMA-Factory's `ref_model`); without it an adapter run's
    /// reference is the policy with its adapters disabled.
    ReferenceCopy,
    /// MoE experts run on the CPU (LLaMA-Factory's KTransformers backend, `use_kt`).
    CpuExperts,
    /// Path of a DeepSpeed JSON the run uses (HF Trainer / TRL / axolotl `deepspeed:`).
    DeepspeedConfig,
    /// Model-parallel degrees: data-parallel degree = world size / (TP x PP x CP x SP).
    TensorParallel,
    PipelineParallel,
    ContextParallel,
    /// The share of each GPU's memory JAX takes (`XLA_PYTHON_CLIENT_MEM_FRACTION`): what the
    /// run can use, in (0, 1].
    MemFraction,
    /// JAX reserves its fraction at start (`XLA_PYTHON_CLIENT_PREALLOCATE`, default true); when
    /// false the fraction is a cap on what it may grow to.
    MemPreallocate,
    /// The share of each GPU's memory another engine on the same GPUs takes before training
    /// allocates (TRL's colocated vLLM: `vllm_gpu_memory_utilization`), in [0, 1).
    ColocatedShare,
    /// Ranks that split one sample's sequence (DeepSpeed Ulysses `sequence_parallel_size`):
    /// they count once in the batch arithmetic, but ZeRO still shards over them.
    SequenceParallel,
    /// GaLore's projection rank: the optimizer keeps its moments for the targeted matrices in a
    /// rank-r projection of their gradients (LLaMA-Factory `galore_rank` under `use_galore`).
    GaloreRank,
    /// The linear layers GaLore projects, comma-separated (`all`: every linear in the blocks).
    GaloreTargets,
    /// GaLore steps each parameter as backward produces its gradient (`galore_layerwise`).
    GaloreLayerwise,
    /// What the trainer optimises, when it is not plain next-token training: `paired`
    /// (preference pairs: chosen and rejected run together, DPO/IPO/ORPO/SimPO/CPO), `reward`
    /// (a reward model scoring both answers of a pair), `kto` (unpaired preference), `grpo`
    /// (online RL on sampled completions, GRPO/RLOO), `ppo` (TRL's: a value model trained in
    /// the policy's step beside a reward model and a reference) or `ppo-value-head`
    /// (LLaMA-Factory's: a value head on the policy).
    Objective,
    /// The longest prompt an RL trainer feeds (TRL's `max_prompt_length`): with
    /// `completion_length` it makes the trained sequence.
    PromptLength,
    /// The longest completion an RL trainer samples and trains on (`max_completion_length`).
    CompletionLength,
    /// What samples an RL trainer's completions: `generate` (transformers' `model.generate` in
    /// the training process, with the training GPUs' memory), `paged` (transformers' continuous
    /// batching, a paged cache it sizes itself) or `vllm` (a colocated share or a server).
    Generator,
    /// Completions sampled together over all ranks (TRL's `generation_batch_size`).
    GenerationBatch,
    /// Micro-batches one generation serves (TRL's `steps_per_generation`; the accumulation
    /// steps when unset).
    StepsPerGeneration,
    /// Each process samples for its micro-batch alone, whatever the accumulation (TRL before
    /// `steps_per_generation` existed).
    GenerationPerMicroBatch,
    /// Under ZeRO-3 the whole model is gathered on every GPU while it generates (TRL's
    /// `ds3_gather_for_generation`).
    GenerationGathersWhole,
    /// Generation turns gradient checkpointing off and keeps a KV cache; when false, a
    /// checkpointed model in training mode generates without a cache, re-running the whole
    /// sequence for every new token.
    GenerationKeepsCache,
    /// A colocated engine (vLLM) releases its memory while training runs and takes its share
    /// back to sample (verl's `free_cache_engine`, TRL's `vllm_enable_sleep_mode`): its share
    /// is then held only while it samples, beside what training keeps on the GPUs then.
    EngineSleeps,
    /// The trained model's parameters are moved to host memory between the phases of a
    /// colocated RL loop and back onto the GPUs for the update (verl's `param_offload`): the
    /// update holds them, the sampling does not.
    PhaseOffloadParams,
    /// The same for the optimizer state (verl's `optimizer_offload`).
    PhaseOffloadOptimizer,
    /// Rows per GPU of the no-grad forward that recomputes the sampled tokens' log-probabilities
    /// with the trained model (verl's `rollout.log_prob_micro_batch_size_per_gpu`).
    LogprobMicroBatch,
    /// The same for the reference model's forward (verl's `ref.log_prob_micro_batch_size_per_gpu`).
    ReferenceLogprobMicroBatch,
    /// A critic (value model) is trained beside the policy on the same GPUs (verl's
    /// `critic.enable`, or `adv_estimator: gae`).
    Critic,
    /// A reward model scores the samples on the same GPUs (verl's `reward_model.enable`).
    RewardModel,
    /// The loss reads the logits with flash-attn's Triton cross-entropy, which writes their
    /// gradient in place and makes no log-softmax copy of them (verl, whose padding-free path
    /// needs flash-attn on a GPU).
    LogitsInPlace,
    /// The critic's model, when a critic trains (verl's `critic.model.path`).
    CriticModel,
    /// The critic's micro-batch per GPU in its update (verl's `critic.ppo_micro_batch_size_per_gpu`).
    CriticMicroBatch,
    /// The critic's activation checkpointing (`none`, `full`).
    CriticCheckpointing,
    /// The critic's parameters / optimizer state are moved to host memory between its updates.
    CriticOffloadParams,
    CriticOffloadOptimizer,
    /// Each micro-batch packs its sequences' real tokens without padding (verl's
    /// `use_remove_padding`): a step holds from the responses alone up to prompt + response at
    /// their limits, as the sampled lengths fall.
    PaddingRemoved,
    /// The same for the critic (`critic.model.use_remove_padding`).
    CriticPaddingRemoved,
    /// The policy a PPO script trains when it is not the file's `model` (TRL's `sft_model_path`,
    /// which its PPO scripts load while `model_name_or_path` names only the tokenizer).
    PolicyModel,
    /// The tokens a PPO trainer samples for each prompt (TRL's `response_length`).
    ResponseLength,
    /// Prompts per GPU that one rollout forward (generation, the reference's, value and reward
    /// models' no-grad forwards) runs at once (TRL's `local_rollout_forward_batch_size`).
    RolloutBatch,
    /// A frozen reward model kept on the training GPUs to score the samples (TRL's
    /// `reward_model_path`).
    RewardScorer,
    /// The model a reference copy is loaded from, when the file names one (LLaMA-Factory's
    /// `ref_model`).
    ReferenceModelName,
    /// The reward model is served by an inference engine (verl's reward loop) rather than run
    /// as a forward of the trainer's own (`reward_model.use_reward_loop`).
    RewardLoop,
    /// The share of each card the reward loop's inference engine takes while it scores (verl's
    /// `reward_model.rollout.gpu_memory_utilization`).
    RewardEngineShare,
    /// The reward loop's engine sleeps outside its scoring, its weights moved to the host and
    /// its KV cache freed (verl's `reward_model.rollout.free_cache_engine`).
    RewardEngineSleeps,
    /// Rows per GPU of the reward model's no-grad forward (verl's
    /// `reward_model.micro_batch_size_per_gpu`).
    RewardMicroBatch,
    /// The tokens the reward model reads per sequence when it re-tokenizes them (verl's
    /// `reward_model.max_length`; else the actor's prompt + response).
    RewardSeqLen,
    /// The reward model's forward packs its sequences' real tokens (verl's
    /// `reward_model.model.use_remove_padding`).
    RewardPaddingRemoved,
}

/// The type a concept's value has once mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Int,
    Float,
    Bool,
    Str,
}

impl Concept {
    pub fn value_type(self) -> ValueType {
        use Concept::*;
        match self {
            MicroBatch
            | GlobalBatch
            | DeviceBatch
            | GradAccum
            | Processes
            | DevicesPerNode
            | ClusterGpus
            | Nodes
            | CpusPerProcess
            | NumWorkers
            | PrefetchFactor
            | TotalSteps
            | DecaySteps
            | SaveInterval
            | EvalInterval
            | SeqLen
            | ImageSize
            | LoraR
            | ZeroStage
            | TensorParallel
            | PipelineParallel
            | ContextParallel
            | SequenceParallel
            | FsdpVersion
            | PromptLength
            | CompletionLength
            | GaloreRank
            | GenerationBatch
            | StepsPerGeneration
            | LogprobMicroBatch
            | ReferenceLogprobMicroBatch
            | CriticMicroBatch
            | ResponseLength
            | RolloutBatch
            | RewardMicroBatch
            | RewardSeqLen => ValueType::Int,
            Epochs | LearningRate | WarmupSteps | WarmupRatio | RamPerProcessGb | MemFraction
            | ColocatedShare | RewardEngineShare | LoraDropout => ValueType::Float,
            PinMemory
            | PersistentWorkers
            | LoadIn4bit
            | LoadIn8bit
            | UsesGpu
            | FusedKernels
            | ChunkedLoss
            | StepInBackward
            | FusedLoss
            | MasterWeights
            | DoubleQuant
            | CpuExperts
            | FsdpOrigParams
            | FsdpParams16
            | ReferenceModel
            | ReferenceCopy
            | OffloadOptimizer
            | OffloadParams
            | MemPreallocate
            | GaloreLayerwise
            | Dora
            | GenerationPerMicroBatch
            | GenerationGathersWhole
            | GenerationKeepsCache
            | EngineSleeps
            | PhaseOffloadParams
            | PhaseOffloadOptimizer
            | Critic
            | RewardModel
            | LogitsInPlace
            | CriticOffloadParams
            | CriticOffloadOptimizer
            | PaddingRemoved
            | CriticPaddingRemoved
            | RewardLoop
            | RewardEngineSleeps
            | RewardPaddingRemoved => ValueType::Bool,
            Scheduler
            | Precision
            | WeightDtype
            | ActivationCheckpointing
            | Attention
            | Model
            | Fsdp
            | Optimizer
            | DeepspeedConfig
            | LoraTargets
            | LoraModulesToSave
            | GaloreTargets
            | Quantizer
            | LoraTargetParameters
            | LowPrecisionMatmuls
            | Objective
            | Generator
            | CriticModel
            | CriticCheckpointing
            | PolicyModel
            | RewardScorer
            | ReferenceModelName => ValueType::Str,
        }
    }
}

/// A setting's value: known, or present but not knowable statically.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// `auto`, `${...}`, `???`, or a value of an unexpected type: never fires a rule.
    Unknown(String),
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// Written in the file at `key` (dotted path).
    File {
        key: String,
        key_span: Span,
        value_span: Span,
    },
    /// The key is absent and the framework's default applies. `relevant` marks defaults the
    /// dialect flags as meaningful for efficiency rules (DESIGN.md "Evidence and defaults").
    Default {
        key: String,
        relevant: bool,
        /// The framework's name, for messages ("TRL default").
        framework: String,
        /// What the default was not checked for, said after it ("not checked for the pinned
        /// axolotl 0.12.2").
        caveat: Option<String>,
        /// The file sets the key, but the pinned release does not read it: why ("torchtune
        /// reads it from 0.7.0 on").
        ignored: Option<String>,
    },
    /// Given on the command line (`hwlint estimate --batch-size 4`), over what the file says.
    Flag { flag: String },
    /// Fixed by the program the file is made for, which no key sets (torchtune's single-device
    /// recipes run one process): `by` names the program and what in the file names it.
    Implied { by: String },
}

impl Origin {
    pub fn key(&self) -> &str {
        match self {
            Origin::File { key, .. } | Origin::Default { key, .. } => key,
            Origin::Flag { flag } => flag,
            Origin::Implied { by } => by,
        }
    }

    /// The program that fixes the setting, when no key does (`Origin::Implied`).
    pub fn implied_by(&self) -> Option<&str> {
        match self {
            Origin::Implied { by } => Some(by),
            _ => None,
        }
    }

    pub fn is_explicit(&self) -> bool {
        matches!(self, Origin::File { .. })
    }

    /// Whether an efficiency rule may fire on this value: written in the file, or a default the
    /// dialect marks relevant (DESIGN.md "Evidence and defaults").
    pub fn counts_for_efficiency(&self) -> bool {
        matches!(
            self,
            Origin::File { .. }
                | Origin::Flag { .. }
                | Origin::Implied { .. }
                | Origin::Default { relevant: true, .. }
        )
    }

    /// `` `num_workers` `` or `` `num_workers` (framework default) ``; an environment variable
    /// (`env.X`, from a launch script or `os.environ`) by its own name.
    pub fn describe(&self) -> String {
        match self {
            Origin::File { key, .. } => match key.strip_prefix("launcher.") {
                // A launcher's own flag on a launch line.
                Some(flag) => format!("`--{flag}`"),
                None => format!("`{}`", key.strip_prefix("env.").unwrap_or(key)),
            },
            Origin::Default {
                key,
                framework,
                caveat,
                ignored,
                ..
            } => {
                let key = key
                    .strip_prefix("env.")
                    .or_else(|| key.strip_prefix("launcher."))
                    .unwrap_or(key);
                let state = match ignored {
                    Some(why) => format!("set, but {why}"),
                    None => "not set".to_string(),
                };
                match caveat {
                    Some(c) => format!("`{key}` ({state}: {framework} default, {c})"),
                    None => format!("`{key}` ({state}: {framework} default)"),
                }
            }
            Origin::Flag { flag } => format!("`{flag}`"),
            Origin::Implied { by } => by.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub value: SettingValue,
    pub origin: Origin,
}

/// Everything hwlint knows about one run, read from one config file.
#[derive(Debug, Clone, Default)]
pub struct TrainingSetup {
    /// The dialect's name (`hf-trainer`, `lerobot`, ...).
    pub dialect: String,
    pub settings: BTreeMap<Concept, Setting>,
    /// Why the file runs no training (an inference or evaluation config), from the dialect's
    /// `[[not_training]]`: training rules stay silent on it.
    pub not_training: Option<String>,
    /// The program the file is made for, what names it, and why it fixes the settings it
    /// does (the dialect's `[[recipe]]`), for `--show-settings`.
    pub recipe: Option<String>,
    /// The model the config describes by its dimensions (the dialect's `[architecture]`).
    pub architecture: Option<InlineModel>,
    /// Why a description the dialect would read was not: the condition of its
    /// `[architecture]` that does not hold (`` `fused_loss` is `true` ``).
    pub architecture_unread: Option<String>,
    /// Concepts whose key is in the file but was not read, and why (`` hwlint reads
    /// `model._component_` only when `model.use_dora` is `false` ``): a rule that lacks the
    /// concept says this instead of "not set".
    pub unread: BTreeMap<Concept, String>,
    /// The framework version whose defaults apply, and where it came from (the dialect's
    /// `[version]`; none for a dialect without one).
    pub version: Option<super::version::Resolved>,
    /// The bitsandbytes release the run gets (pinned above the config, else the newest): its
    /// 4-bit matmul kept its input for backward before 0.43.2. None where no file was read
    /// (the estimate of flags alone), which means the newest.
    pub bitsandbytes: Option<super::version::Resolved>,
    /// Settings read from a key later releases added (a source's `since`), with what each is
    /// where the pinned release predates that key.
    pub newer_keys: BTreeMap<Concept, NewerKey>,
    /// Keys the file sets that the pinned release does not read, and why (also in `unread`),
    /// for `--show-settings`.
    pub ignored: BTreeMap<Concept, String>,
}

/// A setting read from a key that came in a later release (`since`): the release, the key,
/// and the setting an older release gives instead (the sources after it, else the default;
/// `None` where neither gives one).
#[derive(Debug, Clone, PartialEq)]
pub struct NewerKey {
    pub since: String,
    pub key: String,
    pub older: Option<Setting>,
}

/// A model a config describes by its dimensions: catalog fields (`family`, `hidden_size`, ...)
/// as the estimator's model table reads them, and where the description is.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineModel {
    pub table: toml::Table,
    /// The mapping that describes it (`model`), and its span; or, in a flat config
    /// (GPT-NeoX), the key findings about it point at (`num-layers`).
    pub key: String,
    pub span: Span,
    /// The dimensions are keys of the config itself, not of one mapping.
    pub flat: bool,
    /// The framework runs blocks of its own code, not the modules the catalog's block recipe
    /// was measured on: the estimate bounds their activations.
    pub own_blocks: bool,
    /// The description is the model the file names, as the file configures it (a LeRobot
    /// policy sized from its own keys): it stands in for the catalog entry the name finds.
    pub configures_named: bool,
}

impl InlineModel {
    /// Where the description is, for messages: "under `model`", or "(`num-layers`, ...)".
    pub fn place(&self) -> String {
        if self.flat {
            format!("the config describes (`{}`, ...)", self.key)
        } else {
            format!("under `{}`", self.key)
        }
    }
}

impl TrainingSetup {
    pub fn get(&self, c: Concept) -> Option<&Setting> {
        self.settings.get(&c)
    }

    pub fn int(&self, c: Concept) -> Option<(i64, &Setting)> {
        let s = self.settings.get(&c)?;
        match s.value {
            SettingValue::Int(i) => Some((i, s)),
            _ => None,
        }
    }

    pub fn float(&self, c: Concept) -> Option<(f64, &Setting)> {
        let s = self.settings.get(&c)?;
        match s.value {
            SettingValue::Float(f) => Some((f, s)),
            SettingValue::Int(i) => Some((i as f64, s)),
            _ => None,
        }
    }

    /// Whether bitsandbytes' layers hold a quantized base: no `quantizer` names another library
    /// (torchtune's torchao, LLaMA-Factory's HQQ or EETQ).
    pub fn bitsandbytes_quantizes(&self) -> bool {
        self.str(Concept::Quantizer)
            .is_none_or(|(q, _)| q == "bitsandbytes")
    }

    pub fn bool(&self, c: Concept) -> Option<(bool, &Setting)> {
        let s = self.settings.get(&c)?;
        match s.value {
            SettingValue::Bool(b) => Some((b, s)),
            _ => None,
        }
    }

    pub fn str(&self, c: Concept) -> Option<(&str, &Setting)> {
        let s = self.settings.get(&c)?;
        match &s.value {
            SettingValue::Str(v) => Some((v.as_str(), s)),
            _ => None,
        }
    }

    /// True when the setting is present with a value hwlint cannot know.
    pub fn is_unknown(&self, c: Concept) -> bool {
        matches!(
            self.settings.get(&c).map(|s| &s.value),
            Some(SettingValue::Unknown(_))
        )
    }

    /// Whether the run trains on a GPU: not set counts as yes (hwlint lints GPU training), but a
    /// value only known at run time (`use_cpu=args.device == "cpu"`) does not: unknown never
    /// fires a rule.
    pub fn uses_gpu(&self) -> bool {
        match self.settings.get(&Concept::UsesGpu).map(|s| &s.value) {
            Some(SettingValue::Bool(b)) => *b,
            // `accelerator: auto` picks the GPU on a GPU machine; an expression in code or a
            // launch-time value is not known.
            Some(SettingValue::Unknown(v)) => {
                v.trim().eq_ignore_ascii_case("auto") || v.contains("${")
            }
            _ => true,
        }
    }
}
