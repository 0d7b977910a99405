//! Parameter counts computed from an architecture's dimensions.

use super::models::{Architecture, Kind, Norm};

/// Parameter counts that the memory model needs.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct ParamCounts {
    pub total: u64,
    /// Weights of matmuls and convolutions (what autocast casts and caches), including a tied
    /// LM head, which multiplies by the embedding matrix.
    pub matmul: u64,
    /// Matmul weights one token passes through: for a mixture of experts, attention, dense
    /// layers, the routers, the top-k routed experts and any shared experts, and the LM head;
    /// for a dense model, `matmul`. Forward FLOPs scale with this, not with `matmul`.
    pub active_matmul: u64,
    /// Parameters of one repeated block.
    pub per_block: u64,
    /// Matmul weights of one repeated block.
    pub block_matmul: u64,
    /// Largest single tensor.
    pub largest: u64,
}

fn linear(i: u64, o: u64, bias: bool) -> u64 {
    i * o + if bias { o } else { 0 }
}

pub fn count(a: &Architecture) -> ParamCounts {
    let h = a.hidden_size;
    let l = a.num_layers;
    let i = a.intermediate();
    let v = a.vocab_size;
    match a.kind {
        Kind::Gpt2 => {
            let mm = 3 * h * h + h * h + 2 * h * i;
            let block = 2 * h
                + linear(h, 3 * h, true)
                + linear(h, h, true)
                + 2 * h
                + linear(h, i, true)
                + linear(i, h, true);
            let emb = v * h + a.max_position_embeddings * h;
            let head = if a.tie_word_embeddings { 0 } else { v * h };
            ParamCounts {
                total: emb + l * block + 2 * h + head,
                matmul: l * mm + v * h,
                active_matmul: l * mm + v * h,
                per_block: block,
                block_matmul: mm,
                largest: v * h,
            }
        }
        Kind::Llama | Kind::Gemma => {
            let (qw, kvw) = (a.q_width(), a.kv_width());
            let mm = h * qw + 2 * h * kvw + qw * h + 3 * h * i;
            let bias = if a.qkv_bias { qw + 2 * kvw } else { 0 };
            let norms = if a.sandwich_norm { 4 } else { 2 } * norm_params(a, h);
            let block = mm + bias + qk_norm_params(a) + norms;
            let head = if a.tie_word_embeddings { 0 } else { v * h };
            ParamCounts {
                total: v * h + l * block + norm_params(a, h) + head,
                matmul: l * mm + v * h,
                active_matmul: l * mm + v * h,
                per_block: block,
                block_matmul: mm,
                largest: v * h,
            }
        }
        Kind::Opt => {
            let mm = 4 * h * h + 2 * h * i;
            let block = 4 * linear(h, h, true) + linear(h, i, true) + linear(i, h, true) + 4 * h;
            // OPT's learned positions carry an offset of 2.
            let emb = v * h + (a.max_position_embeddings + 2) * h;
            let head = if a.tie_word_embeddings { 0 } else { v * h };
            ParamCounts {
                total: emb + l * block + 2 * h + head,
                matmul: l * mm + v * h,
                active_matmul: l * mm + v * h,
                per_block: block,
                block_matmul: mm,
                largest: v * h,
            }
        }
        Kind::Bert => {
            let mm = 4 * h * h + 2 * h * i;
            let block = 4 * linear(h, h, true) + linear(h, i, true) + linear(i, h, true) + 4 * h;
            let emb = (v + a.max_position_embeddings + a.type_vocab_size) * h + 2 * h;
            let pooler = linear(h, h, true);
            ParamCounts {
                total: emb + l * block + pooler,
                matmul: l * mm + h * h,
                active_matmul: l * mm + h * h,
                per_block: block,
                block_matmul: mm,
                largest: v * h,
            }
        }
        Kind::Vit => {
            let p = a.patch_size.max(1);
            let patches = (a.image_size / p).pow(2);
            let mm = 4 * h * h + 2 * h * i;
            let block = 4 * linear(h, h, true) + linear(h, i, true) + linear(i, h, true) + 4 * h;
            let embed = 3 * p * p * h + h + h + (patches + 1) * h;
            let head = 2 * h + linear(h, a.num_labels, true);
            ParamCounts {
                total: embed + l * block + head,
                matmul: l * mm + 3 * p * p * h + h * a.num_labels,
                active_matmul: l * mm + 3 * p * p * h + h * a.num_labels,
                per_block: block,
                block_matmul: mm,
                largest: (h * i).max(3 * p * p * h),
            }
        }
        Kind::Resnet | Kind::Detector => resnet(a),
        Kind::Moe => moe(a),
        Kind::Neox | Kind::Bloom | Kind::Phi | Kind::Falcon | Kind::Starcoder2 | Kind::Mpt => {
            parallel_or_bloom(a)
        }
        Kind::T5 => t5(a),
        Kind::Flux => flux(a),
        Kind::Opaque => ParamCounts {
            total: a.params,
            matmul: a.params,
            active_matmul: a.params,
            per_block: a.params,
            block_matmul: a.params,
            largest: a.params / 8,
        },
        Kind::Composite => {
            a.parts
                .iter()
                .map(|p| count(&p.arch))
                .fold(ParamCounts::default(), |acc, c| ParamCounts {
                    total: acc.total + c.total,
                    matmul: acc.matmul + c.matmul,
                    active_matmul: acc.active_matmul + c.active_matmul,
                    per_block: acc.per_block.max(c.per_block),
                    block_matmul: acc.block_matmul.max(c.block_matmul),
                    largest: acc.largest.max(c.largest),
                })
        }
    }
}

