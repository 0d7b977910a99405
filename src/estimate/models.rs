//! Model architectures: the catalog in `rules/models.toml` and Hugging Face `config.json` files.
//! Dimensions, not parameter counts: counts are computed from them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// `rules/models.toml`, converted to JSON by build.rs (faster to read at start-up).
const MODELS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/rules/models.json"));

/// How the memory model sees an architecture: which kind of step it is (a transformer over tokens,
/// a vision model, a sum of parts). The block recipe itself is the finer [`Kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Parameters only (`params`), with activations too small to count (a 1-D conv UNet over a
    /// 16-step action horizon).
    #[default]
    Opaque,
    /// Made of catalog models (`parts`): a VLA policy's vision tower, language model and action
    /// expert.
    Composite,
    /// GPT-2-like: LayerNorm, GELU MLP (also GPT-NeoX, Falcon, BLOOM, Phi-1.5/2, T5).
    Gpt2,
    /// Llama, Mistral, Qwen2/3, Phi-3: RMSNorm, SwiGLU, GQA, no dropout (also MoE decoders).
    Llama,
    /// Gemma: RMSNorm, GeGLU (tanh GELU), head_dim 256, tied head.
    Gemma,
    /// OPT: pre-LayerNorm, ReLU MLP, dropout 0.1.
    Opt,
    /// BERT/RoBERTa: post-LayerNorm encoder, GELU, dropout 0.1, pooler.
    Bert,
    /// ViT: pre-LayerNorm, GELU, no dropout, classification head on the CLS token.
    Vit,
    /// ResNet (basic or bottleneck blocks), BatchNorm + ReLU; also a detector on a ResNet
    /// backbone (no blocks to checkpoint, activations per image).
    Resnet,
}

/// The block recipe (the catalog's `family` value): what `params.rs` counts and
/// `activations.rs` keeps. Each kind belongs to one [`Family`] of the memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    #[default]
    Opaque,
    Composite,
    Gpt2,
    /// Llama-style decoder; `norm` says which norm (RMSNorm, LayerNorm, OLMo's weightless one).
    Llama,
    Gemma,
    Opt,
    Bert,
    Vit,
    Resnet,
    /// Mixture-of-experts decoder (Mixtral, Qwen-MoE, DeepSeek-MoE/V2/V3): Llama attention (or
    /// DeepSeek's latent attention) and, in its sparse layers, a router over `num_experts`
    /// SwiGLU experts of which `num_experts_per_tok` see each token, plus optional shared experts.
    Moe,
    /// GPT-NeoX / Pythia: parallel attention and MLP (two LayerNorms), biases, GELU, untied head.
    Neox,
    /// Falcon: parallel attention and MLP, multi-query (or grouped) attention, no biases.
    Falcon,
    /// BLOOM: ALiBi, LayerNorm (also over the embeddings), biases, GELU, tied head.
    Bloom,
    /// Phi-1.5 / Phi-2: parallel attention and MLP under one LayerNorm, biases, GELU, LM head
    /// with a bias.
    Phi,
    /// StarCoder2: sequential attention and MLP, LayerNorms with biases, grouped-query attention
    /// with rotary embeddings, biases on every linear, a non-gated tanh-GELU MLP (`c_fc`,
    /// `c_proj`), dropout on attention, residuals and embeddings.
    Starcoder2,
    /// T5 / mT5: encoder-decoder, RMS-style norm without bias, relative position buckets, ReLU
    /// or gated-GELU MLP (`gated_mlp`), cross-attention in the decoder.
    T5,
    /// MPT (MosaicML): sequential pre-LayerNorm blocks, ALiBi (no position embedding), a fused
    /// `Wqkv`, an exact-GELU MLP (`up_proj`, `down_proj`) of `expansion_ratio` x d_model, tied
    /// head; `no_bias` drops the linears' and LayerNorms' biases (`qkv_bias` = not `no_bias`).
    Mpt,
    /// FLUX.1 (MMDiT): `num_layers` blocks, of which the last `num_single_layers` are
    /// single-stream (one parallel attention + tanh-GELU MLP over text and image tokens) and the
    /// others double-stream (separate weights for the text and the image tokens, joint
    /// attention); adaLN modulation from the timestep and pooled-text vector, q/k RMSNorm,
    /// LayerNorms without parameters. Tokens are the image's 2x2 patches of the 8x-downsampled
    /// latent plus the T5 text tokens (`max_position_embeddings`).
    Flux,
    /// A two-stage detector (detectron2's `GeneralizedRCNN`, MMDetection's Faster and Mask
    /// R-CNN): a ResNet backbone (`depths`,
    /// `hidden_sizes`, ...), a feature pyramid, the region proposal network and the ROI box and
    /// mask heads, over the input `detector` gives (src/estimate/detector.rs).
    Detector,
}

impl Kind {
    /// The memory model's family for this recipe.
    pub fn family(self) -> Family {
        match self {
            Kind::Opaque => Family::Opaque,
            Kind::Composite => Family::Composite,
            Kind::Gpt2
            | Kind::Neox
            | Kind::Falcon
            | Kind::Bloom
            | Kind::Phi
            | Kind::Starcoder2
            | Kind::Mpt
            | Kind::T5 => Family::Gpt2,
            Kind::Llama | Kind::Moe => Family::Llama,
            Kind::Gemma => Family::Gemma,
            Kind::Opt => Family::Opt,
            Kind::Bert => Family::Bert,
            // An image model: its tokens come from the image size (and the text length).
            Kind::Vit | Kind::Flux => Family::Vit,
            Kind::Resnet | Kind::Detector => Family::Resnet,
        }
    }
}

/// The norm of a Llama-kind block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    /// RMSNorm with a weight.
    #[default]
    Rms,
    /// LayerNorm with weight and bias (StableLM).
    Layer,
    /// LayerNorm without parameters (OLMo 1).
    Nonparametric,
}

