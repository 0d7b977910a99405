//! Peak allocated memory of one training step: the maximum over a few instants of the step
//! (research/memory.md section 3.6), not a sum of everything.

use serde::Serialize;

pub use super::step::{Attention, Checkpointing, Optimizer, Plan, Precision};

use super::activations::{self, Trainable};
use super::models::{Architecture, Family, Kind};
use super::params::{self, ParamCounts};

/// The estimate, with the terms a person needs to see what to change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryEstimate {
    pub params: u64,
    pub trainable_params: u64,
    pub weights_bytes: f64,
    pub gradients_bytes: f64,
    pub optimizer_bytes: f64,
    /// Saved activations at their largest (end of forward).
    pub activations_bytes: f64,
    /// The fp32 logits / loss buffers of a causal LM at the start of backward.
    pub logits_bytes: f64,
    /// Autocast weight copies, optimizer-step temporaries, recompute working sets: what the
    /// peak instant adds on top of the terms above.
    pub temporary_bytes: f64,
    /// Peak allocated bytes over the step.
    pub peak_bytes: f64,
    /// Which instant sets the peak.
    pub peak_at: &'static str,
    /// What is allocated at that instant, by kind: it adds up to `peak_bytes` (the terms
    /// above are the step's by kind, each at its own largest).
    pub at_peak: AtPeak,
    /// The largest forward/backward instant, and the part of it that is transient (activations,
    /// logits, autocast copies, working buffers: what the caching allocator fragments).
    pub fwd_bwd_bytes: f64,
    pub fwd_bwd_transient_bytes: f64,
    /// The optimizer-step instant: model states, gradients and the step's temporaries.
    pub step_bytes: f64,
    /// Optimizer state held outside PyTorch's caching allocator (bitsandbytes paged
    /// optimizers), included in `optimizer_bytes`.
    pub paged_bytes: f64,
    /// Loading a quantized base: the quantized weights plus one block still in 16 bit.
    pub loading_bytes: f64,
    /// An RL trainer sampling in the training process (none when it samples elsewhere): what
    /// is allocated at the sampling's largest instant, by kind. Its weights are more than the
    /// step's when ZeRO-3 gathers the whole model; its KV cache and working set are transient
    /// (the cache grows token by token and fragments as activations do).
    pub generating: Option<AtPeak>,
    /// The sampling's whole KV cache, once every completion token is in it.
    pub generation_kv_bytes: f64,
    /// A colocated engine sampling between updates (verl's rollout, TRL's vLLM in sleep mode):
    /// its share of the card beside the trainer's states that stay on the GPUs.
    pub engine_sampling: Option<AtPeak>,
    /// The no-grad forwards that recompute the sampled tokens' log-probabilities (verl).
    pub logprob_forward: Option<AtPeak>,
    /// A critic's update on the same GPUs (verl's PPO); the critic's kept states are in every
    /// other instant.
    pub critic_update: Option<CriticUpdate>,
    /// A reward model's no-grad forward on the same GPUs (verl's legacy reward worker): its
    /// gathered units and working set beside the actor's and critic's kept states.
    pub reward_forward: Option<AtPeak>,
    /// verl's reward loop scoring on the same GPUs: its engine's share of the card beside the
    /// actor's and critic's kept states.
    pub reward_engine: Option<AtPeak>,
    /// Activation checkpointing is in effect (the allocator fragments differently).
    pub checkpointed: bool,
    /// The step runs as one XLA program (JAX), whose buffers XLA assigns ahead of time inside
    /// the memory it preallocated: PyTorch's caching-allocator margins do not apply.
    pub xla_buffers: bool,
}

impl MemoryEstimate {
    /// Makes `at`, an instant of the run outside the step, the peak when it holds more.
    fn take_peak(&mut self, name: &'static str, at: AtPeak) {
        if at.total() > self.peak_bytes {
            self.peak_at = name;
            self.at_peak = at;
            self.peak_bytes = at.total();
            self.temporary_bytes = at.temporary;
        }
    }
}

/// The instant an RL trainer samples its completions in the training process.
pub const GENERATING: &str = "generating completions";

/// The instant a colocated engine samples while the trainer's states stay on the GPUs.
pub const ENGINE_SAMPLING: &str = "the rollout engine's sampling";

/// The instant of the no-grad log-probability forward over the sampled sequences.
pub const LOGPROB_FORWARD: &str = "the log-prob forward";

/// The instant a critic trained on the same GPUs runs its update (verl's PPO).
pub const CRITIC_UPDATE: &str = "the critic's update";

/// The instant a reward model scores the samples on the same GPUs (verl's legacy worker).
pub const REWARD_FORWARD: &str = "the reward model's forward";

/// The instant verl's reward loop engine scores the samples on the actor's GPUs.
pub const REWARD_ENGINE: &str = "the reward engine's scoring";

/// A critic's update on the actor's GPUs: its own step's instants with the actor's states that
/// stay beside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CriticUpdate {
    /// Allocated at the critic step's peak, the actor's kept states included.
    pub at_peak: AtPeak,
    /// Its largest forward/backward instant and the transient part of it, and its optimizer
    /// step, the actor's kept states included.
    pub fwd_bwd_bytes: f64,
    pub fwd_bwd_transient_bytes: f64,
    pub step_bytes: f64,
    pub checkpointed: bool,
    /// Of the above, what the actor keeps on the GPUs beside it.
    pub actor_kept_bytes: f64,
}

/// The allocated memory at one instant of the step, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AtPeak {
    pub weights: f64,
    pub gradients: f64,
    pub optimizer: f64,
    pub activations: f64,
    pub logits: f64,
    /// The KV cache of completions an RL trainer samples in the training process.
    pub kv_cache: f64,
    /// A colocated inference engine's share of the card while it samples (its weights, KV
    /// cache and working memory, which it sizes to the share itself).
    pub engine: f64,
    /// verl's reward loop engine's share of the card while it scores.
    pub reward_engine: f64,
    /// Autocast weight copies, recompute and backward working sets, the optimizer step's
    /// temporaries, a block dequantized while loading, a no-grad forward's working set.
    pub temporary: f64,
}

impl AtPeak {
    pub fn total(&self) -> f64 {
        self.weights
            + self.gradients
            + self.optimizer
            + self.activations
            + self.logits
            + self.kv_cache
            + self.engine
            + self.reward_engine
            + self.temporary
    }

    /// The kinds as (name, bytes), largest first.
    pub fn breakdown(&self) -> Vec<(&'static str, f64)> {
        let mut v = vec![
            ("weights", self.weights),
            ("gradients", self.gradients),
            ("optimizer", self.optimizer),
            ("activations", self.activations),
            ("logits", self.logits),
            ("KV cache", self.kv_cache),
            ("rollout engine", self.engine),
            ("reward engine", self.reward_engine),
            ("temporary", self.temporary),
        ];
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }
}

impl MemoryEstimate {
    /// Allocated at the largest instant of the sampling between updates (0 when none runs in
    /// the training process).
    pub fn generation_bytes(&self) -> f64 {
        self.generating.map_or(0.0, |g| g.total())
    }

    /// The terms as (name, bytes), largest first: each kind at its own largest over the step,
    /// named as [`AtPeak`] names them.
    pub fn breakdown(&self) -> Vec<(&'static str, f64)> {
        AtPeak {
            weights: self.weights_bytes,
            gradients: self.gradients_bytes,
            optimizer: self.optimizer_bytes,
            activations: self.activations_bytes,
            logits: self.logits_bytes,
            kv_cache: self.generation_kv_bytes,
            engine: self.engine_sampling.map_or(0.0, |e| e.engine),
            reward_engine: self.reward_engine.map_or(0.0, |e| e.reward_engine),
            temporary: self.temporary_bytes,
        }
        .breakdown()
    }
}

/// The module a LoRA target names: peft matches a target against the end of a module's path,
/// so `self_attn.q_proj` adapts `q_proj`.
pub(crate) fn module_name(target: &str) -> &str {
    let last = target.rsplit('.').next().unwrap_or(target);
    // torchtune's names for the Llama-style projections (torchtune/modules/peft/lora.py
    // `LORA_ATTN_MODULES`, the feed-forward's w1/w3/w2).
    match last {
        "output_proj" => "o_proj",
        "w1" => "gate_proj",
        "w3" => "up_proj",
        "w2" => "down_proj",
        other => other,
    }
}

/// LoRA adapter parameters: r x (in + out) per adapted projection per block.
/// The (input, output) widths of a block's linear layer by its usual names (HF Llama-style,
/// GPT-2, LitGPT's LM head).
pub(crate) fn linear_dims(a: &Architecture, m: &str) -> Option<(u64, u64)> {
    let h = a.hidden_size;
    let (qw, kvw, i) = (a.q_width(), a.kv_width(), a.intermediate());
    Some(match m {
        "q_proj" | "query" => (h, qw),
        "k_proj" | "key" => (h, kvw),
        "v_proj" | "value" => (h, kvw),
        "o_proj" | "dense" => (qw, h),
        "gate_proj" | "up_proj" => (h, i),
        "down_proj" => (i, h),
        "c_attn" => (h, 3 * h),
        "c_proj" => (h, h),
        "c_fc" => (h, i),
        // LitGPT's `lora_head`: the LM head's adapter (its vocabulary side is the output).
        "lm_head" => (h, a.vocab_size),
        _ => return None,
    })
}

/// Every linear of a block, for `all-linear` targets.
const ALL_LINEAR: [&str; 7] = [
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
];

