//! V-JEPA's training step as a composite model (`[jepa]` in a dialect): a context encoder over
//! the tokens its masks leave, an EMA target encoder over the whole clip, and a predictor over
//! context and masked tokens, each sized from the config.
//!
//! What each part sees follows facebookresearch/vjepa2 at c2963a47:
//! - the encoder drops the masked tokens before its blocks and runs every mask's context as
//!   more samples of the batch (src/models/vision_transformer.py:178-186, src/masks/utils.py);
//! - the target encoder runs on the whole clip under `torch.no_grad()` and its layer-normed
//!   output is kept for the loss (app/vjepa/train.py:429-433, 440-442);
//! - the predictor concatenates each mask's context with one mask token per target token
//!   (src/models/predictor.py:205-212): at most the clip's tokens per mask;
//! - each mask's context is the clip's tokens outside `num_blocks` blocks, cut to the batch's
//!   smallest context (src/masks/multiseq_multiblock3d.py:155-215).
//!
//! Not counted: the loss's fp32 difference and its absolute value per target token
//! (train.py:440-449), which live from the end of forward until the loss's own backward, before
//! any block is recomputed; and RoPE's rotated copies of q and k (`use_rope`), two 16-bit
//! hidden-wide tensors per token in a block being recomputed.

use serde::Deserialize;

use super::resolve::{condition_text, lookup_value, unmet};
use super::setup::InlineModel;
use super::spec::{Condition, Dialect};
use crate::syntax::{Loader, Node, NodeKind, Value};

/// The most tokens per clip hwlint sizes, and per sample over all masks: the estimator's bound
/// on a part's tokens (src/estimate/models.rs `dimension_bound`), seven times the largest
/// published clip.
const MAX_CLIP_TOKENS: u64 = 1 << 17;

/// Where a V-JEPA config keeps the inputs of its step.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JepaSpec {
    /// The mapping findings about the model point at (`model`).
    pub at: String,
    /// The step is V-JEPA's only when these hold (`app: vjepa`).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// The key naming the encoder, and its values -> catalog models.
    pub encoder: String,
    pub encoders: std::collections::BTreeMap<String, String>,
    pub predictor_depth: String,
    pub predictor_width: String,
    /// Absent: the encoder's head count.
    pub predictor_heads: String,
    pub predictor_mlp_ratio: f64,
    /// Frames per clip: the first key present; a list (one per dataset) counts its longest.
    pub frames: Vec<String>,
    pub tubelet: String,
    pub patch: String,
    pub crop: String,
    pub crop_default: u64,
    /// The list of mask generators.
    pub masks: String,
    /// The action-conditioned step (`app: vjepa_droid`), read from the same keys.
    pub ac: Option<super::jepa_ac::AcSpec>,
}

impl JepaSpec {
    /// The catalog model `encoder` names, and its architecture.
    pub fn encoder_model(
        &self,
        loader: Loader,
        root: &Node,
    ) -> Result<(&str, &'static crate::estimate::models::Architecture), String> {
        let name = match lookup_value(loader, root, &self.encoder) {
            Some(Value::Str(s)) => s,
            _ => return Err(format!("`{}` is not set", self.encoder)),
        };
        let Some(encoder) = self.encoders.get(&name) else {
            let known: Vec<&str> = self.encoders.keys().map(String::as_str).collect();
            return Err(format!(
                "`{}` is `{name}`, and hwlint sizes only {}",
                self.encoder,
                known.join(", ")
            ));
        };
        let enc = crate::estimate::models::lookup(encoder)
            .ok_or_else(|| format!("the catalog has no `{encoder}`"))?;
        Ok((encoder, enc))
    }
}

/// One mask generator of the list: blocks of a sampled size placed at random, the context
/// being what no block covers.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockMask {
    pub spatial_scale: (f64, f64),
    pub temporal_scale: (f64, f64),
    pub aspect_ratio: (f64, f64),
    pub num_blocks: u64,
    pub max_temporal_keep: f64,
    pub max_keep: Option<u64>,
    /// The predictor's targets are the context's complement (`full_complement`): each mask's
    /// context and targets make the whole clip on every step.
    pub full_complement: bool,
}

/// The token grid of one clip: time steps x rows x columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    pub duration: u64,
    pub height: u64,
    pub width: u64,
}

impl Grid {
    pub fn tokens(self) -> u64 {
        self.duration * self.height * self.width
    }
}