/// One part of a composite model.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// What the part is (`vision`, `vlm`, `action_expert`).
    pub name: String,
    /// A catalog model; with `dims`, only the part's label (V-JEPA 2's predictor).
    #[serde(default)]
    pub model: String,
    /// The part's own dimensions, when no catalog model describes it (a predictor the config
    /// sizes): used instead of `model`.
    #[serde(default)]
    pub dims: Option<Box<Architecture>>,
    /// Frozen towers keep weights only: no gradients, optimizer state or activations.
    #[serde(default)]
    pub frozen: bool,
    /// How many inputs per sample the part processes (cameras).
    #[serde(default = "one")]
    pub count: u64,
    /// Tokens per sample (language/action parts).
    pub tokens: Option<u64>,
    /// Where the tokens vary from step to step (V-JEPA's random masks): a typical step's, with
    /// `tokens` the most a step keeps. The estimate is then bounded between the two.
    pub tokens_least: Option<u64>,
    /// Image side in pixels (vision parts).
    pub image_size: Option<u64>,
    /// Where the image is not in the file: the least side it can be, with `image_size` the
    /// most (bounded as `count_least`).
    pub image_size_least: Option<u64>,
    /// Frames per clip (video parts): the pixel batch is frames x image.
    pub frames: Option<u64>,
    /// Where the count is not in the file (a LeRobot policy's cameras come from the dataset):
    /// the least it can be, with `count` the most; the estimate is then bounded between them,
    /// for the reason the composite's `least_when` gives.
    pub count_least: Option<u64>,
    /// The part trains as a LoRA of this rank over every linear layer of its blocks, its frozen
    /// base stored in the compute dtype (openpi's `gemma_2b_lora`: frozen parameters are cast
    /// to bfloat16, scripts/train.py:102-104 at openpi@15a9616).
    pub lora_rank: Option<u64>,
    /// The part is built and kept on the GPU but never run in the step (V-JEPA 2-AC's context
    /// encoder): its weights only.
    #[serde(default)]
    pub idle: bool,
    /// The part stays fp32 when the rest of the model is cast to a 16-bit dtype (LeRobot's
    /// pi0 puts its vision tower back to float32 after `dtype: bfloat16`).
    #[serde(default)]
    pub keeps_fp32: bool,
    /// A frozen part whose output is held through backward (V-JEPA 2's EMA target features
    /// and the targets gathered from them): tokens of it kept per sample, fp32, hidden wide.
    pub held_tokens: Option<u64>,
    /// The part keeps its LM head and vocabulary loss (a vision-language model's language
    /// decoder); a language model inside a policy has none.
    #[serde(default)]
    pub lm_loss: bool,
    /// The positions the loss reads logits at, when fewer than the part's tokens (pi0-FAST's
    /// action tokens at the end of its prefix).
    pub logits_tokens: Option<u64>,
    /// The part is frozen, but a part before it trains and needs its gradient through this one
    /// (X-VLA's projector under a frozen language encoder): no gradients or optimizer state,
    /// and the activations a frozen base keeps for backward (norm inputs, attention's tensors,
    /// activation functions' inputs; not its linears' inputs).
    #[serde(default)]
    pub passes_gradients: bool,
    /// The resolved architecture (filled from `model` when the catalog loads).
    #[serde(skip)]
    pub arch: Box<Architecture>,
}

fn one() -> u64 {
    1
}

impl Part {
    /// Fills the part's architecture: its own dimensions, else `base` (the catalog model it
    /// names). False when it has neither.
    pub fn resolve(&mut self, base: Option<&Architecture>) -> bool {
        let mut arch = match (&self.dims, base) {
            (Some(d), _) => (**d).clone(),
            (None, Some(b)) => b.clone(),
            (None, None) => return false,
        };
        if arch.name.is_empty() {
            arch.name = self.model.clone();
        }
        arch.no_lm_loss = !self.lm_loss;
        *self.arch = arch;
        true
    }
}

