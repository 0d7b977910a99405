//! Activations saved for backward, op by op (research/memory.md section 3.3).
//!
//! The rules, all from how PyTorch autograd and autocast behave:
//! - an op saves an input only if some gradient needs it: a matmul keeps its input only when its
//!   weight trains; a product with a constant keeps nothing;
//! - under autocast the residual stream stays fp32, each linear casts (and keeps) its own bf16
//!   copy of an fp32 input, and ops on autocast's fp32 list (layer_norm, pow, softmax, ...) run
//!   and save in fp32;
//! - SDPA / FlashAttention keep q, k, v and the output (no s x s matrix; dropout regenerated);
//! - dropout with p > 0 keeps a one-byte mask.

use super::models::{Architecture, Kind, Norm};
use super::params::{resnet_blocks, Conv};

/// How tensors are stored while training.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regime {
    /// Bytes of the compute dtype (matmul outputs).
    pub compute: f64,
    /// Bytes of the weights, the embedding output and the residual stream.
    pub residual: f64,
    /// torch.autocast is on (fp32 weights, 16-bit matmuls).
    pub autocast: bool,
}

impl Regime {
    /// Bytes of the output of an op on autocast's fp32 list, given its input's bytes.
    fn fp32_list(&self, input: f64) -> f64 {
        if self.autocast {
            4.0
        } else {
            input
        }
    }
}

/// What trains inside the blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trainable {
    /// Base weights are frozen (LoRA / QLoRA).
    pub frozen_base: bool,
    /// LoRA rank and the adapted projections (`q_proj`, `v_proj`, ...).
    pub lora: Option<(u64, Vec<String>)>,
    /// The frozen base is quantized by a kernel that saves its input for backward whenever the
    /// input needs a gradient, though the weight is frozen (bitsandbytes' MatMul8bitLt, and
    /// MatMul4Bit before 0.43.2: `ctx.tensors = (A, B)` in bitsandbytes/autograd/_functions.py).
    pub quantized_input_kept: bool,
    /// peft's DoRA: each adapted layer keeps its base output (the `(m / ||W'|| - 1) *
    /// base_result` product) and its fp32 LoRA output (the `m / ||W'|| * lora_result` one).
    pub dora: bool,
    /// The adapters' dropout is on (`lora_dropout` above 0): a one-byte mask per adapted input.
    pub lora_dropout: bool,
}

impl Trainable {
    fn adapted(&self, module: &str) -> Option<u64> {
        let (r, targets) = self.lora.as_ref()?;
        targets
            .iter()
            .any(|t| {
                super::memory::module_name(t) == module || t == "all-linear" || t == "all_linear"
            })
            .then_some(*r)
    }
}

/// Bytes one group of linears sharing an input keeps, per token.
/// `modules` names the projections (for LoRA targeting), `width` is the input width.
fn linear_inputs(rg: Regime, input_bytes: f64, width: f64, modules: &[&str], t: &Trainable) -> f64 {
    let mut saved = 0.0;
    let trains_base = !t.frozen_base;
    if trains_base {
        saved += if rg.autocast && input_bytes > 2.0 {
            // Each linear casts its own bf16 copy and keeps it.
            2.0 * width * modules.len() as f64
        } else {
            input_bytes * width
        };
    } else if t.quantized_input_kept {
        // One tensor, shared by the group's projections.
        saved += input_bytes * width;
    }
    for m in modules {
        if let Some(r) = t.adapted(m) {
            saved += adapter_kept(t, width, r);
        }
    }
    saved
}

/// What one adapter keeps per token: peft keeps LoRA weights in fp32 and casts the input up
/// before lora_A (that copy is kept); lora_B keeps lora_A's fp32 output. With `lora_dropout`
/// the dropped-out copy is kept in the cast's place, and dropout keeps its bool mask
/// (peft@5d602fd src/peft/tuners/lora/layer.py:1063 `lora_B(lora_A(dropout(x)))`).
fn adapter_kept(t: &Trainable, width: f64, r: u64) -> f64 {
    4.0 * width + 4.0 * r as f64 + if t.lora_dropout { width } else { 0.0 }
}

/// A norm over `width` features: bytes it keeps per token, and the bytes of its output.
fn norm(
    rg: Regime,
    a: &Architecture,
    input_bytes: f64,
    width: f64,
    weight_trains: bool,
) -> (f64, f64) {
    let rms = matches!(a.kind, Kind::Llama | Kind::Gemma | Kind::Moe | Kind::T5);
    match a.kind {
        _ if rms && a.norm == Norm::Rms => {
            // HF RMSNorm (and T5's): fp32 copy of the input kept by pow and mul; the weight
            // product keeps the normalized tensor (cast back to the input dtype; Gemma multiplies
            // in fp32).
            let normalized = if a.kind == Kind::Gemma {
                4.0
            } else {
                input_bytes
            };
            let kept = 4.0 * width
                + if weight_trains {
                    normalized * width
                } else {
                    0.0
                };
            (kept, input_bytes)
        }
        _ => (input_bytes * width, rg.fp32_list(input_bytes)),
    }
}

