//! A robot policy's training step as a composite model (`[policy]` in a dialect), sized from
//! the policy config the user commits: which parts train (the config's freeze flags), its
//! cameras and their images (`input_features`, or the resize the policy applies), and its
//! action chunk and prompt lengths.
//!
//! The shapes of policy are built, each from keys and defaults the dialect file cites:
//! - `vla`: a vision tower per camera, a vision-language model over the image and prompt
//!   tokens, an action expert over the chunk (LeRobot's pi0, pi05, SmolVLA);
//! - `act`: a ResNet per camera at the dataset's resolution, a transformer encoder over its
//!   feature-map cells, a decoder over the chunk, a VAE encoder over the chunk (ACT);
//! - `diffusion`: a ResNet per camera and observation step, and the 1-D UNet (diffusion);
//! - `bet`: a ResNet per camera and step, and a GPT over their tokens (VQ-BeT);
//! - `tdmpc`: TD-MPC's latent dynamics model and its target copy, counted layer by layer;
//! - `groot`: GR00T N1.7's vision tower, LLM, VL self-attention, DiT and projectors;
//! - `xvla`: X-VLA's Florence-2 encoders and its soft-prompted action transformer.
//!
//! Where the file lists no cameras (LeRobot fills `input_features` from the dataset's metadata
//! at start-up), their count is bounded and the estimate says so.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::described::{composite, int, opaque, part};
use super::resolve::lookup_value;
use super::setup::InlineModel;
use super::spec::Dialect;
use crate::syntax::{Loader, Node, NodeKind, Value};

mod groot;
mod tdmpc;
mod xvla;

/// The most cameras and the largest image side hwlint sizes: a typo beyond them would make
/// a part of millions of tokens.
const MAX_CAMERAS: u64 = 64;
const MAX_SIDE: u64 = 8192;

/// Where a dialect's policy config keeps the inputs of its step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Keys naming the policy, first found wins; the mapping that holds it is the policy's,
    /// and every other key here is read under it (`policy.type` -> `policy.chunk_size`).
    pub type_keys: Vec<String>,
    /// Under the policy: the mapping of its input features (none: the cameras are fixed).
    #[serde(default)]
    pub features: String,
    /// How a feature is written: `typed` (`{type: VISUAL, shape: [c, h, w]}`, LeRobot's
    /// `PolicyFeature`) or `shapes` (`name: [c, h, w]`, an image's name starting with
    /// `observation.image`: the Hydra era's `input_shapes`).
    #[serde(default = "typed")]
    pub feature_style: FeatureStyle,
    /// The model always takes this many images a sample (openpi's three image slots), whatever
    /// the data gives.
    pub cameras_fixed: Option<u64>,
    /// Cameras, least and most, when the file lists no features.
    #[serde(default)]
    pub cameras_unread: (u64, u64),
    /// The images `[height, width]`, least and most, of a policy that reads them at the
    /// dataset's resolution when the file lists none.
    #[serde(default)]
    pub image_unread: ((u64, u64), (u64, u64)),
    /// A copy of every parameter kept beside them (an EMA), from the root of the file: on
    /// unless the key is null.
    pub ema: Option<EmaSpec>,
    /// Keys from the root of the file that change what trains in a way hwlint does not read
    /// (LeRobot's `peft` adapters): set to anything but null, the policy is not sized.
    #[serde(default)]
    pub unread: Vec<UnreadKey>,
    #[serde(default)]
    pub vla: BTreeMap<String, VlaSpec>,
    #[serde(default)]
    pub act: BTreeMap<String, ActSpec>,
    #[serde(default)]
    pub diffusion: BTreeMap<String, DiffusionSpec>,
    #[serde(default)]
    pub bet: BTreeMap<String, BetSpec>,
    #[serde(default)]
    pub tdmpc: BTreeMap<String, tdmpc::TdmpcSpec>,
    #[serde(default)]
    pub groot: BTreeMap<String, groot::GrootSpec>,
    #[serde(default)]
    pub xvla: BTreeMap<String, xvla::XvlaSpec>,
}

fn typed() -> FeatureStyle {
    FeatureStyle::Typed
}

/// An EMA of the parameters the trainer keeps on the GPU, with their dtypes: kept when `key`
/// is true or holds a decay, not when it is false or null; `default` when the key is absent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmaSpec {
    pub key: String,
    pub default: bool,
}

/// A key whose setting leaves the policy unsized, and why, for the message.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnreadKey {
    pub key: String,
    pub why: String,
}

/// A variant key whose values make a part a LoRA of that rank over every linear layer of its
/// blocks (openpi's `gemma_2b_lora`): the named values, and the part's plain value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoraVariant {
    pub part: String,
    pub key: String,
    pub default: String,
    /// The value that trains the part whole.
    pub plain: String,
    pub ranks: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FeatureStyle {
    Typed,
    Shapes,
}

/// A key under the policy and the framework's default for it (absent: none).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Key {
    /// Empty: the framework fixes the value (`default`) and no key sets it.
    #[serde(default)]
    pub key: String,
    pub default: Option<toml::Value>,
}