/// Declares [`Architecture`] and the table it is read from (`family` there names the [`Kind`];
/// the memory model's [`Family`] follows from it), from one list of fields.
macro_rules! architecture {
    ($($(#[$meta:meta])* pub $field:ident: $ty:ty,)*) => {
        #[derive(Debug, Clone, Deserialize, PartialEq, Default)]
        #[serde(from = "ArchitectureTable")]
        pub struct Architecture {
            pub name: String,
            /// How the memory model treats it (follows from `kind`).
            pub family: Family,
            /// The block recipe: the catalog's `family` value.
            pub kind: Kind,
            $($(#[$meta])* pub $field: $ty,)*
        }

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct ArchitectureTable {
            family: Kind,
            $($(#[$meta])* $field: $ty,)*
        }

        impl Architecture {
            /// Each field with a number, and its largest number.
            fn dimensions(&self) -> Vec<(&'static str, u64)> {
                let mut out = Vec::new();
                $(
                    if let Some(n) = Dimension::largest(&self.$field) {
                        out.push((stringify!($field), n));
                    }
                )*
                out
            }
        }

        impl From<ArchitectureTable> for Architecture {
            fn from(t: ArchitectureTable) -> Self {
                Architecture {
                    name: String::new(),
                    family: t.family.family(),
                    kind: t.family,
                    $($field: t.$field,)*
                }
            }
        }
    };
}

architecture! {
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub hidden_size: u64,
    /// Blocks: for an encoder-decoder, encoder and decoder blocks together.
    #[serde(default)]
    pub num_layers: u64,
    /// Encoder-decoders: how many of `num_layers` are decoder blocks.
    #[serde(default)]
    pub num_decoder_layers: u64,
    #[serde(default)]
    pub num_heads: u64,
    /// Key/value heads (GQA); defaults to `num_heads`.
    pub num_kv_heads: Option<u64>,
    /// Width of one head; defaults to hidden / heads.
    pub head_dim: Option<u64>,
    /// MLP width; defaults to 4 x hidden.
    pub intermediate_size: Option<u64>,
    #[serde(default)]
    pub vocab_size: u64,
    #[serde(default)]
    pub tie_word_embeddings: bool,
    #[serde(default)]
    pub max_position_embeddings: u64,
    #[serde(default)]
    pub qkv_bias: bool,
    /// Qwen3: RMSNorm on q and k per head.
    #[serde(default)]
    pub qk_norm: bool,
    /// OLMo 2: the q and k norms span all heads (q width and k width), not one head.
    #[serde(default)]
    pub qk_norm_across_heads: bool,
    /// Gemma 2: norms before and after attention and MLP.
    #[serde(default)]
    pub sandwich_norm: bool,
    /// Llama kind: which norm the blocks use.
    #[serde(default)]
    pub norm: Norm,
    /// Falcon: the new decoder architecture (grouped KV heads, separate attention and MLP
    /// LayerNorms).
    #[serde(default)]
    pub new_decoder_architecture: bool,
    /// T5 v1.1 / mT5: gated-GELU MLP (`wi_0`, `wi_1`); else ReLU with one `wi`.
    #[serde(default)]
    pub gated_mlp: bool,
    /// T5: relative-position buckets (one bias table per stack).
    #[serde(default)]
    pub relative_attention_num_buckets: u64,
    /// FLUX: how many of `num_layers` are single-stream blocks (the rest are double-stream).
    #[serde(default)]
    pub num_single_layers: u64,
    /// FLUX: channels of one packed latent token (16 latent channels x a 2x2 patch).
    #[serde(default)]
    pub in_channels: u64,
    /// FLUX: width of the T5 text embeddings (`txt_in`'s input).
    #[serde(default)]
    pub context_in_dim: u64,
    /// FLUX: width of the pooled CLIP vector (`vector_in`'s input).
    #[serde(default)]
    pub vec_in_dim: u64,
    /// MoE: routed experts per sparse layer.
    #[serde(default)]
    pub num_experts: u64,
    /// MoE: experts each token is routed to.
    #[serde(default)]
    pub num_experts_per_tok: u64,
    /// MoE: width of one routed expert (defaults to `intermediate_size`).
    #[serde(default)]
    pub moe_intermediate_size: u64,
    /// MoE: total width of the always-on shared expert(s) (DeepSeek: n_shared x expert width).
    #[serde(default)]
    pub shared_expert_intermediate_size: u64,
    /// Qwen-MoE: a sigmoid gate (hidden -> 1) on the shared expert.
    #[serde(default)]
    pub shared_expert_gate: bool,
    /// MoE: leading layers with a dense MLP of `intermediate_size` (DeepSeek first_k_dense_replace).
    #[serde(default)]
    pub first_dense_layers: u64,
    /// DeepSeek latent attention: rank of the query compression (0: a full q projection).
    #[serde(default)]
    pub q_lora_rank: u64,
    /// DeepSeek latent attention: rank of the key/value compression (0: ordinary attention).
    #[serde(default)]
    pub kv_lora_rank: u64,
    /// DeepSeek latent attention: per-head query/key width without and with rotary embedding,
    /// and the per-head value width.
    #[serde(default)]
    pub qk_nope_head_dim: u64,
    #[serde(default)]
    pub qk_rope_head_dim: u64,
    #[serde(default)]
    pub v_head_dim: u64,
    #[serde(default)]
    pub type_vocab_size: u64,
    #[serde(default)]
    pub image_size: u64,
    /// Video models: frames per clip (the pixels are frames x image); 0 for an image model.
    #[serde(default)]
    pub num_frames: u64,
    #[serde(default)]
    pub patch_size: u64,
    #[serde(default)]
    pub num_labels: u64,
    /// ResNet: `basic` or `bottleneck`.
    pub layer_type: Option<String>,
    #[serde(default)]
    pub depths: Vec<u64>,
    #[serde(default)]
    pub hidden_sizes: Vec<u64>,
    #[serde(default)]
    pub embedding_size: u64,
    /// Opaque models: the parameter count.
    #[serde(default)]
    pub params: u64,
    /// Opaque models: the elements one sample keeps for backward, counted op by op by the
    /// dialect that sized the part (LeRobot's TD-MPC), in the compute dtype (autocast's 16-bit
    /// matmul outputs; the few it runs in fp32 are not told apart).
    #[serde(default)]
    pub kept_per_sample: u64,
    /// Opaque models: the fp32 inputs one sample holds through the step (a policy's frames,
    /// as the data loader gives them).
    #[serde(default)]
    pub input_per_sample: u64,
    /// Opaque models: the most elements, in the compute dtype, one sample's no-grad passes hold
    /// at once beside the kept ones (TD-MPC's target encodings of the next frames).
    #[serde(default)]
    pub transient_per_sample: u64,
    /// Composite models: their parts.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Composite models whose parts' counts or tokens are bounded (`count_least`,
    /// `tokens_least`) by something other than the run's random masks: what decides them.
    pub least_when: Option<String>,
    /// Composite models whose framework rematerialises every block whatever the config says
    /// (openpi: `nn.remat(..., policy=nothing_saveable)`, models/gemma.py:359-364).
    #[serde(default)]
    pub remat: bool,
    /// Composite models whose trainer keeps an EMA copy of every parameter on the GPU, in the
    /// parameters' dtypes (openpi's `ema_decay`, scripts/train.py:113).
    #[serde(default)]
    pub ema_copy: bool,
    /// The blocks call `torch.nn.MultiheadAttention` with its default `need_weights=True`
    /// (LeRobot's ACT): the explicit softmax path, which keeps each head's probabilities and
    /// their dropout for backward, never the fused kernel.
    #[serde(default)]
    pub mha_weights: bool,
    /// ResNet: the norm layers are torchvision's `FrozenBatchNorm2d` (`x * scale + bias` with
    /// buffers), which keep no input for backward and have no parameters.
    #[serde(default)]
    pub frozen_batch_norm: bool,
    /// ResNet: groups of the bottleneck's 3x3 convolution (ResNeXt's cardinality; 0 or 1: none).
    #[serde(default)]
    pub groups: u64,
    /// ResNet: the first stage's bottleneck width per group (ResNeXt 32x8d: 8); 0: a quarter of
    /// the stage's output, torchvision's.
    #[serde(default)]
    pub width_per_group: u64,
    /// ResNet: a stage's stride is in the bottleneck's first 1x1 convolution (the MSRA weights
    /// detectron2 starts from), not in its 3x3 (torchvision).
    #[serde(default)]
    pub stride_in_1x1: bool,
    /// ResNet: the stem and the first stages frozen (detectron2's `FREEZE_AT`: 1 the stem, 2 the
    /// stem and res2, ...): their weights do not train, and they keep no activations.
    #[serde(default)]
    pub frozen_stages: u64,
    /// A detector's input and heads (`family = "detector"`).
    pub detector: Option<super::detector::Heads>,
    /// A language model used without its LM head and vocabulary loss (inside a policy).
    #[serde(default)]
    pub no_lm_loss: bool,
    /// Whether the blocks apply dropout (p > 0); `None` takes the family's usual (GPT-2's
    /// 0.1): GPT-NeoX's blocks are GPT-2's without it.
    #[serde(default)]
    pub dropout: Option<bool>,
    /// The framework computes the loss with Megatron's `vocab_parallel_cross_entropy`, which
    /// turns one fp32 copy of the logits into the softmax in forward and into their gradient
    /// in backward, in place (GPT-NeoX, NeMo's Megatron GPT): about 6 bytes a logit where
    /// PyTorch's `cross_entropy` holds 10 to 12.
    #[serde(default)]
    pub inplace_loss: bool,
    /// transformers has no fused (SDPA) attention for the model, so it runs eager unless the
    /// file asks for flash-attn (GPT-Neo: `GPT_NEO_ATTENTION_CLASSES` holds eager and
    /// flash_attention_2 only, modeling_gpt_neo.py:377-380 at transformers 4.51.3), and its
    /// eager path upcasts q and k to fp32 before their product (:211-212).
    #[serde(default)]
    pub eager_attention: bool,
    /// Where the published dimensions come from (composites are sketches).
    #[serde(default)]
    pub source: String,
    /// The dtype the checkpoint is stored in (config.json `torch_dtype`/`dtype`), which
    /// `torch_dtype: auto` loads it as.
    pub torch_dtype: Option<String>,
    /// A checkpoint stored quantized (GPTQ, pre-quantized bitsandbytes NF4, NVFP4): its
    /// blocks' linear weights load in that format, so it trains only as a frozen base.
    pub quantization: Option<Quantization>,
}

/// How a pre-quantized checkpoint stores its blocks' linear weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quantization {
    /// bitsandbytes NF4 (absmax per 64 weights, fp32; nested: 8-bit absmax + an fp32 scale per
    /// 256 of them).
    Nf4,
    Nf4Double,
    /// GPTQ 4-bit, group size 128: an fp16 scale and a packed 4-bit zero per group.
    GptqInt4,
    /// NVFP4: 4-bit floats with an fp8 scale per 16 weights (and one fp32 scale per tensor).
    Nvfp4,
}

impl Quantization {
    /// Bytes per quantized weight, scales included.
    pub fn bytes_per_weight(self) -> f64 {
        match self {
            Quantization::Nf4 => 0.5 + 4.0 / 64.0,
            Quantization::Nf4Double => 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0),
            Quantization::GptqInt4 => 0.5 + (2.0 + 0.5) / 128.0,
            Quantization::Nvfp4 => 0.5 + 1.0 / 16.0,
        }
    }
}

impl Architecture {
    pub fn kv_heads(&self) -> u64 {
        self.num_kv_heads.unwrap_or(self.num_heads)
    }

    pub fn head_dim(&self) -> u64 {
        self.head_dim
            .unwrap_or_else(|| self.hidden_size / self.num_heads.max(1))
    }

    /// Uses DeepSeek's latent attention.
    pub fn latent_attention(&self) -> bool {
        self.kv_lora_rank > 0
    }

    /// Width of the query projection output (heads x head_dim; not always = hidden).
    pub fn q_width(&self) -> u64 {
        if self.latent_attention() {
            self.num_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
        } else {
            self.num_heads * self.head_dim()
        }
    }

    /// Width of the key (and value) projection output.
    pub fn kv_width(&self) -> u64 {
        if self.latent_attention() {
            self.num_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
        } else {
            self.kv_heads() * self.head_dim()
        }
    }

    pub fn intermediate(&self) -> u64 {
        self.intermediate_size.unwrap_or(4 * self.hidden_size)
    }

    /// Width of one routed expert.
    pub fn expert_intermediate(&self) -> u64 {
        if self.moe_intermediate_size > 0 {
            self.moe_intermediate_size
        } else {
            self.intermediate()
        }
    }

    /// MoE: how many blocks have routed experts (the rest have a dense MLP).
    pub fn sparse_layers(&self) -> u64 {
        if self.kind == Kind::Moe {
            self.num_layers.saturating_sub(self.first_dense_layers)
        } else {
            0
        }
    }

    /// Trained on next-token logits over its vocabulary: a decoder-only LM, or T5's decoder.
    pub fn is_causal_lm(&self) -> bool {
        matches!(
            self.kind,
            Kind::Gpt2
                | Kind::Llama
                | Kind::Gemma
                | Kind::Opt
                | Kind::Moe
                | Kind::Neox
                | Kind::Falcon
                | Kind::Bloom
                | Kind::Phi
                | Kind::Starcoder2
                | Kind::Mpt
                | Kind::T5
        )
    }

    /// A causal LM trained with its vocabulary loss (logits buffers, LM head).
    pub fn has_lm_loss(&self) -> bool {
        self.is_causal_lm() && !self.no_lm_loss
    }

    /// The model with a one-output head in place of its LM head (a reward or value model,
    /// `AutoModelForSequenceClassification` / `AutoModelForTokenClassification` with one
    /// label): no logits over the vocabulary, no head weights.
    pub fn with_scalar_head(self) -> Architecture {
        Architecture {
            no_lm_loss: true,
            tie_word_embeddings: true,
            ..self
        }
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ModelError {
    #[error("cannot read {path}: {message}")]
    #[diagnostic(code(hwlint::model))]
    Read { path: String, message: String },
    #[error("{path}: model_type `{model_type}` is not one hwlint can estimate")]
    #[diagnostic(
        code(hwlint::model),
        help("supported: llama, mistral, qwen2, qwen3, phi3, stablelm, olmo, olmo2, olmo3, gemma, gemma2, gemma3, gemma3_text, mixtral, qwen2_moe, qwen3_moe, deepseek, deepseek_v2, deepseek_v3, glm4_moe_lite, gpt2, gpt_neox, falcon, bloom, phi, starcoder2, mpt, t5, mt5, opt, bert, roberta, vit, resnet")
    )]
    Unsupported { path: String, model_type: String },
    #[error("{path}: {message}")]
    #[diagnostic(code(hwlint::model))]
    Invalid { path: String, message: String },
}

/// The built-in catalog, parsed once.
pub fn catalog() -> &'static [Architecture] {
    static CATALOG: OnceLock<Vec<Architecture>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // Compiled in (bases resolved by build.rs) and unit-tested: a failure is a build bug.
        let map: BTreeMap<String, Architecture> =
            serde_json::from_str(MODELS_JSON).expect("rules/models.toml is valid (unit-tested)");
        let mut all: Vec<Architecture> = map
            .into_iter()
            .map(|(name, mut a)| {
                a.name = name;
                a
            })
            .collect();
        let plain = all.clone();
        for a in &mut all {
            for part in &mut a.parts {
                // Unit-tested: every part names a catalog model.
                part.resolve(plain.iter().find(|m| m.name == part.model));
            }
        }
        all
    })
}

/// Every entry's normalized name and aliases -> its index in the catalog (the first entry
/// wins, as a search in catalog order would find it).
fn names() -> &'static std::collections::HashMap<String, usize> {
    static NAMES: OnceLock<std::collections::HashMap<String, usize>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut out = std::collections::HashMap::new();
        for (i, a) in catalog().iter().enumerate() {
            for name in std::iter::once(&a.name).chain(&a.aliases) {
                out.entry(normalize(name)).or_insert(i);
            }
        }
        out
    })
}