/// Bytes a transformer block keeps per token (one sample, one position).
pub fn block_per_token(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    layers_per_token(a, rg, t) + dora_outputs(a, rg, t)
}

/// What peft's DoRA adds per token to a block: for each adapted linear, its base output (in
/// the compute dtype) and its LoRA output (fp32, as the adapters are), which the products with
/// the magnitude scale keep (peft@5d602fd src/peft/tuners/lora/dora.py:153-165; with
/// `lora_dropout` 0 the base output is the layer's own, variants.py:233-237).
fn dora_outputs(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let Some((_, targets)) = t.lora.as_ref().filter(|_| t.dora) else {
        return 0.0;
    };
    super::memory::targeted(targets)
        .into_iter()
        .filter(|m| *m != "lm_head")
        .filter_map(|m| super::memory::linear_dims(a, m))
        .map(|(_, out)| (dora_base_output(rg, t) + 4.0) * out as f64)
        .sum()
}

/// Bytes of each element of DoRA's base output. Without dropout it is the layer's own (the
/// compute dtype); with it peft recomputes it from the dropped-out fp32 input over a copy of
/// the weight in that dtype, which autocast runs in 16 bit and pure 16-bit training in fp32
/// (variants.py:233-237, dora.py:141-163).
fn dora_base_output(rg: Regime, t: &Trainable) -> f64 {
    if t.lora_dropout && !rg.autocast {
        4.0
    } else {
        rg.compute
    }
}

/// What DoRA with dropout keeps per block, whatever the tokens: the base matmul it recomputes
/// runs over `weight.to(x.dtype)`, a copy of each adapted weight (dequantized first when the
/// base is quantized) in the adapters' fp32, and backward keeps the copy the matmul read: the
/// 16-bit cast autocast makes of it, or the fp32 copy itself without autocast (none when the
/// weights are stored in fp32 and no autocast runs: the copy is the weight). peft@5d602fd
/// src/peft/tuners/lora/dora.py:141-163, variants.py:233-237.
pub fn dora_weight_copies(a: &Architecture, rg: Regime, t: &Trainable, stored: f64) -> f64 {
    let Some((_, targets)) = t.lora.as_ref().filter(|_| t.dora && t.lora_dropout) else {
        return 0.0;
    };
    let bytes = if rg.autocast {
        rg.compute
    } else if stored >= 4.0 {
        0.0
    } else {
        4.0
    };
    super::memory::targeted(targets)
        .into_iter()
        .filter(|m| *m != "lm_head")
        .filter_map(|m| super::memory::linear_dims(a, m))
        .map(|(i, o)| bytes * (i * o) as f64)
        .sum()
}

