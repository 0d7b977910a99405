//! X-VLA's step (LeRobot's `xvla`), sized from its config: Florence-2's DaViT vision tower over
//! each camera and its BART encoder over the first camera's tokens and the prompt (the
//! decoder is deleted), then the soft-prompted transformer over the action chunk, every view's
//! tokens, the prompt and the soft prompts. Cited at lerobot@7427f318, paths under
//! src/lerobot/policies/xvla/.
//!
//! Florence-2's dimensions are the checkpoint's (`florence_config`, configuration_xvla.py:102,
//! required at :179-182): read from the file when it holds them, else Florence-2-large's,
//! which the X-VLA checkpoints use, and the estimate says which.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::super::described::{composite, int, opaque, part};
use super::{unread_cameras, Cameras, Images, Key, PolicySpec, Reader};
use crate::estimate::models::Architecture;

/// The DaViT's total stride, and its first convolution's (kernel 7, stride 4, padding 3; then
/// kernel 3, stride 2, padding 1 per stage): a side of `n` pixels is `ceil(n / 4)` cells, then
/// halved, rounding up.
const FIRST_STRIDE: u64 = 4;
const KERNELS: [u64; 4] = [7, 3, 3, 3];
/// The largest count or width hwlint reads from X-VLA's keys: past it the products that size
/// the parts would overflow, and no model is that wide.
const MAX_DIM: u64 = 1 << 20;

/// Florence-2's dimensions, each read from `florence_config` under the policy (the native
/// name, then the remote-code one) or Florence-2-large's.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Florence {
    /// Keys under the policy, each with Florence-2-large's value.
    pub embed: Vec<Key>,
    pub depths: Key,
    pub heads: Key,
    pub projection: Key,
    /// The learned 2-D position table's rows (native, then remote-code names).
    pub positions: Vec<Key>,
    pub d_model: Key,
    pub layers: Key,
    pub text_heads: Key,
    pub ffn: Key,
    pub vocab: Key,
    pub text_positions: Key,
    /// The mapping whose presence means the file gives the checkpoint's dimensions.
    pub given_by: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XvlaSpec {
    pub chunk: Key,
    pub language: Key,
    pub resize: Key,
    pub empty_cameras: Key,
    pub views: Key,
    pub hidden: Key,
    pub depth: Key,
    pub heads: Key,
    pub mlp_ratio: Key,
    pub domains: Key,
    pub soft_prompts: Key,
    pub dim_time: Key,
    pub max_len_seq: Key,
    pub hetero: Key,
    pub action_mode: Key,
    /// The action width each mode's action space gives the model; `auto` takes `max_action_dim`.
    pub action_dims: BTreeMap<String, u64>,
    pub max_action_dim: Key,
    pub use_proprio: Key,
    pub max_state_dim: Key,
    pub freeze_vision: Key,
    pub freeze_language: Key,
    pub train_transformer: Key,
    pub train_soft_prompts: Key,
    pub florence: Florence,
    pub source: String,
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// The DaViT's four token grids over an `h x w` image.
fn grids(h: u64, w: u64) -> [(u64, u64); 4] {
    let mut g = [(ceil_div(h, FIRST_STRIDE), ceil_div(w, FIRST_STRIDE)); 4];
    for i in 1..4 {
        g[i] = (ceil_div(g[i - 1].0, 2), ceil_div(g[i - 1].1, 2));
    }
    g
}

/// Tokens a view gives: the spatial average and one per cell of the last grid (Florence-2's
/// projector, `spatial_avg_pool` + `temporal_avg_pool`).
fn view_tokens(h: u64, w: u64) -> u64 {
    let (gh, gw) = grids(h, w)[3];
    1 + gh * gw
}

fn list(r: &Reader, k: &Key) -> Result<Vec<u64>, String> {
    match r.value(k) {
        Some(toml::Value::Array(v)) if v.len() == 4 => v
            .iter()
            .map(|x| match x {
                toml::Value::Integer(n) if (1..1 << 17).contains(n) => Ok(*n as u64),
                _ => Err(()),
            })
            .collect::<Result<Vec<_>, ()>>()
            .map_err(|()| format!("`{}` is not four widths", r.full(&k.key))),
        _ => Err(format!("`{}` is not four numbers", r.full(&k.key))),
    }
}

/// The first of `keys` the file sets, else the first (its default): Florence-2's native name
/// or the remote-code one. The spec lists at least one.
fn first_set<'k>(r: &Reader, keys: &'k [Key], what: &str) -> Result<&'k Key, String> {
    keys.iter()
        .find(|k| r.root.get_dotted(&r.full(&k.key)).is_some())
        .or(keys.first())
        .ok_or_else(|| format!("no key for {what}"))
}