/// Parameters of one norm over `width` features in a Llama-kind block.
fn norm_params(a: &Architecture, width: u64) -> u64 {
    match a.norm {
        Norm::Rms => width,
        Norm::Layer => 2 * width,
        Norm::Nonparametric => 0,
    }
}

/// Parameters of the q and k norms of one block (Qwen3: one head wide; OLMo 2: all heads).
fn qk_norm_params(a: &Architecture) -> u64 {
    match (a.qk_norm, a.qk_norm_across_heads) {
        (false, _) => 0,
        (true, false) => 2 * a.head_dim(),
        (true, true) => a.q_width() + a.kv_width(),
    }
}

/// Attention of a Llama-kind or MoE block: (matmul weights, other parameters).
fn attention(a: &Architecture) -> (u64, u64) {
    let h = a.hidden_size;
    if a.latent_attention() {
        // DeepSeek MLA: q (optionally through a normed low-rank q_a/q_b), a joint kv_a projection
        // to the latent plus the shared rotary key, its norm, kv_b up to per-head keys and
        // values, and the output projection.
        let nh = a.num_heads;
        let qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        let (q, q_norm) = if a.q_lora_rank > 0 {
            (h * a.q_lora_rank + a.q_lora_rank * nh * qk, a.q_lora_rank)
        } else {
            (h * nh * qk, 0)
        };
        let kv = h * (a.kv_lora_rank + a.qk_rope_head_dim)
            + a.kv_lora_rank * nh * (a.qk_nope_head_dim + a.v_head_dim);
        let o = nh * a.v_head_dim * h;
        (q + kv + o, q_norm + a.kv_lora_rank)
    } else {
        let (qw, kvw) = (a.q_width(), a.kv_width());
        let bias = if a.qkv_bias { qw + 2 * kvw } else { 0 };
        (h * qw + 2 * h * kvw + qw * h, bias + qk_norm_params(a))
    }
}

/// MoE decoders: every expert's weights count (all of them hold weights, gradients and
/// optimizer state), whichever few a token visits.
fn moe(a: &Architecture) -> ParamCounts {
    let (h, v, l) = (a.hidden_size, a.vocab_size, a.num_layers);
    let (attn_mm, attn_other) = attention(a);
    let norms = 2 * norm_params(a, h);
    let dense_mm = 3 * h * a.intermediate();
    let e = a.num_experts;
    let experts = e * 3 * h * a.expert_intermediate();
    let shared = 3 * h * a.shared_expert_intermediate_size;
    let gate = if a.shared_expert_gate { h } else { 0 };
    let sparse_mm = h * e + experts + shared + gate;
    let sparse = a.sparse_layers();
    let dense = l - sparse;
    let blocks_mm = l * attn_mm + dense * dense_mm + sparse * sparse_mm;
    // A token passes through the router, its top-k routed experts and the shared experts.
    let k = a.num_experts_per_tok.min(e);
    let active_sparse_mm = h * e + k * 3 * h * a.expert_intermediate() + shared + gate;
    let active_blocks_mm = l * attn_mm + dense * dense_mm + sparse * active_sparse_mm;
    let blocks = blocks_mm + l * (attn_other + norms);
    let head = if a.tie_word_embeddings { 0 } else { v * h };
    let l1 = l.max(1);
    ParamCounts {
        total: v * h + blocks + norm_params(a, h) + head,
        matmul: blocks_mm + v * h,
        active_matmul: active_blocks_mm + v * h,
        per_block: blocks / l1,
        block_matmul: blocks_mm / l1,
        // transformers 5 keeps a layer's experts' gate and up projections in one 3-D tensor.
        largest: (v * h).max(2 * e * a.expert_intermediate() * h),
    }
}