fn layers_per_token(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    match a.kind {
        Kind::Moe => return moe_block(a, rg, t),
        Kind::Neox | Kind::Falcon | Kind::Phi => return parallel_block(a, rg, t),
        Kind::T5 => return t5_block(a, rg, t),
        Kind::Flux => return flux_block(a, rg, t),
        _ => {}
    }
    let h = a.hidden_size as f64;
    let i = a.intermediate() as f64;
    let qw = a.q_width() as f64;
    let kvw = a.kv_width() as f64;
    let c = rg.compute;
    let r = rg.residual;
    let w_trains = !t.frozen_base;
    let dropout = has_dropout(a);
    let mut total = 0.0;

    // --- attention ---
    let (kept, normed) = if a.kind == Kind::Bert {
        (0.0, r) // post-LN: the block input feeds the projections directly
    } else {
        norm(rg, a, r, h, w_trains)
    };
    total += kept;
    let qkv_names: &[&str] = match a.kind {
        Kind::Gpt2 => &["c_attn"],
        Kind::Bloom => &["query_key_value"],
        Kind::Mpt => &["Wqkv"],
        Kind::Vit | Kind::Bert => &["query", "key", "value"],
        _ => &["q_proj", "k_proj", "v_proj"],
    };
    total += linear_inputs(rg, normed, h, qkv_names, t);
    if a.qk_norm {
        // Per-head RMSNorm of q and k: fp32 copies plus normalized tensors.
        total += (4.0 + c) * (qw + kvw);
    }
    // What SDPA keeps: q, k, v as it receives them. Under autocast RoPE (fp32 cos/sin) makes q and
    // k fp32 and SDPA keeps bf16 copies; GPT-2's q, k, v are views of c_attn's output.
    total += c * (qw + 2.0 * kvw);
    total += c * qw; // attention output, also the o_proj input (free transpose)
    if !w_trains {
        // o_proj frozen: nothing more. Adapted o_proj keeps its fp32 input copy.
        if let Some(r_) = t.adapted("o_proj") {
            total += adapter_kept(t, qw, r_);
        }
    }
    if dropout {
        total += h; // residual dropout mask
    }
    if a.kind == Kind::Bert {
        total += r * h; // post-attention LayerNorm input
    }
    if a.sandwich_norm {
        total += 4.0 * h + if w_trains { r * h } else { 0.0 };
    }

    // --- MLP ---
    let (kept, normed) = if a.kind == Kind::Bert {
        (0.0, rg.fp32_list(r))
    } else {
        norm(rg, a, r, h, w_trains)
    };
    total += kept;
    match a.kind {
        Kind::Llama | Kind::Gemma => {
            total += linear_inputs(rg, normed, h, &["gate_proj", "up_proj"], t);
            total += swiglu_core(rg, t, i);
        }
        Kind::Gpt2 => {
            total += linear_inputs(rg, normed, h, &["c_fc"], t);
            // gelu_new = 0.5 x (1 + tanh(k (x + 0.044715 x^3))): pow keeps x (fp32 under
            // autocast), tanh keeps its output, the final product keeps 0.5x and (1 + tanh).
            let f = rg.fp32_list(c);
            total += f * i + f * i + c * i + f * i;
            total += linear_inputs(rg, f, i, &["c_proj"], t);
            total += h; // dropout mask
        }
        Kind::Opt => {
            total += linear_inputs(rg, normed, h, &["fc1"], t);
            total += c * i; // ReLU keeps its output, which fc2 keeps too
            total += h;
        }
        Kind::Bert | Kind::Vit | Kind::Bloom | Kind::Starcoder2 | Kind::Mpt => {
            // BLOOM's GELU is a custom autograd function that keeps its input only, as is
            // StarCoder2's gelu_pytorch_tanh and MPT's exact GELU (one op each).
            let (fc, out): (&[&str], &[&str]) = match a.kind {
                Kind::Starcoder2 => (&["c_fc"], &["c_proj"]),
                Kind::Mpt => (&["up_proj"], &["down_proj"]),
                _ => (&["intermediate"], &["output"]),
            };
            total += linear_inputs(rg, normed, h, fc, t);
            total += c * i; // GELU keeps its input
            total += linear_inputs(rg, c, i, out, t);
            if a.kind == Kind::Bert {
                total += h + r * h; // dropout mask, output LayerNorm input
            }
            if a.kind == Kind::Starcoder2 {
                total += h; // residual dropout mask
            }
        }
        Kind::Resnet
        | Kind::Detector
        | Kind::Opaque
        | Kind::Composite
        | Kind::Moe
        | Kind::Neox
        | Kind::Falcon
        | Kind::Phi
        | Kind::Flux
        | Kind::T5 => {}
    }
    if a.sandwich_norm {
        total += 4.0 * h + if w_trains { r * h } else { 0.0 };
    }
    total
}

/// Bytes a decoder block keeps per token under torchtitan's per-op selective checkpointing
/// (`selective_ac_option = "op"`): the block's input, what attention returns (its output and
/// log-sum-exp) and every other matmul output; norms, activations and the other matmuls are
/// recomputed in backward (torchtitan v0.2.2 distributed/activation_checkpoint.py:115-116, save
/// list models/llama3/infra/parallelize.py:36-51). Of the two halves of the matmuls, the larger
/// one is counted.
pub fn selective_op_per_token(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let full = block_per_token(a, rg, t);
    if !matches!(a.kind, Kind::Llama | Kind::Gemma | Kind::Moe) {
        return full;
    }
    let h = a.hidden_size as f64;
    let (qw, kvw) = (a.q_width() as f64, a.kv_width() as f64);
    // The MLP matmuls on the save list: a dense MLP's, or a sparse block's shared experts;
    // routed experts run as grouped matmuls, which the list does not hold, so they are
    // recomputed.
    let i = if a.kind == Kind::Moe {
        a.shared_expert_intermediate_size as f64
    } else {
        a.intermediate() as f64
    };
    // q, k, v, o, gate, up, down: one half is (q, v, gate, down), the other (k, o, up).
    let half = (qw + kvw + i + h).max(kvw + h + i);
    let kept = rg.residual * h + rg.compute * (qw + half) + 4.0 * a.num_heads as f64;
    kept.min(full)
}

/// Dropout (p = 0.1) after attention and MLP, and on the attention probabilities.
fn has_dropout(a: &Architecture) -> bool {
    a.dropout.unwrap_or(matches!(
        a.kind,
        Kind::Gpt2 | Kind::Opt | Kind::Bert | Kind::T5 | Kind::Starcoder2
    ))
}