/// A flag over named parts: a freeze flag (when true, the parts keep their weights only), or
/// where the spec says so a tune flag (when true, they train: GR00T's `tune_*`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Freeze {
    pub key: String,
    pub default: bool,
    pub parts: Vec<String>,
}

/// A vision-language-action policy: catalog parts `vision`, `vlm` and `action_expert`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlaSpec {
    pub model: String,
    /// The policy's name as the file writes it, when not the table's (openpi's `Pi0Config`),
    /// and the conditions under the policy that pick this entry (`pi05 = true`).
    pub named: Option<String>,
    #[serde(default)]
    pub when: Vec<super::spec::Condition>,
    /// Parts a variant key makes LoRA.
    #[serde(default)]
    pub lora: Vec<LoraVariant>,
    /// Every block is rematerialised whatever the config says (openpi's `nn.remat`).
    #[serde(default)]
    pub remat: bool,
    /// The `[height, width]` every camera is resized (with padding) to.
    pub resize: Key,
    /// The vision tower's patch side, and how many patches merge into one token (SmolVLM's
    /// pixel shuffle: 4 x 4).
    pub patch: u64,
    #[serde(default = "one")]
    pub patches_per_token: u64,
    /// The prompt's tokens (padded to this length, or at most it).
    pub language: Key,
    pub chunk: Key,
    /// Tokens besides images and prompt in the VLM's sequence (SmolVLA's state token), and
    /// besides the chunk in the expert's (pi0's state token).
    #[serde(default)]
    pub prefix_extra: u64,
    #[serde(default)]
    pub suffix_extra: u64,
    /// Cameras the policy adds, filled with blank images that still go through the tower.
    pub empty_cameras: Option<Key>,
    /// Discrete action tokens at the end of the VLM's sequence, padded to this many, whose
    /// next-token loss reads the vocabulary logits at their positions (LeRobot's pi0-FAST).
    pub action_tokens: Option<Key>,
    /// The VLM's next-token loss reads the vocabulary logits at every prompt position but the
    /// last (openpi's pi0-FAST, whose action tokens are part of its `max_token_len` prompt).
    #[serde(default)]
    pub logits_over_prompt: bool,
    #[serde(default)]
    pub freeze: Vec<Freeze>,
    pub source: String,
}

/// ACT: a ResNet per camera, encoder, decoder and VAE encoder of its own dimensions.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActSpec {
    /// The images `[height, width]` the policy config's own default lists, read when the file
    /// lists none (the Hydra era's `input_shapes` default); empty: the cameras are bounded.
    #[serde(default)]
    pub images_default: Vec<(u64, u64)>,
    pub backbone: Key,
    /// `vision_backbone` values -> catalog ResNets.
    pub backbones: BTreeMap<String, String>,
    /// The backbone's output stride: one encoder token per stride x stride pixels.
    pub stride: u64,
    pub chunk: Key,
    pub dim_model: Key,
    pub n_heads: Key,
    pub dim_feedforward: Key,
    pub n_encoder_layers: Key,
    pub n_decoder_layers: Key,
    pub use_vae: Key,
    pub n_vae_encoder_layers: Key,
    /// Encoder tokens besides the cameras' cells (the latent and the robot state).
    pub encoder_extra: u64,
    pub source: String,
}

/// Diffusion policy: a ResNet per camera (or one shared) over each observation step, and the
/// catalog's UNet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffusionSpec {
    /// The images `[height, width]` the policy config's own default lists, read when the file
    /// lists none (the Hydra era's `input_shapes` default); empty: the cameras are bounded.
    #[serde(default)]
    pub images_default: Vec<(u64, u64)>,
    pub unet: String,
    pub backbone: Key,
    pub backbones: BTreeMap<String, String>,
    pub obs_steps: Key,
    pub resize: Key,
    pub crop: Key,
    pub separate_encoders: Key,
    pub source: String,
}

/// VQ-BeT: a ResNet over each camera of each observation step (cropped), and a GPT over one
/// token a camera, the state and an action query per step, plus the future action queries.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetSpec {
    pub backbone: Key,
    pub backbones: BTreeMap<String, String>,
    pub obs_steps: Key,
    /// Action query tokens predicted past the current step, plus one.
    pub pred_tokens: Key,
    pub crop: Key,
    pub layers: Key,
    pub width: Key,
    pub heads: Key,
    /// The GPT's position table (`gpt_block_size`), and the widths of its input and output
    /// layers (a Linear each, outside the blocks).
    pub block_size: Key,
    pub input_width: Key,
    pub output_width: Key,
    pub source: String,
}

fn one() -> u64 {
    1
}

/// The cameras a policy sees: each one's `(height, width)`, or the bound used when the file
/// lists none.
#[derive(Debug, Clone, PartialEq)]
enum Cameras {
    Listed(Vec<(u64, u64)>),
    Unread,
    /// The model takes this many images whatever the data gives (blank ones included).
    Fixed(u64),
}

/// Reads the keys under the policy's mapping.
struct Reader<'a> {
    loader: Loader,
    root: &'a Node,
    prefix: String,
}