/// The block linears a target list names, once each: `all-linear` / `all` is every one.
pub(crate) fn targeted(targets: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in targets {
        let names: Vec<&str> = if matches!(t.as_str(), "all-linear" | "all_linear" | "all") {
            ALL_LINEAR.to_vec()
        } else {
            vec![module_name(t)]
        };
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The block linears GaLore projects. `all` / `all-linear` is every one; any other target
/// picks the modules whose path (`model.layers.0.self_attn.q_proj`) is it, holds it, or
/// fully matches it as a regex: transformers' `check_target_module_exists`
/// (trainer_utils.py) for `optim_target_modules`, LLaMA-Factory's substring test for
/// `galore_target` (train/trainer_utils.py:205-215).
fn galore_targeted(targets: &[String]) -> Vec<&'static str> {
    const PATHS: [(&str, &str); 7] = [
        ("q_proj", "model.layers.0.self_attn.q_proj"),
        ("k_proj", "model.layers.0.self_attn.k_proj"),
        ("v_proj", "model.layers.0.self_attn.v_proj"),
        ("o_proj", "model.layers.0.self_attn.o_proj"),
        ("gate_proj", "model.layers.0.mlp.gate_proj"),
        ("up_proj", "model.layers.0.mlp.up_proj"),
        ("down_proj", "model.layers.0.mlp.down_proj"),
    ];
    let mut out = Vec::new();
    for t in targets.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        let every = matches!(t.replace('_', "-").as_str(), "all-linear" | "all");
        let pattern = regex::Regex::new(&format!("^(?:{t})$")).ok();
        for (name, path) in PATHS {
            let hit =
                every || path.contains(t) || pattern.as_ref().is_some_and(|p| p.is_match(path));
            if hit && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The (experts, in, out) of a MoE block's stacked expert weight that peft's
/// `target_parameters` names (`experts.gate_up_proj`: hidden to 2 x the expert width;
/// `experts.down_proj`: back), for a model with routed experts.
pub(crate) fn expert_dims(a: &Architecture, name: &str) -> Option<(u64, u64, u64)> {
    if a.kind != Kind::Moe || a.num_experts == 0 {
        return None;
    }
    let (h, ei) = (a.hidden_size, a.expert_intermediate());
    let last = name.rsplit('.').next().unwrap_or(name);
    let (input, output) = match last {
        "gate_up_proj" => (h, 2 * ei),
        "gate_proj" | "up_proj" => (h, ei),
        "down_proj" => (ei, h),
        _ => return None,
    };
    Some((a.num_experts, input, output))
}

/// LoRA on stacked expert weights (peft's ParamWrapper: `lora_A` is in x r·E, `lora_B`
/// r·E x out, peft@5d602fd src/peft/tuners/lora/layer.py:2366-2367): the adapter parameters,
/// and the elements of one layer's expert weights they merge into.
fn expert_lora(a: &Architecture, r: u64, names: &[String]) -> (u64, u64) {
    let (mut params, mut merged) = (0u64, 0u64);
    for (e, i, o) in names.iter().filter_map(|n| expert_dims(a, n)) {
        params = params.saturating_add(r.saturating_mul(e).saturating_mul(i + o));
        merged = merged.saturating_add(e.saturating_mul(i).saturating_mul(o));
    }
    (params.saturating_mul(a.sparse_layers()), merged)
}

fn lora_params(a: &Architecture, r: u64, targets: &[String]) -> u64 {
    let per_block = targeted(targets)
        .into_iter()
        .filter_map(|m| linear_dims(a, m))
        .map(|(x, y)| r.saturating_mul(x.saturating_add(y)))
        .fold(0u64, u64::saturating_add);
    per_block.saturating_mul(a.num_layers)
}

/// GaLore over the targeted block matrices: the parameters it projects, and the elements of
/// optimizer state they keep: each m x n matrix's projected gradient is r x max(m, n), so its
/// two moments hold 2 r max(m, n), and its projector r min(m, n) (galore_torch's
/// GaLoreProjector: a right projection when m >= n, a left one otherwise).
fn galore_state(a: &Architecture, r: u64, targets: &[String]) -> (u64, u64) {
    let (mut params, mut state) = (0u64, 0u64);
    for (x, y) in galore_targeted(targets)
        .into_iter()
        .filter_map(|m| linear_dims(a, m))
    {
        params = params.saturating_add(x.saturating_mul(y));
        let (big, small) = (x.max(y), x.min(y));
        let rank = r.min(small);
        state = state.saturating_add(rank.saturating_mul(2 * big + small));
    }
    (
        params.saturating_mul(a.num_layers),
        state.saturating_mul(a.num_layers),
    )
}

/// Parameters of the modules peft trains whole: the input embedding and the LM head by their
/// usual names (HF Llama-style, GPT-2, GPT-NeoX); other names count nothing (the plan says so).
pub(crate) fn saved_modules(a: &Architecture, names: &[String]) -> u64 {
    let table = a.vocab_size.saturating_mul(a.hidden_size);
    names
        .iter()
        .map(|n| match module_name(n) {
            "embed_tokens" | "wte" | "word_embeddings" | "embed_in" => table,
            "lm_head" | "embed_out" => table,
            _ => 0,
        })
        .fold(0, u64::saturating_add)
}

/// The memory terms of one model (or one part of a composite) before the instants are taken.
#[derive(Debug, Clone, Copy, Default)]
struct Terms {
    params: f64,
    trainable: f64,
    weights: f64,
    grads: f64,
    moments: f64,
    step_temp: f64,
    cast_cache: f64,
    cast_kept_ckpt: f64,
    acts_full: f64,
    acts_ckpt: f64,
    /// What recomputing and backpropagating the last block adds (checkpointing only).
    recompute: f64,
    logits_fwd: f64,
    logits_bwd: f64,
    /// The loss tensors the policy keeps plus the reference's logits, during the reference's
    /// forward (0 without one).
    reference_logits: f64,
    head_grad: f64,
    working: f64,
    /// What the forward's no-grad passes hold at once (TD-MPC's target encodings, GR00T's
    /// backbone outputs), and the activations kept by then (without and with checkpointing):
    /// a composite's parts run in their order, so those of the parts up to the one that holds
    /// the transient.
    no_grad_working: f64,
    no_grad_acts_full: f64,
    no_grad_acts_ckpt: f64,
    block_grads: f64,
    checkpointable: bool,
    paged: f64,
    loading: f64,
    accumulating: bool,
    /// DDP's gradient buckets, held through every instant of the step.
    buckets: f64,
    /// While an RL trainer samples in the training process: the weights then (ZeRO-3 may
    /// gather the whole model), the KV cache, and the no-grad forward's working set.
    gen_weights: f64,
    gen_kv: f64,
    gen_working: f64,
    /// The whole KV cache, once every completion token is in it.
    gen_kv_full: f64,
    /// The rollout's kept scores, still referenced through the update (TRL's PPO `logitss`,
    /// ppo_trainer.py:690 at v1.9.0, rebound only by the next rollout).
    held_scores: f64,
    /// A colocated engine's sampling, and the no-grad log-prob forward (see [`Plan`]).
    engine: Option<AtPeak>,
    logprob_forward: Option<AtPeak>,
    /// What stays on the GPUs between steps: the parameters (without units in flight) and the
    /// optimizer's own state.
    params_kept: f64,
    optimizer_state: f64,
}

impl Terms {
    /// What stays on the GPUs outside this model's own phases, as (parameters, optimizer
    /// state): each unless its offload switch moved it off.
    fn kept(&self, params: bool, optimizer: bool) -> (f64, f64) {
        (
            if params { self.params_kept } else { 0.0 },
            if optimizer { self.optimizer_state } else { 0.0 },
        )
    }
}

/// The terms of one model. `frozen` freezes all of it (a frozen tower of a composite: weights
/// only, and its input needs no gradient, so it keeps no activations).
fn terms(plan: &Plan, frozen: bool) -> Terms {
    let a = &plan.arch;
    let counts: ParamCounts = params::count(a);
    let p = counts.total as f64;
    let rg = plan.precision.regime();
    let b = plan.sequences_per_forward() as f64;
    let quantized = plan.load_in_4bit || plan.load_in_8bit || plan.prequantized.is_some();
    let frozen_base = frozen || plan.lora.is_some() || quantized;
    let trainable = Trainable {
        frozen_base,
        lora: plan.lora.clone(),
        quantized_input_kept: plan.quantized_input_kept,
        dora: plan.dora,
        lora_dropout: plan.lora_dropout,
    };
    // peft trains a copy of each module to save (ModulesToSaveWrapper), counted with the
    // adapters: fp32 like them (prepare_model_for_kbit_training upcasts a 4-bit model's
    // other parameters), an upper end for a 16-bit copy.
    let (expert_adapters, merged_per_layer) = plan
        .lora
        .as_ref()
        .map_or((0, 0), |(r, _)| expert_lora(a, *r, &plan.lora_parameters));
    let adapter = (plan.lora.as_ref().map_or(0, |(r, t)| lora_params(a, *r, t))
        + expert_adapters
        + saved_modules(a, &plan.modules_to_save)) as f64;

    // Model states. Weights: fp32 masters under fp32/autocast, 16-bit in pure 16-bit training,
    // NF4 (0.5 B + block scales) for the matmul weights of a 4-bit base.
    // bitsandbytes quantizes the Linear layers of the blocks; the embedding and the LM head
    // (transformers keeps the output embedding unquantized) stay 16-bit.
    let quantizable = match a.family {
        Family::Resnet | Family::Opaque | Family::Composite => counts.matmul,
        _ => a.num_layers * counts.block_matmul,
    } as f64;
    let base_weights = if let Some(bytes) = plan.prequantized {
        quantizable * bytes + (p - quantizable) * 2.0
    } else if plan.load_in_4bit {
        // NF4: half a byte per weight plus an absmax per 64-weight block: fp32, or with nested
        // quantization 8-bit plus an fp32 scale per 256 absmax values.
        let scales = if plan.double_quant {
            1.0 / 64.0 + 4.0 / (64.0 * 256.0)
        } else {
            4.0 / 64.0
        };
        quantizable * (0.5 + scales) + (p - quantizable) * 2.0
    } else if plan.load_in_8bit {
        // LLM.int8: one byte per weight plus an fp32 scale per output row (negligible).
        quantizable + (p - quantizable) * 2.0
    } else {
        p * rg.residual
    };
    // KTransformers keeps the routed experts' weights in host memory and runs them there.
    let cpu_routed = if plan.cpu_experts && a.kind == Kind::Moe {
        (a.num_experts * 3 * a.hidden_size * a.expert_intermediate() * a.sparse_layers()) as f64
    } else {
        0.0
    };
    let base_weights = (base_weights - cpu_routed * base_weights / p.max(1.0)).max(0.0);
    // What of one block is on the GPU, for the blocks gathered or cast one at a time: the routed
    // experts on the CPU are never gathered there.
    let routed_per_block = cpu_routed / a.num_layers.max(1) as f64;
    let gpu_block = (counts.per_block as f64 - routed_per_block).max(0.0);
    let gpu_block_matmul = (counts.block_matmul as f64 - routed_per_block).max(0.0);
    let (trainable_params, grad_bytes, state_bytes) = if frozen_base {
        // peft keeps adapters in fp32 (autocast_adapter_dtype=True).
        (adapter, 4.0, 4.0)
    } else if plan.master_weights {
        // The optimizer works on the fp32 master copy: fp32 moments; 16-bit module gradients,
        // or fp32 ones when they are reduced in fp32.
        (p, if plan.fp32_reduce { 4.0 } else { rg.residual }, 4.0)
    } else {
        (p, rg.residual, rg.residual)
    };
    // The reference model is loaded like the policy, frozen: 16-bit where the policy's
    // weights are, never the fp32 masters' optimizer state.
    // A frozen reward model kept beside them (TRL's PPO) is stored the same way.
    let reference = if plan.reference_model {
        plan.reference_params.map_or(p, |r| r as f64) * plan.reference_bytes.unwrap_or(rg.residual)
    } else {
        0.0
    } + plan.scorer_params as f64 * plan.scorer_bytes;
    let weights = base_weights + if frozen_base { adapter * 4.0 } else { 0.0 } + reference;
    // Under FSDP1 the frozen base sits in flat parameters with the adapters, whose gradient is
    // allocated at the flat parameter's full size.
    let grads = trainable_params * grad_bytes
        + if plan.flat_grads && frozen_base {
            base_weights
        } else {
            0.0
        };
    // The input embedding, when it trains (an nn.Embedding, kept at 32-bit optimizer state by
    // HF Trainer's bitsandbytes overrides).
    let embedding_state = if frozen_base || !a.is_causal_lm() {
        0.0
    } else {
        (a.vocab_size * a.hidden_size) as f64
    };
    let (moments, step_temp) = match plan.optimizer {
        Optimizer::Adamw => (
            2.0 * trainable_params * state_bytes,
            trainable_params * state_bytes,
        ),
        Optimizer::AdamwFused => (2.0 * trainable_params * state_bytes, 0.0),
        // Two 1-byte moments plus one fp32 scale per 2048-element block.
        // Block-wise 8-bit moments (an fp32 absmax per 256 values); HF Trainer keeps the
        // embeddings at 32-bit state (transformers trainer.py:1328-1338).
        Optimizer::Adamw8bit | Optimizer::PagedAdamw8bit => (
            (trainable_params - embedding_state) * (2.0 + 8.0 / 256.0) + embedding_state * 8.0,
            0.0,
        ),
        // Row and column statistics per matrix (about 2 / hidden of the parameters), and an
        // update temporary of the largest tensor.
        Optimizer::Adafactor => (
            trainable_params * state_bytes * 2.0 / a.hidden_size.max(64) as f64,
            2.0 * counts.largest as f64 * state_bytes,
        ),
        // bitsandbytes 32-bit optimizers keep their state in fp32 whatever the parameters' dtype,
        // and update in one fused kernel.
        Optimizer::PagedAdamw => (2.0 * trainable_params * 4.0, 0.0),
        Optimizer::Lion => (trainable_params * 4.0, 0.0),
        Optimizer::Lion8bit => (
            (trainable_params - embedding_state) * (1.0 + 4.0 / 256.0) + embedding_state * 4.0,
            0.0,
        ),
        // Momentum for the blocks' matrices, AdamW's two moments for the rest; Newton-Schulz
        // works on a 16-bit copy of one matrix at a time (X, X Xᵀ, its square, B X).
        Optimizer::Muon => {
            let matrices = if frozen_base {
                0.0
            } else {
                (a.num_layers * counts.block_matmul) as f64
            };
            let widest = (a.hidden_size * a.intermediate()) as f64;
            (
                (matrices + 2.0 * (trainable_params - matrices)) * state_bytes,
                if matrices > 0.0 {
                    5.0 * 2.0 * widest
                } else {
                    0.0
                },
            )
        }
        Optimizer::Sgd => (0.0, 0.0),
        Optimizer::SgdMomentum => (trainable_params * state_bytes, 0.0),
    };
    // GaLore keeps the targeted matrices' moments (and projectors) at rank r: their full-size
    // state is replaced by the projected one; the other parameters keep the optimizer's own.
    let (moments, step_temp) = match &plan.galore {
        Some((r, targets)) if !frozen_base && trainable_params > 0.0 => {
            let (projected, state) = galore_state(a, *r, targets);
            let share = (projected as f64 / trainable_params).min(1.0);
            let per_element = moments / (2.0 * trainable_params);
            (
                moments * (1.0 - share) + state as f64 * per_element,
                step_temp * (1.0 - share),
            )
        }
        _ => (moments, step_temp),
    };
    // The fp32 master copy of 16-bit weights lives with the optimizer state, and the step
    // upcasts the gradients of its partition to fp32 (DeepSpeed's 16-bit optimizer wrappers,
    // FSDP2's fp32 reduce).
    let (moments, step_temp) = if plan.master_weights && !frozen_base {
        (
            moments + trainable_params * 4.0,
            step_temp
                + if plan.fp32_reduce {
                    0.0
                } else {
                    trainable_params * 4.0
                },
        )
    } else {
        (moments, step_temp)
    };

    // The fp32 master copy inside the optimizer state: the parameters a colocated engine's
    // sampling or a log-prob forward finds on the GPUs (verl's fp32 FSDP shards).
    let master = if plan.master_weights && !frozen_base {
        trainable_params * 4.0
    } else {
        0.0
    };
    // A pipeline stage holds its share of the model states.
    let pp = plan.pipeline_parallel.max(1) as f64;
    let (weights, grads, moments, step_temp, master) = (
        weights / pp,
        grads / pp,
        moments / pp,
        step_temp / pp,
        master / pp,
    );
    // Sharding (ZeRO / FSDP) divides model states only.
    let n = plan.gpus.max(1) as f64;
    let master = if plan.zero_stage >= 1 {
        master / n
    } else {
        master
    };
    // The parameters each GPU keeps between steps, without the units gathered in flight.
    let params_kept = if plan.fp32_reduce {
        master + reference / pp / if plan.zero_stage >= 3 { n } else { 1.0 }
    } else if plan.zero_stage >= 3 {
        weights / n
    } else {
        weights
    };
    let (moments, step_temp) = if plan.zero_stage >= 1 {
        (moments / n, step_temp / n)
    } else {
        (moments, step_temp)
    };
    let grads = if plan.zero_stage >= 2 {
        grads / n
    } else {
        grads
    };
    // A gathered block has the dtype the weights are stored in (a quantized base stays
    // quantized).
    let gathered = if quantized {
        base_weights / p.max(1.0)
    } else {
        rg.residual
    };
    // The units gathered at once: the one in flight and the next. The LM head (or tied
    // embedding) is a unit of its own (torchtitan wraps `norm` + `output` together and keeps
    // it gathered from the end of forward into backward: reshard_after_forward=False for the
    // last unit), and a large vocabulary makes it the largest one.
    let head_unit = if a.has_lm_loss() {
        (a.vocab_size * a.hidden_size) as f64
    } else {
        0.0
    };
    let in_flight = (gpu_block.max(head_unit) + gpu_block) * gathered;
    // What DeepSpeed gathers to generate: the policy's parameters (`model.parameters()`), not
    // the reference's, which stays as it is.
    let policy_weights = weights - reference / pp;
    let weights = if plan.fp32_reduce {
        // FSDP2 mixed precision: the parameters are the fp32 shards (counted with the optimizer
        // state as its master copy); 16-bit copies exist only for the units in flight, on one
        // GPU as on many. A frozen reference is no master copy: its 16-bit weights stay,
        // sharded like the policy's.
        in_flight + reference / pp / if plan.zero_stage >= 3 { n } else { 1.0 }
    } else if plan.zero_stage >= 3 {
        // Each rank keeps its shard plus the gathered units in flight.
        weights / n + in_flight
    } else {
        weights
    };

    // Autocast caches a bf16 copy of every matmul weight during forward; the ops that keep them
    // hold them into backward. Under checkpointing the blocks keep nothing, so once autocast
    // exits only the copies kept outside the blocks (LM head, patch embedding) survive.
    // Offloaded states sit in host memory; the GPU holds only what is in flight.
    let (moments, step_temp) = if plan.offload_optimizer {
        (0.0, 0.0)
    } else {
        (moments, step_temp)
    };
    let weights = if plan.offload_params {
        2.0 * gpu_block * rg.residual
    } else {
        weights
    };
    let (params_kept, master) = (
        if plan.offload_params {
            0.0
        } else {
            params_kept
        },
        if plan.offload_optimizer { 0.0 } else { master },
    );
    // The optimizer's own state, without the master copy counted with the parameters.
    let optimizer_state = (moments - master).max(0.0);
    // With the optimizer on the CPU, gradients are moved there as they are produced; with the
    // optimizer stepped inside backward, each is freed once its parameter is updated (the
    // ones in flight are the head's and the block's, counted at their instant), and the
    // step works on one parameter at a time.
    let grads = if (plan.offload_optimizer && plan.zero_stage >= 2) || plan.step_in_backward {
        0.0
    } else {
        grads
    };
    let step_temp = if plan.step_in_backward {
        step_temp.min(counts.largest as f64 * state_bytes)
    } else {
        step_temp
    };

    // Under ZeRO-3/FSDP only the gathered units (current and prefetched) are cast. Autocast
    // caches only the casts of leaf tensors that require grad (aten/src/ATen/autocast_mode.cpp,
    // `cached_cast`): a frozen part's weights are cast afresh at each use, and nothing is kept.
    // A part that only passes gradients (a LoRA of rank 0: a frozen base, no adapters) has no
    // weight that requires grad.
    let passes_only = matches!(&plan.lora, Some((0, t)) if t.is_empty());
    let cast_cache = match (rg.autocast && !frozen && !passes_only, plan.zero_stage >= 3) {
        (false, _) => 0.0,
        (true, false) => 2.0 * (counts.matmul as f64 - cpu_routed),
        (true, true) => 2.0 * 2.0 * gpu_block_matmul,
    };
    let outside_matmul = match a.family {
        Family::Resnet => counts.matmul,
        _ => counts
            .matmul
            .saturating_sub(a.num_layers * counts.block_matmul),
    };
    let cast_kept_ckpt = if rg.autocast && !frozen && !passes_only {
        2.0 * outside_matmul as f64
    } else {
        0.0
    };

    // Activations.
    let tokens = activations::tokens(a, plan.seq_len, plan.image_size) as f64;
    let block = activations::block_per_token(a, rg, &trainable)
        + if a.mha_weights {
            activations::mha_weights_per_token(a, rg, tokens as u64)
        } else if plan.attention == Attention::Eager {
            activations::eager_scores_per_token(a, rg, tokens as u64)
        } else {
            0.0
        };
    let layers = a.num_layers as f64;
    let (acts_full, acts_ckpt, one_block) = if let Some(heads) = &a.detector {
        let (h, w) = (heads.input_height as f64, heads.input_width as f64);
        let (backbone, unkept) = activations::resnet_kept(a, rg, h, w);
        let per_image = backbone + heads.kept_per_image(rg, &unkept);
        (b * per_image, b * per_image, 0.0)
    } else if a.family == Family::Resnet {
        let per_image = activations::resnet_per_image(a, rg, plan.image_size);
        (b * per_image, b * per_image, 0.0)
    } else if a.family == Family::Opaque {
        let kept = b * (a.kept_per_sample as f64 * rg.compute + a.input_per_sample as f64 * 4.0);
        (kept, kept, 0.0)
    } else {
        let outside =
            b * activations::outside_per_sample(a, rg, &trainable, tokens as u64, plan.image_size);
        let blocks = b * tokens * block * layers;
        // Checkpointing keeps each block's input (the residual stream); with one block in N
        // checkpointed the others keep everything; per-op selective checkpointing keeps a
        // subset of each block's ops.
        let input = b * tokens * rg.residual * a.hidden_size as f64;
        let ckpt = match plan.checkpointing {
            Checkpointing::Selective => {
                b * tokens * layers * activations::selective_op_per_token(a, rg, &trainable)
            }
            _ => {
                let every = plan.checkpoint_every.max(1) as f64;
                let checkpointed = (layers / every).ceil();
                checkpointed * input + (layers - checkpointed) * b * tokens * block
            }
        };
        (outside + blocks, outside + ckpt, b * tokens * block)
    };
    // Tensor (+ sequence) and context parallelism split every activation across their ranks
    // (Korthikanti et al.); they also split the model states by the tensor-parallel degree.
    let tp = plan.tensor_parallel.max(1) as f64;
    let split = tp * plan.context_parallel.max(1) as f64;
    let (acts_full, acts_ckpt, one_block) =
        (acts_full / split, acts_ckpt / split, one_block / split);

    // Causal-LM loss: bf16/fp32 logits, their fp32 copy and the log-softmax output at the end of
    // forward; three fp32 [b, s, V] buffers at the start of backward.
    // Logits exist for the positions the loss reads (GRPO: the completion's).
    let logit_tokens = plan
        .logits_tokens
        .map_or(tokens, |t| (t as f64).min(tokens));
    let bsv = b * logit_tokens * a.vocab_size as f64;
    // TRL's selective_log_softmax keeps a 16-bit row's log-softmax for backward (a 32-bit one
    // goes through logsumexp, which keeps only the logits); over the tokens the loss reads
    // when they are fewer than those with logits (TRL's PPO: the response's).
    let c16 = if rg.compute < 4.0 { rg.compute } else { 0.0 };
    let c16 = c16
        * plan
            .logprob_tokens
            .map_or(1.0, |t| (t as f64 / logit_tokens.max(1.0)).min(1.0));
    // A fused loss (Liger's, TRL's DPO included: `_compute_loss_liger`) never materializes the
    // logits, whatever the trainer reads from them.
    let (logits_fwd, logits_bwd) = if a.has_lm_loss() && plan.chunked_loss {
        // Liger's fused linear cross-entropy: logits exist one chunk at a time (about
        // tokens x hidden of them), and the input's gradient is computed in forward.
        let bth = b * tokens * a.hidden_size as f64;
        (
            (rg.compute + 8.0) * bth + rg.compute * bth,
            rg.compute * bth,
        )
    } else if a.has_lm_loss() && plan.value_head && plan.logprob_loss {
        // TRL 0.9's PPOTrainer over its value-head wrapper (LLaMA-Factory's PPO): the wrapper
        // upcasts the logits to fp32 (trl modeling_value_head.py:190 at v0.9.6), the loss keeps
        // their log-softmax (trl/core.py `logprobs_from_logits`), `batched_forward_pass` returns
        // a concatenated copy (LLaMA-Factory train/ppo/trainer.py:455-486), and `loss` takes
        // their entropy with gradients on (`entropy_from_logits`: a softmax and its product with
        // the logits, trl ppo_trainer.py:1244 at v0.9.6): four fp32 vocabulary-wide tensors at
        // once; in backward the copy, the log-softmax and two gradients.
        (16.0 * bsv, 16.0 * bsv)
    } else if a.has_lm_loss() && plan.value_head {
        // trl's value-head wrapper upcasts the logits it returns (modeling_value_head.py).
        let upcast = if rg.compute < 4.0 { 4.0 } else { 0.0 };
        ((rg.compute + upcast) * bsv, 0.0)
    } else if a.has_lm_loss() && plan.logprob_loss && plan.logits_in_place {
        // flash-attn's cross-entropy keeps an fp32 log-sum-exp per token and turns the logits
        // into their gradient in place (flash_attn/ops/triton/cross_entropy.py, verl's
        // `logprobs_from_logits_flash_attn` with inplace_backward=True).
        (rg.compute * bsv, rg.compute * bsv)
    } else if a.has_lm_loss() && plan.logprob_loss {
        // The logits and their rows' log-softmax after forward; backward adds the logits'
        // gradient next to them.
        ((rg.compute + c16) * bsv, (2.0 * rg.compute + c16) * bsv)
    } else if a.has_lm_loss() && a.inplace_loss {
        // Megatron's vocab_parallel_cross_entropy (gpt-neox megatron/mpu/cross_entropy.py:
        // 24-110) takes `logits.float()` and subtracts the max, exponentiates and normalises
        // it in place, saving that one fp32 buffer as the softmax; backward turns it into the
        // gradient in place and casts it back to the logits' dtype. The 16-bit logits live
        // next to the fp32 copy at the end of forward; the fp32 gradient next to its cast in
        // backward.
        let copy = if rg.compute < 4.0 { rg.compute } else { 0.0 };
        ((4.0 + copy) * bsv, (4.0 + copy) * bsv)
    } else if a.has_lm_loss() {
        let copy = if rg.compute < 4.0 { 4.0 } else { 0.0 };
        ((rg.compute + copy + 4.0) * bsv, 12.0 * bsv)
    } else {
        (0.0, 0.0)
    };
    // The reference's no-grad forward after the policy's (DPO): the policy keeps what its loss
    // saved for backward (TRL: the logits and the rows' log-softmax; LLaMA-Factory, which
    // upcasts the logits: their fp32 copy and its log-softmax), and the reference's logits
    // exist at once (TRL: in the compute dtype; LLaMA-Factory: fp32, and its log-softmax).
    let reference_logits = if plan.reference_forward && a.has_lm_loss() && !plan.chunked_loss {
        if plan.logprob_loss {
            (rg.compute + c16 + rg.compute) * bsv
        } else {
            (8.0 + 8.0) * bsv
        }
    } else {
        0.0
    };
    // The first weight gradient of backward: the LM head (or tied embedding).
    // A reward model's value head drops the logits: its LM head gets no gradient.
    let head_grad = if a.has_lm_loss() && !frozen_base && (plan.logprob_loss || !plan.value_head) {
        (a.vocab_size * a.hidden_size) as f64 * grad_bytes
    } else {
        0.0
    };
    // Gradient working set inside one block's backward: the incoming residual gradient and one
    // MLP-width gradient before the tensor it replaces is freed.
    // A token of a sparse block passes through its routed and shared experts only.
    let mlp_width = if a.kind == Kind::Moe {
        a.num_experts_per_tok * a.expert_intermediate() + a.shared_expert_intermediate_size
    } else {
        a.intermediate()
    } as f64;
    let working = if let Some(heads) = &a.detector {
        heads.transient(rg, b)
    } else if matches!(a.family, Family::Resnet | Family::Opaque) {
        0.0
    } else {
        b * tokens * (rg.residual * a.hidden_size as f64 + rg.compute * mlp_width)
    };
    let block_grads = counts.per_block as f64 * grad_bytes * if frozen_base { 0.0 } else { 1.0 };

    let (weights, moments, grads, step_temp, cast_cache, cast_kept_ckpt) = (
        weights / tp,
        moments / tp,
        grads / tp,
        step_temp / tp,
        cast_cache / tp,
        cast_kept_ckpt / tp,
    );
    // One block's gradients (produced whole before FSDP reduce-scatters them) and the
    // working set of its backward are split over the tensor-parallel ranks like the rest.
    let (block_grads, working) = (block_grads / tp, working / split);
    let (logits_fwd, logits_bwd, head_grad, reference_logits) = (
        logits_fwd / tp,
        logits_bwd / tp,
        head_grad / tp,
        reference_logits / tp,
    );
    let recast = if rg.autocast {
        2.0 * counts.block_matmul as f64
    } else {
        0.0
    };
    let block_input = b * tokens * rg.residual * a.hidden_size as f64 / split;
    let (acts_full, acts_ckpt) = if frozen {
        (0.0, 0.0)
    } else {
        (acts_full, acts_ckpt)
    };
    // peft's parametrization builds each sparse layer's W + dW (dW in fp32) in forward, and the
    // expert matmuls keep the merged weight, in the compute dtype, for backward: every layer's
    // without checkpointing, the recomputed layer's with it.
    let merged = if plan.merged_experts && !frozen {
        merged_per_layer as f64 / tp
    } else {
        0.0
    };
    let acts_full = acts_full + merged * rg.compute * a.sparse_layers() as f64;
    let merged_recompute = merged * (rg.compute + 4.0);
    // DoRA with dropout keeps a copy of each adapted weight per block: every block's without
    // checkpointing, the recomputed block's with it.
    let dora_copies = if frozen {
        0.0
    } else {
        activations::dora_weight_copies(a, rg, &trainable, base_weights / p.max(1.0)) / tp
    };
    let acts_full = acts_full + dora_copies * a.num_layers as f64;
    let merged_recompute = merged_recompute + dora_copies;
    let (gen_weights, gen_kv, gen_working, gen_kv_full) = match &plan.generation {
        Some(g) if !frozen && a.has_lm_loss() => {
            let (kv, working, full) = generation(a, plan, g, mlp_width);
            // DeepSpeed's GatheredParameters holds every parameter whole, beside the shards.
            let whole = if g.whole_model && plan.zero_stage >= 3 && !plan.fp32_reduce {
                weights - in_flight / tp + policy_weights / tp
            } else {
                weights
            };
            (
                whole,
                kv / split,
                working / split + cast_cache,
                full / split,
            )
        }
        // A value model trained in the policy's step (TRL's PPO) is gathered with it: ZeRO-3
        // gathers the whole wrapper to generate (`unwrap_model_for_generation(self.model)`,
        // trl/experimental/ppo/ppo_trainer.py:683-688 at v1.9.0).
        Some(g) if !frozen && g.whole_model && plan.zero_stage >= 3 && !plan.fp32_reduce => (
            weights - in_flight / tp + policy_weights / tp,
            0.0,
            0.0,
            0.0,
        ),
        _ => (weights, 0.0, 0.0, 0.0),
    };
    // A colocated engine samples with its share of the card while the trainer keeps what its
    // offload switches leave on the GPUs (gradients were freed after the update).
    let engine = plan.engine.filter(|_| !frozen).map(|e| AtPeak {
        weights: if e.params_kept { params_kept } else { 0.0 },
        optimizer: if e.optimizer_kept {
            optimizer_state
        } else {
            0.0
        },
        engine: e.reserved,
        ..AtPeak::default()
    });
    // The log-prob forward: the parameters back on the GPUs with the units in flight, the logits
    // of every token of its rows (and a log-softmax copy where the kernel makes one), and one
    // no-grad block's working set (the MLP's three intermediate-width tensors and three
    // hidden-width ones per token).
    let logprob_forward = plan
        .logprob_forward
        // A value model's forward has no vocabulary logits to read (TRL's PPO `get_reward`).
        .filter(|f| !frozen && (a.has_lm_loss() || f.logits_copies == 0))
        .map(|f| {
            let c = f.compute_bytes.unwrap_or(rg.compute);
            let row_tokens = f.rows.max(1) as f64 * plan.seq_len.max(1) as f64;
            let per_token = c * (3.0 * mlp_width + 3.0 * a.hidden_size as f64);
            // Every layer's hidden state (and keys/values), returned with the logits.
            let hidden = if f.layers_kept {
                (a.num_layers + 1) * a.hidden_size
            } else {
                0
            };
            let cache = if f.cache_kept {
                a.num_layers * 2 * a.kv_width()
            } else {
                0
            };
            let layers = row_tokens * c * (hidden + cache) as f64;
            let logits = row_tokens * a.vocab_size as f64 * c * f.logits_copies as f64 / tp;
            // The generation's kept scores, held through the forwards.
            let held = match &plan.generation {
                Some(g) if f.scores_held => held_scores(a, g) / tp,
                _ => 0.0,
            };
            // The last block's working set comes and goes before the logits exist.
            let working = row_tokens * per_token / split;
            let (logits, temporary) = if logits > working {
                (logits, layers / split)
            } else {
                (0.0, (layers + working) / split)
            };
            let logits = held + logits;
            AtPeak {
                weights: weights + if plan.fp32_reduce { master } else { 0.0 },
                optimizer: if f.optimizer_kept {
                    optimizer_state
                } else {
                    0.0
                },
                logits,
                temporary,
                ..AtPeak::default()
            }
        });
    Terms {
        params: p,
        trainable: trainable_params,
        weights,
        grads,
        moments,
        step_temp,
        cast_cache,
        cast_kept_ckpt,
        acts_full,
        acts_ckpt,
        // A lower bound for fused kernels counts no per-block working set: what Liger's kernels
        // hold while recomputing or backpropagating one block is not modelled.
        recompute: if frozen || plan.unmodelled_kernels {
            0.0
        } else {
            recast / tp + (one_block - block_input).max(0.0) + working + merged_recompute
        },
        logits_fwd,
        logits_bwd,
        reference_logits,
        head_grad,
        working: if frozen || plan.unmodelled_kernels {
            0.0
        } else {
            working
        },
        no_grad_working: if a.family == Family::Opaque {
            b * a.transient_per_sample as f64 * rg.compute
        } else {
            0.0
        },
        no_grad_acts_full: acts_full,
        no_grad_acts_ckpt: acts_ckpt,
        block_grads,
        // Nothing to recompute in a ResNet (hwlint counts no checkpointed blocks) or an opaque
        // model (no blocks to checkpoint).
        checkpointable: !matches!(a.family, Family::Resnet | Family::Opaque) && !frozen,
        paged: if plan.optimizer.paged() { moments } else { 0.0 },
        loading: if quantized {
            weights + 2.0 * counts.per_block as f64
        } else {
            0.0
        },
        accumulating: plan.accumulating,
        buckets: if plan.ddp_buckets { grads } else { 0.0 },
        gen_weights,
        gen_kv,
        gen_working,
        gen_kv_full,
        // The policy's rollout alone keeps them (a value model's plan shares its generation).
        held_scores: match &plan.generation {
            Some(g) if !frozen && a.has_lm_loss() => held_scores(a, g) / tp,
            _ => 0.0,
        },
        engine,
        logprob_forward,
        params_kept,
        optimizer_state,
    }
}

/// The KV cache and the transient working set at the largest instant of `model.generate`
/// (transformers, in the training process), and the whole cache at the end, on one GPU before
/// any parallel split.
///
/// With a cache, prefill runs the prompts through the model at once (the largest working set,
/// beside the prompts' cache) and each new token adds to the cache, whose last growth copies
/// one layer's keys (DynamicCache concatenates). Without one, the last token's forward re-runs
/// the whole sequence. A no-grad block's working set is the MLP's three intermediate-width
/// tensors at its product (activation, up projection, their product) and three hidden-width
/// ones; eager attention adds its score matrix and the fp32 softmax. Logits exist for the last
/// position only (`logits_to_keep=1`), with their fp32 copy.
fn generation(
    a: &Architecture,
    plan: &Plan,
    g: &super::step::Generation,
    mlp: f64,
) -> (f64, f64, f64) {
    let c = g
        .dtype_bytes
        .map_or(plan.precision.regime().compute, |b| b as f64);
    let rows = g.rows(plan.batch) as f64;
    let per_token_kv = (a.num_layers * 2 * a.kv_width()) as f64 * c;
    let per_token_working = c * (3.0 * mlp + 3.0 * a.hidden_size as f64);
    let scores = |q: f64, k: f64| {
        if plan.attention == Attention::Eager {
            rows * a.num_heads as f64 * q * k * (2.0 * c + 4.0)
        } else {
            0.0
        }
    };
    let logits = rows * a.vocab_size as f64 * (c + 4.0);
    let (prompt, total) = (g.prompt as f64, (g.prompt + g.completion) as f64);
    if g.cache {
        let prefill = (
            rows * prompt * per_token_kv,
            rows * prompt * per_token_working + scores(prompt, prompt) + logits,
        );
        let last = (
            rows * total * per_token_kv,
            rows * total * a.kv_width() as f64 * c
                + rows * per_token_working
                + scores(1.0, total)
                + logits,
        );
        // Scores the trainer keeps (TRL's PPO, `output_scores=True`): fp32 over the vocabulary
        // for every sampled token, the earlier chunks' held while the next samples; at a
        // chunk's end `torch.stack` copies its own beside the cache (ppo_trainer.py:101-110
        // at v1.9.0). The previous rollout's stay referenced (`logitss`, :690) until this
        // one's are assigned, so sampling holds them too, and padding the chunks into one
        // tensor (:137-142) holds three rollouts' worth at once, with no cache left.
        let held = held_scores(a, g);
        let chunk = if g.scores_rows > 0 {
            rows * g.completion as f64 * a.vocab_size as f64 * 4.0
        } else {
            0.0
        };
        let prefill = (prefill.0, prefill.1 + held + (held - chunk).max(0.0));
        let last = (last.0, last.1.max(chunk) + 2.0 * held);
        let pad = (0.0, 3.0 * held);
        let at_peak = [prefill, pad].into_iter().fold(last, |best, x| {
            if x.0 + x.1 > best.0 + best.1 {
                x
            } else {
                best
            }
        });
        (at_peak.0, at_peak.1, last.0)
    } else {
        (
            0.0,
            rows * total * per_token_working + scores(total, total) + logits,
            0.0,
        )
    }
}

/// The fp32 scores over the vocabulary a trainer keeps for every token it sampled (TRL's PPO).
fn held_scores(a: &Architecture, g: &super::step::Generation) -> f64 {
    g.scores_rows as f64 * g.completion as f64 * a.vocab_size as f64 * 4.0
}

/// The peak allocated memory of one training step.
pub fn estimate(plan: &Plan) -> MemoryEstimate {
    estimate_with_terms(plan).0
}

/// [`estimate`], with the terms it was taken from (a critic's kept states are read from them).
fn estimate_with_terms(plan: &Plan) -> (MemoryEstimate, Terms) {
    let t = match plan.arch.family {
        Family::Composite => plan
            .part_plans()
            .iter()
            .zip(&plan.arch.parts)
            .map(|((sub, frozen), part)| {
                let mut t = terms(sub, *frozen);
                if part.idle {
                    return Terms {
                        params: t.params,
                        weights: t.weights,
                        params_kept: t.params_kept,
                        ..Terms::default()
                    };
                }
                // The frozen part's output the loss reads after backward begins: fp32, since
                // autocast runs layer_norm in fp32.
                let held = part.held_tokens.map_or(0.0, |n| {
                    sub.batch.max(1) as f64 * n as f64 * part.arch.hidden_size as f64 * 4.0
                });
                t.acts_full += held;
                t.acts_ckpt += held;
                t
            })
            .fold(Terms::default(), add_terms),
        _ => terms(plan, false),
    };
    // An EMA copy of every parameter, in their dtypes, kept on the GPU through the step.
    let t = if plan.arch.ema_copy {
        Terms {
            weights: 2.0 * t.weights,
            params_kept: 2.0 * t.params_kept,
            ..t
        }
    } else {
        t
    };
    // A value model trained in the policy's step (TRL's PPO) adds its terms to each of the
    // step's instants; through the rollout it keeps its weights and optimizer state (its
    // gradients were set to none after the last update).
    let t = match &plan.critic {
        Some(c) if c.joint => {
            let own = terms(&c.plan, false);
            let mut sum = add_terms(t, own);
            // The rollout's forwards run one model at a time, each beside the other's kept
            // states: the larger instant is the rollout's.
            let beside = |f: Option<AtPeak>, other: &Terms| {
                f.map(|mut f| {
                    f.weights += other.params_kept;
                    f.optimizer += other.optimizer_state;
                    f
                })
            };
            sum.logprob_forward = match (
                beside(t.logprob_forward, &own),
                beside(own.logprob_forward, &t),
            ) {
                (Some(a), Some(c)) if c.total() > a.total() => Some(c),
                (a, c) => a.or(c),
            };
            sum
        }
        _ => t,
    };
    let e = combine(
        &t,
        plan.checkpointing != Checkpointing::None && t.checkpointable,
    );
    let e = match &plan.critic {
        Some(c) if !c.joint => with_critic(e, &t, c),
        _ => e,
    };
    let e = match &plan.reward_forward {
        Some(r) => with_reward(e, &t, plan.critic.as_ref(), r),
        None => e,
    };
    let mut e = match &plan.reward_engine {
        Some(r) => with_reward_engine(e, &t, plan.critic.as_ref(), r),
        None => e,
    };
    e.xla_buffers = plan.xla_buffers;
    (e, t)
}

/// The states the actor's and a critic's offload switches leave on the GPUs outside their own
/// updates, beside an instant of another model (weights, optimizer state): the actor's as
/// `(params, optimizer)` say, the critic's as its own switches do (none without a critic).
fn kept_beside(
    actor: &Terms,
    (params, optimizer): (bool, bool),
    critic: Option<&super::step::Critic>,
) -> (f64, f64) {
    let (aw, ao) = actor.kept(params, optimizer);
    let (cw, co) = critic.map_or((0.0, 0.0), |k| {
        estimate_with_terms(&k.plan)
            .1
            .kept(k.params_kept, k.optimizer_kept)
    });
    (aw + cw, ao + co)
}

/// verl's reward loop scoring as an instant of its own: its engine awake with the share of
/// each card it was started with, beside the actor's and critic's states that their offload
/// switches leave on the GPUs (gradients were freed after the last update; the rollout engine
/// sleeps).
fn with_reward_engine(
    mut e: MemoryEstimate,
    actor: &Terms,
    critic: Option<&super::step::Critic>,
    r: &super::step::Engine,
) -> MemoryEstimate {
    let (weights, optimizer) = kept_beside(actor, (r.params_kept, r.optimizer_kept), critic);
    let at = AtPeak {
        weights,
        optimizer,
        reward_engine: r.reserved,
        ..AtPeak::default()
    };
    e.take_peak(REWARD_ENGINE, at);
    e.reward_engine = Some(at);
    e
}

/// The reward model's no-grad forward as an instant of its own: FSDP with CPU offload keeps its
/// root unit (the embedding, final norm and one-output head) gathered through the forward and
/// one block at a time beside it, bf16; the block's working set is the MLP's three
/// intermediate-width tensors and four hidden-width ones per token. The actor's and critic's
/// states their offload switches leave on the GPUs sit beside it; the rollout engine sleeps.
fn with_reward(
    mut e: MemoryEstimate,
    actor: &Terms,
    critic: Option<&super::step::Critic>,
    r: &super::step::RewardForward,
) -> MemoryEstimate {
    let a = &r.plan.arch;
    let c = r.plan.precision.regime().compute;
    let counts = params::count(a);
    let in_flight = ((a.vocab_size * a.hidden_size) as f64 + counts.per_block as f64) * c;
    let mlp = if a.kind == Kind::Moe {
        a.num_experts_per_tok * a.expert_intermediate() + a.shared_expert_intermediate_size
    } else {
        a.intermediate()
    } as f64;
    let tokens = r.plan.batch.max(1) as f64 * r.plan.seq_len.max(1) as f64;
    let working = tokens * c * (3.0 * mlp + 4.0 * a.hidden_size as f64);
    let (weights, optimizer) =
        kept_beside(actor, (r.actor_params_kept, r.actor_optimizer_kept), critic);
    let at = AtPeak {
        weights: in_flight + weights,
        optimizer,
        temporary: working,
        ..AtPeak::default()
    };
    e.take_peak(REWARD_FORWARD, at);
    e.reward_forward = Some(at);
    e
}

/// Two models' terms in one step: their states and activations add up; the working sets of
/// one block at a time take the larger.
fn add_terms(acc: Terms, t: Terms) -> Terms {
    Terms {
        params: acc.params + t.params,
        trainable: acc.trainable + t.trainable,
        weights: acc.weights + t.weights,
        grads: acc.grads + t.grads,
        moments: acc.moments + t.moments,
        step_temp: acc.step_temp + t.step_temp,
        cast_cache: acc.cast_cache + t.cast_cache,
        cast_kept_ckpt: acc.cast_kept_ckpt + t.cast_kept_ckpt,
        acts_full: acc.acts_full + t.acts_full,
        acts_ckpt: acc.acts_ckpt + t.acts_ckpt,
        recompute: acc.recompute.max(t.recompute),
        logits_fwd: acc.logits_fwd + t.logits_fwd,
        logits_bwd: acc.logits_bwd + t.logits_bwd,
        reference_logits: acc.reference_logits + t.reference_logits,
        head_grad: acc.head_grad + t.head_grad,
        working: acc.working.max(t.working),
        no_grad_working: acc.no_grad_working.max(t.no_grad_working),
        no_grad_acts_full: if t.no_grad_working > acc.no_grad_working {
            acc.acts_full + t.no_grad_acts_full
        } else {
            acc.no_grad_acts_full
        },
        no_grad_acts_ckpt: if t.no_grad_working > acc.no_grad_working {
            acc.acts_ckpt + t.no_grad_acts_ckpt
        } else {
            acc.no_grad_acts_ckpt
        },
        block_grads: acc.block_grads.max(t.block_grads),
        checkpointable: acc.checkpointable || t.checkpointable,
        paged: acc.paged + t.paged,
        loading: acc.loading + t.loading,
        accumulating: acc.accumulating || t.accumulating,
        buckets: acc.buckets + t.buckets,
        gen_weights: acc.gen_weights + t.gen_weights,
        gen_kv: acc.gen_kv + t.gen_kv,
        gen_working: acc.gen_working.max(t.gen_working),
        gen_kv_full: acc.gen_kv_full + t.gen_kv_full,
        held_scores: acc.held_scores + t.held_scores,
        engine: acc.engine.or(t.engine),
        logprob_forward: acc.logprob_forward.or(t.logprob_forward),
        params_kept: acc.params_kept + t.params_kept,
        optimizer_state: acc.optimizer_state + t.optimizer_state,
    }
}

/// The actor's estimate with a critic trained on the same GPUs in turns: the critic's kept
/// states sit beside each of the actor's instants, and the critic's update, with the actor's
/// kept states beside it, is an instant of its own.
fn with_critic(mut e: MemoryEstimate, actor: &Terms, c: &super::step::Critic) -> MemoryEstimate {
    let (critic, own) = estimate_with_terms(&c.plan);
    let (cw, co) = own.kept(c.params_kept, c.optimizer_kept);
    let beside = |a: &mut AtPeak| {
        a.weights += cw;
        a.optimizer += co;
    };
    beside(&mut e.at_peak);
    for a in [
        &mut e.engine_sampling,
        &mut e.logprob_forward,
        &mut e.generating,
    ]
    .into_iter()
    .flatten()
    {
        beside(a);
    }
    e.weights_bytes += cw;
    e.optimizer_bytes += co;
    e.peak_bytes += cw + co;
    e.fwd_bwd_bytes += cw + co;
    e.step_bytes += cw + co;
    let (aw, ao) = actor.kept(c.actor_params_kept, c.actor_optimizer_kept);
    let mut at_peak = critic.at_peak;
    at_peak.weights += aw;
    at_peak.optimizer += ao;
    let update = CriticUpdate {
        at_peak,
        fwd_bwd_bytes: critic.fwd_bwd_bytes + aw + ao,
        fwd_bwd_transient_bytes: critic.fwd_bwd_transient_bytes,
        step_bytes: critic.step_bytes + aw + ao,
        checkpointed: critic.checkpointed,
        actor_kept_bytes: aw + ao,
    };
    e.take_peak(CRITIC_UPDATE, at_peak);
    e.critic_update = Some(update);
    e
}

/// The peak over the instants of a step.
fn combine(t: &Terms, checkpointed: bool) -> MemoryEstimate {
    let acts = if checkpointed {
        t.acts_ckpt
    } else {
        t.acts_full
    };
    let states = t.weights + t.moments;
    let cast_bwd = if checkpointed {
        t.cast_kept_ckpt
    } else {
        t.cast_cache
    };
    // Gradients alive during forward and backward: all of them when accumulating, else the
    // ones backward has produced by the instant (the head's, then the last block's).
    // A rollout's kept scores sit beside every instant of the update.
    let held = t.held_scores;
    let step = states + t.grads + t.buckets + t.step_temp + held;
    let step_terms = AtPeak {
        weights: t.weights,
        optimizer: t.moments,
        gradients: t.grads + t.buckets,
        logits: held,
        temporary: t.step_temp,
        ..AtPeak::default()
    };
    let held_grads = t.buckets + if t.accumulating { t.grads } else { 0.0 };
    let base = AtPeak {
        weights: t.weights,
        optimizer: t.moments,
        gradients: held_grads,
        activations: acts,
        logits: held,
        ..AtPeak::default()
    };
    // Accumulated gradients already hold the head's and the blocks'.
    let t = if t.accumulating {
        &Terms {
            head_grad: 0.0,
            block_grads: 0.0,
            ..*t
        }
    } else {
        t
    };
    // (instant, what is allocated then, transient part).
    let mut fwd_bwd: Vec<(&'static str, AtPeak, f64)> = vec![
        (
            "end of forward",
            AtPeak {
                logits: held + t.logits_fwd,
                temporary: t.cast_cache,
                ..base
            },
            t.cast_cache + acts + t.logits_fwd,
        ),
        (
            "start of backward",
            AtPeak {
                logits: held + t.logits_bwd,
                gradients: held_grads + t.head_grad,
                temporary: cast_bwd,
                ..base
            },
            cast_bwd + acts + t.logits_bwd,
        ),
    ];
    if t.no_grad_working > 0.0 {
        let kept = if checkpointed {
            t.no_grad_acts_ckpt
        } else {
            t.no_grad_acts_full
        };
        fwd_bwd.push((
            "the forward's no-grad passes",
            AtPeak {
                activations: kept,
                temporary: t.cast_cache + t.no_grad_working,
                ..base
            },
            t.cast_cache + kept + t.no_grad_working,
        ));
    }
    if t.reference_logits > 0.0 {
        // The reference forward runs inside the same autocast region: the policy's cast cache
        // is still held, and one no-grad block's working set comes and goes.
        fwd_bwd.push((
            "the reference model's forward",
            AtPeak {
                logits: held + t.reference_logits,
                temporary: t.cast_cache + t.working,
                ..base
            },
            t.cast_cache + acts + t.reference_logits + t.working,
        ));
    }
    if checkpointed {
        // The last block is recomputed from its checkpointed input (already counted) and
        // backpropagated; its weights are cast again under autocast.
        fwd_bwd.push((
            "recompute of the last block",
            AtPeak {
                gradients: held_grads + t.head_grad + t.block_grads,
                temporary: cast_bwd + t.recompute,
                ..base
            },
            cast_bwd + acts + t.recompute,
        ));
    } else if t.working > 0.0 {
        fwd_bwd.push((
            "backward of the last block",
            AtPeak {
                gradients: held_grads + t.head_grad + t.block_grads,
                temporary: cast_bwd + t.working,
                ..base
            },
            cast_bwd + acts + t.working,
        ));
    }
    let (fb_at, fb_terms, fb_transient) = fwd_bwd
        .into_iter()
        .max_by(|x, y| x.1.total().total_cmp(&y.1.total()))
        .unwrap_or(("end of forward", AtPeak::default(), 0.0));
    let fb_total = fb_terms.total();
    let mut peak = if step > fb_total {
        ("optimizer step", step_terms)
    } else {
        (fb_at, fb_terms)
    };
    let generating = (t.gen_kv + t.gen_working > 0.0).then_some(AtPeak {
        weights: t.gen_weights,
        optimizer: t.moments,
        kv_cache: t.gen_kv,
        temporary: t.gen_working,
        ..AtPeak::default()
    });
    if let Some(g) = generating.filter(|g| g.total() > peak.1.total()) {
        peak = (GENERATING, g);
    }
    if let Some(e) = t.engine.filter(|e| e.total() > peak.1.total()) {
        peak = (ENGINE_SAMPLING, e);
    }
    if let Some(f) = t.logprob_forward.filter(|f| f.total() > peak.1.total()) {
        peak = (LOGPROB_FORWARD, f);
    }
    if t.loading > peak.1.total() {
        peak = (
            "loading the quantized weights",
            AtPeak {
                weights: t.weights,
                temporary: t.loading - t.weights,
                ..AtPeak::default()
            },
        );
    }
    let (peak_at, at_peak) = peak;
    let peak_bytes = at_peak.total();
    let temporary = at_peak.temporary;
    MemoryEstimate {
        params: t.params as u64,
        trainable_params: t.trainable as u64,
        weights_bytes: t.weights,
        gradients_bytes: t.grads,
        optimizer_bytes: t.moments,
        activations_bytes: acts,
        logits_bytes: t.logits_bwd,
        temporary_bytes: temporary,
        peak_bytes,
        peak_at,
        at_peak,
        fwd_bwd_bytes: fb_total,
        fwd_bwd_transient_bytes: fb_transient,
        step_bytes: step,
        paged_bytes: t.paged,
        loading_bytes: t.loading,
        generating,
        generation_kv_bytes: t.gen_kv_full,
        engine_sampling: t.engine,
        logprob_forward: t.logprob_forward,
        critic_update: None,
        reward_forward: None,
        reward_engine: None,
        checkpointed,
        xla_buffers: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::models::lookup;

    fn plan(model: &str, precision: Precision, batch: u64) -> Plan {
        Plan {
            batch,
            seq_len: 2048,
            precision,
            checkpointing: Checkpointing::Full,
            ..Plan::new(model, lookup(model).unwrap().clone())
        }
    }

    /// What the estimate says is allocated at its peak adds up to the peak, for every instant
    /// that can set it.
    #[test]
    fn the_peak_is_the_sum_of_its_kinds() {
        for (batch, ckpt) in [
            (1, Checkpointing::Full),
            (16, Checkpointing::Full),
            (16, Checkpointing::None),
        ] {
            let e = estimate(&Plan {
                checkpointing: ckpt,
                ..plan("tinyllama-1.1b", Precision::Bf16Mixed, batch)
            });
            assert!((e.at_peak.total() - e.peak_bytes).abs() < 1.0, "{e:?}");
        }
    }

    /// An RL trainer sampling in the training process: with a KV cache it holds the cache of
    /// every sampled token; without one (a checkpointed model in training mode) each new token
    /// re-runs the whole sequence, whose no-grad working set is then the largest term.
    #[test]
    fn sampling_keeps_a_kv_cache_or_reruns_the_sequence() {
        use crate::estimate::step::Generation;
        let g = Generation {
            prompt: 512,
            completion: 1536,
            rows: Some(32),
            steps: 1,
            cache: true,
            whole_model: false,
            scores_rows: 0,
            dtype_bytes: None,
        };
        let base = plan("tinyllama-1.1b", Precision::Bf16True, 4);
        let cached = estimate(&Plan {
            generation: Some(g),
            ..base.clone()
        });
        // TinyLlama: 22 layers, keys and values of 4 heads x 64, bf16.
        let kv = (32_u64 * 2048 * 22 * 2 * 256 * 2) as f64;
        assert_eq!(cached.generation_kv_bytes, kv);
        let rerun = estimate(&Plan {
            generation: Some(Generation { cache: false, ..g }),
            ..base.clone()
        });
        assert_eq!(rerun.generation_kv_bytes, 0.0);
        // The MLP's three 5632-wide tensors of every token, in bf16.
        let working = (32_u64 * 2048 * 3 * 5632 * 2) as f64;
        assert!(
            rerun.generation_bytes() - cached.generation_bytes() > working - kv,
            "{} vs {}",
            rerun.generation_bytes(),
            cached.generation_bytes()
        );
        // Without sampling in the process there is no such instant.
        assert_eq!(estimate(&base).generation_bytes(), 0.0);
        // TRL's PPO keeps every sampled token's fp32 scores over the vocabulary for all the
        // prompts of its rollout (here 64, sampled 32 at a time), beside the previous
        // rollout's, still referenced; a chunk's are stacked at its end, and padding them all
        // into one tensor holds three rollouts' worth.
        let scored = estimate(&Plan {
            generation: Some(Generation {
                scores_rows: 64,
                ..g
            }),
            ..base.clone()
        });
        let held = 64.0 * 1536.0 * 32_000.0 * 4.0;
        let chunk = 32.0 * 1536.0 * 32_000.0 * 4.0;
        let added = scored.generation_bytes() - cached.generation_bytes();
        assert!(
            added >= 2.0 * held + chunk - 1.0 && added <= 3.0 * held,
            "{added} for {held} held"
        );
    }

    /// TRL's PPO reference forward returns every layer's hidden state and cache with its
    /// logits, in the weights' dtype, while the rollout's scores are held.
    #[test]
    fn a_rollout_forward_keeps_its_layers_and_the_held_scores() {
        use crate::estimate::step::{Generation, LogprobForward};
        let mut p = plan("tinyllama-1.1b", Precision::Bf16Mixed, 4);
        p.seq_len = 1024;
        let plain = LogprobForward {
            rows: 8,
            logits_copies: 1,
            optimizer_kept: true,
            compute_bytes: Some(4.0),
            layers_kept: false,
            cache_kept: false,
            scores_held: false,
        };
        let at = |f: LogprobForward, g: Option<Generation>| {
            estimate(&Plan {
                logprob_forward: Some(f),
                generation: g,
                ..p.clone()
            })
            .logprob_forward
            .expect("the forward")
        };
        let bare = at(plain, None);
        // fp32 logits of 8 x 1024 tokens.
        assert_eq!(bare.logits, 8.0 * 1024.0 * 32_000.0 * 4.0);
        // 23 hidden states of 2048 and 22 layers' keys and values of 256, fp32.
        let layers = at(
            LogprobForward {
                layers_kept: true,
                cache_kept: true,
                ..plain
            },
            None,
        );
        let kept = 8.0 * 1024.0 * 4.0 * (23.0 * 2048.0 + 22.0 * 2.0 * 256.0);
        assert_eq!(layers.temporary, kept);
        let g = Generation {
            prompt: 960,
            completion: 64,
            rows: Some(8),
            steps: 1,
            cache: true,
            whole_model: false,
            scores_rows: 16,
            dtype_bytes: Some(4),
        };
        let held = at(
            LogprobForward {
                scores_held: true,
                ..plain
            },
            Some(g),
        );
        assert_eq!(held.logits, bare.logits + 16.0 * 64.0 * 32_000.0 * 4.0);
    }

    /// torchtune's `optimizer_in_bwd` steps and frees each gradient inside backward: no full
    /// set of gradients at any instant, so the small-batch peak drops by the gradients.
    #[test]
    fn stepping_in_backward_holds_no_gradient_set() {
        let base = plan("tinyllama-1.1b", Precision::Bf16True, 1);
        let plain = estimate(&base);
        let in_bwd = estimate(&Plan {
            step_in_backward: true,
            ..base
        });
        assert_eq!(in_bwd.gradients_bytes, 0.0);
        let p = plain.params as f64;
        // bf16 gradients are 2 bytes a parameter; the peak loses at least most of them.
        assert!(
            plain.peak_bytes - in_bwd.peak_bytes > 1.5 * p,
            "{plain:?} {in_bwd:?}"
        );
    }

    #[test]
    fn small_batch_peak_is_the_adamw_step_at_20_or_10_bytes_per_parameter() {
        // memory.md section 2: weights + grads + two moments + one foreach temporary.
        let amp = estimate(&plan("tinyllama-1.1b", Precision::Bf16Mixed, 1));
        let p = amp.params as f64;
        assert_eq!(amp.peak_at, "optimizer step");
        assert!((amp.peak_bytes - 20.0 * p).abs() < 1.0);
        let bf16 = estimate(&plan("tinyllama-1.1b", Precision::Bf16True, 1));
        assert!((bf16.peak_bytes - 10.0 * p).abs() < 1.0);
    }

    /// `model` under FSDP2 mixed precision over `gpus` GPUs (torchtitan's): bf16 compute over
    /// fp32 shards, gradients reduced in fp32.
    fn fsdp2_mixed(model: &str, gpus: u64) -> Plan {
        let mut p = plan(model, Precision::Bf16True, 1);
        p.master_weights = true;
        p.fp32_reduce = true;
        p.zero_stage = 3;
        p.gpus = gpus;
        p
    }

    #[test]
    fn a_sleeping_engine_samples_beside_the_states_its_switches_leave() {
        // verl's actor: fp32 shards over 8 GPUs (4 bytes) and AdamW's two fp32 moments (8).
        let mut p = fsdp2_mixed("llama-2-7b", 8);
        p.seq_len = 1024;
        let reserved = 40.0 * (1u64 << 30) as f64;
        let shard = params::count(&p.arch).total as f64 / 8.0;
        for (params_kept, optimizer_kept, states) in [
            (true, true, 12.0 * shard),
            (false, true, 8.0 * shard),
            (true, false, 4.0 * shard),
            (false, false, 0.0),
        ] {
            p.engine = Some(super::super::step::Engine {
                reserved,
                params_kept,
                optimizer_kept,
            });
            let at = estimate(&p).engine_sampling.unwrap();
            assert_eq!(at.engine, reserved);
            let kept = at.weights + at.optimizer;
            assert!(
                (kept - states).abs() <= 1e-6 * states.max(1.0),
                "{params_kept} {optimizer_kept}: {kept} for {states}"
            );
        }
    }

    #[test]
    fn an_in_place_cross_entropy_keeps_the_logits_alone() {
        // flash-attn's cross-entropy (verl): the 16-bit logits, their gradient written into
        // them; the row-wise log-softmax (TRL) keeps a copy beside them and adds the gradient.
        let mut p = plan("llama-2-7b", Precision::Bf16True, 4);
        p.seq_len = 1024;
        p.logprob_loss = true;
        let bsv = 4.0 * 1024.0 * 32000.0;
        let row_wise = estimate(&p);
        p.logits_in_place = true;
        let in_place = estimate(&p);
        assert_eq!(in_place.logits_bytes, 2.0 * bsv);
        assert_eq!(row_wise.logits_bytes, 6.0 * bsv);
    }

    #[test]
    fn tensor_parallel_splits_the_gradients_of_the_block_in_backward() {
        // llama-2-7b under FSDP over 64 and TP 8: the last block's gradients, produced whole
        // before they are reduce-scattered, are an eighth of the block's on each TP rank.
        // torchtitan's FSDP2 mixed precision: bf16 compute over fp32 shards, fp32 gradients.
        let mut p = fsdp2_mixed("llama-2-7b", 64);
        p.seq_len = 512;
        p.checkpointing = Checkpointing::Full;
        let block = params::count(&p.arch).per_block as f64 * 4.0;
        let one = estimate(&p);
        p.tensor_parallel = 8;
        let eight = estimate(&p);
        assert_eq!(one.peak_at, "recompute of the last block");
        assert!(one.at_peak.gradients >= block);
        assert!(
            eight.at_peak.gradients < block / 4.0,
            "{} of a {block}-byte block",
            eight.at_peak.gradients
        );
    }

    #[test]
    fn a_gathered_lm_head_counts_as_the_largest_unit_in_flight() {
        // Llama-3-8B under FSDP2 mixed precision: the 128256 x 4096 head (1.05 GB in bf16) is
        // larger than a block (0.44 GB), and it is gathered with the last block at the start
        // of backward.
        let p = fsdp2_mixed("llama-3-8b", 8);
        let block = params::count(&p.arch).per_block as f64 * 2.0;
        let head = (p.arch.vocab_size * p.arch.hidden_size) as f64 * 2.0;
        assert!(head > block);
        assert!((estimate(&p).weights_bytes - (head + block)).abs() < 1.0);
    }

    #[test]
    fn a_reference_copy_stays_beside_fp32_master_shards() {
        // FSDP2 mixed precision keeps no 16-bit copy of the policy outside the units in flight,
        // but a frozen reference (DPO's) is its own 16-bit model, sharded over the 8 GPUs.
        let mut p = fsdp2_mixed("llama-3-8b", 8);
        let without = estimate(&p).weights_bytes;
        p.reference_model = true;
        let with = estimate(&p).weights_bytes;
        let copy = params::count(&p.arch).total as f64 * 2.0 / 8.0;
        assert!(
            (with - without - copy).abs() < 1.0,
            "{with} - {without} vs {copy}"
        );
    }

    #[test]
    fn pipeline_stages_split_the_model_states_not_the_activations() {
        let mut p = plan("llama-3-8b", Precision::Bf16True, 1);
        p.seq_len = 2048;
        let one = estimate(&p);
        p.pipeline_parallel = 4;
        let four = estimate(&p);
        assert!((four.optimizer_bytes - one.optimizer_bytes / 4.0).abs() < 1.0);
        assert!((four.gradients_bytes - one.gradients_bytes / 4.0).abs() < 1.0);
        assert!((four.weights_bytes - one.weights_bytes / 4.0).abs() < 1.0);
        assert_eq!(four.activations_bytes, one.activations_bytes);
    }

    #[test]
    fn optimizers_and_sharding_change_only_the_model_states() {
        let mut p = plan("llama-3-8b", Precision::Bf16Mixed, 1);
        let base = estimate(&p);
        p.optimizer = Optimizer::Adamw8bit;
        let eight = estimate(&p);
        // Two 1-byte moments (and an fp32 absmax per 256) instead of two fp32 ones, but for
        // the embedding, which keeps 32-bit state.
        let params = base.optimizer_bytes / 8.0;
        let embedding = (p.arch.vocab_size * p.arch.hidden_size) as f64;
        let want = (params - embedding) * (2.0 + 8.0 / 256.0) + embedding * 8.0;
        assert!((eight.optimizer_bytes - want).abs() < 1.0);
        p.optimizer = Optimizer::Adamw;
        p.zero_stage = 2;
        p.gpus = 8;
        let z2 = estimate(&p);
        assert!((z2.optimizer_bytes - base.optimizer_bytes / 8.0).abs() < 1.0);
        assert!((z2.gradients_bytes - base.gradients_bytes / 8.0).abs() < 1.0);
        assert_eq!(z2.weights_bytes, base.weights_bytes);
        assert_eq!(z2.activations_bytes, base.activations_bytes);
    }

    #[test]
    fn cpu_offload_moves_states_off_the_gpu() {
        let mut p = plan("llama-3-8b", Precision::Bf16Mixed, 1);
        p.zero_stage = 2;
        p.gpus = 1;
        p.offload_optimizer = true;
        let e = estimate(&p);
        assert_eq!((e.optimizer_bytes, e.gradients_bytes), (0.0, 0.0));
        p.zero_stage = 3;
        p.offload_params = true;
        let e = estimate(&p);
        let counts = params::count(&p.arch);
        assert_eq!(e.weights_bytes, 2.0 * counts.per_block as f64 * 4.0);
    }

    #[test]
    fn lora_trains_adapters_only_and_keeps_them_in_fp32() {
        let mut p = plan("tinyllama-1.1b", Precision::Bf16True, 1);
        p.lora = Some((16, vec!["q_proj".into(), "v_proj".into()]));
        let e = estimate(&p);
        // r x (in + out) for q (2048 -> 2048) and v (2048 -> 256) in 22 blocks: 2,252,800.
        assert_eq!(e.trainable_params, 2_252_800);
        assert_eq!(e.gradients_bytes, 4.0 * 2_252_800.0);
        assert_eq!(e.optimizer_bytes, 8.0 * 2_252_800.0);
    }

    #[test]
    fn eager_attention_adds_a_term_quadratic_in_sequence() {
        let mut p = plan("gpt2", Precision::Bf16Mixed, 4);
        p.checkpointing = Checkpointing::None;
        let mut extra = |s: u64| {
            p.seq_len = s;
            p.attention = Attention::Sdpa;
            let sdpa = estimate(&p).activations_bytes;
            p.attention = Attention::Eager;
            estimate(&p).activations_bytes - sdpa
        };
        let (short, long) = (extra(512), extra(1024));
        assert!((long / short - 4.0).abs() < 1e-9);
        // 12 heads x 512 x (fp32 softmax 4 + bf16 copy 2 + dropout mask 1 + output 2) per token
        // and block, over 4 x 512 tokens and 12 blocks.
        assert_eq!(short, 12.0 * 512.0 * 9.0 * 4.0 * 512.0 * 12.0);
    }

    #[test]
    fn eager_free_sdpa_activations_grow_linearly_with_sequence() {
        let mut p = plan("gpt2", Precision::Bf16Mixed, 4);
        p.checkpointing = Checkpointing::None;
        p.seq_len = 512;
        let short = estimate(&p).activations_bytes;
        p.seq_len = 1024;
        let long = estimate(&p).activations_bytes;
        assert!((long / short - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_qlora_base_can_peak_while_it_is_quantized() {
        let mut p = plan("llama-2-7b", Precision::Bf16True, 1);
        p.seq_len = 16;
        p.load_in_4bit = true;
        p.lora = Some((8, vec!["q_proj".into(), "v_proj".into()]));
        let e = estimate(&p);
        let counts = params::count(&p.arch);
        // Quantizing keeps one block in 16 bit next to the 4-bit weights loaded so far.
        assert_eq!(
            e.loading_bytes,
            e.weights_bytes + 2.0 * counts.per_block as f64
        );
        assert_eq!(e.peak_at, "loading the quantized weights");
        // A longer sample makes the training step the peak again.
        p.seq_len = 4096;
        p.batch = 8;
        assert_ne!(estimate(&p).peak_at, "loading the quantized weights");
    }

    #[test]
    fn optimizer_state_per_parameter() {
        let mut p = plan("tinyllama-1.1b", Precision::Bf16True, 1);
        let n = estimate(&p).params as f64;
        let embedding = (p.arch.vocab_size * p.arch.hidden_size) as f64;
        let state = |o: Optimizer, p: &mut Plan| {
            p.optimizer = o;
            estimate(p).optimizer_bytes
        };
        // bitsandbytes 32-bit optimizers keep fp32 state even for bf16 parameters.
        assert_eq!(state(Optimizer::PagedAdamw, &mut p), 8.0 * n);
        assert_eq!(state(Optimizer::Lion, &mut p), 4.0 * n);
        assert_eq!(
            state(Optimizer::Lion8bit, &mut p),
            (n - embedding) * (1.0 + 4.0 / 256.0) + embedding * 4.0
        );
        // Muon: one bf16 momentum for the blocks' matrices, two AdamW moments for the rest.
        let matrices = (p.arch.num_layers * params::count(&p.arch).block_matmul) as f64;
        assert_eq!(
            state(Optimizer::Muon, &mut p),
            (matrices + 2.0 * (n - matrices)) * 2.0
        );
        p.optimizer = Optimizer::PagedAdamw;
        let e = estimate(&p);
        assert_eq!(e.paged_bytes, e.optimizer_bytes);
    }

    #[test]
    fn accumulation_keeps_the_gradients_through_forward_and_backward() {
        let mut p = plan("tinyllama-1.1b", Precision::Bf16True, 4);
        p.checkpointing = Checkpointing::None;
        let once = estimate(&p);
        p.accumulating = true;
        let accumulating = estimate(&p);
        assert!(accumulating.fwd_bwd_bytes - once.fwd_bwd_bytes > 0.9 * once.gradients_bytes);
        assert_eq!(accumulating.step_bytes, once.step_bytes);
    }

    #[test]
    fn fsdp1_gives_a_lora_base_gradients_of_its_flat_parameters() {
        let mut p = plan("llama-3-8b", Precision::Bf16True, 1);
        p.lora = Some((16, vec!["q_proj".into(), "v_proj".into()]));
        p.zero_stage = 3;
        p.gpus = 2;
        let fsdp2 = estimate(&p);
        p.flat_grads = true;
        let fsdp1 = estimate(&p);
        // The bf16 base's flat parameters get bf16 gradients, sharded over the two GPUs.
        let base = fsdp2.params as f64 * 2.0;
        assert!((fsdp1.gradients_bytes - fsdp2.gradients_bytes - base / 2.0).abs() < 1e6);
    }

    #[test]
    fn lora_targets_match_the_end_of_a_module_path() {
        let mut p = plan("tinyllama-1.1b", Precision::Bf16True, 1);
        p.lora = Some((16, vec!["q_proj".into(), "v_proj".into()]));
        let short = estimate(&p).trainable_params;
        p.lora = Some((
            16,
            vec![
                "self_attn.q_proj".into(),
                "model.layers.0.self_attn.v_proj".into(),
            ],
        ));
        assert_eq!(estimate(&p).trainable_params, short);
    }
}