/// How many of a block's `n` positions along one axis of `len` cells cover each cell: the
/// block's start is uniform over `0..=len-n` (torch.randint(0, len - n + 1)).
fn coverage(len: u64, n: u64) -> Vec<f64> {
    let n = n.clamp(1, len.max(1));
    let starts = (len - n + 1) as f64;
    (0..len)
        .map(|c| {
            let first = c.saturating_sub(n - 1);
            let last = c.min(len - n);
            (last + 1 - first) as f64 / starts
        })
        .collect()
}

/// Block size for one draw of the scales, as `_sample_block_size` computes it
/// (multiseq_multiblock3d.py:129-153).
fn block_size(g: Grid, m: &BlockMask, rt: f64, rs: f64, ra: f64) -> (u64, u64, u64) {
    let lerp = |(lo, hi): (f64, f64), r: f64| lo + r * (hi - lo);
    // A block longer than the clip cannot be placed (the framework's randint fails): the
    // clip bounds it.
    let t = ((g.duration as f64 * lerp(m.temporal_scale, rt)) as u64).clamp(1, g.duration.max(1));
    let keep = (g.height as f64 * g.width as f64 * lerp(m.spatial_scale, rs)) as u64 as f64;
    let ar = lerp(m.aspect_ratio, ra);
    let h = ((keep * ar).sqrt().round() as u64).min(g.height);
    let w = ((keep / ar).sqrt().round() as u64).min(g.width);
    (t, h, w)
}

/// The tokens a mask's context keeps: per sample, expected, at the draw of block size that
/// keeps the most (the size is drawn once per step for the whole batch), and what a typical
/// step keeps once the collator cuts every sample to the batch's smallest context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Context {
    /// The expected context of one sample: about the most a step keeps, since the batch's
    /// smallest context rarely exceeds it (a replay of 1,000 steps of the collator at 10 to
    /// 24 clips kept at most 0.44-0.58 of the clip under the two standard masks, against
    /// 0.59 expected per sample).
    pub most: f64,
    /// A typical step: cells kept as if each were covered independently with the block's
    /// share of the grid, (1 - share)^blocks, which the edge cells' lighter coverage puts
    /// below the per-sample expectation by about the batch minimum's shortfall (replay: a
    /// mean of 0.31-0.41 of the clip kept, against 0.36 from this).
    pub typical: f64,
}

/// The context under `m` (see [`Context`]). A cell is kept when none of the `num_blocks`
/// independent blocks covers it, and only within the first `max_temporal_keep` of the clip; a
/// block of zero rows or columns covers nothing.
pub fn context(g: Grid, m: &BlockMask) -> Context {
    const STEPS: usize = 9;
    // A range that is one value is drawn once.
    let draws = |(lo, hi): (f64, f64)| -> Vec<f64> {
        if lo == hi {
            vec![0.0]
        } else {
            (0..STEPS).map(|i| i as f64 / (STEPS - 1) as f64).collect()
        }
    };
    let context_duration =
        ((g.duration as f64 * m.max_temporal_keep.clamp(0.0, 1.0)) as u64).max(1);
    let mut best: f64 = 0.0;
    let mut typical: f64 = 0.0;
    for rt in draws(m.temporal_scale) {
        for rs in draws(m.spatial_scale) {
            for ra in draws(m.aspect_ratio) {
                let (t, h, w) = block_size(g, m, rt, rs, ra);
                let empty = h == 0 || w == 0;
                let (pt, ph, pw) = (
                    coverage(g.duration, t),
                    coverage(g.height, h),
                    coverage(g.width, w),
                );
                let mut kept = 0.0;
                for &cd in pt.iter().take(context_duration as usize) {
                    for &cy in &ph {
                        for &cx in &pw {
                            let p = if empty { 0.0 } else { cd * cy * cx };
                            kept += (1.0 - p).powi(m.num_blocks.min(i32::MAX as u64) as i32);
                        }
                    }
                }
                if kept > best {
                    best = kept;
                    let share = if empty {
                        0.0
                    } else {
                        t as f64 * h as f64 * w as f64 / g.tokens() as f64
                    };
                    let cells = (context_duration * g.height * g.width) as f64;
                    typical = cells * (1.0 - share).powi(m.num_blocks.min(i32::MAX as u64) as i32);
                }
            }
        }
    }
    let cap = |kept: f64| {
        let kept = kept.max(1.0);
        m.max_keep.map_or(kept, |k| kept.min(k as f64))
    };
    Context {
        most: cap(best),
        typical: cap(typical.min(best)),
    }
}