impl Reader<'_> {
    fn full(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn value(&self, k: &Key) -> Option<toml::Value> {
        if k.key.is_empty() {
            return k.default.clone();
        }
        match self.root.get_dotted(&self.full(&k.key)) {
            Some(node) => Some(to_toml(self.loader, node)?),
            None => k.default.clone(),
        }
    }

    fn int(&self, k: &Key) -> Result<u64, String> {
        match self.value(k) {
            Some(toml::Value::Integer(n)) if n >= 0 => Ok(n as u64),
            _ => Err(format!("`{}` is not a whole number", self.full(&k.key))),
        }
    }

    fn bool(&self, k: &Key) -> Result<bool, String> {
        match self.value(k) {
            Some(toml::Value::Boolean(b)) => Ok(b),
            _ => Err(format!("`{}` is not true or false", self.full(&k.key))),
        }
    }

    fn string(&self, k: &Key) -> Result<String, String> {
        match self.value(k) {
            Some(toml::Value::String(s)) => Ok(s),
            _ => Err(format!("`{}` is not a name", self.full(&k.key))),
        }
    }

    /// A `[height, width]` pair, or none where the key is null or absent with no default.
    fn shape(&self, k: &Key) -> Result<Option<(u64, u64)>, String> {
        match self.value(k) {
            None => Ok(None),
            Some(toml::Value::Array(v)) if v.len() == 2 => match (&v[0], &v[1]) {
                (toml::Value::Integer(h), toml::Value::Integer(w))
                    if (1..=MAX_SIDE as i64).contains(h) && (1..=MAX_SIDE as i64).contains(w) =>
                {
                    Ok(Some((*h as u64, *w as u64)))
                }
                _ => Err(self.not_shape(k)),
            },
            Some(_) => Err(self.not_shape(k)),
        }
    }

    fn not_shape(&self, k: &Key) -> String {
        format!(
            "`{}` is not a [height, width] pair of up to {MAX_SIDE} pixels",
            self.full(&k.key)
        )
    }
}

/// A plain value or list of plain values as TOML; null as none.
pub(super) fn to_toml(loader: Loader, node: &Node) -> Option<toml::Value> {
    match &node.kind {
        NodeKind::Seq(items) => Some(toml::Value::Array(
            items
                .iter()
                .map(|n| to_toml(loader, n))
                .collect::<Option<Vec<_>>>()?,
        )),
        NodeKind::Scalar(s) => match s.value(loader) {
            Value::Int(n) => Some(toml::Value::Integer(n)),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
                Some(toml::Value::Integer(f as i64))
            }
            Value::Float(f) => Some(toml::Value::Float(f)),
            Value::Bool(b) => Some(toml::Value::Boolean(b)),
            Value::Str(s) => Some(toml::Value::String(s)),
            _ => None,
        },
        _ => None,
    }
}

/// The policy's step, when the dialect sizes policies and the file names one it knows.
pub fn architecture(dialect: &Dialect, root: &Node) -> Result<Option<InlineModel>, String> {
    let Some(spec) = dialect.policy.as_ref() else {
        return Ok(None);
    };
    let loader = dialect.loader;
    // The policy's name: a value (`type: act`, read under the mapping that holds it), or a
    // call whose arguments are its keys (openpi's `model=Pi0Config(...)`).
    let Some((type_key, name, prefix)) = spec.type_keys.iter().find_map(|k| {
        let node = root.get_dotted(k)?;
        if let Some(call) = super::resolve::callee(node) {
            return Some((k.as_str(), call.to_string(), format!("{k}.")));
        }
        match lookup_value(loader, root, k) {
            Some(Value::Str(s)) => Some((
                k.as_str(),
                s,
                k.rsplit_once('.')
                    .map_or(String::new(), |(p, _)| format!("{p}.")),
            )),
            _ => None,
        }
    }) else {
        return Ok(None);
    };
    // Before the catalog is asked too: its entry would count the policy as fully trained.
    if let Some(u) = spec
        .unread
        .iter()
        .find(|u| root.get_dotted(&u.key).is_some_and(|n| !n.is_null(loader)))
    {
        return Err(format!("`{}` is set: {}", u.key, u.why));
    }
    let r = Reader {
        loader,
        root,
        prefix,
    };
    let cameras = match spec.cameras_fixed {
        Some(n) => Cameras::Fixed(n),
        None => cameras(&r, spec)?,
    };
    let picked = spec.vla.iter().find(|(key, v)| {
        v.named.as_deref().unwrap_or(key.as_str()) == name
            && v.when.iter().all(|c| {
                let c = super::spec::Condition {
                    key: r.full(&c.key),
                    ..c.clone()
                };
                !super::resolve::unmet(loader, root, &c)
            })
    });
    let mut table = if let Some((_, v)) = picked {
        vla(&r, spec, v, &cameras)?
    } else if let Some(a) = spec.act.get(&name) {
        act(&r, spec, a, &cameras)?
    } else if let Some(d) = spec.diffusion.get(&name) {
        diffusion(&r, spec, d, &cameras)?
    } else if let Some(b) = spec.bet.get(&name) {
        bet(&r, spec, b, &cameras)?
    } else if let Some(t) = spec.tdmpc.get(&name) {
        tdmpc::tdmpc(&r, spec, t, &cameras)?
    } else if let Some(g) = spec.groot.get(&name) {
        groot::groot(&r, spec, g, &cameras)?
    } else if let Some(x) = spec.xvla.get(&name) {
        xvla::xvla(&r, spec, x, &cameras)?
    } else {
        // Not one hwlint sizes from its keys: the catalog's entry for the name, if any.
        return Ok(None);
    };
    if let Some(ema) = &spec.ema {
        let on = match root.get_dotted(&ema.key) {
            None => ema.default,
            Some(_) => !matches!(
                lookup_value(loader, root, &ema.key),
                None | Some(Value::Bool(false))
            ),
        };
        if on {
            table.insert("ema_copy".into(), true.into());
        }
    }
    let at = r.prefix.trim_end_matches('.');
    let span = if at.is_empty() {
        root.span.clone()
    } else {
        root.get_dotted(at)
            .map_or(root.span.clone(), |n| n.span.clone())
    };
    let model = InlineModel {
        table,
        key: if at.is_empty() {
            type_key.to_string()
        } else {
            at.to_string()
        },
        span,
        flat: at.is_empty(),
        own_blocks: false,
        configures_named: true,
    };
    // Dimensions past the estimator's bounds (a typo's million layers) are refused here, by
    // the part that has them, rather than read as an unknown model.
    if crate::estimate::plan::inline_architecture(&model).is_none() {
        let parts = model.table.get("parts").and_then(|p| p.as_array());
        let why = parts
            .into_iter()
            .flatten()
            .find_map(|p| {
                let name = p.get("name")?.as_str()?;
                let dims: crate::estimate::models::Architecture =
                    p.get("dims")?.clone().try_into().ok()?;
                let (field, n) = dims.implausible()?;
                Some(format!("the {name}'s {field} is {n}"))
            })
            .unwrap_or_else(|| "a count the keys give".to_string());
        return Err(format!(
            "the step the policy's keys describe is past what hwlint sizes ({why})"
        ));
    }
    Ok(Some(model))
}

