//! What one training step is: model, batch, precision, optimizer, checkpointing, LoRA and
//! sharding. The estimator's input.

use serde::Serialize;

use super::activations::Regime;
use super::models::Architecture;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// fp32 weights, no autocast.
    Fp32,
    /// fp32 master weights + bf16 autocast (Lightning `bf16-mixed`, HF `bf16: true`).
    Bf16Mixed,
    /// fp32 master weights + fp16 autocast and a GradScaler.
    Fp16Mixed,
    /// Weights, gradients and optimizer state in bf16.
    Bf16True,
    /// Weights, gradients and optimizer state in fp16.
    Fp16True,
}

impl Precision {
    /// The canonical spelling (`bf16-mixed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16Mixed => "bf16-mixed",
            Precision::Fp16Mixed => "fp16-mixed",
            Precision::Bf16True => "bf16-true",
            Precision::Fp16True => "fp16-true",
        }
    }

    /// From a canonical setting (`bf16-mixed`, `fp32`, ...); `None` when not a training dtype
    /// the estimator knows (`fp8`, `auto`).
    pub fn from_canonical(s: &str) -> Option<Precision> {
        Some(match s {
            "fp32" => Precision::Fp32,
            "bf16-mixed" => Precision::Bf16Mixed,
            "fp16-mixed" => Precision::Fp16Mixed,
            "bf16-true" => Precision::Bf16True,
            "fp16-true" => Precision::Fp16True,
            _ => return None,
        })
    }

    pub fn regime(self) -> Regime {
        match self {
            Precision::Fp32 => Regime {
                compute: 4.0,
                residual: 4.0,
                autocast: false,
            },
            Precision::Bf16Mixed | Precision::Fp16Mixed => Regime {
                compute: 2.0,
                residual: 4.0,
                autocast: true,
            },
            Precision::Bf16True | Precision::Fp16True => Regime {
                compute: 2.0,
                residual: 2.0,
                autocast: false,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// torch AdamW, multi-tensor (foreach): one parameter-sized temporary in the step.
    Adamw,
    /// torch AdamW with `fused=True`: no temporary.
    AdamwFused,
    /// bitsandbytes 8-bit AdamW (block-wise quantized moments).
    #[value(name = "adamw-8bit")]
    #[serde(rename = "adamw-8bit")]
    Adamw8bit,
    /// bitsandbytes paged 8-bit AdamW (moments can be paged out under pressure).
    #[value(name = "paged-adamw-8bit")]
    #[serde(rename = "paged-adamw-8bit")]
    PagedAdamw8bit,
    /// bitsandbytes paged 32-bit AdamW: fp32 moments in CUDA unified memory, outside the caching
    /// allocator, paged to host memory under pressure.
    #[value(name = "paged-adamw")]
    #[serde(rename = "paged-adamw")]
    PagedAdamw,
    /// Lion (one momentum buffer; bitsandbytes `lion_32bit` keeps it in fp32).
    Lion,
    /// bitsandbytes 8-bit Lion (one block-wise quantized buffer).
    #[value(name = "lion-8bit")]
    #[serde(rename = "lion-8bit")]
    Lion8bit,
    /// Muon: one momentum buffer for the blocks' weight matrices, orthogonalized by Newton-Schulz
    /// iterations; AdamW for embeddings, head and norms.
    Muon,
    /// Adafactor (factored second moment, no first moment).
    Adafactor,
    Sgd,
    SgdMomentum,
}

impl Optimizer {
    /// Whether the optimizer's state lives outside PyTorch's caching allocator (bitsandbytes
    /// paged optimizers allocate it with cudaMallocManaged), so it never fragments and the
    /// driver may page it to host memory.
    pub fn paged(self) -> bool {
        matches!(self, Optimizer::PagedAdamw | Optimizer::PagedAdamw8bit)
    }

    /// From an optimizer name as frameworks write it (`adamw_torch`, `paged_adamw_8bit`, ...).
    pub fn from_name(name: &str) -> Option<Optimizer> {
        // A class path (`torch.optim.AdamW`, `bitsandbytes.optim.PagedAdamW8bit`) names the
        // optimizer by its last segment.
        let n = name
            .rsplit('.')
            .next()
            .unwrap_or(name)
            .to_ascii_lowercase()
            .replace('-', "_");
        // 4-bit states (torchao) and low-rank projections (GaLore) are not modelled.
        if n.contains("4bit") || n.contains("galore") || n.contains("apollo") {
            return None;
        }
        Some(if n.contains("lion") && n.contains("8bit") {
            Optimizer::Lion8bit
        } else if n.contains("lion") {
            Optimizer::Lion
        } else if n == "muon" || n.starts_with("muon_") {
            Optimizer::Muon
        } else if n.contains("8bit") && n.contains("paged") {
            Optimizer::PagedAdamw8bit
        } else if n.contains("paged") && n.contains("adam") {
            Optimizer::PagedAdamw
        } else if n.contains("8bit") && n.contains("adam") {
            Optimizer::Adamw8bit
        } else if n.contains("fused") {
            Optimizer::AdamwFused
        } else if n.contains("adafactor") {
            Optimizer::Adafactor
        } else if n.starts_with("adam") {
            Optimizer::Adamw
        } else if n == "sgd" {
            Optimizer::Sgd
        } else if n == "sgd_momentum" {
            Optimizer::SgdMomentum
        } else {
            return None;
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Attention {
    /// PyTorch SDPA (flash or memory-efficient kernels) or FlashAttention: memory linear in the
    /// sequence length.
    #[default]
    Sdpa,
    /// `attn_implementation: eager`: the s x s scores, their fp32 softmax and its cast copy
    /// are kept per head.
    Eager,
}

impl Attention {
    /// From a canonical attention setting; `None` for implementations the estimator does not
    /// know (flex attention).
    pub fn from_canonical(s: &str) -> Option<Attention> {
        match s {
            "sdpa" | "flash_attention_2" | "flash_attention_3" => Some(Attention::Sdpa),
            "eager" => Some(Attention::Eager),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Checkpointing {
    None,
    /// Every block recomputed in backward (HF `gradient_checkpointing`).
    Full,
    /// torchtitan's per-op selective checkpointing (`selective_ac_option = "op"`): each block
    /// keeps its input, the attention output and every other matmul output, and recomputes
    /// the rest.
    Selective,
}

/// Everything the estimator needs about one training step.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    #[serde(skip)]
    pub arch: Architecture,
    pub model: String,
    pub batch: u64,
    /// Tokens per sample for sequence models (ignored by vision models).
    pub seq_len: u64,
    /// Image side in pixels for vision models (0 = the model's default).
    pub image_size: u64,
    pub precision: Precision,
    pub optimizer: Optimizer,
    pub checkpointing: Checkpointing,
    /// How attention runs: fused kernels keep no score matrix; eager keeps it per head.
    pub attention: Attention,
    /// LoRA rank and adapted modules; the base is frozen.
    pub lora: Option<(u64, Vec<String>)>,
    /// Stacked expert weights peft adapts directly (`target_parameters`, its ParamWrapper):
    /// r x experts x (in + out) adapter parameters each.
    pub lora_parameters: Vec<String>,
    /// With `lora_parameters`: peft's parametrization merges W + dW for every expert of a
    /// layer in each forward, and the expert matmuls keep the merged weight for backward (a
    /// fused MoE kernel never builds it: the low end).
    pub merged_experts: bool,
    /// peft's DoRA on the adapters (`lora_dropout` 0: the base output is reused, not recomputed):
    /// each adapted layer also keeps its base output and its LoRA output for the magnitude's
    /// gradient.
    pub dora: bool,
    /// peft's `lora_dropout` above 0: each adapter's input goes through dropout, which keeps a
    /// one-byte mask; under DoRA the base matmul is also recomputed on the dropped-out input,
    /// and backward keeps the copy of each adapted weight it ran on.
    pub lora_dropout: bool,
    /// Modules trained whole beside the adapters (peft `modules_to_save`: embeddings, LM head).
    pub modules_to_save: Vec<String>,
    /// GaLore: the rank its optimizer projects the targeted matrices' gradients to, and the
    /// targets (`all`, or module names); the other parameters keep the optimizer's own state.
    pub galore: Option<(u64, Vec<String>)>,
    /// QLoRA: 4-bit NF4 base weights.
    pub load_in_4bit: bool,
    /// bitsandbytes nested quantization of the 4-bit block scales (`bnb_4bit_use_double_quant`).
    pub double_quant: bool,
    /// LLM.int8 base weights (bitsandbytes `load_in_8bit`).
    pub load_in_8bit: bool,
    /// A checkpoint stored quantized: bytes per block linear weight, scales included.
    pub prequantized: Option<f64>,
    /// The quantized base's matmuls keep their input for backward, though the weight is frozen:
    /// bitsandbytes' 8-bit (MatMul8bitLt) always, its 4-bit (MatMul4Bit) before 0.43.2;
    /// torchao's NF4 (torchtune) never.
    pub quantized_input_kept: bool,
    /// 16-bit module weights with an fp32 master copy held by the optimizer (DeepSpeed
    /// `bf16.enabled` / `fp16.enabled`): the master copy is sharded with the optimizer state.
    pub master_weights: bool,
    /// With `master_weights`: gradients are reduced in fp32 into the fp32 shards (FSDP2's
    /// `reduce_dtype`), so the step needs no upcast copy (DeepSpeed's 16-bit gradients do).
    pub fp32_reduce: bool,
    /// A fused linear + cross-entropy loss (Liger) that never materializes the full logits.
    pub chunked_loss: bool,
    /// The optimizer steps each parameter inside backward and frees its gradient (torchtune
    /// `optimizer_in_bwd`): no gradient set is held, and the step's temporaries are one
    /// parameter's.
    pub step_in_backward: bool,
    /// With `Checkpointing::Full`, one block in this many is checkpointed (torchtitan's
    /// layer-selective option `selective_ac_option = "2"`); 1 = every block.
    pub checkpoint_every: u64,
    /// The least of a step whose fused kernels (Liger RMSNorm/SwiGLU) are not modelled: no
    /// per-block working set is counted.
    pub unmodelled_kernels: bool,
    /// A frozen reference copy of the model's weights (TRL DPO/KTO), in the weights' dtype.
    pub reference_model: bool,
    /// Sequences each sample of the micro-batch runs as in one forward: 2 for preference pairs
    /// (chosen and rejected concatenated into one batch: TRL's DPO collator, LLaMA-Factory's
    /// pairwise collator), else 1.
    pub sequences: u64,
    /// A no-grad forward of the reference (its own copy, or the policy with its adapters
    /// disabled) runs after the policy's forward, while the policy's activations and loss
    /// tensors are held (TRL's and LLaMA-Factory's DPO).
    pub reference_forward: bool,
    /// The loss reads per-token log-probabilities with TRL's `selective_log_softmax`: the
    /// logits and a row-wise log-softmax in the compute dtype, no fp32 copy of them.
    pub logprob_loss: bool,
    /// With `logprob_loss`: flash-attn's Triton cross-entropy reads the logits and writes their
    /// gradient into them (`inplace_backward`): the logits alone, in forward and backward.
    pub logits_in_place: bool,
    /// The step is one XLA program (JAX, openpi): its need is its peak of live buffers, not
    /// what PyTorch's caching allocator would reserve ([`crate::estimate::verdict::need_bytes`]).
    pub xla_buffers: bool,
    /// A value head reads the last hidden states while the LM head's logits are computed and
    /// dropped (trl's AutoModelForCausalLMWithValueHead, LLaMA-Factory's reward model): the
    /// logits and their fp32 upcast pass through the end of forward, nothing of them is kept.
    pub value_head: bool,
    /// Tokens per sequence that get logits, when fewer than the sequence (GRPO computes them
    /// for the completion only: `logits_to_keep`).
    pub logits_tokens: Option<u64>,
    /// Tokens per sequence whose rows the loss's log-softmax reads, when fewer than those with
    /// logits (TRL's PPO computes logits for the whole sequence and reads the response's).
    pub logprob_tokens: Option<u64>,
    /// Parameters of a frozen model kept on the GPUs beside the policy (a PPO reward model,
    /// which scores the samples), and the bytes each is stored in.
    pub scorer_params: u64,
    pub scorer_bytes: f64,
    /// Bytes per parameter of a reference copy, when it is not stored like the policy's
    /// weights (LLaMA-Factory loads it in the compute dtype).
    pub reference_bytes: Option<f64>,
    /// Parameters of the reference copy when it is another model than the policy.
    pub reference_params: Option<u64>,
    /// The trainer decides activation checkpointing whatever the file says (TRL's PPOTrainer
    /// never turns it on): no message suggests changing it.
    pub checkpointing_fixed: bool,
    /// MoE experts kept and run on the CPU (KTransformers): their weights are not on the GPU.
    pub cpu_experts: bool,
    /// FSDP1 with a frozen base (LoRA): a flat parameter mixing frozen and trained tensors gets a
    /// gradient of its full size, so the frozen base costs gradient memory too.
    pub flat_grads: bool,
    /// Gradient accumulation over several micro-batches: from the second one on, the
    /// gradients of the previous ones stay allocated through forward and backward.
    pub accumulating: bool,
    /// Plain DistributedDataParallel over more than one GPU with its default
    /// `gradient_as_bucket_view=False`: its reducer keeps flat bucket buffers the size of all
    /// the gradients, allocated at construction and kept for the run, beside the gradients
    /// themselves (torch/nn/parallel/distributed.py, "gradient_as_bucket_view ... the saved
    /// memory size will be equal to the total gradients size").
    pub ddp_buckets: bool,
    /// ZeRO stage (0-3; FSDP full shard = 3) and the data-parallel GPUs it shards over.
    pub zero_stage: u8,
    pub gpus: u64,
    /// Optimizer states (and their step) live in CPU memory (DeepSpeed `offload_optimizer`,
    /// FSDP CPU offload).
    pub offload_optimizer: bool,
    /// Parameters live in CPU memory and are gathered per block (ZeRO-3 `offload_param`,
    /// FSDP `offload_params`).
    pub offload_params: bool,
    /// Tensor-parallel degree (with sequence parallelism it divides activations and, with a
    /// vocabulary-parallel loss, the logits) and context-parallel degree (divides activations).
    pub tensor_parallel: u64,
    /// Pipeline stages: each holds its share of the blocks' model states; under 1F1B the first
    /// stage keeps the activations of as many micro-batches as there are stages, each over its
    /// share of the blocks, so one micro-batch's worth of the whole model's.
    pub pipeline_parallel: u64,
    pub context_parallel: u64,
    /// An RL trainer's sampling between updates, when the training process runs it with
    /// transformers' `model.generate` (TRL's GRPO/RLOO without vLLM).
    pub generation: Option<Generation>,
    /// A colocated inference engine that samples between updates and sleeps through them
    /// (verl's rollout under `free_cache_engine`, TRL's vLLM in sleep mode): what the GPUs hold
    /// while it samples.
    pub engine: Option<Engine>,
    /// No-grad forwards that recompute the sampled tokens' log-probabilities (verl's old and
    /// reference log-probs), with their own rows per GPU.
    pub logprob_forward: Option<LogprobForward>,
    /// A critic (value model) trained on the same GPUs between the actor's phases (verl's PPO).
    pub critic: Option<Critic>,
    /// A reward model's no-grad forward on the same GPUs between the actor's phases (verl's
    /// legacy reward worker).
    pub reward_forward: Option<RewardForward>,
    /// verl's reward loop: an inference engine on the same GPUs that wakes to score the sampled
    /// sequences (the rollout engine asleep) and sleeps again, beside the trainer's states
    /// that their offload switches leave on the GPUs.
    pub reward_engine: Option<Engine>,
}

/// A frozen reward model scoring the samples on the actor's GPUs, its parameters offloaded to
/// the CPU and gathered one FSDP unit at a time (verl's `RewardModelWorker`).
#[derive(Debug, Clone, Serialize)]
pub struct RewardForward {
    /// Its forward: the reward model with a one-output head, its rows and tokens, bf16.
    pub plan: Box<Plan>,
    /// The actor's parameters / optimizer state stay on the GPUs while it scores.
    pub actor_params_kept: bool,
    pub actor_optimizer_kept: bool,
}

/// A critic trained on the same GPUs as the actor, in turns: its update is an instant of the
/// run of its own, and what each keeps on the GPUs sits beside the other's instants.
#[derive(Debug, Clone, Serialize)]
pub struct Critic {
    /// Its update, planned like the actor's: its model with a one-output head, its micro-batch.
    pub plan: Box<Plan>,
    /// The critic's parameters / optimizer state stay on the GPUs through the actor's phases.
    pub params_kept: bool,
    pub optimizer_kept: bool,
    /// The actor's parameters / optimizer state stay on the GPUs through the critic's update.
    pub actor_params_kept: bool,
    pub actor_optimizer_kept: bool,
    /// Trained in the actor's own step rather than in turns: one optimizer and one backward
    /// over both models (TRL's `PolicyAndValueWrapper`), so both steps' terms add up.
    pub joint: bool,
}

/// What the GPUs hold while a colocated engine samples: its share of each card (vLLM sizes its
/// weights, KV cache and working memory to `gpu_memory_utilization` of the whole card,
/// vllm/v1/worker/gpu_worker.py:183-195 at vLLM 0.11.0) and the trainer's states that stay
/// on the GPUs meanwhile (gradients are freed after each update).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Engine {
    /// Bytes the engine holds on each GPU while it samples.
    pub reserved: f64,
    /// The trained model's parameters stay on the GPUs while it samples.
    pub params_kept: bool,
    /// The optimizer state stays on the GPUs while it samples.
    pub optimizer_kept: bool,
}

/// A no-grad forward of the trained model (or a same-sized reference gathered unit by unit)
/// over the sampled sequences: its logits for every token, and one block's working set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LogprobForward {
    /// Sequences per GPU per forward.
    pub rows: u64,
    /// Vocabulary-wide tensors alive at once over the tokens: the logits, and a log-softmax
    /// copy of them where the loss kernel makes one.
    pub logits_copies: u64,
    /// The optimizer state stays on the GPUs through the forward.
    pub optimizer_kept: bool,
    /// Bytes per value of the forward's tensors when it runs outside the training autocast, in
    /// the weights' dtype (TRL's PPO calls its reference and value models directly); `None`:
    /// the training compute dtype.
    pub compute_bytes: Option<f64>,
    /// The forward returns every layer's hidden state, alive with the logits (TRL's PPO
    /// `forward` and `get_reward`: `output_hidden_states=True`).
    pub layers_kept: bool,
    /// ... and every layer's keys and values (its `forward` leaves `use_cache` to the model's
    /// config, true for decoders).
    pub cache_kept: bool,
    /// The generation's kept vocabulary-wide scores (see [`Generation::scores_rows`]) are held
    /// through the forward.
    pub scores_held: bool,
}

/// What `model.generate` holds in the training process while an RL trainer samples its
/// completions: no gradients (the previous step freed them), no activations kept, a KV cache
/// of the sampled sequences and one no-grad forward's working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Generation {
    /// The tokens of each sampled sequence: its (left-padded) prompt and the completion.
    pub prompt: u64,
    pub completion: u64,
    /// Sequences sampled at once on each GPU, when the file fixes them whatever the
    /// micro-batch (`generation_batch_size` over the GPUs; the accumulation steps'
    /// micro-batches, which a fix that keeps the effective batch keeps too).
    pub rows: Option<u64>,
    /// Otherwise, the micro-batches one generation serves.
    pub steps: u64,
    /// A KV cache is kept; else every new token re-runs the whole sequence (a checkpointed
    /// model in training mode generates without one).
    pub cache: bool,
    /// Under ZeRO-3 the whole model is gathered on each GPU while it generates.
    pub whole_model: bool,
    /// Sequences whose every sampled token's fp32 scores over the vocabulary the trainer keeps
    /// after generation (TRL's PPO: `output_scores=True` for all the prompts of its rollout);
    /// 0 for none.
    pub scores_rows: u64,
    /// Bytes per value of the KV cache and working set when generation runs outside the
    /// training autocast, in the weights' dtype; `None`: the training compute dtype.
    pub dtype_bytes: Option<u64>,
}

impl Generation {
    /// Sequences sampled at once on each GPU, for a micro-batch of `batch`.
    pub fn rows(&self, batch: u64) -> u64 {
        self.rows
            .unwrap_or_else(|| batch.max(1).saturating_mul(self.steps.max(1)))
            .max(1)
    }
}

impl Plan {
    /// A plan with the common defaults: micro-batch 1, bf16 mixed precision, AdamW, no
    /// checkpointing, fused attention, no LoRA or sharding. Callers set what they know.
    pub fn new(model: impl Into<String>, arch: Architecture) -> Plan {
        Plan {
            model: model.into(),
            arch,
            batch: 1,
            seq_len: 0,
            image_size: 0,
            precision: Precision::Bf16Mixed,
            optimizer: Optimizer::Adamw,
            checkpointing: Checkpointing::None,
            attention: Attention::Sdpa,
            lora: None,
            lora_parameters: Vec::new(),
            merged_experts: false,
            dora: false,
            lora_dropout: false,
            modules_to_save: Vec::new(),
            galore: None,
            load_in_4bit: false,
            double_quant: false,
            load_in_8bit: false,
            prequantized: None,
            quantized_input_kept: false,
            master_weights: false,
            fp32_reduce: false,
            chunked_loss: false,
            step_in_backward: false,
            accumulating: false,
            ddp_buckets: false,
            flat_grads: false,
            cpu_experts: false,
            reference_model: false,
            sequences: 1,
            reference_forward: false,
            logprob_loss: false,
            logits_in_place: false,
            xla_buffers: false,
            value_head: false,
            logits_tokens: None,
            logprob_tokens: None,
            scorer_params: 0,
            scorer_bytes: 2.0,
            reference_bytes: None,
            reference_params: None,
            checkpointing_fixed: false,
            unmodelled_kernels: false,
            checkpoint_every: 1,
            zero_stage: 0,
            gpus: 1,
            offload_optimizer: false,
            offload_params: false,
            tensor_parallel: 1,
            pipeline_parallel: 1,
            context_parallel: 1,
            generation: None,
            engine: None,
            logprob_forward: None,
            critic: None,
            reward_forward: None,
            reward_engine: None,
        }
    }

    /// The training precision as people name it: `bf16-mixed`, or `bf16 + fp32 master` for a
    /// 16-bit module whose optimizer keeps fp32 master weights (DeepSpeed, FSDP2).
    pub fn precision_label(&self) -> String {
        if self.master_weights {
            format!(
                "{} + fp32 master",
                self.precision.as_str().trim_end_matches("-true")
            )
        } else {
            self.precision.as_str().to_string()
        }
    }

    /// Sequences in one forward: the micro-batch times the sequences each sample runs as.
    pub fn sequences_per_forward(&self) -> u64 {
        self.batch.max(1).saturating_mul(self.sequences.max(1))
    }

    /// The plan of each part of a composite model: the same step over the part's architecture,
    /// its inputs (cameras multiply the batch) and its tokens (a part without a token count is a
    /// vision tower whose tokens come from the image).
    pub fn part_plans(&self) -> Vec<(Plan, bool)> {
        self.arch
            .parts
            .iter()
            .map(|part| {
                let mut sub = self.clone();
                sub.arch = (*part.arch).clone();
                sub.batch = self.batch.max(1).saturating_mul(part.count.max(1));
                // A vision-language model's decoder runs over the run's own sequence (image
                // tokens included) when the config gives one; the catalog's count is only its
                // default.
                sub.seq_len = match part.tokens {
                    Some(_) if part.lm_loss && self.seq_len > 0 => self.seq_len,
                    t => t.unwrap_or(0),
                };
                sub.image_size = part.image_size.unwrap_or(self.image_size);
                if part.logits_tokens.is_some() {
                    sub.logits_tokens = part.logits_tokens;
                }
                if let Some(frames) = part.frames {
                    sub.arch.num_frames = frames;
                }
                // A part cast back to float32 after the model's 16-bit cast trains in fp32;
                // under autocast or fp32 weights it is as the rest.
                if part.keeps_fp32
                    && matches!(self.precision, Precision::Bf16True | Precision::Fp16True)
                {
                    sub.precision = Precision::Fp32;
                }
                // LoRA adapts the parts that train (openpi's gemma_2b_lora / gemma_300m_lora).
                if part.frozen {
                    sub.lora = None;
                }
                // Frozen weights that gradients pass through: a frozen base with no adapters.
                if part.passes_gradients {
                    sub.lora = Some((0, Vec::new()));
                    return (sub, false);
                }
                if let Some(rank) = part.lora_rank {
                    sub.lora = Some((rank, vec!["all-linear".to_string()]));
                    if sub.precision == Precision::Bf16Mixed {
                        sub.precision = Precision::Bf16True;
                    }
                }
                (sub, part.frozen)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimizers_named_by_class_path_read_as_their_class() {
        for (name, want) in [
            ("torch.optim.AdamW", Some(Optimizer::Adamw)),
            ("AdamW", Some(Optimizer::Adamw)),
            (
                "bitsandbytes.optim.PagedAdamW8bit",
                Some(Optimizer::PagedAdamw8bit),
            ),
            ("bitsandbytes.optim.PagedAdamW", Some(Optimizer::PagedAdamw)),
            ("bitsandbytes.optim.AdamW8bit", Some(Optimizer::Adamw8bit)),
            ("adamw_torch_fused", Some(Optimizer::AdamwFused)),
            ("galore_adamw_layerwise", None),
            ("torchao.optim.AdamW4bit", None),
        ] {
            assert_eq!(Optimizer::from_name(name), want, "{name}");
        }
    }
}