fn number(loader: Loader, node: &Node) -> Option<f64> {
    match node.as_scalar()?.value(loader) {
        v @ (Value::Int(_) | Value::Float(_)) => v.as_f64(),
        _ => None,
    }
}

fn pair(loader: Loader, node: &Node) -> Option<(f64, f64)> {
    match &node.kind {
        NodeKind::Seq(items) if items.len() == 2 => {
            Some((number(loader, &items[0])?, number(loader, &items[1])?))
        }
        _ => None,
    }
}

/// Reads one mask generator; the message names the key that is missing or not plain.
fn block_mask(loader: Loader, node: &Node, at: &str) -> Result<BlockMask, String> {
    let get = |k: &str| node.as_map().and_then(|m| m.get(k));
    let need_pair = |k: &str| {
        get(k)
            .and_then(|n| pair(loader, n))
            .ok_or_else(|| format!("`{at}.{k}` is not a pair of numbers"))
    };
    let flag = |k: &str| {
        get(k).is_some_and(|n| {
            n.as_scalar()
                .is_some_and(|s| s.value(loader) == Value::Bool(true))
        })
    };
    // The encoder would see the blocks (`inv_block`) or the targets' complement
    // (`pred_full_complement`): steps this reading does not describe.
    for k in ["inv_block", "pred_full_complement"] {
        if flag(k) {
            return Err(format!(
                "`{at}.{k}` is true, and hwlint sizes only a context outside the mask's blocks"
            ));
        }
    }
    let num_blocks = get("num_blocks")
        .and_then(|n| number(loader, n))
        .filter(|n| *n >= 1.0 && n.fract() == 0.0)
        .ok_or_else(|| format!("`{at}.num_blocks` is not a whole number"))?;
    Ok(BlockMask {
        spatial_scale: need_pair("spatial_scale")?,
        temporal_scale: need_pair("temporal_scale")?,
        aspect_ratio: need_pair("aspect_ratio")?,
        num_blocks: num_blocks as u64,
        max_temporal_keep: get("max_temporal_keep")
            .and_then(|n| number(loader, n))
            .unwrap_or(1.0),
        max_keep: get("max_keep")
            .and_then(|n| number(loader, n))
            .filter(|n| *n >= 1.0)
            .map(|n| n as u64),
        full_complement: flag("full_complement"),
    })
}