/// The cameras the features list: images are `VISUAL` features (typed) or features whose
/// name starts with `observation.image` (shapes), each `[channels, height, width]`.
fn cameras(r: &Reader, spec: &PolicySpec) -> Result<Cameras, String> {
    let key = r.full(&spec.features);
    let Some(node) = r.root.get_dotted(&key) else {
        return Ok(Cameras::Unread);
    };
    let NodeKind::Map(map) = &node.kind else {
        // `input_features: null` (or `{}` below): filled from the dataset at start-up.
        return Ok(Cameras::Unread);
    };
    let mut out = Vec::new();
    for entry in &map.entries {
        let (name, feature) = (&entry.key, &entry.value);
        let shape = match spec.feature_style {
            FeatureStyle::Typed => {
                let is_visual = feature
                    .get_dotted("type")
                    .and_then(|t| t.as_scalar())
                    .is_some_and(|s| s.value(r.loader) == Value::Str("VISUAL".into()));
                if !is_visual {
                    continue;
                }
                feature.get_dotted("shape")
            }
            FeatureStyle::Shapes => {
                if !name.starts_with("observation.image") {
                    continue;
                }
                Some(feature)
            }
        };
        let side = |n: &Node| match to_toml(r.loader, n) {
            Some(toml::Value::Integer(x)) if (1..=MAX_SIDE as i64).contains(&x) => Some(x as u64),
            _ => None,
        };
        let hw = match shape.map(|n| &n.kind) {
            Some(NodeKind::Seq(items)) if items.len() == 3 => side(&items[1]).zip(side(&items[2])),
            _ => None,
        };
        let Some(hw) = hw else {
            return Err(format!(
                "the image feature `{key}.{}` has no [channels, height, width] shape of up to {MAX_SIDE} pixels",
                name
            ));
        };
        out.push(hw);
    }
    // Features listed without an image: a policy on state alone (PushT's keypoints).
    if map.entries.is_empty() {
        return Ok(Cameras::Unread);
    }
    if out.len() as u64 > MAX_CAMERAS {
        return Err(format!(
            "`{key}` lists {} cameras, more than the {MAX_CAMERAS} hwlint sizes",
            out.len()
        ));
    }
    Ok(Cameras::Listed(out))
}

/// What bounds the cameras when the file lists none: their count, and for a policy that reads
/// images at the dataset's resolution, their size.
fn unread_cameras(r: &Reader, spec: &PolicySpec, sized: bool) -> String {
    let (least, most) = spec.cameras_unread;
    let sizes = if sized {
        let ((lh, lw), (mh, mw)) = spec.image_unread;
        format!(" of {lh}x{lw} to {mh}x{mw}")
    } else {
        String::new()
    };
    format!(
        "the dataset's cameras, {least} to {most}{sizes}: the file lists no image features under `{}`, which LeRobot fills from the dataset's metadata at start-up",
        r.full(&spec.features)
    )
}