fn normalize(s: &str) -> String {
    s.trim()
        .trim_end_matches('/')
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// Suffixes of fine-tuned variants that keep the base architecture.
const VARIANT_SUFFIXES: [&str; 6] = ["-instruct", "-chat", "-it", "-base", "-hf", "-sft"];

/// Finds a model by catalog name, alias or Hugging Face id (case-insensitive); an instruct or
/// chat variant of a known model (`Qwen/Qwen2-1.5B-Instruct`) has its architecture.
pub fn lookup(name: &str) -> Option<&'static Architecture> {
    let n = normalize(name);
    if let Some(a) = lookup_exact(&n) {
        return Some(a);
    }
    let base = VARIANT_SUFFIXES
        .iter()
        .find_map(|sfx| n.strip_suffix(sfx))?;
    lookup_exact(base)
}

fn lookup_exact(n: &str) -> Option<&'static Architecture> {
    let last = n.rsplit('/').next().unwrap_or(n);
    let all = catalog();
    if let Some(a) = names().get(n) {
        return Some(&all[*a]);
    }
    // An id under another organization (`someone/Llama-2-7b-hf`) finds the entry whose name or an
    // alias has the same last segment, when exactly one entry does and the segment names a model
    // rather than a size or flavour (`llama3/8B` must not make `other/8B` an 8B Llama).
    let named = last.chars().filter(char::is_ascii_alphabetic).count() > 2
        && !last.starts_with("debugmodel");
    if !named {
        return None;
    }
    let mut found = all.iter().filter(|a| {
        normalize(&a.name) == last
            || a.aliases
                .iter()
                .any(|x| normalize(x).rsplit('/').next() == Some(last))
    });
    let first = found.next()?;
    found.all(|a| a.name == first.name).then_some(first)
}

/// Reads a Hugging Face `config.json` (already parsed) into an architecture.
/// What a field holds as a number, for the bounds of [`Architecture::implausible`].
trait Dimension {
    fn largest(&self) -> Option<u64> {
        None
    }
}

impl Dimension for u64 {
    fn largest(&self) -> Option<u64> {
        Some(*self)
    }
}

impl Dimension for Option<u64> {
    fn largest(&self) -> Option<u64> {
        *self
    }
}

impl Dimension for Vec<u64> {
    fn largest(&self) -> Option<u64> {
        self.iter().copied().max()
    }
}

impl Dimension for Vec<Part> {
    fn largest(&self) -> Option<u64> {
        self.iter()
            .flat_map(|p| [p.count, p.tokens.unwrap_or(0)])
            .max()
    }
}

impl Dimension for bool {}
impl Dimension for String {}
impl Dimension for Norm {}
impl Dimension for Vec<String> {}
impl Dimension for Option<String> {}
impl Dimension for Option<bool> {}
impl Dimension for Option<Quantization> {}

impl Dimension for Option<super::detector::Heads> {
    fn largest(&self) -> Option<u64> {
        self.as_ref().map(super::detector::Heads::largest)
    }
}