/// A count or width of at most [`MAX_DIM`].
fn dim(r: &Reader, k: &Key) -> Result<u64, String> {
    let n = r.int(k)?;
    if n > MAX_DIM {
        return Err(format!(
            "`{}` is {n}, past the {MAX_DIM} hwlint sizes",
            r.full(&k.key)
        ));
    }
    Ok(n)
}

/// A width or depth of at least 1 and at most [`MAX_DIM`].
fn positive(r: &Reader, k: &Key) -> Result<u64, String> {
    match dim(r, k)? {
        0 => Err(format!("`{}` is 0", r.full(&k.key))),
        n => Ok(n),
    }
}

/// An inline architecture's parameter count, as the estimator counts it.
fn counted(dims: &toml::Table) -> Result<u64, String> {
    let a: Architecture = toml::Value::Table(dims.clone())
        .try_into()
        .map_err(|e| format!("an X-VLA part hwlint builds does not read: {e}"))?;
    Ok(crate::estimate::params::count(&a).total)
}

fn table(entries: Vec<(&str, toml::Value)>) -> toml::Table {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// X-VLA's training step (`XVLAModel.forward`, modeling_xvla.py:198-233): each present camera
/// through the DaViT and projector (:171-178), the BART encoder over the first view's tokens
/// and the prompt padded to `tokenizer_max_length` (:184-193), the other views straight to the
/// transformer (:195), which reads the chunk, every view, the encoder's output and the soft
/// prompts (soft_transformer.py:377-412). Freezing only clears `requires_grad` (:128-159); the
/// projector is never frozen, so a frozen language encoder or transformer still carries its
/// gradient.
pub(super) fn xvla(
    r: &Reader,
    spec: &PolicySpec,
    x: &XvlaSpec,
    cams: &Cameras,
) -> Result<toml::Table, String> {
    let f = &x.florence;
    let given = r.root.get_dotted(&r.full(&f.given_by)).is_some();
    let embed = list(r, first_set(r, &f.embed, "the vision tower's widths")?)?;
    let depths = list(r, &f.depths)?;
    let heads = list(r, &f.heads)?;
    let projection = positive(r, &f.projection)?;
    let positions = dim(r, first_set(r, &f.positions, "the position table")?)?;
    let (d, layers, text_heads, ffn) = (
        positive(r, &f.d_model)?,
        positive(r, &f.layers)?,
        positive(r, &f.text_heads)?,
        positive(r, &f.ffn)?,
    );
    let (vocab, text_positions) = (dim(r, &f.vocab)?, dim(r, &f.text_positions)?);

    let imgs = Images::read(spec, cams, &[]);
    let resize = r.shape(&x.resize)?;
    let seen = |img: (u64, u64)| resize.unwrap_or(img);
    let empty = dim(r, &x.empty_cameras)?;
    let (listed_most, least) = (imgs.most.len() as u64, imgs.least.len() as u64);
    if listed_most == 0 {
        return Err(format!(
            "`{}` lists no camera, and X-VLA reads at least one (configuration_xvla.py:208-209)",
            r.full(&spec.features)
        ));
    }
    let listed_views = match r.value(&x.views) {
        Some(toml::Value::Integer(n)) if n >= 0 => dim(r, &x.views)?,
        _ => 0,
    };
    // num_image_views = max(the key, cameras + empty ones) (configuration_xvla.py:212-215).
    let views = |cams: u64| listed_views.max(cams + empty);
    // The views are stacked, so they share one shape: the first camera's (modeling_xvla.py:
    // 328-339).
    let first = |imgs: &[(u64, u64)]| imgs.first().copied().map(seen).unwrap_or((1, 1));
    let (most_img, least_img) = (first(&imgs.most), first(&imgs.least));
    let t_most = view_tokens(most_img.0, most_img.1);
    let t_least = view_tokens(least_img.0, least_img.1);

    let chunk = dim(r, &x.chunk)?;
    let language = dim(r, &x.language)?;
    let soft = dim(r, &x.soft_prompts)?;
    let max_len = positive(r, &x.max_len_seq)?;
    let hidden = positive(r, &x.hidden)?;
    let depth = positive(r, &x.depth)?;
    let ratio = match r.value(&x.mlp_ratio) {
        Some(toml::Value::Float(v)) if v > 0.0 && v < 64.0 => v,
        Some(toml::Value::Integer(n)) if n > 0 && n < 64 => n as f64,
        _ => return Err(format!("`{}` is not a ratio", r.full(&x.mlp_ratio.key))),
    };
    // The sequence before the soft prompts may not pass `max_len_seq`
    // (soft_transformer.py:398-400): a listed camera set past it does not run.
    let before = |cams: u64, t: u64| chunk + views(cams) * t + language;
    // Cameras the file does not list: at the most, as many of the largest as the sequence
    // takes, since more do not run.
    let mut most = listed_most;
    let mut capped = false;
    if imgs.unread {
        while most > least.max(1) && before(most, t_most) > max_len {
            most -= 1;
            capped = true;
        }
    }
    if before(most, t_most) > max_len {
        return Err(format!(
            "{} tokens (the {chunk}-step chunk, {} view(s) x {t_most} at {}x{}, the {language}-token prompt) pass `{}` {max_len}, which X-VLA's transformer refuses (soft_transformer.py:398-400)",
            before(most, t_most),
            views(most),
            most_img.0,
            most_img.1,
            r.full(&x.max_len_seq.key)
        ));
    }
    let seq_most = before(most, t_most) + soft;
    let seq_least = before(least, t_least) + soft;

    let freeze_vision = r.bool(&x.freeze_vision)?;
    let freeze_language = r.bool(&x.freeze_language)?;
    let train_transformer = r.bool(&x.train_transformer)?;
    let train_soft = r.bool(&x.train_soft_prompts)?;

    let mut parts = Vec::new();
    // The DaViT's stages as ViT blocks over their grids: a spatial (windowed) and a channel
    // attention block each, so two ViT layers a DaViT block.
    let (g_most, g_least) = (
        grids(most_img.0, most_img.1),
        grids(least_img.0, least_img.1),
    );
    let mut stage_params = 0;
    for i in 0..4 {
        let dims = table(vec![
            ("family", "vit".into()),
            ("hidden_size", int(embed[i])),
            ("num_layers", int(2 * depths[i])),
            ("num_heads", int(heads[i])),
            ("intermediate_size", int(4 * embed[i])),
            ("image_size", int(1)),
            ("patch_size", int(1)),
            ("num_labels", int(0)),
        ]);
        stage_params += counted(&dims)?;
        let mut e = vec![
            ("name", format!("vision stage {}", i + 1).into()),
            ("dims", toml::Value::Table(dims)),
            ("count", int(most)),
            ("tokens", int(g_most[i].0 * g_most[i].1)),
        ];
        if imgs.unread {
            if least < most {
                e.push(("count_least", int(least)));
            }
            e.push(("tokens_least", int(g_least[i].0 * g_least[i].1)));
        }
        if freeze_vision {
            e.push(("frozen", true.into()));
        }
        parts.push(part(e));
    }
    // The DaViT's weights outside its blocks and past the ViT block: the stages' convolutional
    // embeddings with their LayerNorms, and per block its two depthwise 3x3 convolutions'
    // and its attention's extra 20 x width; the position table of the projector.
    let mut davit = 0;
    let mut prev = 3;
    for i in 0..4 {
        let c = embed[i];
        let norm = if i == 0 { 2 * c } else { 2 * prev };
        davit += prev * c * KERNELS[i] * KERNELS[i] + c + norm;
        davit += depths[i] * 2 * (12 * c * c + 33 * c);
        prev = c;
    }
    let rest = davit.saturating_sub(stage_params) + positions * embed[3];
    let mut e = vec![
        ("name", "vision rest".into()),
        // The pixels, cast to the model's dtype (modeling_xvla.py:210).
        ("dims", opaque(rest, 0, 3 * most_img.0 * most_img.1, 0)),
        ("count", int(most)),
    ];
    if least < most {
        e.push(("count_least", int(least)));
    }
    if freeze_vision {
        e.push(("frozen", true.into()));
    }
    parts.push(part(e));
    // The projector (Linear without bias, LayerNorm): never frozen.
    parts.push(part(vec![
        ("name", "projector".into()),
        (
            "dims",
            opaque(embed[3] * projection + 2 * projection, 0, 0, 0),
        ),
    ]));
    // BART's encoder as BERT's post-LN block (BERT's pooler, d x d + d, is one more matrix than
    // BART has); its learned positions are offset by 2 (max_position_embeddings + 2 rows).
    let bart = table(vec![
        ("family", "bert".into()),
        ("hidden_size", int(d)),
        ("num_layers", int(layers)),
        ("num_heads", int(text_heads)),
        ("intermediate_size", int(ffn)),
        ("vocab_size", int(vocab)),
        ("max_position_embeddings", int(text_positions + 2)),
        ("type_vocab_size", int(0)),
    ]);
    let mut e = vec![
        ("name", "language encoder".into()),
        ("dims", toml::Value::Table(bart)),
        ("tokens", int(t_most + language)),
    ];
    if imgs.unread {
        e.push(("tokens_least", int(t_least + language)));
    }
    if freeze_language {
        e.push(("passes_gradients", true.into()));
    }
    parts.push(part(e));
    // The soft-prompted transformer: GPT-2's pre-LN block with biases and tanh-GELU, its
    // `pos_emb` the position table, its final LayerNorm GPT-2's (soft_transformer.py:292-347).
    let gpt = table(vec![
        ("family", "gpt2".into()),
        ("hidden_size", int(hidden)),
        ("num_layers", int(depth)),
        ("num_heads", int(positive(r, &x.heads)?)),
        (
            "intermediate_size",
            int((hidden as f64 * ratio).round() as u64),
        ),
        ("vocab_size", int(0)),
        ("max_position_embeddings", int(max_len)),
    ]);
    let mut e = vec![
        ("name", "action transformer".into()),
        ("dims", toml::Value::Table(gpt)),
        ("tokens", int(seq_most)),
    ];
    if seq_least < seq_most {
        e.push(("tokens_least", int(seq_least)));
    }
    if !train_transformer {
        e.push(("passes_gradients", true.into()));
    }
    parts.push(part(e));
    // Its input and output layers (soft_transformer.py:322-341): the two projections into it
    // (per domain with `use_hetero_proj`), the action encoder over [action, proprio, time] and
    // the decoder, per domain; each sample's domain's weights are gathered and kept.
    let domains = dim(r, &x.domains)?;
    let mode = r.string(&x.action_mode)?;
    let action = match x.action_dims.get(&mode) {
        Some(n) => *n,
        None if mode == "auto" => dim(r, &x.max_action_dim)?,
        None => {
            let mut known: Vec<&str> = x.action_dims.keys().map(String::as_str).collect();
            known.push("auto");
            return Err(format!(
                "`{}` is `{mode}`, and hwlint sizes only {}",
                r.full(&x.action_mode.key),
                known.join(", ")
            ));
        }
    };
    let proprio = if r.bool(&x.use_proprio)? {
        dim(r, &x.max_state_dim)?
    } else {
        0
    };
    let time = dim(r, &x.dim_time)?;
    let hetero = r.bool(&x.hetero)?;
    let encoder_in = action + proprio + time;
    let per_domain = |i: u64, o: u64| domains * (i * o + o);
    let projections = if hetero {
        2 * per_domain(projection, hidden)
    } else {
        2 * (projection * hidden + hidden)
    };
    let io = projections + per_domain(encoder_in, hidden) + per_domain(hidden, action);
    let gathered =
        encoder_in * hidden + hidden * action + if hetero { 2 * projection * hidden } else { 0 };
    let mut e = vec![
        ("name", "action input and output".into()),
        ("dims", opaque(io, gathered, 0, 0)),
    ];
    if !train_transformer {
        e.push(("frozen", true.into()));
    }
    parts.push(part(e));
    if soft > 0 {
        let mut e = vec![
            ("name", "soft prompts".into()),
            ("dims", opaque(domains * soft * hidden, 0, 0, 0)),
        ];
        if !train_soft {
            e.push(("frozen", true.into()));
        }
        parts.push(part(e));
    }

    let mut frozen = Vec::new();
    for (on, what, k) in [
        (freeze_vision, "the vision tower", &x.freeze_vision),
        (
            freeze_language,
            "the language encoder (its gradient still flows to the projector)",
            &x.freeze_language,
        ),
    ] {
        if on {
            frozen.push(format!("{what} (`{}`)", r.full(&k.key)));
        }
    }
    for (on, what, k) in [
        (
            train_transformer,
            "the action transformer",
            &x.train_transformer,
        ),
        (train_soft, "the soft prompts", &x.train_soft_prompts),
    ] {
        if !on {
            frozen.push(format!("{what} (`{}` false)", r.full(&k.key)));
        }
    }
    let cams_text = match imgs.most.first() {
        _ if imgs.unread && least < most => format!("{least}-{most} cameras (not listed)"),
        _ if imgs.unread => format!("{most} camera(s) (not listed)"),
        Some((h, w)) => format!("{most} camera(s) at {h}x{w}"),
        None => String::new(),
    };
    let mut source = format!(
        "{}: Florence-2's DaViT (its stages counted as ViT blocks over their grids) over {cams_text}{}, {} tokens a view; its BART encoder over the first view and the {language}-token prompt; the action transformer over {} tokens (the {chunk}-step chunk, {} views, the prompt, {soft} soft prompts); Florence-2's dimensions {}",
        x.source,
        match resize {
            Some((h, w)) => format!(", resized to {h}x{w}"),
            None => String::new(),
        },
        if imgs.unread {
            format!("{t_least}-{t_most}")
        } else {
            t_most.to_string()
        },
        if seq_least < seq_most {
            format!("{seq_least}-{seq_most}")
        } else {
            seq_most.to_string()
        },
        if views(least) < views(most) {
            format!("{}-{}", views(least), views(most))
        } else {
            views(most).to_string()
        },
        if given {
            format!("from `{}`", r.full(&f.given_by))
        } else {
            format!(
                "Florence-2-large's: the file gives no `{}`, which the checkpoint holds",
                r.full(&f.given_by)
            )
        }
    );
    if capped {
        source.push_str(&format!(
            "; at the most {most} camera(s) of {}x{}, as more pass `{}` {max_len}, which the model refuses",
            most_img.0,
            most_img.1,
            r.full(&x.max_len_seq.key)
        ));
    }
    if !frozen.is_empty() {
        source.push_str(&format!("; frozen: {}", frozen.join(", ")));
    }
    let least_when = imgs.unread.then(|| unread_cameras(r, spec, true));
    Ok(composite(parts, source, least_when))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_the_average_and_the_last_grid() {
        // 224 -> 56 -> 28 -> 14 -> 7: 50 tokens; 480x640 -> 15 x 20 + 1.
        assert_eq!(grids(224, 224)[0], (56, 56));
        assert_eq!(view_tokens(224, 224), 50);
        assert_eq!(view_tokens(480, 640), 301);
        assert_eq!(view_tokens(256, 256), 65);
    }
}