fn vla(r: &Reader, spec: &PolicySpec, v: &VlaSpec, cams: &Cameras) -> Result<toml::Table, String> {
    let catalog = crate::estimate::models::lookup(&v.model)
        .ok_or_else(|| format!("the catalog has no `{}`", v.model))?;
    let (h, w) = r
        .shape(&v.resize)?
        .ok_or_else(|| format!("`{}` is not set", r.full(&v.resize.key)))?;
    let empty = match &v.empty_cameras {
        Some(k) => r.int(k)?,
        None => 0,
    };
    let (most, least) = match cams {
        Cameras::Listed(c) => (c.len() as u64, c.len() as u64),
        Cameras::Fixed(n) => (*n, *n),
        Cameras::Unread => (spec.cameras_unread.1, spec.cameras_unread.0),
    };
    let (most, least) = (most + empty, least + empty);
    if most > MAX_CAMERAS {
        return Err(format!(
            "{most} cameras with `{}` are more than the {MAX_CAMERAS} hwlint sizes",
            r.full(v.empty_cameras.as_ref().map_or("", |k| k.key.as_str()))
        ));
    }
    let per_image = (h / v.patch.max(1)) * (w / v.patch.max(1)) / v.patches_per_token.max(1);
    let language = r.int(&v.language)?;
    let chunk = r.int(&v.chunk)?;
    if language > MAX_SIDE * 16 || chunk > MAX_SIDE * 16 {
        return Err(format!(
            "`{}` or `{}` is over {} tokens, more than hwlint sizes",
            r.full(&v.language.key),
            r.full(&v.chunk.key),
            MAX_SIDE * 16
        ));
    }
    let mut frozen: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in &v.freeze {
        let on = r.bool(&Key {
            key: f.key.clone(),
            default: Some(toml::Value::Boolean(f.default)),
        })?;
        if on {
            for p in &f.parts {
                frozen.entry(p).or_default().push(r.full(&f.key));
            }
        }
    }
    // A variant key that names a LoRA variant adapts the part; any other value it may hold
    // is one hwlint does not size.
    let mut lora: BTreeMap<&str, (u64, String)> = BTreeMap::new();
    for l in &v.lora {
        let value = r.string(&Key {
            key: l.key.clone(),
            default: Some(toml::Value::String(l.default.clone())),
        })?;
        if let Some(rank) = l.ranks.get(&value) {
            lora.insert(
                l.part.as_str(),
                (*rank, format!("`{}` {value}", r.full(&l.key))),
            );
        } else if value != l.plain {
            let mut known: Vec<&str> = vec![l.plain.as_str()];
            known.extend(l.ranks.keys().map(String::as_str));
            return Err(format!(
                "`{}` is `{value}`, and hwlint sizes only {}",
                r.full(&l.key),
                known.join(", ")
            ));
        }
    }
    let fast = match &v.action_tokens {
        Some(k) => r.int(k)?,
        None => 0,
    };
    if fast > MAX_SIDE * 16 {
        return Err(format!(
            "`{}` is over {} tokens, more than hwlint sizes",
            r.full(v.action_tokens.as_ref().map_or("", |k| k.key.as_str())),
            MAX_SIDE * 16
        ));
    }
    let prefix = |n: u64| n * per_image + language + v.prefix_extra + fast;
    let mut parts = Vec::new();
    for p in &catalog.parts {
        let mut e: Vec<(&str, toml::Value)> = vec![
            ("name", p.name.clone().into()),
            ("model", p.model.clone().into()),
        ];
        if frozen.contains_key(p.name.as_str()) {
            e.push(("frozen", true.into()));
        }
        if let Some((rank, _)) = lora.get(p.name.as_str()) {
            e.push(("lora_rank", int(*rank)));
        }
        if p.lm_loss {
            e.push(("lm_loss", true.into()));
        }
        if p.keeps_fp32 {
            e.push(("keeps_fp32", true.into()));
        }
        match p.name.as_str() {
            "vision" if most == 0 => continue,
            "vision" => {
                e.push(("count", int(most)));
                if least < most {
                    e.push(("count_least", int(least)));
                }
                e.push(("image_size", int(((h * w) as f64).sqrt().round() as u64)));
            }
            "vlm" => {
                e.push(("tokens", int(prefix(most))));
                if least < most {
                    e.push(("tokens_least", int(prefix(least))));
                }
                if fast > 0 {
                    e.push(("logits_tokens", int(fast)));
                } else if v.logits_over_prompt {
                    e.push(("logits_tokens", int(language.saturating_sub(1).max(1))));
                }
            }
            "action_expert" => e.push(("tokens", int(chunk + v.suffix_extra))),
            // Parameters without activations worth counting (pi0.5's adaRMS projections).
            _ if p.arch.family == crate::estimate::models::Family::Opaque => {}
            other => {
                return Err(format!(
                    "the catalog's `{}` has a part `{other}` hwlint does not size",
                    v.model
                ))
            }
        }
        parts.push(part(e));
    }
    let trains: Vec<String> = catalog
        .parts
        .iter()
        .filter(|p| !frozen.contains_key(p.name.as_str()))
        .map(|p| match lora.get(p.name.as_str()) {
            Some((rank, why)) => format!("{} as LoRA rank {rank} ({why})", p.name),
            None => p.name.clone(),
        })
        .collect();
    let frozen_text: Vec<String> = frozen
        .iter()
        .map(|(p, keys)| format!("{p} (`{}`)", keys.join("`, `")))
        .collect();
    let expert = catalog.parts.iter().any(|p| p.name == "action_expert");
    let tail = match (expert, fast) {
        (true, _) => format!(", an expert over {} tokens", chunk + v.suffix_extra),
        (false, 0) if v.logits_over_prompt => format!(
            ", whose next-token loss reads the vocabulary's logits at {} prompt positions",
            language.saturating_sub(1).max(1)
        ),
        (false, 0) => String::new(),
        (false, n) => format!(
            " + {n} action tokens, whose next-token loss reads the vocabulary's logits at them"
        ),
    };
    let source = format!(
        "{}: {} camera(s) x {per_image} image tokens at {h}x{w} + {language} prompt tokens{}{tail}; trains {}{}",
        v.source,
        if least < most {
            format!("{least}-{most}")
        } else {
            most.to_string()
        },
        if v.prefix_extra > 0 {
            format!(" + {} state token", v.prefix_extra)
        } else {
            String::new()
        },
        if trains.is_empty() {
            "nothing".to_string()
        } else {
            trains.join(", ")
        },
        if frozen_text.is_empty() {
            String::new()
        } else {
            format!("; frozen: {}", frozen_text.join(", "))
        },
    );
    let least_when = (least < most).then(|| unread_cameras(r, spec, false));
    let mut table = composite(parts, source, least_when);
    if v.remat {
        table.insert("remat".into(), true.into());
    }
    Ok(table)
}