/// The largest a dimension may be, ten times and more what any model trained has, and small
/// enough that the parameter and memory arithmetic over them cannot overflow (a layer's
/// matmuls, h x i x 3 x 4,096 experts, times 4,096 layers, stays under 2^64).
fn dimension_bound(field: &str) -> u64 {
    match field {
        "vocab_size" | "max_position_embeddings" | "type_vocab_size" | "num_labels" => 1 << 26,
        "params" | "kept_per_sample" | "input_per_sample" | "transient_per_sample" => 1 << 44,
        "intermediate_size" | "moe_intermediate_size" | "shared_expert_intermediate_size" => {
            1 << 19
        }
        "num_layers"
        | "num_decoder_layers"
        | "num_single_layers"
        | "first_dense_layers"
        | "num_heads"
        | "num_kv_heads"
        | "num_experts"
        | "num_experts_per_tok" => 1 << 12,
        _ => 1 << 17,
    }
}

impl Architecture {
    /// The first dimension past any model's (`num_layers` 9223372036854775807): such a model
    /// is not one hwlint can size, and its arithmetic would overflow.
    pub fn implausible(&self) -> Option<(&'static str, u64)> {
        self.dimensions()
            .into_iter()
            .find(|(field, n)| *n > dimension_bound(field))
    }
}