/// Linears that read a self-attention block's normed input (DeepSeek's latent attention: its
/// q_a and kv_a projections).
fn qkv_readers<'a>(a: &Architecture, names: &'a [&'a str]) -> &'a [&'a str] {
    if a.latent_attention() {
        &["q_a_proj", "kv_a_proj_with_mqa"]
    } else {
        names
    }
}

/// Self-attention past its input projections: q/k norms, what SDPA keeps (q, k, v and its
/// output, which is the output projection's input) and, for latent attention, the normed
/// latents.
fn attention_core(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let (qw, kvw) = (a.q_width() as f64, a.kv_width() as f64);
    let c = rg.compute;
    let mut total = 0.0;
    let (vw, out) = if a.latent_attention() {
        // kv_a's output (latent + shared rotary key) is normed (fp32 copy, normalized tensor)
        // and feeds kv_b; a low-rank q does the same through q_a and q_b.
        let kv = a.kv_lora_rank as f64;
        total += c * (kv + a.qk_rope_head_dim as f64) + (4.0 + c) * kv;
        if a.q_lora_rank > 0 {
            total += (4.0 + c) * a.q_lora_rank as f64;
        }
        let vw = (a.num_heads * a.v_head_dim) as f64;
        (vw, vw)
    } else {
        (kvw, qw)
    };
    if a.qk_norm {
        // RMSNorm of q and k: fp32 copies plus normalized tensors.
        total += (4.0 + c) * (qw + kvw);
    }
    total += c * (qw + kvw + vw) + c * out;
    if t.frozen_base {
        if let Some(r_) = t.adapted("o_proj") {
            total += adapter_kept(t, out, r_);
        }
    }
    total
}

/// A SwiGLU MLP of width `i` past its input projections: act(gate) keeps gate; the product
/// keeps act(gate) and up; down keeps the product when its weight trains or its quantized matmul
/// keeps its input (and its fp32 copy when adapted).
fn swiglu_core(rg: Regime, t: &Trainable, i: f64) -> f64 {
    let c = rg.compute;
    let mut total = 3.0 * c * i;
    if !t.frozen_base || t.quantized_input_kept {
        total += c * i;
    }
    if let Some(r_) = t.adapted("down_proj") {
        total += adapter_kept(t, i, r_);
    }
    total
}

/// MoE decoder block: Llama attention, then in sparse layers a router (its fp32 softmax over the
/// experts kept) and, per token, the `num_experts_per_tok` experts it is routed to (each keeps its
/// gathered input, SwiGLU intermediates and output for the routing-weight product), plus shared
/// experts; the leading dense layers have a Llama MLP. Averaged over the blocks.
fn moe_block(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let h = a.hidden_size as f64;
    let (c, r) = (rg.compute, rg.residual);
    let w_trains = !t.frozen_base;
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let attn =
        kept + linear_inputs(
            rg,
            normed,
            h,
            qkv_readers(a, &["q_proj", "k_proj", "v_proj"]),
            t,
        ) + attention_core(a, rg, t);
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let dense = linear_inputs(rg, normed, h, &["gate_proj", "up_proj"], t)
        + swiglu_core(rg, t, a.intermediate() as f64);
    let e = a.num_experts as f64;
    let k = a.num_experts_per_tok as f64;
    let ei = a.expert_intermediate() as f64;
    let si = a.shared_expert_intermediate_size as f64;
    // The router and the shared expert read the normed tensor itself.
    let mut readers = vec!["gate"];
    if si > 0.0 {
        readers.extend(["shared_gate_proj", "shared_up_proj"]);
    }
    if a.shared_expert_gate {
        readers.push("shared_expert_gate");
    }
    let mut sparse = linear_inputs(rg, normed, h, &readers, t) + 4.0 * e;
    if si > 0.0 {
        sparse += swiglu_core(rg, t, si);
    }
    // Each routed copy of the token: its gathered input, the expert's SwiGLU, its output.
    let routed =
        linear_inputs(rg, normed, h, &["gate_proj", "up_proj"], t) + swiglu_core(rg, t, ei) + c * h;
    sparse += k * routed;
    let layers = a.num_layers.max(1) as f64;
    let n_sparse = a.sparse_layers() as f64;
    let mlp = (n_sparse * sparse + (layers - n_sparse) * dense) / layers;
    attn + kept + mlp
}

/// GPT-NeoX, Falcon and Phi-1.5/2: attention and MLP read the same block input in parallel (one
/// LayerNorm, or two over the same input, which autograd keeps once); GELU MLP.
fn parallel_block(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let h = a.hidden_size as f64;
    let i = a.intermediate() as f64;
    let c = rg.compute;
    let r = rg.residual;
    let w_trains = !t.frozen_base;
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let two_norms = match a.kind {
        Kind::Neox => true,
        Kind::Falcon => a.new_decoder_architecture,
        _ => false,
    };
    let (qkv, fc, out): (&[&str], &str, &str) = match a.kind {
        Kind::Neox => (&["query_key_value"], "dense_h_to_4h", "dense_4h_to_h"),
        Kind::Falcon => (&["query_key_value"], "dense_h_to_4h", "dense_4h_to_h"),
        _ => (&["q_proj", "k_proj", "v_proj"], "fc1", "fc2"),
    };
    let mut total = kept;
    let attn_inputs = if two_norms {
        linear_inputs(rg, normed, h, qkv, t) + linear_inputs(rg, normed, h, &[fc], t)
    } else {
        let mut all = qkv.to_vec();
        all.push(fc);
        linear_inputs(rg, normed, h, &all, t)
    };
    total += attn_inputs + attention_core(a, rg, t);
    total += if a.kind == Kind::Phi {
        // gelu_new, as GPT-2's.
        let f = rg.fp32_list(c);
        f * i + f * i + c * i + f * i
    } else {
        c * i // exact GELU keeps its input
    };
    total += linear_inputs(rg, c, i, &[out], t);
    total
}

/// T5: the average of its encoder blocks (self-attention, MLP) and decoder blocks (plus
/// cross-attention over the encoder output, taken to be as long as the decoder input), with
/// dropout masks after every sublayer and inside the MLP.
fn t5_block(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let h = a.hidden_size as f64;
    let i = a.intermediate() as f64;
    let (c, r) = (rg.compute, rg.residual);
    let qw = a.q_width() as f64;
    let w_trains = !t.frozen_base;
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let self_attn =
        kept + linear_inputs(rg, normed, h, &["q", "k", "v"], t) + attention_core(a, rg, t) + h;
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let mlp =
        kept + if a.gated_mlp {
            // gelu_new(wi_0 x) * wi_1 x, dropout, wo.
            let f = rg.fp32_list(c);
            linear_inputs(rg, normed, h, &["wi_0", "wi_1"], t) + 3.0 * f * i + 3.0 * c * i
        } else {
            // ReLU keeps its output.
            linear_inputs(rg, normed, h, &["wi"], t) + c * i
        } + i
            + linear_inputs(rg, c, i, &["wo"], t)
            + h;
    // Cross-attention: normed q input; k and v read the encoder output (each layer's linears
    // keep it, once without autocast, a bf16 copy each under autocast); SDPA and o as usual.
    let (kept, normed) = norm(rg, a, r, h, w_trains);
    let encoder_out = if rg.autocast {
        linear_inputs(rg, r, h, &["k", "v"], t)
    } else {
        0.0
    };
    let cross =
        kept + linear_inputs(rg, normed, h, &["q"], t) + encoder_out + c * (3.0 * qw) + c * qw + h;
    let layers = a.num_layers.max(1) as f64;
    let dec = a.num_decoder_layers.min(a.num_layers) as f64;
    self_attn + mlp + dec / layers * cross
}

/// FLUX.1 block, per token, averaged over the double- and single-stream blocks (torchtitan
/// models/flux/model/layers.py). Each token sits in one stream of a double-stream block, so a
/// double block keeps, per token, what one pre-norm transformer block with that stream's
/// weights keeps:
/// - the parameter-free LayerNorm's input; the adaLN product `(1 + scale) * norm(x)`, which
///   keeps the normalized tensor when the modulation trains (shift and gate are per sample);
/// - the qkv input, the per-head RMSNorm of q and k (fp32 copy and normalized tensor), what
///   SDPA keeps (q, k, v, output: the proj input), and the proj output that the gate multiplies;
/// - the same norm and modulation before the MLP, its input, the tanh-GELU input, the second
///   linear's input and the gated output.
///
/// A single-stream block keeps the norm input and its modulated copy, `linear1`'s input, the
/// q/k norms, SDPA's four tensors, the GELU input, `linear2`'s input (attention output and GELU
/// output concatenated: h + mlp wide) and the gated output. RoPE multiplies by constant
/// frequencies (nothing kept per token beyond its output, which SDPA keeps).
fn flux_block(a: &Architecture, rg: Regime, t: &Trainable) -> f64 {
    let h = a.hidden_size as f64;
    let i = a.intermediate() as f64;
    let (c, r) = (rg.compute, rg.residual);
    let w_trains = !t.frozen_base;
    let normed = rg.fp32_list(r);
    let modulated = if w_trains { normed * h } else { 0.0 };
    let gated = if w_trains { c * h } else { 0.0 };
    let qk_norm = (4.0 + c) * 2.0 * h;
    let sdpa = 4.0 * c * h;
    let double = r * h
        + modulated
        + linear_inputs(rg, normed, h, &["qkv"], t)
        + qk_norm
        + sdpa
        + gated
        + r * h
        + modulated
        + linear_inputs(rg, normed, h, &["mlp.0"], t)
        + c * i
        + linear_inputs(rg, c, i, &["mlp.2"], t)
        + gated;
    let single = r * h
        + modulated
        + linear_inputs(rg, normed, h, &["linear1"], t)
        + qk_norm
        + sdpa
        + c * i
        + linear_inputs(rg, c, h + i, &["linear2"], t)
        + gated;
    let layers = a.num_layers.max(1) as f64;
    let n_single = a.num_single_layers.min(a.num_layers) as f64;
    ((layers - n_single) * double + n_single * single) / layers
}

/// FLUX: image tokens per sample, the 2x2 patches of the 8x-downsampled latent of an
/// `image_size` square image (1024 px: 64 x 64 = 4096).
fn flux_image_tokens(a: &Architecture, image_size: u64) -> u64 {
    let img = if image_size > 0 {
        image_size
    } else {
        a.image_size
    };
    (img / 16).pow(2)
}

/// What eager attention adds per token and block: HF computes softmax in fp32 and casts it back
/// (both kept: softmax's output for its backward, the cast copy for the product with V), plus
/// attention dropout's mask and output where the model has dropout (Korthikanti et al.'s
/// 5 a s term, in the dtypes PyTorch uses).
///
/// A model whose eager path upcasts q and k to fp32 (GPT-Neo, [`Architecture::eager_attention`])
/// keeps those fp32 copies for the product's backward instead of 16-bit ones, unless autocast
/// casts them back to 16 bit for the matmul.
pub fn eager_scores_per_token(a: &Architecture, rg: Regime, seq: u64) -> f64 {
    let per_score = 4.0
        + rg.compute
        + if has_dropout(a) {
            1.0 + rg.compute
        } else {
            0.0
        };
    let upcast = if a.eager_attention && !rg.autocast {
        (4.0 - rg.compute) * (a.q_width() + a.kv_width()) as f64
    } else {
        0.0
    };
    a.num_heads as f64 * seq as f64 * per_score + upcast
}

/// What `torch.nn.MultiheadAttention` keeps per token and block when called with its default
/// `need_weights=True` ([`Architecture::mha_weights`]): the explicit path of
/// `F.multi_head_attention_forward` keeps each head's softmax output over `seq` keys for
/// softmax's backward and, with dropout, its mask and the dropped copy for the product with V
/// (no fp32 upcast: the softmax runs in the compute dtype).
pub fn mha_weights_per_token(a: &Architecture, rg: Regime, seq: u64) -> f64 {
    let per_score = rg.compute
        + if has_dropout(a) {
            1.0 + rg.compute
        } else {
            0.0
        };
    a.num_heads as f64 * seq as f64 * per_score
}

/// Tokens per sample the blocks see.
pub fn tokens(a: &Architecture, seq_len: u64, image_size: u64) -> u64 {
    match a.kind {
        // A token count given for a vision model (video clips, patch subsets) wins over the
        // image's patches.
        Kind::Vit if seq_len > 0 => seq_len,
        Kind::Vit => {
            let img = if image_size > 0 {
                image_size
            } else {
                a.image_size
            };
            (img / a.patch_size.max(1)).pow(2) + 1
        }
        // FLUX: the image tokens and the entry's T5 text tokens. A sequence length is not read:
        // torchtitan's flux configs set none (the dialect's default is a language model's).
        Kind::Flux => flux_image_tokens(a, image_size) + a.max_position_embeddings,
        _ => seq_len,
    }
}

/// Bytes kept outside the blocks for one sample: embeddings, final norm, head input, pixels.
pub fn outside_per_sample(
    a: &Architecture,
    rg: Regime,
    t: &Trainable,
    tokens: u64,
    image_size: u64,
) -> f64 {
    let h = a.hidden_size as f64;
    let s = tokens as f64;
    let r = rg.residual;
    match a.kind {
        Kind::Vit => {
            let img = if image_size > 0 {
                image_size
            } else {
                a.image_size
            } as f64;
            // A video clip is `num_frames` images.
            let pixels = 3.0 * img * img * a.num_frames.max(1) as f64;
            // The fp32 pixel batch, the patch conv's bf16 copy under autocast, final LayerNorm input.
            4.0 * pixels + if rg.autocast { 2.0 * pixels } else { 0.0 } + r * h * s
        }
        Kind::Resnet | Kind::Detector | Kind::Opaque | Kind::Composite => 0.0,
        Kind::Flux => {
            // img_in keeps the packed latent, txt_in the T5 embeddings; the last layer keeps
            // its norm's input, the modulated copy and its linear's input, over image tokens.
            let img = flux_image_tokens(a, image_size).min(tokens) as f64;
            let text = s - img;
            let c = rg.compute;
            let normed = rg.fp32_list(r);
            let in_ch = a.in_channels as f64;
            let modulated = if t.frozen_base { 0.0 } else { normed * h };
            img * (linear_inputs(rg, c, in_ch, &["img_in"], t)
                + r * h
                + modulated
                + linear_inputs(rg, normed, h, &["final_layer.linear"], t))
                + text * linear_inputs(rg, c, a.context_in_dim as f64, &["txt_in"], t)
        }
        _ => {
            let (kept, normed) = if a.kind == Kind::Bert {
                (0.0, r)
            } else {
                norm(rg, a, r, h, !t.frozen_base)
            };
            let head = if a.has_lm_loss() {
                linear_inputs(rg, normed, h, &["lm_head"], t)
            } else {
                0.0
            };
            let dropout = if has_dropout(a) { h } else { 0.0 };
            let extra = match a.kind {
                // BLOOM's LayerNorm over the embeddings keeps its input.
                Kind::Bloom => r * h,
                // T5: the encoder's final norm and the dropout masks after both stacks'
                // embeddings and final norms.
                Kind::T5 => kept + 3.0 * h,
                _ => 0.0,
            };
            (kept + head + dropout + extra) * s
        }
    }
}

/// Bytes a ResNet keeps per image.
pub fn resnet_per_image(a: &Architecture, rg: Regime, image_size: u64) -> f64 {
    let img = if image_size > 0 {
        image_size
    } else {
        a.image_size
    } as f64;
    resnet_kept(a, rg, img, img).0
}

/// Bytes a ResNet keeps for one `h` x `w` image, and for each stage the bytes of its output
/// the ResNet keeps not (a frozen stage's, but the one a trained stage reads), which a
/// detector's pyramid keeps when it reads that stage.
///
/// A frozen stage (`frozen_stages`) runs with no parameter or input that needs a gradient, so
/// autograd records nothing in it; the first trained block keeps its input.
pub fn resnet_kept(a: &Architecture, rg: Regime, h: f64, w: f64) -> (f64, Vec<f64>) {
    let c = rg.compute;
    let frozen = a.frozen_stages as usize;
    let (mut sh, mut sw) = (h / 2.0, w / 2.0);
    let stem = a.embedding_size as f64;
    // A BatchNorm keeps its input; a frozen one (`x * scale + bias` over buffers) keeps none.
    let bn = if a.frozen_batch_norm { 0.0 } else { c };
    // Pixels (fp32), alive through forward.
    let mut total = 4.0 * 3.0 * h * w;
    if frozen == 0 {
        // The stem conv's bf16 copy of the pixels; stem BN input and ReLU output.
        if rg.autocast {
            total += 2.0 * 3.0 * h * w;
        }
        total += (bn + c) * stem * sh * sw;
    }
    sh /= 2.0;
    sw /= 2.0;
    match frozen {
        // Max-pool int64 indices; the pooled output is the first block's input.
        0 => total += 8.0 * stem * sh * sw + c * stem * sh * sw,
        1 => total += c * stem * sh * sw,
        _ => {}
    }
    let stages = super::params::resnet_block_stages(a);
    let blocks = resnet_blocks(a);
    let mut unkept = vec![0.0; a.depths.len()];
    for (i, ((convs, shortcut), &stage)) in blocks.iter().zip(&stages).enumerate() {
        let trained = stage + 2 > frozen;
        let (mut bh, mut bw) = (sh, sw);
        for conv in convs {
            let Conv { out_ch, stride, .. } = *conv;
            bh /= stride as f64;
            bw /= stride as f64;
            let map = out_ch as f64 * bh * bw;
            // BN keeps its input; a ReLU keeps its output (the next conv's input). The last
            // conv's BN feeds the residual add, whose ReLU output is the next block's input.
            if trained {
                total += bn * map + c * map;
            }
        }
        if let Some(sc) = shortcut.filter(|_| trained) {
            let st = sc.stride as f64;
            total += bn * sc.out_ch as f64 * (sh / st) * (sw / st);
        }
        (sh, sw) = (bh, bw);
        let last_of_stage = stages.get(i + 1) != Some(&stage);
        if !trained && last_of_stage {
            let out = convs.last().map_or(0, |c| c.out_ch) as f64 * sh * sw * c;
            if stage + 2 == frozen && stage + 1 < a.depths.len() {
                total += out;
            } else if let Some(u) = unkept.get_mut(stage) {
                *u += out;
            }
        }
    }
    (total, unkept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::models::lookup;

    const AMP: Regime = Regime {
        compute: 2.0,
        residual: 4.0,
        autocast: true,
    };
    const BF16: Regime = Regime {
        compute: 2.0,
        residual: 2.0,
        autocast: false,
    };
    const FP32: Regime = Regime {
        compute: 4.0,
        residual: 4.0,
        autocast: false,
    };

    #[test]
    fn gpt_neo_keeps_fp32_q_and_k_in_eager_attention_without_autocast() {
        let n = lookup("EleutherAI/gpt-neo-125M").unwrap();
        assert!(n.eager_attention && !has_dropout(n));
        let (h, s) = (768.0, 2048);
        // 12 heads x 2048 scores a token: the fp32 softmax and its 16-bit cast.
        let scores = 12.0 * 2048.0 * (4.0 + 2.0);
        // In pure bf16 q and k are kept as the fp32 copies the eager path makes (2 B more each).
        assert_eq!(eager_scores_per_token(n, BF16, s), scores + 2.0 * 2.0 * h);
        // Autocast casts them back to bf16 for the matmul; in fp32 they are the copies counted.
        assert_eq!(eager_scores_per_token(n, AMP, s), scores);
        assert_eq!(
            eager_scores_per_token(n, FP32, s),
            12.0 * 2048.0 * (4.0 + 4.0)
        );
        // GPT-2 has no upcast and keeps attention dropout's mask and output.
        let g = lookup("gpt2").unwrap();
        assert_eq!(
            eager_scores_per_token(g, BF16, s),
            12.0 * 2048.0 * (4.0 + 2.0 + 1.0 + 2.0)
        );
    }

    #[test]
    fn per_token_block_bytes_match_the_hand_derivations() {
        let full = Trainable::default();
        let ll = lookup("tinyllama-1.1b").unwrap();
        let (h, kv, i) = (2048.0, 256.0, 5632.0);
        // memory.md 3.3: pure bf16 20h + 4 d_kv + 8I; AMP 30h + 4 d_kv + 8I.
        assert_eq!(
            block_per_token(ll, BF16, &full),
            20.0 * h + 4.0 * kv + 8.0 * i
        );
        assert_eq!(
            block_per_token(ll, AMP, &full),
            30.0 * h + 4.0 * kv + 8.0 * i
        );
        // LoRA r=16 on q, v over a bf16 base: 12h + 4 d_kv + 6I + 2 x (4h + 4r) = 75.9 kB.
        let lora = Trainable {
            frozen_base: true,
            lora: Some((16, vec!["q_proj".into(), "v_proj".into()])),
            quantized_input_kept: false,
            dora: false,
            lora_dropout: false,
        };
        assert_eq!(block_per_token(ll, BF16, &lora), 75_904.0);
        // GPT-2: fp32 114h, AMP 86h.
        let g = lookup("gpt2").unwrap();
        assert_eq!(block_per_token(g, FP32, &full), 114.0 * 768.0);
        assert_eq!(block_per_token(g, AMP, &full), 86.0 * 768.0);
        // ViT: fp32 32h + 8I, AMP 24h + 4I.
        let v = lookup("vit-base-16").unwrap();
        assert_eq!(block_per_token(v, FP32, &full), 32.0 * 768.0 + 8.0 * 3072.0);
        assert_eq!(block_per_token(v, AMP, &full), 24.0 * 768.0 + 4.0 * 3072.0);
    }

    #[test]
    fn frozen_batch_norm_keeps_no_input() {
        // The same ResNet-18 with FrozenBatchNorm2d (LeRobot ACT) keeps only the ReLU outputs
        // and the pixels: every BatchNorm input it would keep is gone.
        let (bn, frozen) = (
            lookup("resnet-18-backbone").unwrap(),
            lookup("resnet-18-act").unwrap(),
        );
        let (with, without) = (
            resnet_per_image(bn, FP32, 224),
            resnet_per_image(frozen, FP32, 224),
        );
        let pixels = 4.0 * 3.0 * 224.0 * 224.0;
        // Stem: BN input and ReLU output (112^2 x 64), pool indices (8 B) and output (56^2).
        let stem_bn = 4.0 * 64.0 * 112.0 * 112.0;
        assert!(without < with && without > pixels, "{without} vs {with}");
        // Near half of the maps go (each conv's BN input beside its ReLU output); the max-pool
        // indices and output stay.
        let maps = with - pixels - stem_bn;
        let kept = without - pixels;
        assert!((0.5..0.7).contains(&(kept / maps)), "{}", kept / maps);
    }

    #[test]
    fn multihead_attention_with_weights_keeps_its_probabilities_and_their_dropout() {
        // ACT's encoder: 8 heads, dropout 0.1, fp32: softmax output (4 B), dropout mask (1 B)
        // and dropped copy (4 B) per score.
        let act = lookup("act-transformer").unwrap();
        assert!(act.mha_weights);
        assert_eq!(mha_weights_per_token(act, FP32, 302), 8.0 * 302.0 * 9.0);
        assert_eq!(mha_weights_per_token(act, AMP, 302), 8.0 * 302.0 * 5.0);
    }

    #[test]
    fn resnet50_keeps_about_84_mb_per_image_in_fp32() {
        let r = lookup("resnet-50").unwrap();
        let mb = resnet_per_image(r, FP32, 224) / 1e6;
        assert!((80.0..92.0).contains(&mb), "{mb}");
    }
}