/// A transformer part of ACT's own dimensions: `nn.TransformerEncoderLayer`-like post-norm
/// blocks with ReLU, calling `nn.MultiheadAttention` with its weights.
fn act_block(
    name: &str,
    (width, heads, ffn, layers): (u64, u64, u64, u64),
    tokens: u64,
) -> toml::Value {
    let mut dims = toml::Table::new();
    dims.insert("family".into(), "bert".into());
    dims.insert("hidden_size".into(), int(width));
    dims.insert("num_layers".into(), int(layers));
    dims.insert("num_heads".into(), int(heads));
    dims.insert("intermediate_size".into(), int(ffn));
    dims.insert("vocab_size".into(), int(0));
    dims.insert("max_position_embeddings".into(), int(0));
    dims.insert("type_vocab_size".into(), int(0));
    dims.insert("mha_weights".into(), true.into());
    part(vec![
        ("name", name.into()),
        ("model", name.into()),
        ("dims", toml::Value::Table(dims)),
        ("tokens", int(tokens)),
    ])
}

/// The backbone catalog model a `vision_backbone` value names.
fn backbone<'a>(
    r: &Reader,
    key: &Key,
    known: &'a BTreeMap<String, String>,
) -> Result<&'a str, String> {
    let name = r.string(key)?;
    known.get(&name).map(String::as_str).ok_or_else(|| {
        let names: Vec<&str> = known.keys().map(String::as_str).collect();
        format!(
            "`{}` is `{name}`, and hwlint sizes only {}",
            r.full(&key.key),
            names.join(", ")
        )
    })
}

/// The images a policy sees, per camera: at the most and at the least (the same where the file
/// or the policy's default lists them).
struct Images {
    most: Vec<(u64, u64)>,
    least: Vec<(u64, u64)>,
    /// Neither the file nor the policy lists them: bounded.
    unread: bool,
    /// The policy's default cameras, where the file lists none.
    default: bool,
}

impl Images {
    fn read(spec: &PolicySpec, cams: &Cameras, default: &[(u64, u64)]) -> Images {
        let (least_img, most_img) = spec.image_unread;
        match cams {
            Cameras::Listed(c) => Images {
                most: c.clone(),
                least: c.clone(),
                unread: false,
                default: false,
            },
            Cameras::Fixed(n) => Images {
                most: vec![most_img; *n as usize],
                least: vec![most_img; *n as usize],
                unread: false,
                default: false,
            },
            Cameras::Unread if !default.is_empty() => Images {
                most: default.to_vec(),
                least: default.to_vec(),
                unread: false,
                default: true,
            },
            Cameras::Unread => Images {
                most: vec![most_img; spec.cameras_unread.1 as usize],
                least: vec![least_img; spec.cameras_unread.0 as usize],
                unread: true,
                default: false,
            },
        }
    }

    /// The side of the square whose area is the images' mean (after `seen`).
    fn side(imgs: &[(u64, u64)], seen: impl Fn((u64, u64)) -> (u64, u64)) -> u64 {
        let area = imgs
            .iter()
            .map(|&i| {
                let (h, w) = seen(i);
                (h * w) as f64
            })
            .sum::<f64>()
            / imgs.len().max(1) as f64;
        area.sqrt().round() as u64
    }