/// GPT-NeoX, Falcon, Phi-1.5/2 (parallel attention and MLP), BLOOM, StarCoder2 and MPT
/// (sequential): LayerNorms with biases (MPT's `no_bias`: weight only), a GELU MLP of
/// `intermediate_size`.
fn parallel_or_bloom(a: &Architecture) -> ParamCounts {
    let (h, v, l, i) = (a.hidden_size, a.vocab_size, a.num_layers, a.intermediate());
    let (qw, kvw) = (a.q_width(), a.kv_width());
    // Falcon and MPT with `no_bias` have no linear biases; the others have them on every linear.
    let bias = !matches!(a.kind, Kind::Falcon | Kind::Mpt) || a.qkv_bias;
    let ln = if bias || a.kind == Kind::Falcon {
        2 * h
    } else {
        h
    };
    let mm = h * (qw + 2 * kvw) + qw * h + 2 * h * i;
    let biases = if bias { qw + 2 * kvw + h + i + h } else { 0 };
    let norms = match a.kind {
        // One LayerNorm feeds both branches.
        Kind::Phi => ln,
        Kind::Falcon if !a.new_decoder_architecture => ln,
        _ => 2 * ln,
    };
    let block = mm + biases + norms;
    let emb_norm = if a.kind == Kind::Bloom { ln } else { 0 };
    let head = match (a.tie_word_embeddings, a.kind) {
        (true, _) => 0,
        (false, Kind::Phi) => v * h + v,
        (false, _) => v * h,
    };
    ParamCounts {
        total: v * h + emb_norm + l * block + ln + head,
        matmul: l * mm + v * h,
        active_matmul: l * mm + v * h,
        per_block: block,
        block_matmul: mm,
        largest: v * h,
    }
}

/// FLUX.1 (torchtitan models/flux/model/{model,layers}.py; BFL's flux reference has the same
/// modules): `img_in`, the timestep and pooled-vector MLP embedders (in -> h -> h), `txt_in`;
/// per double-stream block, for the image and the text stream each, a 6h adaLN modulation,
/// qkv (with bias), two per-head RMSNorm weights, proj and a 4h GELU MLP, all with biases;
/// per single-stream block a 3h modulation, `linear1` (h -> 3h + mlp) and `linear2`
/// (h + mlp -> h) with biases and the q/k norm weights; the last layer's 2h modulation and
/// linear to the latent channels. LayerNorms have no parameters.
fn flux(a: &Architecture) -> ParamCounts {
    let h = a.hidden_size;
    let i = a.intermediate();
    let hd = a.head_dim();
    let single = a.num_single_layers.min(a.num_layers);
    let double = a.num_layers - single;
    let stream_mm = h * 6 * h + h * 3 * h + h * h + 2 * h * i;
    let stream = stream_mm + 6 * h + 3 * h + 2 * hd + h + i + h;
    let single_mm = h * 3 * h + h * (3 * h + i) + (h + i) * h;
    let single_block = single_mm + 3 * h + (3 * h + i) + h + 2 * hd;
    let embed_mm =
        a.in_channels * h + 256 * h + h * h + a.vec_in_dim * h + h * h + a.context_in_dim * h;
    let embed = embed_mm + 6 * h;
    let last_mm = h * 2 * h + h * a.in_channels;
    let last = last_mm + 2 * h + a.in_channels;
    let blocks_mm = double * 2 * stream_mm + single * single_mm;
    let blocks = double * 2 * stream + single * single_block;
    let l1 = a.num_layers.max(1);
    ParamCounts {
        total: embed + blocks + last,
        matmul: embed_mm + blocks_mm + last_mm,
        active_matmul: embed_mm + blocks_mm + last_mm,
        per_block: blocks / l1,
        block_matmul: blocks_mm / l1,
        largest: h * (3 * h + i),
    }
}

/// T5 / mT5: encoder and decoder stacks, a shared embedding, one relative-position bias table per
/// stack, weight-only norms, no biases.
fn t5(a: &Architecture) -> ParamCounts {
    let (h, v, l, i) = (a.hidden_size, a.vocab_size, a.num_layers, a.intermediate());
    let dec = a.num_decoder_layers.min(l);
    let enc = l - dec;
    let inner = a.q_width();
    let mlp = if a.gated_mlp { 3 } else { 2 } * h * i;
    let enc_mm = 4 * h * inner + mlp;
    let dec_mm = 8 * h * inner + mlp;
    let blocks_mm = enc * enc_mm + dec * dec_mm;
    let blocks = blocks_mm + enc * 2 * h + dec * 3 * h;
    let stacks = u64::from(enc > 0) + u64::from(dec > 0);
    let rel = stacks * a.relative_attention_num_buckets * a.num_heads;
    let head = if a.tie_word_embeddings { 0 } else { v * h };
    let l1 = l.max(1);
    ParamCounts {
        total: v * h + blocks + rel + stacks * h + head,
        matmul: blocks_mm + v * h,
        active_matmul: blocks_mm + v * h,
        per_block: blocks / l1,
        block_matmul: blocks_mm / l1,
        largest: v * h,
    }
}

/// One convolution layer of a ResNet as the memory model walks it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conv {
    pub in_ch: u64,
    pub out_ch: u64,
    pub kernel: u64,
    pub stride: u64,
    /// Grouped convolution (ResNeXt): each output channel sees `in_ch / groups` inputs.
    pub groups: u64,
}

