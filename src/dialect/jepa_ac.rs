//! V-JEPA 2's action-conditioned step (`[jepa.ac]`, `app: vjepa_droid`) as a composite model:
//! the frozen encoder over every frame, the context encoder the app builds and never runs, and
//! the predictor over its teacher-forced frames and each rollout pass.
//!
//! What each part sees follows facebookresearch/vjepa2 at c2963a47, app/vjepa_droid/train.py:
//! - `forward_target` runs the target encoder under `torch.no_grad()` on every frame of the
//!   clip, each repeated into a 2-frame tubelet, and keeps its layer-normed output `h` for the
//!   predictor's input and the loss (:408-415, 439-449);
//! - the context `encoder` is built, wrapped in DDP and given to the optimizer (:192, 274;
//!   app/vjepa_droid/utils.py:215-228) but `train_step` never calls it: it keeps its fp32
//!   weights and nothing else (its gradients stay none, so AdamW keeps no state for it);
//! - the predictor runs once over the first T-1 frames (teacher forcing, :425-427) and then
//!   once per rollout step `n` of `auto_steps - 1` over n + 1 frames (:429-435), every pass
//!   kept for backward; each frame is its patch tokens plus the action and state tokens
//!   (src/models/ac_predictor.py:145-153).
//!
//! Not counted: DDP's gradient buckets (the three modules are wrapped, :274-276), and the
//! attention mask the predictor builds on the host (src/models/utils/modules.py:12-23).

use serde::Deserialize;

use super::jepa::JepaSpec;
use super::resolve::{lookup_value, unmet};
use super::setup::InlineModel;
use super::spec::Condition;
use crate::syntax::{Loader, Node, NodeKind, Value};

/// The most frames and rollout steps hwlint sizes: the published configs use 8 and 2.
const MAX_FRAMES: u64 = 256;

/// Where the droid app's config keeps the inputs of its step; the encoder, predictor and clip
/// keys are the pretraining step's ([`JepaSpec`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcSpec {
    /// The step is the action-conditioned one when these hold (`app: vjepa_droid`).
    pub when: Vec<Condition>,
    /// Predictor passes beyond teacher forcing, plus one (`loss.auto_steps`), and its default.
    pub auto_steps: String,
    pub auto_steps_default: u64,
    /// Tokens per frame besides the patches (action and state), and the switch that adds one
    /// (extrinsics).
    pub cond_tokens: u64,
    pub extrinsics: String,
    /// The crop when `data.crop_size` is absent.
    pub crop_default: u64,
}

impl AcSpec {
    pub fn holds(&self, loader: Loader, root: &Node) -> bool {
        !self.when.iter().any(|c| unmet(loader, root, c))
    }
}

/// The action-conditioned step the file describes, read at `at` (`model`).
pub fn architecture(
    spec: &JepaSpec,
    ac: &AcSpec,
    loader: Loader,
    root: &Node,
    at: &Node,
) -> Result<Option<InlineModel>, String> {
    let int = |key: &str| -> Result<Option<u64>, String> {
        match root.get_dotted(key) {
            None => Ok(None),
            Some(_) => lookup_value(loader, root, key)
                .and_then(|v| v.as_f64())
                .filter(|n| *n >= 0.0 && n.fract() == 0.0 && *n < 1e9)
                .map(|n| Some(n as u64))
                .ok_or_else(|| format!("`{key}` is not set to a whole number")),
        }
    };
    // The app reads these with no default (app/vjepa_droid/train.py:90, 92, 111, 114): a file
    // without them does not build its model.
    let required = |key: &str| -> Result<u64, String> {
        match int(key)? {
            None => Err(format!(
                "`{key}` is not set, and the droid app has no default for it"
            )),
            Some(0) => Err(format!("`{key}` is 0")),
            Some(n) => Ok(n),
        }
    };
    let (encoder, enc) = spec.encoder_model(loader, root)?;
    let depth = required(&spec.predictor_depth)?;
    let width = required(&spec.predictor_width)?;
    let heads = int(&spec.predictor_heads)?.unwrap_or(enc.num_heads);
    // The clip's frames: the longest of `data.dataset_fpcs` (train.py:105-106).
    let (frames_key, node) = spec
        .frames
        .iter()
        .find_map(|k| root.get_dotted(k).map(|n| (k.as_str(), n)))
        .ok_or_else(|| format!("`{}` is not set", spec.frames.join("` or `")))?;
    let whole = |n: &Node| {
        n.as_scalar()
            .and_then(|s| s.value(loader).as_f64())
            .filter(|f| *f >= 1.0 && f.fract() == 0.0 && *f <= MAX_FRAMES as f64)
            .map(|f| f as u64)
    };
    let frames = match &node.kind {
        NodeKind::Seq(items) if !items.is_empty() => items
            .iter()
            .map(whole)
            .collect::<Option<Vec<u64>>>()
            .and_then(|v| v.into_iter().max()),
        NodeKind::Scalar(_) => whole(node),
        _ => None,
    }
    .ok_or_else(|| {
        format!("`{frames_key}` is not a frame count of 1-{MAX_FRAMES} or a list of them")
    })?;
    let tubelet = required(&spec.tubelet)?;
    let patch = required(&spec.patch)?;
    let crop = int(&spec.crop)?.unwrap_or(ac.crop_default);
    let per_frame_patches = (crop / patch).pow(2);
    if per_frame_patches == 0 || per_frame_patches > 1 << 14 {
        return Err(format!(
            "`{}` / `{}` gives {per_frame_patches} patches a frame, outside what hwlint sizes",
            spec.crop, spec.patch
        ));
    }
    // `auto_steps = min(loss.auto_steps, max_num_frames)` (train.py:132).
    let auto_steps = int(&ac.auto_steps)?
        .unwrap_or(ac.auto_steps_default)
        .clamp(1, frames);
    let extrinsics = matches!(
        lookup_value(loader, root, &ac.extrinsics),
        Some(Value::Bool(true))
    );
    let per_frame = per_frame_patches + ac.cond_tokens + u64::from(extrinsics);
    // Teacher forcing over frames 0..T-1, then rollout pass n over frames 0..n.
    let forced = (frames - 1) * per_frame;
    let rollout: u64 = (1..auto_steps).map(|n| (n + 1) * per_frame).sum();
    let tokens = forced + rollout;
    if tokens == 0 {
        return Err(format!(
            "`{frames_key}` is one frame: the predictor has no frame to predict"
        ));
    }
    let table = step_table(
        encoder,
        (depth, width, heads, spec.predictor_mlp_ratio),
        (crop, frames, tubelet, per_frame_patches),
        (forced, rollout, auto_steps),
    );
    Ok(Some(InlineModel {
        table,
        key: spec.at.clone(),
        span: at.span.clone(),
        flat: false,
        own_blocks: false,
        configures_named: false,
    }))
}