/// The step the file describes: `None` when the dialect has no `[jepa]` or the file lacks its
/// mapping; an error naming the input that is missing or not read.
pub fn architecture(dialect: &Dialect, root: &Node) -> Result<Option<InlineModel>, String> {
    let Some(spec) = dialect.jepa.as_ref() else {
        return Ok(None);
    };
    let loader = dialect.loader;
    let Some(at) = root.get_dotted(&spec.at) else {
        return Ok(None);
    };
    if let Some(ac) = spec.ac.as_ref().filter(|ac| ac.holds(loader, root)) {
        return super::jepa_ac::architecture(spec, ac, loader, root, at);
    }
    if let Some(cond) = spec.when.iter().find(|c| unmet(loader, root, c)) {
        let value = match lookup_value(loader, root, &cond.key) {
            Some(Value::Str(s)) => format!("`{}` is `{s}`", cond.key),
            _ => format!("`{}` is not a plain value", cond.key),
        };
        return Err(format!(
            "{value}, and hwlint sizes only V-JEPA's pretraining and action-conditioned steps, where {}",
            condition_text(cond)
        ));
    }
    let int = |key: &str| -> Result<u64, String> {
        lookup_value(loader, root, key)
            .and_then(|v| v.as_f64())
            .filter(|n| *n >= 1.0 && n.fract() == 0.0 && *n < 1e9)
            .map(|n| n as u64)
            .ok_or_else(|| format!("`{key}` is not set to a whole number"))
    };
    let (encoder, enc) = spec.encoder_model(loader, root)?;
    let depth = int(&spec.predictor_depth)?;
    let width = int(&spec.predictor_width)?;
    let heads = match root.get_dotted(&spec.predictor_heads) {
        Some(n) if n.is_null(loader) => enc.num_heads,
        None => enc.num_heads,
        Some(_) => int(&spec.predictor_heads)?,
    };
    let whole = |n: &Node| number(loader, n).filter(|f| *f >= 1.0 && f.fract() == 0.0);
    let Some((frames_key, node)) = spec
        .frames
        .iter()
        .find_map(|k| root.get_dotted(k).map(|n| (k.as_str(), n)))
    else {
        let keys: Vec<String> = spec.frames.iter().map(|k| format!("`{k}`")).collect();
        return Err(format!("{} is not set", keys.join(" or ")));
    };
    let frames = match &node.kind {
        NodeKind::Seq(items) if !items.is_empty() => items
            .iter()
            .map(whole)
            .collect::<Option<Vec<f64>>>()
            .map(|v| v.into_iter().fold(0.0, f64::max) as u64),
        NodeKind::Scalar(_) => whole(node).map(|f| f as u64),
        _ => None,
    }
    .filter(|f| *f < u64::MAX / 2)
    .ok_or_else(|| format!("`{frames_key}` is not a frame count or a list of them"))?;
    let tubelet = int(&spec.tubelet)?;
    let patch = int(&spec.patch)?;
    let crop = match root.get_dotted(&spec.crop) {
        None => spec.crop_default,
        Some(_) => int(&spec.crop)?,
    };
    let grid = Grid {
        duration: frames / tubelet,
        height: crop / patch,
        width: crop / patch,
    };
    let n = grid
        .duration
        .checked_mul(grid.height)
        .and_then(|x| x.checked_mul(grid.width))
        .unwrap_or(u64::MAX);
    if n == 0 {
        return Err(format!(
            "`{frames_key}` / `{}` or `{}` / `{}` is below one token",
            spec.tubelet, spec.crop, spec.patch
        ));
    }
    // The largest published clip is 18,432 tokens (ViT-g at 384 px over 64 frames); a clip of
    // millions is a typo, and its masks would take minutes to place.
    if n > MAX_CLIP_TOKENS {
        return Err(format!(
            "a clip of {} frames / tubelet {tubelet} x ({crop} / {patch})^2 tokens is over {MAX_CLIP_TOKENS}, more than hwlint sizes",
            frames
        ));
    }
    let masks = match root.get_dotted(&spec.masks).map(|n| &n.kind) {
        Some(NodeKind::Seq(items)) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, n)| block_mask(loader, n, &format!("{}.{i}", spec.masks)))
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(format!("`{}` is not a list of masks", spec.masks)),
    };
    // The predictor sees up to a clip per mask, and the encoder up to as much.
    if n.saturating_mul(masks.len() as u64) > MAX_CLIP_TOKENS {
        return Err(format!(
            "{} masks over a clip of {n} tokens make more than {MAX_CLIP_TOKENS} tokens per sample, more than hwlint sizes",
            masks.len()
        ));
    }
    let contexts: Vec<Context> = masks.iter().map(|m| context(grid, m)).collect();
    let most: f64 = contexts.iter().map(|c| c.most).sum();
    let typical: f64 = contexts.iter().map(|c| c.typical).sum();
    let count = masks.len() as u64;
    // The predictor sees each mask's context and targets, both cut to the batch's smallest:
    // the clip less the spread between the batch's largest and smallest context, about twice
    // the typical step's shortfall (a replay: 1.49-1.66 clips over two masks on average, 1.64-
    // 1.89 at most).
    // With `full_complement` they make the whole clip on every step.
    let predictor_typical = contexts
        .iter()
        .zip(&masks)
        .map(|(c, m)| {
            if m.full_complement {
                n as f64
            } else {
                (n as f64 - 2.0 * (c.most - c.typical)).max(c.typical)
            }
        })
        .sum::<f64>()
        / count as f64;
    let tokens = Tokens {
        clip: n,
        context: (most.ceil() as u64, typical.ceil() as u64),
        predictor_least: predictor_typical.ceil() as u64,
        masks: count,
    };
    let clip = format!("{n} tokens: {frames} frames / tubelet {tubelet} x ({crop} / {patch})^2");
    let table = step_table(
        encoder,
        (depth, width, heads, spec.predictor_mlp_ratio),
        (crop, frames),
        &clip,
        tokens,
    );
    Ok(Some(InlineModel {
        table,
        key: spec.at.clone(),
        span: at.span.clone(),
        flat: false,
        // ViT blocks: pre-LayerNorm attention and a GELU MLP, the catalog's ViT recipe.
        own_blocks: false,
        configures_named: false,
    }))
}

/// The tokens of one step.
#[derive(Debug, Clone, Copy)]
struct Tokens {
    clip: u64,
    /// Over all masks: the most a step keeps, and a typical step's.
    context: (u64, u64),
    /// Per mask, a typical step's (the most is the clip).
    predictor_least: u64,
    masks: u64,
}