pub fn from_hf_config(path: &str, v: &serde_json::Value) -> Result<Architecture, ModelError> {
    let model_type = v
        .get("model_type")
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_string();
    // Gemma 3 (multimodal): its text decoder only; the SigLIP tower is not counted.
    if model_type == "gemma3" {
        if let Some(text) = v.get("text_config") {
            let mut text = text.clone();
            text["model_type"] = "gemma3_text".into();
            let mut a = from_hf_config(path, &text)?;
            a.source = "text decoder of a Gemma 3 config; the SigLIP vision tower is not counted"
                .to_string();
            return Ok(a);
        }
    }
    let u = |k: &str| v.get(k).and_then(serde_json::Value::as_u64);
    let b = |k: &str| v.get(k).and_then(serde_json::Value::as_bool);
    let invalid = |message: &str| ModelError::Invalid {
        path: path.to_string(),
        message: message.to_string(),
    };
    let num_heads = u("num_attention_heads")
        .or(u("n_head"))
        .or(u("n_heads"))
        .or(u("num_heads"))
        .unwrap_or(0);
    let base = Architecture {
        torch_dtype: v
            .get("torch_dtype")
            .or_else(|| v.get("dtype"))
            .and_then(|d| d.as_str())
            .map(String::from),
        name: path.to_string(),
        hidden_size: u("hidden_size")
            .or(u("n_embd"))
            .or(u("n_embed"))
            .or(u("d_model"))
            .unwrap_or(0),
        num_layers: u("num_hidden_layers")
            .or(u("n_layer"))
            .or(u("n_layers"))
            .or(u("num_layers"))
            .unwrap_or(0),
        num_heads,
        num_kv_heads: u("num_key_value_heads"),
        head_dim: u("head_dim"),
        intermediate_size: u("intermediate_size").or(u("ffn_dim")).or(u("n_inner")),
        vocab_size: u("vocab_size").unwrap_or(0),
        tie_word_embeddings: b("tie_word_embeddings").unwrap_or(false),
        max_position_embeddings: u("max_position_embeddings")
            .or(u("n_positions"))
            .unwrap_or(0),
        qkv_bias: b("attention_bias").unwrap_or(false),
        type_vocab_size: u("type_vocab_size").unwrap_or(0),
        image_size: u("image_size").unwrap_or(0),
        patch_size: u("patch_size").unwrap_or(0),
        num_labels: v
            .get("id2label")
            .and_then(|m| m.as_object())
            .map(|m| m.len() as u64)
            .or(u("num_labels"))
            .unwrap_or(0),
        layer_type: v
            .get("layer_type")
            .and_then(|x| x.as_str())
            .map(String::from),
        depths: v
            .get("depths")
            .and_then(|d| serde_json::from_value(d.clone()).ok())
            .unwrap_or_default(),
        hidden_sizes: v
            .get("hidden_sizes")
            .and_then(|d| serde_json::from_value(d.clone()).ok())
            .unwrap_or_default(),
        embedding_size: u("embedding_size").unwrap_or(0),
        ..Architecture::default()
    };
    let of = |kind: Kind, a: Architecture| Architecture {
        kind,
        family: kind.family(),
        ..a
    };
    // Layers listed in `mlp_only_layers` keep a dense MLP; hwlint counts them only at the front.
    let dense_front = v
        .get("mlp_only_layers")
        .and_then(|x| x.as_array())
        .map_or(0, |l| l.len() as u64);
    let arch = match model_type.as_str() {
        "llama" | "mistral" | "phi3" => of(Kind::Llama, base),
        "qwen2" => of(
            Kind::Llama,
            Architecture {
                qkv_bias: true,
                ..base
            },
        ),
        "qwen3" => of(
            Kind::Llama,
            Architecture {
                qk_norm: true,
                ..base
            },
        ),
        "stablelm" => of(
            Kind::Llama,
            Architecture {
                qkv_bias: b("use_qkv_bias").unwrap_or(false),
                norm: Norm::Layer,
                ..base
            },
        ),
        "olmo" => of(
            Kind::Llama,
            Architecture {
                norm: Norm::Nonparametric,
                ..base
            },
        ),
        // Olmo 3: OLMo 2's blocks (norms after attention and MLP, q/k norms over all heads);
        // sliding-window attention in three of four layers changes no shape.
        "olmo2" | "olmo3" => of(
            Kind::Llama,
            Architecture {
                qk_norm: true,
                qk_norm_across_heads: true,
                ..base
            },
        ),
        "gemma" => of(
            Kind::Gemma,
            Architecture {
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        "gemma2" => of(
            Kind::Gemma,
            Architecture {
                sandwich_norm: true,
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        "gemma3_text" => of(
            Kind::Gemma,
            Architecture {
                sandwich_norm: true,
                qk_norm: true,
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        "mixtral" => of(
            Kind::Moe,
            Architecture {
                num_experts: u("num_local_experts").unwrap_or(0),
                num_experts_per_tok: u("num_experts_per_tok").unwrap_or(0),
                ..base
            },
        ),
        "qwen2_moe" => of(
            Kind::Moe,
            Architecture {
                qkv_bias: true,
                num_experts: u("num_experts").unwrap_or(0),
                num_experts_per_tok: u("num_experts_per_tok").unwrap_or(0),
                moe_intermediate_size: u("moe_intermediate_size").unwrap_or(0),
                shared_expert_intermediate_size: u("shared_expert_intermediate_size").unwrap_or(0),
                shared_expert_gate: u("shared_expert_intermediate_size").unwrap_or(0) > 0,
                first_dense_layers: dense_front,
                ..base
            },
        ),
        "qwen3_moe" => of(
            Kind::Moe,
            Architecture {
                qk_norm: true,
                num_experts: u("num_experts").unwrap_or(0),
                num_experts_per_tok: u("num_experts_per_tok").unwrap_or(0),
                moe_intermediate_size: u("moe_intermediate_size").unwrap_or(0),
                first_dense_layers: dense_front,
                ..base
            },
        ),
        // GLM-4.7-Flash (glm4_moe_lite): DeepSeek-V3's latent attention and shared-expert MoE
        // under DeepSeek's config keys (mlx-lm mlx_lm/models/glm4_moe_lite.py).
        "deepseek" | "deepseek_v2" | "deepseek_v3" | "glm4_moe_lite" => {
            let moe_i = u("moe_intermediate_size").unwrap_or(0);
            of(
                Kind::Moe,
                Architecture {
                    num_experts: u("n_routed_experts").unwrap_or(0),
                    num_experts_per_tok: u("num_experts_per_tok").unwrap_or(0),
                    moe_intermediate_size: moe_i,
                    shared_expert_intermediate_size: u("n_shared_experts").unwrap_or(0) * moe_i,
                    first_dense_layers: u("first_k_dense_replace").unwrap_or(0),
                    q_lora_rank: u("q_lora_rank").unwrap_or(0),
                    kv_lora_rank: u("kv_lora_rank").unwrap_or(0),
                    qk_nope_head_dim: u("qk_nope_head_dim").unwrap_or(0),
                    qk_rope_head_dim: u("qk_rope_head_dim").unwrap_or(0),
                    v_head_dim: u("v_head_dim").unwrap_or(0),
                    ..base
                },
            )
        }
        "t5" | "mt5" => {
            let enc = u("num_layers").unwrap_or(0);
            let dec = u("num_decoder_layers").unwrap_or(enc);
            let gated = v
                .get("feed_forward_proj")
                .and_then(|x| x.as_str())
                .is_some_and(|p| p.starts_with("gated"));
            of(
                Kind::T5,
                Architecture {
                    num_layers: enc + dec,
                    num_decoder_layers: dec,
                    head_dim: u("d_kv"),
                    intermediate_size: u("d_ff"),
                    gated_mlp: gated,
                    relative_attention_num_buckets: u("relative_attention_num_buckets")
                        .unwrap_or(32),
                    tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                    ..base
                },
            )
        }
        "gpt2" => of(
            Kind::Gpt2,
            Architecture {
                tie_word_embeddings: true,
                ..base
            },
        ),
        "gpt_neox" => of(Kind::Neox, base),
        "falcon" => {
            let new_arch = b("new_decoder_architecture").unwrap_or(false);
            let kv = if new_arch {
                u("num_kv_heads").or(u("n_head_kv")).or(Some(num_heads))
            } else if b("multi_query").unwrap_or(true) {
                Some(1)
            } else {
                Some(num_heads)
            };
            of(
                Kind::Falcon,
                Architecture {
                    num_kv_heads: kv,
                    qkv_bias: b("bias").unwrap_or(false),
                    new_decoder_architecture: new_arch,
                    tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                    ..base
                },
            )
        }
        "bloom" => of(
            Kind::Bloom,
            Architecture {
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        "phi" => of(Kind::Phi, base),
        // transformers Starcoder2Config: `use_bias` (default true) on every linear and LayerNorm,
        // which the kind always counts; the head is tied unless the config says otherwise.
        "starcoder2" => of(
            Kind::Starcoder2,
            Architecture {
                qkv_bias: b("use_bias").unwrap_or(true),
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        // MosaicML's MPTConfig (trust_remote_code): d_model, n_layers, n_heads, expansion_ratio,
        // no_bias, max_seq_len; grouped KV heads under attn_config.kv_n_heads; tied head.
        "mpt" => {
            let attn = v.get("attn_config");
            let kv = attn
                .and_then(|c| c.get("kv_n_heads"))
                .and_then(serde_json::Value::as_u64);
            let ratio = u("expansion_ratio").unwrap_or(4);
            of(
                Kind::Mpt,
                Architecture {
                    num_kv_heads: kv,
                    intermediate_size: Some(ratio * base.hidden_size),
                    qkv_bias: !b("no_bias").unwrap_or(false),
                    tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                    max_position_embeddings: u("max_seq_len").unwrap_or(0),
                    ..base
                },
            )
        }
        "opt" => of(
            Kind::Opt,
            Architecture {
                tie_word_embeddings: b("tie_word_embeddings").unwrap_or(true),
                ..base
            },
        ),
        "bert" | "roberta" => of(Kind::Bert, base),
        "vit" => of(Kind::Vit, base),
        "resnet" => of(
            Kind::Resnet,
            Architecture {
                image_size: if base.image_size == 0 {
                    224
                } else {
                    base.image_size
                },
                ..base
            },
        ),
        other => {
            return Err(ModelError::Unsupported {
                path: path.to_string(),
                model_type: other.to_string(),
            })
        }
    };
    let ok = match arch.kind {
        Kind::Resnet => !arch.depths.is_empty() && arch.depths.len() == arch.hidden_sizes.len(),
        Kind::Vit => arch.hidden_size > 0 && arch.num_layers > 0 && arch.patch_size > 0,
        Kind::Moe => {
            arch.hidden_size > 0
                && arch.num_layers > 0
                && arch.num_heads > 0
                && arch.vocab_size > 0
                && arch.num_experts > 0
                && arch.num_experts_per_tok > 0
        }
        _ => {
            arch.hidden_size > 0 && arch.num_layers > 0 && arch.num_heads > 0 && arch.vocab_size > 0
        }
    };
    if !ok {
        return Err(invalid(
            "config.json lacks the dimensions of its model_type",
        ));
    }
    if let Some((field, n)) = arch.implausible() {
        return Err(invalid(&format!(
            "`{field}` is {n}, past any model hwlint can size"
        )));
    }
    Ok(arch)
}

/// Reads a `config.json` file (or a model folder holding one).
pub fn read_hf_config(path: &std::path::Path) -> Result<Architecture, ModelError> {
    let file = if path.is_dir() {
        path.join("config.json")
    } else {
        path.to_path_buf()
    };
    let shown = file.display().to_string();
    let text =
        crate::source::read_text(&file, crate::source::MAX_FILE_BYTES).map_err(|message| {
            ModelError::Read {
                path: shown.clone(),
                message,
            }
        })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| ModelError::Invalid {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    from_hf_config(&shown, &v)
}

/// The config.json of `name` (an `org/name` Hugging Face id) in the local Hugging Face cache, if
/// it is there: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`, at
/// `models--ORG--NAME/snapshots/<rev>/config.json` (the revision `refs/main` names first, else any).
/// No network, ever.
pub fn cached_hf_config(name: &str) -> Option<std::path::PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let root = var("HF_HUB_CACHE")
        .map(std::path::PathBuf::from)
        .or_else(|| var("HF_HOME").map(|h| std::path::PathBuf::from(h).join("hub")))
        .or_else(|| {
            var("HOME").map(|h| {
                std::path::PathBuf::from(h)
                    .join(".cache")
                    .join("huggingface")
                    .join("hub")
            })
        })?;
    cached_config_in(&root, name)
}

/// [`cached_hf_config`] under a given cache root.
fn cached_config_in(root: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    let (org, model) = name.trim().trim_end_matches('/').split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\\']) && !s.contains("..")
    };
    if !ok(org) || !ok(model) {
        return None;
    }
    let repo = root.join(format!("models--{org}--{model}"));
    let snapshots = repo.join("snapshots");
    let main = crate::source::read_text(&repo.join("refs").join("main"), 4096)
        .ok()
        .map(|r| r.trim().to_string())
        .filter(|r| ok(r));
    if let Some(rev) = main {
        let file = snapshots.join(rev).join("config.json");
        if file.is_file() {
            return Some(file);
        }
    }
    let mut revs: Vec<std::path::PathBuf> = std::fs::read_dir(&snapshots)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("config.json")))
        .filter(|f| f.is_file())
        .collect();
    // Any revision, the same one every time.
    revs.sort();
    revs.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_model_is_within_the_dimension_bounds() {
        for a in catalog() {
            assert_eq!(a.implausible(), None, "{}", a.name);
        }
        let mut huge = catalog()[0].clone();
        huge.num_layers = i64::MAX as u64;
        assert_eq!(huge.implausible(), Some(("num_layers", i64::MAX as u64)));
    }

    #[test]
    fn every_composite_part_names_a_catalog_model() {
        for a in catalog() {
            for p in &a.parts {
                assert_eq!(
                    p.arch.name, p.model,
                    "{}: part {} names an unknown model",
                    a.name, p.name
                );
            }
        }
    }

    #[test]
    fn an_entry_with_a_base_copies_its_fields_but_not_its_aliases() {
        let table: toml::Table = toml::from_str(
            r#"
            [a]
            family = "llama"
            aliases = ["org/a"]
            hidden_size = 64
            num_layers = 2
            source = "a"
            [b]
            base = "a"
            aliases = ["org/b"]
            num_layers = 3
            quantization = "nf4"
            [c]
            base = "b"
            source = "c"
            "#,
        )
        .unwrap();
        let map: BTreeMap<String, Architecture> =
            toml::Value::Table(super::super::bases::with_bases(table))
                .try_into()
                .unwrap();
        let (a, b, c) = (&map["a"], &map["b"], &map["c"]);
        assert_eq!((b.hidden_size, b.num_layers, b.kind), (64, 3, Kind::Llama));
        assert_eq!(
            (b.aliases.clone(), b.source.as_str()),
            (vec!["org/b".to_string()], "a")
        );
        assert_eq!(b.quantization, Some(Quantization::Nf4));
        assert_eq!(a.quantization, None);
        assert_eq!((c.num_layers, c.source.as_str()), (3, "c"));
        assert!(c.aliases.is_empty());
        // The catalog's own bases resolve (a pre-quantized checkpoint keeps its base's dimensions).
        let q = lookup("TheBloke/Llama-2-7B-GPTQ").unwrap();
        let base = lookup("meta-llama/Llama-2-7b-hf").unwrap();
        assert_eq!(
            (q.hidden_size, q.num_layers),
            (base.hidden_size, base.num_layers)
        );
        assert_eq!(q.quantization, Some(Quantization::GptqInt4));
    }

    #[test]
    fn variants_and_ids_find_their_base() {
        assert_eq!(
            lookup("Qwen/Qwen2-1.5B-Instruct").unwrap().name,
            "qwen2.5-1.5b"
        );
        assert_eq!(
            lookup("meta-llama/Llama-3.1-8B-Instruct").unwrap().name,
            "llama-3-8b"
        );
        assert_eq!(lookup("TINYLLAMA").unwrap().name, "tinyllama-1.1b");
        assert!(lookup("our-org/internal-7b").is_none());
    }

    #[test]
    fn hf_config_json_for_each_supported_model_type() {
        let llama = serde_json::json!({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 22,
            "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 32000});
        let a = from_hf_config("x", &llama).unwrap();
        assert_eq!((a.family, a.kv_width()), (Family::Llama, 256));
        let gpt2 = serde_json::json!({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024});
        assert!(from_hf_config("x", &gpt2).unwrap().tie_word_embeddings);
        let mamba = serde_json::json!({"model_type": "mamba", "d_model": 512});
        assert!(matches!(
            from_hf_config("x", &mamba),
            Err(ModelError::Unsupported { .. })
        ));
        let empty = serde_json::json!({"model_type": "llama"});
        assert!(matches!(
            from_hf_config("x", &empty),
            Err(ModelError::Invalid { .. })
        ));
    }
    #[test]
    fn every_alias_finds_its_own_entry_and_no_alias_is_shared() {
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for a in catalog() {
            for x in std::iter::once(&a.name).chain(&a.aliases) {
                let key = normalize(x);
                if let Some(other) = seen.insert(key.clone(), a.name.clone()) {
                    assert_eq!(other, a.name, "{key} names both {other} and {}", a.name);
                }
                assert_eq!(
                    lookup(x).map(|m| m.name.as_str()),
                    Some(a.name.as_str()),
                    "{x}"
                );
            }
        }
    }

    #[test]
    fn sizes_and_flavours_never_borrow_another_architecture() {
        assert_eq!(
            lookup("meta-llama/Llama-3.1-70B").unwrap().name,
            "llama-3-70b"
        );
        assert_eq!(
            lookup("meta-llama/Llama-3.3-70B-Instruct").unwrap().name,
            "llama-3-70b"
        );
        assert_eq!(lookup("llama3/405B").unwrap().name, "llama-3.1-405b");
        assert_eq!(lookup("qwen3/32B").unwrap().name, "qwen3-32b");
        // A bare size or flavour under another organization names no model.
        assert!(lookup("mistral/8B").is_none());
        assert!(lookup("mistral/debugmodel").is_none());
        // Each torchtitan flavour finds its own model's entry, not another model's debugmodel.
        assert_eq!(
            lookup("llama4/debugmodel").unwrap().name,
            "llama4-debugmodel"
        );
        assert_eq!(
            lookup("gpt_oss/debugmodel").unwrap().name,
            "gpt-oss-debugmodel"
        );
        // Fine-tunes resolve only where listed.
        assert_eq!(
            lookup("alignment-handbook/zephyr-7b-sft-full")
                .unwrap()
                .name,
            "mistral-7b"
        );
        assert_eq!(
            lookup("HuggingFaceTB/SmolLM3-3B-Base").unwrap().name,
            "smollm3-3b"
        );
    }

    #[test]
    fn hf_config_json_for_the_new_model_types() {
        let mixtral = serde_json::json!({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
            "num_local_experts": 8, "num_experts_per_tok": 2});
        let a = from_hf_config("x", &mixtral).unwrap();
        assert_eq!(
            (a.kind, a.family, a.num_experts),
            (Kind::Moe, Family::Llama, 8)
        );
        assert_eq!(a.expert_intermediate(), 14336);
        let qwen2_moe = serde_json::json!({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
            "num_attention_heads": 16, "intermediate_size": 5632, "vocab_size": 151936, "num_experts": 60,
            "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632});
        let a = from_hf_config("x", &qwen2_moe).unwrap();
        assert!(a.qkv_bias && a.shared_expert_gate && a.expert_intermediate() == 1408);
        let qwen3_moe = serde_json::json!({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
            "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
            "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "mlp_only_layers": []});
        let a = from_hf_config("x", &qwen3_moe).unwrap();
        assert!(a.qk_norm && a.sparse_layers() == 48);
        for t in ["deepseek", "deepseek_v2", "deepseek_v3"] {
            let ds = serde_json::json!({"model_type": t, "hidden_size": 2048, "num_hidden_layers": 27,
                "num_attention_heads": 16, "intermediate_size": 10944, "vocab_size": 102400,
                "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
                "moe_intermediate_size": 1408, "first_k_dense_replace": 1, "kv_lora_rank": 512,
                "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128});
            let a = from_hf_config("x", &ds).unwrap();
            assert_eq!(
                (a.sparse_layers(), a.shared_expert_intermediate_size),
                (26, 2816),
                "{t}"
            );
            assert!(a.latent_attention());
        }
        for t in ["t5", "mt5"] {
            let t5 = serde_json::json!({"model_type": t, "d_model": 512, "d_kv": 64, "d_ff": 1024,
                "num_layers": 8, "num_heads": 6, "vocab_size": 250112, "feed_forward_proj": "gated-gelu",
                "tie_word_embeddings": false});
            let a = from_hf_config("x", &t5).unwrap();
            assert_eq!(
                (a.kind, a.num_layers, a.num_decoder_layers),
                (Kind::T5, 16, 8)
            );
            assert!(a.gated_mlp && !a.tie_word_embeddings && a.has_lm_loss());
        }
        let neox = serde_json::json!({"model_type": "gpt_neox", "hidden_size": 512, "num_hidden_layers": 6,
            "num_attention_heads": 8, "intermediate_size": 2048, "vocab_size": 50304});
        assert_eq!(from_hf_config("x", &neox).unwrap().kind, Kind::Neox);
        let falcon = serde_json::json!({"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32,
            "num_attention_heads": 71, "vocab_size": 65024, "multi_query": true});
        let a = from_hf_config("x", &falcon).unwrap();
        assert_eq!(
            (a.kind, a.kv_heads(), a.tie_word_embeddings),
            (Kind::Falcon, 1, true)
        );
        let falcon40 = serde_json::json!({"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60,
            "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": true, "vocab_size": 65024});
        assert_eq!(from_hf_config("x", &falcon40).unwrap().kv_heads(), 8);
        let bloom = serde_json::json!({"model_type": "bloom", "hidden_size": 1024, "n_layer": 24, "n_head": 16,
            "vocab_size": 250880});
        let a = from_hf_config("x", &bloom).unwrap();
        assert_eq!((a.kind, a.num_layers, a.num_heads), (Kind::Bloom, 24, 16));
        let phi = serde_json::json!({"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32,
            "num_attention_heads": 32, "intermediate_size": 10240, "vocab_size": 51200});
        assert_eq!(from_hf_config("x", &phi).unwrap().kind, Kind::Phi);
        let stablelm = serde_json::json!({"model_type": "stablelm", "hidden_size": 2048, "num_hidden_layers": 24,
            "num_attention_heads": 32, "intermediate_size": 5632, "vocab_size": 100352, "use_qkv_bias": true});
        let a = from_hf_config("x", &stablelm).unwrap();
        assert!(a.qkv_bias && a.norm == Norm::Layer);
        let olmo = serde_json::json!({"model_type": "olmo", "hidden_size": 2048, "num_hidden_layers": 16,
            "num_attention_heads": 16, "intermediate_size": 8192, "vocab_size": 50304});
        assert_eq!(
            from_hf_config("x", &olmo).unwrap().norm,
            Norm::Nonparametric
        );
        let olmo2 = serde_json::json!({"model_type": "olmo2", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 100352});
        assert!(from_hf_config("x", &olmo2).unwrap().qk_norm_across_heads);
        let gemma3 = serde_json::json!({"model_type": "gemma3", "text_config": {"hidden_size": 5376,
            "num_hidden_layers": 62, "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
            "intermediate_size": 21504, "vocab_size": 262208}});
        let a = from_hf_config("x", &gemma3).unwrap();
        assert!(
            a.kind == Kind::Gemma && a.qk_norm && a.sandwich_norm && a.source.contains("vision")
        );
        let starcoder2 = serde_json::json!({"model_type": "starcoder2", "hidden_size": 6144,
            "num_hidden_layers": 40, "num_attention_heads": 48, "num_key_value_heads": 4,
            "intermediate_size": 24576, "vocab_size": 49152, "use_bias": true, "tie_word_embeddings": false});
        let a = from_hf_config("x", &starcoder2).unwrap();
        assert_eq!(
            (a.kind, a.kv_heads(), a.tie_word_embeddings),
            (Kind::Starcoder2, 4, false)
        );
        assert_eq!(
            crate::estimate::params::count(&a).total,
            crate::estimate::params::count(lookup("bigcode/starcoder2-15b").unwrap()).total
        );
        let mpt = serde_json::json!({"model_type": "mpt", "d_model": 4096, "n_layers": 32, "n_heads": 32,
            "expansion_ratio": 4, "vocab_size": 50432, "max_seq_len": 2048, "no_bias": true,
            "attn_config": {"alibi": true}});
        let a = from_hf_config("x", &mpt).unwrap();
        assert_eq!(
            (a.kind, a.intermediate(), a.qkv_bias),
            (Kind::Mpt, 16384, false)
        );
        assert_eq!(crate::estimate::params::count(&a).total, 6_649_286_656);
        let olmo3 = serde_json::json!({"model_type": "olmo3", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 100278, "sliding_window": 4096});
        assert!(from_hf_config("x", &olmo3).unwrap().qk_norm_across_heads);
        let glm = serde_json::json!({"model_type": "glm4_moe_lite", "hidden_size": 2048, "num_hidden_layers": 47,
            "num_attention_heads": 20, "intermediate_size": 10240, "vocab_size": 154880, "n_routed_experts": 64,
            "n_shared_experts": 1, "num_experts_per_tok": 4, "moe_intermediate_size": 1536,
            "first_k_dense_replace": 1, "q_lora_rank": 768, "kv_lora_rank": 512, "qk_nope_head_dim": 192,
            "qk_rope_head_dim": 64, "v_head_dim": 256, "tie_word_embeddings": false});
        let a = from_hf_config("x", &glm).unwrap();
        assert_eq!(
            crate::estimate::params::count(&a).total,
            crate::estimate::params::count(lookup("zai-org/GLM-4.7-Flash").unwrap()).total
        );
        let moe_without_experts = serde_json::json!({"model_type": "mixtral", "hidden_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100});
        assert!(matches!(
            from_hf_config("x", &moe_without_experts),
            Err(ModelError::Invalid { .. })
        ));
    }

    #[test]
    fn cached_config_prefers_the_main_revision() {
        let root = std::env::temp_dir().join(format!("hwlint-hf-cache-{}", std::process::id()));
        let repo = root.join("models--org--some-model");
        for rev in ["aaa", "bbb"] {
            std::fs::create_dir_all(repo.join("snapshots").join(rev)).unwrap();
            std::fs::write(repo.join("snapshots").join(rev).join("config.json"), "{}").unwrap();
        }
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs").join("main"), "bbb\n").unwrap();
        let want = repo.join("snapshots").join("bbb").join("config.json");
        assert_eq!(cached_config_in(&root, "org/some-model"), Some(want));
        // Without refs/main, any revision that has a config.json.
        std::fs::remove_file(repo.join("refs").join("main")).unwrap();
        assert!(cached_config_in(&root, "org/some-model").is_some());
        assert_eq!(cached_config_in(&root, "org/other"), None);
        assert_eq!(cached_config_in(&root, "no-org"), None);
        assert_eq!(cached_config_in(&root, "../x"), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