fn step_table(
    encoder: &str,
    (depth, width, heads, mlp_ratio): (u64, u64, u64, f64),
    (crop, frames, tubelet, patches): (u64, u64, u64, u64),
    (forced, rollout, auto_steps): (u64, u64, u64),
) -> toml::Table {
    use super::described::{composite, int, part, vit_dims};
    let parts = vec![
        // Every frame repeated into one tubelet: `frames` clips of `patches` tokens a sample.
        part(vec![
            ("name", "target encoder".into()),
            ("model", encoder.into()),
            ("frozen", true.into()),
            ("count", int(frames)),
            ("tokens", int(patches)),
            ("image_size", int(crop)),
            ("frames", int(tubelet)),
            ("held_tokens", int(frames * patches)),
        ]),
        part(vec![
            ("name", "context encoder (never run)".into()),
            ("model", encoder.into()),
            ("frozen", true.into()),
            ("idle", true.into()),
        ]),
        part(vec![
            ("name", "predictor".into()),
            ("model", "predictor".into()),
            ("dims", vit_dims(depth, width, heads, mlp_ratio)),
            ("tokens", int(forced + rollout)),
            ("image_size", int(0)),
        ]),
    ];
    let source = format!(
        "V-JEPA 2-AC's step: {encoder} frozen over {frames} frames of {patches} tokens, its unused context copy, and a {depth}-block, {width}-wide predictor over {forced} teacher-forced tokens and {rollout} more in {} rollout pass(es) (`auto_steps` {auto_steps})",
        auto_steps - 1
    );
    composite(parts, source, None)
}

#[cfg(test)]
mod tests {
    fn read(yaml: &str) -> crate::estimate::models::Architecture {
        let dialects = crate::dialect::builtin();
        let d = dialects.iter().find(|d| d.name == "vjepa").unwrap();
        let doc = crate::syntax::parse(yaml, crate::syntax::Format::Yaml).unwrap();
        let m = super::super::jepa::architecture(d, &doc.roots[0])
            .unwrap()
            .unwrap();
        crate::estimate::plan::inline_architecture(&m).unwrap()
    }

    fn step(auto_steps: u64, extrinsics: bool) -> String {
        format!(
            "app: vjepa_droid\ndata:\n  batch_size: 8\n  crop_size: 256\n  patch_size: 16\n  tubelet_size: 2\n  dataset_fpcs: [8]\nloss:\n  auto_steps: {auto_steps}\nmodel:\n  model_name: vit_giant_xformers\n  pred_depth: 24\n  pred_embed_dim: 1024\n  pred_num_heads: 16\n  use_extrinsics: {extrinsics}\n"
        )
    }

    #[test]
    fn the_predictor_sees_the_teacher_forced_frames_and_every_rollout_pass() {
        // 8 frames of 256 patches + action and state: teacher forcing over 7 frames (1806
        // tokens), then one rollout pass over 2 frames (516).
        let a = read(&step(2, false));
        let parts: Vec<(&str, bool, bool, u64, Option<u64>)> = a
            .parts
            .iter()
            .map(|p| (p.name.as_str(), p.frozen, p.idle, p.count, p.tokens))
            .collect();
        assert_eq!(
            parts,
            [
                ("target encoder", true, false, 8, Some(256)),
                ("context encoder (never run)", true, true, 1, None),
                ("predictor", false, false, 1, Some(7 * 258 + 2 * 258)),
            ]
        );
        assert_eq!(
            (a.parts[2].arch.num_layers, a.parts[2].arch.hidden_size),
            (24, 1024)
        );
        // Each rollout step n runs over n + 1 frames; `auto_steps` is capped at the clip's 8.
        let tokens = |n, e| read(&step(n, e)).parts[2].tokens.unwrap();
        assert_eq!(tokens(7, false), (7 + 2 + 3 + 4 + 5 + 6 + 7) * 258);
        assert_eq!(tokens(50, false), (7 + (2..=8).sum::<u64>()) * 258);
        // Extrinsics add a token a frame.
        assert_eq!(tokens(2, true), 9 * 259);
    }
}