/// The composite the step makes: `(depth, width, heads, mlp_ratio)` of the predictor,
/// `(crop, frames)` of a clip (and how its tokens are `counted`), and the step's `tokens`.
fn step_table(
    encoder: &str,
    (depth, width, heads, mlp_ratio): (u64, u64, u64, f64),
    (crop, frames): (u64, u64),
    counted: &str,
    tokens: Tokens,
) -> toml::Table {
    let Tokens {
        clip,
        context: (context, context_least),
        predictor_least,
        masks,
    } = tokens;
    use super::described::{composite, int, part, vit_dims};
    let parts = vec![
        part(vec![
            ("name", "context encoder".into()),
            ("model", encoder.into()),
            ("tokens", int(context)),
            ("tokens_least", int(context_least)),
            ("image_size", int(crop)),
            ("frames", int(frames)),
        ]),
        part(vec![
            ("name", "EMA target encoder".into()),
            ("model", encoder.into()),
            ("frozen", true.into()),
            ("tokens", int(clip)),
            ("image_size", int(crop)),
            ("frames", int(frames)),
            // Each mask's targets gathered from its layer-normed output, held by the step
            // through backward (train.py:441 rebinds `h` to them): the tokens the mask's
            // context leaves, at most.
            ("held_tokens", int((clip * masks).saturating_sub(context))),
        ]),
        part(vec![
            ("name", "predictor".into()),
            ("model", "predictor".into()),
            ("dims", vit_dims(depth, width, heads, mlp_ratio)),
            ("count", int(masks)),
            ("tokens", int(clip)),
            ("tokens_least", int(predictor_least.min(clip))),
            ("image_size", int(0)),
        ]),
    ];
    let source = format!(
        "V-JEPA's step: {encoder} over the ~{context_least}-{context} tokens its {masks} masks leave as context (a typical step to the most), its EMA copy over the clip's {counted}, and a {depth}-block, {width}-wide predictor over {masks} x ~{}-{clip} tokens",
        predictor_least.min(clip)
    );
    composite(parts, source, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(scale: f64, blocks: u64) -> BlockMask {
        BlockMask {
            spatial_scale: (scale, scale),
            temporal_scale: (1.0, 1.0),
            aspect_ratio: (0.75, 1.5),
            num_blocks: blocks,
            max_temporal_keep: 1.0,
            max_keep: None,
            full_complement: false,
        }
    }

    fn read(yaml: &str) -> Result<Option<InlineModel>, String> {
        let dialects = crate::dialect::builtin();
        let d = dialects.iter().find(|d| d.name == "vjepa").unwrap();
        let doc = crate::syntax::parse(yaml, crate::syntax::Format::Yaml).unwrap();
        architecture(d, &doc.roots[0])
    }

    const STEP: &str = "app: vjepa\ndata:\n  crop_size: 256\n  patch_size: 16\n  tubelet_size: 2\n  dataset_fpcs: [16, 64]\nmask:\n- {aspect_ratio: [0.75, 1.5], num_blocks: 8, spatial_scale: [0.15, 0.15], temporal_scale: [1.0, 1.0]}\nmodel:\n  model_name: vit_large\n  pred_depth: 12\n  pred_embed_dim: 384\n  pred_num_heads: null\n";

    #[test]
    fn the_step_is_read_from_the_config() {
        let m = read(STEP).unwrap().unwrap();
        let a = crate::estimate::plan::inline_architecture(&m).unwrap();
        let parts: Vec<(&str, u64, u64, bool)> = a
            .parts
            .iter()
            .map(|p| {
                (
                    p.name.as_str(),
                    p.arch.num_layers,
                    p.arch.hidden_size,
                    p.frozen,
                )
            })
            .collect();
        assert_eq!(
            parts,
            [
                ("context encoder", 24, 1024, false),
                ("EMA target encoder", 24, 1024, true),
                ("predictor", 12, 384, false),
            ]
        );
        // The longest clip (64 frames): 32 x 16 x 16 tokens; the predictor takes the
        // encoder's 16 heads when `pred_num_heads` is null.
        assert_eq!(a.parts[1].tokens, Some(8192));
        assert_eq!(a.parts[2].arch.num_heads, 16);
        assert_eq!(a.parts[2].arch.intermediate_size, Some(1536));
        let context = a.parts[0].tokens.unwrap();
        assert!((3000..=3400).contains(&context), "{context}");
        assert_eq!(a.parts[1].held_tokens, Some(8192 - context));
        // A typical step's predictor sees less than the clip, unless the targets are the
        // context's complement.
        assert!(a.parts[2].tokens_least.unwrap() < 8192);
        let full = STEP.replace("num_blocks: 8, ", "num_blocks: 8, full_complement: true, ");
        let m = read(&full).unwrap().unwrap();
        let a = crate::estimate::plan::inline_architecture(&m).unwrap();
        assert_eq!(a.parts[2].tokens_least, Some(8192));
    }

    #[test]
    fn a_step_it_cannot_size_says_which_key_and_why() {
        let other = STEP.replace("app: vjepa", "app: vjepa_classifier");
        assert!(read(&other)
            .unwrap_err()
            .contains("`app` is `vjepa_classifier`"));
        let unknown = STEP.replace("vit_large", "vit_tiny");
        assert!(read(&unknown)
            .unwrap_err()
            .contains("`model.model_name` is `vit_tiny`"));
        let no_patch = STEP.replace("  patch_size: 16\n", "");
        assert!(read(&no_patch).unwrap_err().contains("`data.patch_size`"));
        // A typo of millions of frames is refused before any mask is placed.
        let huge = STEP.replace("[16, 64]", "[16, 4294967296]");
        assert!(read(&huge).unwrap_err().contains("more than hwlint sizes"));
        // One mask over a 131,072-token clip is sized; two would make 262,144 per sample.
        let large = STEP.replace("crop_size: 256", "crop_size: 1024");
        assert!(read(&large).is_ok());
        let mask = "- {aspect_ratio: [0.75, 1.5], num_blocks: 8, spatial_scale: [0.15, 0.15], temporal_scale: [1.0, 1.0]}\n";
        let two = large.replace(mask, &mask.repeat(2));
        assert!(read(&two)
            .unwrap_err()
            .contains("2 masks over a clip of 131072 tokens"));
        let inverted = STEP.replace("num_blocks: 8, ", "num_blocks: 8, inv_block: true, ");
        assert!(read(&inverted)
            .unwrap_err()
            .contains("`mask.0.inv_block` is true"));
        let no_blocks = STEP.replace("num_blocks: 8, ", "");
        assert!(read(&no_blocks)
            .unwrap_err()
            .contains("`mask.0.num_blocks`"));
    }

    #[test]
    fn coverage_counts_the_starts_that_cover_a_cell() {
        // A 3-wide block on 5 cells starts at 0, 1 or 2: the middle cell is always covered.
        assert_eq!(
            coverage(5, 3),
            vec![1.0 / 3.0, 2.0 / 3.0, 1.0, 2.0 / 3.0, 1.0 / 3.0]
        );
        assert_eq!(coverage(4, 4), vec![1.0; 4]);
    }

    #[test]
    fn the_expected_context_matches_a_replay_of_the_mask_collator() {
        // A pure-Python replay of `_MaskGenerator` (300 steps, seed 0) kept, per sample, 37.9%
        // of a 16 x 16 grid under 8 blocks of 15% and 19.0% under 2 blocks of 70%; on 24 x 24,
        // 39.1% and 19.6%. The cells near the edges are covered less often than (1 - 0.15)^8
        // = 27% assumes.
        for (side, eight, two) in [(16, 0.379, 0.190), (24, 0.391, 0.196)] {
            let g = Grid {
                duration: 1,
                height: side,
                width: side,
            };
            let n = g.tokens() as f64;
            let a = context(g, &mask(0.15, 8)).most / n;
            let b = context(g, &mask(0.7, 2)).most / n;
            // The estimate takes the aspect ratio that keeps the most: at or a little above
            // the replay's average over ratios.
            assert!(a >= eight - 0.01 && a <= eight + 0.04, "{side}: {a}");
            assert!(b >= two - 0.01 && b <= two + 0.04, "{side}: {b}");
        }
    }

    #[test]
    fn the_context_spans_only_the_frames_it_may_keep() {
        let g = Grid {
            duration: 8,
            height: 16,
            width: 16,
        };
        let all = context(g, &mask(0.15, 8)).most;
        let half = context(
            g,
            &BlockMask {
                max_temporal_keep: 0.5,
                ..mask(0.15, 8)
            },
        )
        .most;
        assert!((half - all / 2.0).abs() < 1e-6, "{half} vs {all}");
        let capped = context(
            g,
            &BlockMask {
                max_keep: Some(100),
                ..mask(0.15, 8)
            },
        )
        .most;
        assert_eq!(capped, 100.0);
    }
}