    /// For a source line: `2 cameras at 480x640`, or the bound.
    fn text(&self, spec: &PolicySpec) -> String {
        if self.unread {
            let ((lh, lw), (mh, mw)) = spec.image_unread;
            return format!(
                "{}-{} cameras of {lh}x{lw} to {mh}x{mw} (not listed)",
                spec.cameras_unread.0, spec.cameras_unread.1
            );
        }
        let mut sizes: Vec<String> = Vec::new();
        for (h, w) in &self.most {
            let s = format!("{h}x{w}");
            if !sizes.contains(&s) {
                sizes.push(s);
            }
        }
        let n = self.most.len();
        format!(
            "{n} {} at {}{}",
            if n == 1 { "camera" } else { "cameras" },
            sizes.join(", "),
            if self.default {
                " (the policy's default)"
            } else {
                ""
            }
        )
    }

    /// What bounds them, for the estimate's range.
    fn least_when(&self, r: &Reader, spec: &PolicySpec) -> Option<String> {
        self.unread.then(|| unread_cameras(r, spec, true))
    }
}

fn act(r: &Reader, spec: &PolicySpec, a: &ActSpec, cams: &Cameras) -> Result<toml::Table, String> {
    let resnet = backbone(r, &a.backbone, &a.backbones)?;
    let imgs = Images::read(spec, cams, &a.images_default);
    let (most, least) = (imgs.most.len() as u64, imgs.least.len() as u64);
    let stride = a.stride.max(1);
    let cells = |v: &[(u64, u64)]| -> u64 {
        v.iter()
            .map(|(h, w)| h.div_ceil(stride) * w.div_ceil(stride))
            .sum()
    };
    let (tokens, tokens_least) = (
        cells(&imgs.most) + a.encoder_extra,
        cells(&imgs.least) + a.encoder_extra,
    );
    // One ResNet over every camera: its batch is cameras x samples, each image the
    // area-equivalent square of the cameras' mean.
    let chunk = r.int(&a.chunk)?;
    let width = r.int(&a.dim_model)?;
    let heads = r.int(&a.n_heads)?;
    let ffn = r.int(&a.dim_feedforward)?;
    if width == 0 || heads == 0 || width % heads != 0 {
        return Err(format!(
            "`{}` ({width}) is not a multiple of `{}` ({heads})",
            r.full(&a.dim_model.key),
            r.full(&a.n_heads.key)
        ));
    }
    let enc_layers = r.int(&a.n_encoder_layers)?;
    let dec_layers = r.int(&a.n_decoder_layers)?;
    let mut parts = Vec::new();
    if most > 0 {
        let mut e = vec![
            ("name", "backbone".into()),
            ("model", resnet.into()),
            ("count", int(most)),
            ("image_size", int(Images::side(&imgs.most, |i| i))),
        ];
        if imgs.unread {
            e.push(("count_least", int(least)));
            e.push(("image_size_least", int(Images::side(&imgs.least, |i| i))));
        }
        parts.push(part(e));
    }
    let mut encoder = act_block("encoder", (width, heads, ffn, enc_layers), tokens);
    if tokens_least < tokens {
        if let toml::Value::Table(t) = &mut encoder {
            t.insert("tokens_least".into(), int(tokens_least));
        }
    }
    parts.push(encoder);
    parts.push(act_block("decoder", (width, heads, ffn, dec_layers), chunk));
    let vae = r.bool(&a.use_vae)?;
    if vae {
        let layers = r.int(&a.n_vae_encoder_layers)?;
        // [cls, robot state, the chunk's actions].
        parts.push(act_block(
            "vae_encoder",
            (width, heads, ffn, layers),
            chunk + 2,
        ));
    }
    let source = format!(
        "{}: {resnet} on {}, a {enc_layers}-layer {width}-wide encoder over {} tokens, a {dec_layers}-layer decoder over the {chunk}-step chunk{}",
        a.source,
        imgs.text(spec),
        if tokens_least < tokens {
            format!("~{tokens_least}-{tokens}")
        } else {
            tokens.to_string()
        },
        if vae {
            format!(", a VAE encoder over {} tokens", chunk + 2)
        } else {
            String::new()
        }
    );
    Ok(composite(parts, source, imgs.least_when(r, spec)))
}