impl Conv {
    /// The kernel's weights (no bias: ResNet convolutions are followed by a norm).
    pub fn weights(&self) -> u64 {
        self.in_ch * self.out_ch * self.kernel * self.kernel / self.groups.max(1)
    }
}

/// The ResNet's blocks: (convs of the main path, optional shortcut conv), in order.
///
/// A bottleneck's width is a quarter of its stage's output (torchvision), or `groups` x
/// `width_per_group` doubled at each stage (ResNeXt, detectron2's `NUM_GROUPS` and
/// `WIDTH_PER_GROUP`); its stride is in the 3x3, or in the first 1x1 (`stride_in_1x1`).
pub fn resnet_blocks(a: &Architecture) -> Vec<(Vec<Conv>, Option<Conv>)> {
    let bottleneck = a.layer_type.as_deref() != Some("basic");
    let groups = a.groups.max(1);
    let mut blocks = Vec::new();
    let mut in_ch = a.embedding_size;
    for (stage, (&depth, &out)) in a.depths.iter().zip(&a.hidden_sizes).enumerate() {
        for d in 0..depth {
            let stride = if stage > 0 && d == 0 { 2 } else { 1 };
            let conv = |in_ch, out_ch, kernel, stride, groups| Conv {
                in_ch,
                out_ch,
                kernel,
                stride,
                groups,
            };
            let shortcut = (in_ch != out || stride != 1).then_some(conv(in_ch, out, 1, stride, 1));
            let convs = if bottleneck {
                let mid = if a.width_per_group > 0 {
                    (groups * a.width_per_group) << stage
                } else {
                    out / 4
                };
                let (s1, s3) = if a.stride_in_1x1 {
                    (stride, 1)
                } else {
                    (1, stride)
                };
                vec![
                    conv(in_ch, mid, 1, s1, 1),
                    conv(mid, mid, 3, s3, groups),
                    conv(mid, out, 1, 1, 1),
                ]
            } else {
                vec![conv(in_ch, out, 3, stride, 1), conv(out, out, 3, 1, 1)]
            };
            blocks.push((convs, shortcut));
            in_ch = out;
        }
    }
    blocks
}

/// The stage (0-based, after the stem) of each of [`resnet_blocks`]' blocks.
pub fn resnet_block_stages(a: &Architecture) -> Vec<usize> {
    a.depths
        .iter()
        .enumerate()
        .flat_map(|(stage, &depth)| std::iter::repeat_n(stage, depth as usize))
        .collect()
}

fn resnet(a: &Architecture) -> ParamCounts {
    let conv = |c: &Conv| c.weights();
    // A frozen BatchNorm's scale and shift are buffers, not parameters.
    let bn = |c: &Conv| if a.frozen_batch_norm { 0 } else { 2 * c.out_ch };
    let stem = Conv {
        in_ch: 3,
        out_ch: a.embedding_size,
        kernel: 7,
        stride: 2,
        groups: 1,
    };
    let mut total = conv(&stem) + bn(&stem);
    let mut matmul = conv(&stem);
    let mut largest = conv(&stem);
    let blocks = resnet_blocks(a);
    for (convs, short) in &blocks {
        for c in convs.iter().chain(short.iter()) {
            total += conv(c) + bn(c);
            matmul += conv(c);
            largest = largest.max(conv(c));
        }
    }
    let last = a.hidden_sizes.last().copied().unwrap_or(0);
    total += linear(last, a.num_labels, true);
    matmul += last * a.num_labels;
    if let Some(heads) = &a.detector {
        let (all, weights, widest) = heads.params(&a.hidden_sizes);
        total += all;
        matmul += weights;
        largest = largest.max(widest);
    }
    ParamCounts {
        total,
        matmul,
        active_matmul: matmul,
        per_block: total / blocks.len().max(1) as u64,
        block_matmul: matmul / blocks.len().max(1) as u64,
        largest: largest.max(last * a.num_labels),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::models::lookup;

    fn total(name: &str) -> u64 {
        count(lookup(name).unwrap_or_else(|| panic!("{name}"))).total
    }

    #[test]
    fn published_parameter_counts() {
        // Counts printed by the models' own code (`sum(p.numel())`).
        for (name, want) in [
            ("gpt2", 124_439_808u64),
            ("gpt2-medium", 354_823_168),
            ("tinyllama-1.1b", 1_100_048_384),
            ("vit-base-16", 86_567_656),
            ("resnet-50", 25_557_032),
            ("resnet-18", 11_689_512),
            ("llama-2-7b", 6_738_415_616),
            ("llama-3-8b", 8_030_261_248),
            ("mistral-7b", 7_241_732_096),
            ("qwen2.5-0.5b", 494_032_768),
            ("bert-base", 109_482_240),
        ] {
            let got = total(name);
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err < 0.01, "{name}: {got} vs {want} ({:.2}%)", err * 100.0);
        }
    }
    fn within(name: &str, want: u64, tolerance: f64) {
        let got = total(name);
        let err = (got as f64 - want as f64).abs() / want as f64;
        assert!(
            err < tolerance,
            "{name}: {got} vs {want} ({:.3}%)",
            err * 100.0
        );
    }

    #[test]
    fn moe_counts_every_expert() {
        // Mistral AI, "Mixtral of experts" (and the mistralai/Mixtral-8x7B-v0.1 model card):
        // 46.7B total parameters.
        within("mixtral-8x7b", 46_700_000_000, 0.005);
        // Qwen/Qwen3-30B-A3B model card: 30.5B in total; Qwen/Qwen3-235B-A22B: 235B.
        within("qwen3-30b-a3b", 30_500_000_000, 0.005);
        within("qwen3-235b-a22b", 235_000_000_000, 0.005);
        // DeepSeek-V3 technical report: 671B total (the 14B multi-token-prediction module apart).
        within("deepseek-v3-671b", 671_000_000_000, 0.005);
        // Qwen/Qwen1.5-MoE-A2.7B model card: 14.3B in total.
        within("qwen1.5-moe-a2.7b", 14_300_000_000, 0.005);
    }

    #[test]
    fn moe_active_matmul_counts_only_the_routed_experts() {
        // Active parameters as the model cards give them: matmul weights a token passes through
        // plus the input embedding (a lookup, not a matmul; both models have an untied head).
        let active = |name: &str| {
            let a = lookup(name).unwrap();
            count(a).active_matmul + a.vocab_size * a.hidden_size
        };
        // mistralai/Mixtral-8x7B-v0.1 model card and "Mixtral of experts": 12.9B active
        // (13B in the paper's rounding).
        let mixtral = active("mixtral-8x7b");
        assert!((12.8e9..13.0e9).contains(&(mixtral as f64)), "{mixtral}");
        // Qwen/Qwen3-30B-A3B model card: 3.3B activated.
        let qwen = active("qwen3-30b-a3b");
        assert!((3.25e9..3.4e9).contains(&(qwen as f64)), "{qwen}");
        // Shared experts and the dense first layer always run (Qwen1.5-MoE-A2.7B: 2.7B active).
        let qwen15 = active("qwen1.5-moe-a2.7b");
        assert!((2.6e9..2.9e9).contains(&(qwen15 as f64)), "{qwen15}");
        // Dense models: every matmul weight is active.
        for name in ["llama-3-8b", "gpt2", "t5-small", "resnet-50", "pi0"] {
            let c = count(lookup(name).unwrap());
            assert_eq!(c.active_matmul, c.matmul, "{name}");
        }
    }

    #[test]
    fn grown_catalog_counts_match_published_totals() {
        // Exact totals from the model cards (stabilityai/stablelm-3b-4e1t; allenai/OLMo-1B-hf and
        // OLMo-7B-hf, which also pins OLMo's parameter-free LayerNorm and the 1B's tied head).
        within("stablelm-3b-4e1t", 2_795_443_200, 0.000_001);
        within("olmo-1b", 1_176_764_416, 0.000_001);
        within("olmo-7b", 6_888_095_744, 0.000_001);
        // Rounded totals: Mistral AI's Mixtral 8x22B announcement (141B), the Qwen2.5 model cards
        // (72.7B), OLMo 2 (7.3B, 13.7B), the mT5 paper's table (300M, 580M, 1.2B, 3.7B, 13B) and
        // Cerebras-GPT's model names.
        within("mixtral-8x22b", 141_000_000_000, 0.005);
        within("qwen2.5-72b", 72_700_000_000, 0.005);
        // Databricks' DBRX announcement: 132B total parameters, 36B active on any input.
        within("dbrx-132b", 132_000_000_000, 0.005);
        let a = lookup("LnL-AI/dbrx-base-converted-v2").unwrap();
        let active = count(a).active_matmul + a.vocab_size * a.hidden_size;
        assert!((35.5e9..37.0e9).contains(&(active as f64)), "{active}");
        // Mistral Small 3 (mistralai/Mistral-Small-24B-Instruct-2501 model card): 24B.
        within("mistral-small-24b", 24_000_000_000, 0.02);
        within("olmo-2-7b", 7_300_000_000, 0.005);
        within("olmo-2-13b", 13_700_000_000, 0.005);
        for (name, want) in [
            ("mt5-small", 300_000_000u64),
            ("mt5-base", 580_000_000),
            ("mt5-large", 1_200_000_000),
            ("mt5-xl", 3_700_000_000),
            ("mt5-xxl", 13_000_000_000),
            ("cerebras-gpt-111m", 111_000_000),
            ("cerebras-gpt-1.3b", 1_300_000_000),
            ("cerebras-gpt-6.7b", 6_700_000_000),
        ] {
            within(name, want, 0.03);
        }
        // Mixtral 8x22B: 39B active of 141B (matmul weights a token uses plus the embedding).
        let a = lookup("mixtral-8x22b").unwrap();
        let active = count(a).active_matmul + a.vocab_size * a.hidden_size;
        assert!((38.5e9..39.5e9).contains(&(active as f64)), "{active}");
    }

    #[test]
    fn llama4_counts_match_the_published_totals() {
        // Meta's Llama 4 model cards (meta-llama/Llama-4-Scout-17B-16E, -Maverick-17B-128E):
        // 17B active parameters each, 109B and 400B total. The totals include the vision
        // encoder, which the torchtitan text recipes here do not have.
        within("llama4-17bx128e", 400_000_000_000, 0.005);
        let scout = total("llama4-17bx16e");
        assert!((107.0e9..109.0e9).contains(&(scout as f64)), "{scout}");
        for name in ["llama4-17bx16e", "llama4-17bx128e"] {
            let a = lookup(name).unwrap();
            let active = count(a).active_matmul + a.vocab_size * a.hidden_size;
            assert!(
                (17.0e9..17.5e9).contains(&(active as f64)),
                "{name}: {active}"
            );
        }
        // The pre-quantized Scout keeps the recipe's count.
        assert_eq!(
            total("axolotl-quants/Llama-4-Scout-17B-16E-Linearized-bnb-nf4-bf16"),
            scout
        );
        // torchtitan debugmodel, by hand: embedding and output 2048 x 256, per layer attention
        // 4 x 256^2 and two norms; layers 1, 3, 5: router 256 x 8, 8 experts and a shared
        // expert of 3 x 256 x 512; layers 0, 2, 4: a 768-wide SwiGLU; a final norm.
        let (h, v) = (256u64, 2048u64);
        let attn = 4 * h * h + 2 * h;
        let moe = h * 8 + 9 * 3 * h * 512;
        let dense = 3 * h * 768;
        assert_eq!(
            total("llama4/debugmodel"),
            2 * v * h + 6 * attn + 3 * moe + 3 * dense + h
        );
    }

    #[test]
    fn tdmpc_counts_its_model_and_the_frozen_target_copy() {
        // lerobot@9dd4414c6 modeling_tdmpc.py on tdmpc.yaml + env/xarm.yaml, layer by layer in
        // rules/models.toml: 2,734,573 parameters, held twice (the EMA target is a deepcopy).
        assert_eq!(total("tdmpc-told"), 2_734_573);
        assert_eq!(total("lerobot/tdmpc"), 2 * 2_734_573);
        let parts = &lookup("tdmpc").unwrap().parts;
        assert_eq!(
            parts.iter().map(|p| p.frozen).collect::<Vec<_>>(),
            [false, true]
        );
    }

    #[test]
    fn gpt_neox_counts_match_the_pythia_table() {
        // Pythia model cards (EleutherAI/pythia-70m, "Naming convention and parameter count";
        // totals include the embedding and the untied unembedding).
        within("pythia-70m", 70_426_624, 0.000_001);
        within("pythia-1b", 1_011_781_632, 0.000_001);
        within("pythia-12b", 11_846_072_320, 0.000_001);
        // Black et al. 2022, "GPT-NeoX-20B": 20,554,567,680 parameters.
        within("gpt-neox-20b", 20_554_567_680, 0.000_001);
    }

    #[test]
    fn bloom_counts_match_the_model_cards() {
        // bigscience/bloom-560m model card: 559,214,592 parameters; bigscience/bloom: 176,247,271,424.
        within("bloom-560m", 559_214_592, 0.000_001);
        within("bloom-176b", 176_247_271_424, 0.000_001);
    }

    #[test]
    fn starcoder2_counts_match_the_published_total() {
        // bigcode/starcoder2-15b: 15.96B parameters published; the module shapes of
        // Starcoder2ForCausalLM written out by hand: untied 49152 x 6144 embedding and head; per layer two
        // LayerNorms with bias, q/o 6144 x 6144 and k/v 6144 x 512 with biases, c_fc/c_proj
        // 6144 x 24576 with biases; a final LayerNorm.
        let (h, l, v, kv, i) = (6144u64, 40u64, 49152u64, 512u64, 24576u64);
        let block = 4 * h + 2 * (h * h + h) + 2 * (h * kv + kv) + (h * i + i) + (i * h + h);
        let want = 2 * v * h + l * block + 2 * h;
        assert_eq!(want, 15_957_889_024);
        assert_eq!(total("bigcode/starcoder2-15b"), want);
    }

    #[test]
    fn mpt_counts_match_the_module_shapes_and_the_published_total() {
        // mosaicml/mpt-7b model card: 6.7B parameters. MPTForCausalLM's modules by hand: tied
        // 50432 x 4096 embedding (ALiBi: no position table); per block norm_1 and norm_2
        // (LayerNorm without bias under no_bias), Wqkv 4096 x 12288, out_proj 4096 x 4096,
        // up_proj 4096 x 16384, down_proj 16384 x 4096, no biases; norm_f.
        let (h, l, v, i) = (4096u64, 32u64, 50432u64, 16384u64);
        let want = v * h + l * (2 * h + h * 3 * h + h * h + 2 * h * i) + h;
        assert_eq!(want, 6_649_286_656);
        assert_eq!(total("mosaicml/mpt-7b"), want);
        within("mpt-7b", 6_700_000_000, 0.01);
    }

    #[test]
    fn olmo3_counts_match_the_module_shapes() {
        // Olmo-3-7B as rasbt/LLMs-from-scratch standalone-olmo3.ipynb prints the model it loads
        // allenai/Olmo-3-7B-Instruct into: Embedding(100278, 4096); per block q/k/v/o 4096 x 4096,
        // q_norm and k_norm over 4096, gate/up 4096 x 11008 and down 11008 x 4096, two RMSNorms;
        // final RMSNorm; untied 4096 x 100278 head. Published: 7B (Olmo 3 report, model cards).
        let (h, l, v, i) = (4096u64, 32u64, 100278u64, 11008u64);
        let want = 2 * v * h + l * (4 * h * h + 2 * h + 3 * h * i + 2 * h) + h;
        assert_eq!(total("allenai/Olmo-3-7B-Instruct-SFT"), want);
        assert!((7.2e9..7.4e9).contains(&(want as f64)), "{want}");
    }

    #[test]
    fn glm_4_7_flash_counts_match_the_published_total() {
        // zai-org/GLM-4.7-Flash model card: a 30B-A3B MoE (Ollama's glm4moelite listing: 29.9B).
        within("zai-org/GLM-4.7-Flash", 29_900_000_000, 0.005);
        let a = lookup("glm-4.7-flash").unwrap();
        let active = count(a).active_matmul + a.vocab_size * a.hidden_size;
        assert!((3.0e9..4.0e9).contains(&(active as f64)), "{active}");
    }

    #[test]
    fn flux_counts_match_the_published_checkpoints() {
        // Hugging Face safetensors totals: black-forest-labs/FLUX.1-schnell's transformer holds
        // 11,891,178,560 parameters, FLUX.1-dev's 11,901,408,320. torchtitan's FluxModel (the
        // flux-dev and flux-schnell flavors) has no guidance embedder, so it is schnell's count;
        // dev adds guidance_in, an MLPEmbedder(256 -> 3072 -> 3072) with biases.
        assert_eq!(total("flux/flux-schnell"), 11_891_178_560);
        assert_eq!(total("flux/flux-dev"), 11_891_178_560);
        let h = 3072u64;
        let guidance = 256 * h + h + h * h + h;
        assert_eq!(total("flux/flux-dev") + guidance, 11_901_408_320);
        // flux-debug: the same modules at hidden 1536, 2 double + 2 single blocks (about 258M).
        let debug = count(lookup("flux/flux-debug").unwrap());
        assert!(
            (0.25e9..0.27e9).contains(&(debug.total as f64)),
            "{}",
            debug.total
        );
    }

    #[test]
    fn vision_language_composites_add_their_parts() {
        // Qwen3-VL-4B-Instruct: Qwen3-4B's text decoder, the tower (counted as a ViT at 512 px)
        // and the mergers, which add about 0.4B.
        let vl = total("Qwen/Qwen3-VL-4B-Instruct");
        assert_eq!(
            vl,
            total("qwen3-4b") + total("qwen3-vl-4b-vision") + total("qwen3-vl-4b-merger")
        );
        assert!((4.3e9..4.5e9).contains(&(vl as f64)), "{vl}");
        // Qwen3-VL-30B-A3B-Instruct: Qwen3-30B-A3B's 30.5B plus the tower and the mergers.
        let moe = total("Qwen/Qwen3-VL-30B-A3B-Instruct");
        assert!((30.9e9..31.2e9).contains(&(moe as f64)), "{moe}");
        // The language decoder of a VLM keeps its LM loss; a VLA policy's does not.
        let parts = &lookup("vlm/debugmodel").unwrap().parts;
        assert!(parts.iter().any(|p| p.arch.has_lm_loss()));
        assert!(lookup("pi0")
            .unwrap()
            .parts
            .iter()
            .all(|p| !p.arch.has_lm_loss()));
    }

    #[test]
    fn smolvlm2_counts_its_tower_connector_and_untied_decoder() {
        // HuggingFaceTB/SmolVLM2-2.2B-Instruct: the composite is the sum of its parts.
        let vl = total("HuggingFaceTB/SmolVLM2-2.2B-Instruct");
        let (vision, connector, text) = (
            total("smolvlm2-2.2b-vision"),
            total("smolvlm2-2.2b-connector"),
            total("smolvlm2-2.2b-text"),
        );
        assert_eq!(vl, vision + connector + text);
        // The decoder by hand: untied 49280 x 2048 embedding and head; 24 blocks of q/k/v/o
        // 2048 x 2048, a 8192-wide SwiGLU and two RMSNorms; a final RMSNorm.
        let (h, v, i) = (2048u64, 49280u64, 8192u64);
        assert_eq!(text, 2 * v * h + 24 * (4 * h * h + 3 * h * i + 2 * h) + h);
        // ggml-org/SmolVLM2-2.2B-Instruct-GGUF mmproj-SmolVLM2-2.2B-Instruct-f16.gguf holds the
        // tower and the connector in 872,303,680 bytes (two bytes a weight plus metadata).
        let mmproj = 2 * (vision + connector);
        let err = (mmproj as f64 - 872_303_680.0).abs() / 872_303_680.0;
        assert!(err < 0.01, "{mmproj}");
        // The SmolVLM paper (arXiv:2504.05299) and the model name: 2.2B.
        within("smolvlm2-2.2b", 2_200_000_000, 0.03);
    }

    #[test]
    fn mistral_small_4_counts_match_the_published_totals() {
        // mistralai/Mistral-Small-4-119B-2603 model card (and axolotl examples/mistral4/README.md):
        // 119B parameters, 6.5B active per token. The Pixtral tower (about 0.4B) is not counted.
        within(
            "axolotl-ai-co/Mistral-Small-4-119B-2603-BF16",
            119_000_000_000,
            0.005,
        );
        let a = lookup("mistral-small-4-119b").unwrap();
        let active = count(a).active_matmul + a.vocab_size * a.hidden_size;
        assert!((6.0e9..7.0e9).contains(&(active as f64)), "{active}");
        // One layer by hand: q_a 4096 x 1024 + q_b 1024 x 32 x 128, kv_a 4096 x (256 + 64),
        // kv_b 256 x 32 x (64 + 128), o 32 x 128 x 4096, the q_a and kv_a norms; router
        // 4096 x 128, 129 SwiGLU experts of 2048; two RMSNorms.
        let (h, e) = (4096u64, 2048u64);
        let attn =
            h * 1024 + 1024 * 32 * 128 + h * 320 + 256 * 32 * 192 + 32 * 128 * h + 1024 + 256;
        let layer = attn + h * 128 + 129 * 3 * h * e + 2 * h;
        assert_eq!(count(a).total, 2 * 131_072 * h + 36 * layer + h);
    }

    #[test]
    fn ministral_3_3b_counts_its_language_model() {
        // NVIDIA-NeMo/Megatron-Bridge Ministral3ModelProvider3B: "3.4B Language Model + 0.4B
        // Vision Encoder"; the decoder by hand: tied 131072 x 3072 embedding; per layer q/o
        // 3072 x 4096, k/v 3072 x 1024, a 9216-wide SwiGLU and two RMSNorms; a final RMSNorm.
        let (h, v, i) = (3072u64, 131_072u64, 9216u64);
        let want = v * h + 26 * (2 * h * 4096 + 2 * h * 1024 + 3 * h * i + 2 * h) + h;
        assert_eq!(total("mistralai/Ministral-3-3B-Reasoning-2512"), want);
        within("ministral-3-3b", 3_400_000_000, 0.01);
    }

    #[test]
    fn t5_counts_encoder_and_decoder() {
        // google-t5/t5-small on the Hugging Face hub: 60.5M parameters (60,506,624 by
        // `num_parameters()`: shared embedding, 6 encoder + 6 decoder blocks, two bias tables).
        within("t5-small", 60_506_624, 0.000_001);
    }

    #[test]
    fn falcon_and_phi_counts_follow_the_module_shapes() {
        // No published exact total was found for these (the model cards say "7B" and "1.3B"), so
        // these check the count against the HF modules' shapes written out by hand.
        // Falcon-7B: tied embedding; per layer one LayerNorm, fused multi-query qkv
        // (h + 2 x 64 outputs), dense, 4h MLP, no biases; final LayerNorm.
        let (h, l, v) = (4544u64, 32u64, 65024u64);
        let falcon = v * h + l * (2 * h + h * (h + 128) + h * h + 8 * h * h) + 2 * h;
        assert_eq!(total("falcon-7b"), falcon);
        assert!((6.9e9..7.0e9).contains(&(falcon as f64)), "{falcon}");
        // Phi-1: embedding, per layer one LayerNorm, q/k/v/dense and fc1/fc2 with biases, final
        // LayerNorm, LM head with a bias.
        let (h, l, v, i) = (2048u64, 24u64, 51200u64, 8192u64);
        let phi =
            v * h + l * (2 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h)) + 2 * h + (v * h + v);
        assert_eq!(total("phi-1"), phi);
        assert!((1.40e9..1.43e9).contains(&(phi as f64)), "{phi}");
    }
}