fn diffusion(
    r: &Reader,
    spec: &PolicySpec,
    d: &DiffusionSpec,
    cams: &Cameras,
) -> Result<toml::Table, String> {
    let resnet = backbone(r, &d.backbone, &d.backbones)?;
    let imgs = Images::read(spec, cams, &d.images_default);
    let steps = r.int(&d.obs_steps)?;
    if steps == 0 || steps > 64 {
        return Err(format!(
            "`{}` is {steps}, outside the 1-64 observation steps hwlint sizes",
            r.full(&d.obs_steps.key)
        ));
    }
    let resize = r.shape(&d.resize)?;
    let crop = r.shape(&d.crop)?;
    // Each image is resized (when set), then cropped (when set).
    let seen = |img: (u64, u64)| crop.or(resize).unwrap_or(img);
    let separate = r.bool(&d.separate_encoders)?;
    let (most, least) = (imgs.most.len(), imgs.least.len());
    let mut parts = Vec::new();
    if separate {
        // One ResNet per camera, each over the observation steps; the cameras past the least
        // are there only at the high end.
        for (i, img) in imgs.most.iter().enumerate() {
            let mut e = vec![
                ("name", format!("backbone {}", i + 1).into()),
                ("model", resnet.into()),
                ("count", int(steps)),
                ("image_size", int(Images::side(&[*img], seen))),
            ];
            if imgs.unread {
                match imgs.least.get(i) {
                    Some(l) => e.push(("image_size_least", int(Images::side(&[*l], seen)))),
                    None => e.push(("count_least", int(0))),
                }
            }
            parts.push(part(e));
        }
    } else if most > 0 {
        let mut e = vec![
            ("name", "backbone".into()),
            ("model", resnet.into()),
            ("count", int(steps * most as u64)),
            ("image_size", int(Images::side(&imgs.most, seen))),
        ];
        if imgs.unread {
            e.push(("count_least", int(steps * least as u64)));
            e.push(("image_size_least", int(Images::side(&imgs.least, seen))));
        }
        parts.push(part(e));
    }
    parts.push(part(vec![
        ("name", "unet".into()),
        ("model", d.unet.clone().into()),
    ]));
    let seen_text = match (resize, crop) {
        (_, Some((h, w))) => format!("cropped to {h}x{w}"),
        (Some((h, w)), None) => format!("resized to {h}x{w}"),
        (None, None) => "as they come".to_string(),
    };
    let source = format!(
        "{}: {} over {steps} observation step(s) of {}, images {seen_text}; the 1-D UNet",
        d.source,
        if separate {
            format!("a {resnet} per camera")
        } else {
            format!("one shared {resnet}")
        },
        imgs.text(spec)
    );
    Ok(composite(parts, source, imgs.least_when(r, spec)))
}

/// VQ-BeT's step (lerobot/policies/vqbet/modeling_vqbet.py:343-375 at lerobot@7427f318): the
/// ResNet encodes `b x steps x cameras` crops; the GPT reads, per step, a token a camera, the
/// state and an action query, then `pred_tokens - 1` more queries. Its attention is the explicit
/// softmax with dropout (vqbet_utils.py:131-135); its input and output layers are Linears
/// (`wte`, `lm_head`, :185, 192). The residual VQ-VAE, the feature projections and the code
/// and offset heads (MLPs of a few hundred thousand parameters each) are not counted.
fn bet(r: &Reader, spec: &PolicySpec, b: &BetSpec, cams: &Cameras) -> Result<toml::Table, String> {
    let resnet = backbone(r, &b.backbone, &b.backbones)?;
    let imgs = Images::read(spec, cams, &[]);
    let steps = r.int(&b.obs_steps)?;
    if steps == 0 || steps > 64 {
        return Err(format!(
            "`{}` is {steps}, outside the 1-64 observation steps hwlint sizes",
            r.full(&b.obs_steps.key)
        ));
    }
    let pred = r.int(&b.pred_tokens)?.max(1);
    let crop = r.shape(&b.crop)?;
    let seen = |img: (u64, u64)| crop.unwrap_or(img);
    let (most, least) = (imgs.most.len() as u64, imgs.least.len() as u64);
    let tokens = |cams: u64| steps * (cams + 2) + pred - 1;
    let mut vision = vec![
        ("name", "backbone".into()),
        ("model", resnet.into()),
        ("count", int(steps * most)),
        ("image_size", int(Images::side(&imgs.most, seen))),
    ];
    if imgs.unread {
        vision.push(("count_least", int(steps * least)));
        vision.push(("image_size_least", int(Images::side(&imgs.least, seen))));
    }
    let width = r.int(&b.width)?;
    let mut dims = toml::Table::new();
    dims.insert("family".into(), "gpt2".into());
    dims.insert("hidden_size".into(), int(width));
    dims.insert("num_layers".into(), int(r.int(&b.layers)?));
    dims.insert("num_heads".into(), int(r.int(&b.heads)?));
    dims.insert("intermediate_size".into(), int(4 * width));
    dims.insert("vocab_size".into(), int(0));
    dims.insert("max_position_embeddings".into(), int(r.int(&b.block_size)?));
    dims.insert("eager_attention".into(), true.into());
    let mut gpt = vec![
        ("name", "policy".into()),
        ("dims", toml::Value::Table(dims)),
        ("tokens", int(tokens(most))),
    ];
    if imgs.unread {
        gpt.push(("tokens_least", int(tokens(least))));
    }
    let source = format!(
        "{}: a {resnet} over {steps} observation step(s) of {}, {}; a GPT over {} tokens",
        b.source,
        imgs.text(spec),
        match crop {
            Some((h, w)) => format!("cropped to {h}x{w}"),
            None => "images as they come".to_string(),
        },
        if imgs.unread {
            format!("~{}-{}", tokens(least), tokens(most))
        } else {
            tokens(most).to_string()
        }
    );
    // `wte` (with a bias) and `lm_head` (without), as an opaque part: no activations counted.
    let io = r.int(&b.input_width)? * width + width + width * r.int(&b.output_width)?;
    let io = part(vec![
        ("name", "gpt input and output".into()),
        ("dims", opaque(io, 0, 0, 0)),
    ]);
    Ok(composite(
        vec![part(vision), part(gpt), io],
        source,
        imgs.least_when(r, spec),
    ))
}
