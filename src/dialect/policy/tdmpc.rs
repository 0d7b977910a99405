//! TD-MPC's step (LeRobot's `tdmpc`), sized from its config: the task-oriented latent dynamics
//! model (TOLD) of `policies/tdmpc/modeling_tdmpc.py` (lerobot@7427f318; the Hydra era's
//! `lerobot/common/policies/tdmpc/` at lerobot@1ee1acf8 builds the same layers), and its frozen
//! EMA copy, the target model (:81-83).
//!
//! The networks are a few million parameters of small convolutions and 512-wide MLPs, so the
//! step is counted here, layer by layer, as opaque parts carrying their parameters and the
//! elements each sample keeps for backward, rather than as a family of the estimator.

use serde::Deserialize;

use super::super::described::{composite, int, opaque, part};
use super::{to_toml, Cameras, FeatureStyle, Images, Key, PolicySpec, Reader};
use crate::syntax::{Node, NodeKind, Value};

/// The image encoder's convolutions (:700-725): kernel and stride, no padding.
const CONVS: [u64; 4] = [7, 5, 3, 3];
const STRIDE: u64 = 2;
/// Channels of the image the first convolution reads: the camera reader keeps height and
/// width only, and LeRobot's cameras are RGB.
const CHANNELS: u64 = 3;
/// The widest vector hwlint sizes (a state, an environment state or an action).
const MAX_DIM: u64 = 1 << 16;

/// TD-MPC's keys under the policy, each with the framework's default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TdmpcSpec {
    /// Under the policy: the mapping of its output features (the action's shape).
    pub outputs: String,
    /// Frames the latent is rolled out over (the step reads `horizon + 1` observations).
    pub horizon: Key,
    pub image_hidden: Key,
    pub state_hidden: Key,
    pub latent: Key,
    pub q_ensemble: Key,
    pub mlp: Key,
    /// The random-shift augmentation's ratio: above zero, a shifted copy of every frame.
    pub shift: Key,
    /// State and action widths counted when the file lists no features (they come from the
    /// dataset); each is a few thousand parameters, so the bound is the count's, not memory's.
    pub state_unread: u64,
    pub action_unread: u64,
    pub source: String,
}

/// A vector feature: the file lists features and this one (its width), lists them without it,
/// or lists none.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Vector {
    Width(u64),
    Absent,
    Unread,
}

/// The width of the vector feature named `name` (shapes style) or typed `kind` (typed style,
/// named `name` unless `any_name`: LeRobot's `env_state_feature` takes any ENV feature,
/// configs/policies.py:133-163).
fn vector(
    r: &Reader,
    map_key: &str,
    style: FeatureStyle,
    (name, kind, any_name): (&str, &str, bool),
) -> Result<Vector, String> {
    let key = r.full(map_key);
    let Some(NodeKind::Map(map)) = r.root.get_dotted(&key).map(|n| &n.kind) else {
        return Ok(Vector::Unread);
    };
    if map.entries.is_empty() {
        return Ok(Vector::Unread);
    }
    let found = map.entries.iter().find(|e| match style {
        FeatureStyle::Shapes => e.key == name,
        FeatureStyle::Typed => {
            (any_name || e.key == name)
                && e.value
                    .get_dotted("type")
                    .and_then(|t| t.as_scalar())
                    .is_some_and(|s| s.value(r.loader) == Value::Str(kind.into()))
        }
    });
    let Some(entry) = found else {
        return Ok(Vector::Absent);
    };
    let shape: Option<&Node> = match style {
        FeatureStyle::Shapes => Some(&entry.value),
        FeatureStyle::Typed => entry.value.get_dotted("shape"),
    };
    let width = match shape.map(|n| &n.kind) {
        Some(NodeKind::Seq(items)) if items.len() == 1 => match to_toml(r.loader, &items[0]) {
            Some(toml::Value::Integer(n)) if (1..=MAX_DIM as i64).contains(&n) => Some(n as u64),
            _ => None,
        },
        _ => None,
    };
    width.map(Vector::Width).ok_or_else(|| {
        format!(
            "the feature `{key}.{}` has no [width] shape of up to {MAX_DIM}",
            entry.key
        )
    })
}

fn linear(i: u64, o: u64) -> u64 {
    i * o + o
}

fn layer_norm(n: u64) -> u64 {
    2 * n
}

/// A convolution's output side (no padding).
fn conv_out(side: u64, k: u64) -> Option<u64> {
    side.checked_sub(k).map(|d| d / STRIDE + 1)
}

/// The image encoder over one `h x w` frame (:700-725): its parameters, the feature maps a
/// trained pass keeps (each ReLU's output, the next convolution's input; the LayerNorm's input
/// and the Sigmoid's output over the latent) and the first map's elements (the largest a
/// no-grad pass allocates, convolution output and ReLU output).
struct ImageEncoder {
    params: u64,
    maps: u64,
    first_map: u64,
}

fn image_encoder(h: u64, w: u64, hidden: u64, latent: u64) -> Option<ImageEncoder> {
    let (mut sh, mut sw, mut ch) = (h, w, CHANNELS);
    let (mut params, mut maps, mut first_map) = (0, 0, 0);
    for (i, k) in CONVS.into_iter().enumerate() {
        params += ch * hidden * k * k + hidden;
        (sh, sw, ch) = (conv_out(sh, k)?, conv_out(sw, k)?, hidden);
        maps += hidden * sh * sw;
        if i == 0 {
            first_map = hidden * sh * sw;
        }
    }
    params += linear(hidden * sh * sw, latent) + layer_norm(latent);
    Some(ImageEncoder {
        params,
        maps: maps + 2 * latent,
        first_map,
    })
}

/// TD-MPC's training step (`TDMPCPolicy.forward`, modeling_tdmpc.py:310-510): the current
/// frame is encoded with gradients; the next `horizon` frames are encoded twice without (the
/// target model's consistency targets and the model's TD targets, :365-374); the latent is
/// rolled out `horizon` steps through the dynamics and reward MLPs (:356-357); the Q ensemble
/// and V read the rollout (:360-361) and pi its detached copy (:464).
pub(super) fn tdmpc(
    r: &Reader,
    spec: &PolicySpec,
    t: &TdmpcSpec,
    cams: &Cameras,
) -> Result<toml::Table, String> {
    let horizon = r.int(&t.horizon)?;
    if horizon == 0 || horizon > 1024 {
        return Err(format!(
            "`{}` is {horizon}, outside the 1-1024 steps hwlint sizes",
            r.full(&t.horizon.key)
        ));
    }
    let (hidden, state_hidden) = (r.int(&t.image_hidden)?, r.int(&t.state_hidden)?);
    let (latent, mlp, ensemble) = (r.int(&t.latent)?, r.int(&t.mlp)?, r.int(&t.q_ensemble)?);
    for (k, n) in [
        (&t.image_hidden, hidden),
        (&t.state_hidden, state_hidden),
        (&t.latent, latent),
        (&t.mlp, mlp),
        (&t.q_ensemble, ensemble),
    ] {
        if n == 0 || n > MAX_DIM {
            return Err(format!(
                "`{}` is {n}, outside the 1-{MAX_DIM} hwlint sizes",
                r.full(&k.key)
            ));
        }
    }
    let shifted = match r.value(&t.shift) {
        Some(toml::Value::Float(f)) => f > 0.0,
        Some(toml::Value::Integer(n)) => n > 0,
        _ => return Err(format!("`{}` is not a number", r.full(&t.shift.key))),
    };
    let style = spec.feature_style;
    let state = vector(
        r,
        &spec.features,
        style,
        ("observation.state", "STATE", false),
    )?;
    let env = vector(
        r,
        &spec.features,
        style,
        ("observation.environment_state", "ENV", true),
    )?;
    let action = vector(r, &t.outputs, style, ("action", "ACTION", false))?;
    let mut unread = Vec::new();
    let state = match state {
        Vector::Width(n) => Some(n),
        Vector::Absent => None,
        Vector::Unread => {
            unread.push(format!("a {}-wide state", t.state_unread));
            Some(t.state_unread)
        }
    };
    let env = match env {
        Vector::Width(n) => Some(n),
        _ => None,
    };
    let action = match action {
        Vector::Width(n) => n,
        Vector::Absent => {
            return Err(format!(
                "`{}` lists no action feature, which TD-MPC's networks are sized by",
                r.full(&t.outputs)
            ))
        }
        Vector::Unread => {
            unread.push(format!("a {}-wide action", t.action_unread));
            t.action_unread
        }
    };
    // At most one camera (configuration_tdmpc.py:183-188); with none listed, none or the
    // dataset's one.
    let imgs = Images::read(spec, cams, &[]);
    if imgs.most.len() > 1 && !imgs.unread {
        return Err(format!(
            "`{}` lists {} cameras, and TD-MPC takes at most one",
            r.full(&spec.features),
            imgs.most.len()
        ));
    }
    let image = imgs.most.first().copied();
    if image.is_none() && state.is_none() && env.is_none() {
        return Err(format!(
            "`{}` lists no image, state or environment state for TD-MPC to encode",
            r.full(&spec.features)
        ));
    }

    // The vector encoders (:727-743): Linear, ELU, Linear, LayerNorm, Sigmoid; a trained pass
    // keeps the input, the ELU's input and output, the LayerNorm's input and the Sigmoid's
    // output.
    let vectors: Vec<u64> = state.into_iter().chain(env).collect();
    let encoders: u64 = vectors
        .iter()
        .map(|&n| linear(n, state_hidden) + linear(state_hidden, latent) + layer_norm(latent))
        .sum();
    let encoders_kept: u64 = vectors
        .iter()
        .map(|&n| n + 2 * state_hidden + 2 * latent)
        .sum();
    let za = latent + action;
    // :527-577. Dynamics, reward and pi: Linear, LayerNorm, Mish twice, then a Linear (and the
    // dynamics' LayerNorm); each Q and V: Linear, LayerNorm, Tanh, Linear, ELU, Linear.
    let two = |i: u64| linear(i, mlp) + layer_norm(mlp) + linear(mlp, mlp);
    let dynamics = two(za) + layer_norm(mlp) + linear(mlp, latent) + layer_norm(latent);
    let reward = two(za) + layer_norm(mlp) + linear(mlp, 1);
    let pi = two(latent) + layer_norm(mlp) + linear(mlp, action);
    let q = two(za) + linear(mlp, 1);
    let v = two(latent) + linear(mlp, 1);
    let told = encoders + dynamics + reward + pi + ensemble * q + v;
    // Kept per rollout step: a Mish MLP keeps each LayerNorm's input, each Mish's input and
    // output (6 x mlp); the dynamics also its LayerNorm's input and Sigmoid's output over the
    // latent, pi its tanh's output; a Tanh/ELU MLP keeps the LayerNorm's input, the Tanh's
    // output, the ELU's input and output (4 x mlp); the concatenated [z, a] twice (dynamics and
    // reward share one, the Qs make their own) and the latent the rollout writes.
    let per_step = 6 * mlp + 2 * latent // dynamics
        + 6 * mlp // reward
        + 6 * mlp + action // pi
        + 4 * mlp * (ensemble + 1) // the Qs and V
        + 2 * za + latent;
    let kept = encoders_kept + horizon * per_step;

    let frames = horizon + 1;
    let (mut parts, mut targets) = (Vec::new(), Vec::new());
    let mut seen = String::from("no image");
    let mut encodings = 0;
    if let Some((h, w)) = image {
        let enc = image_encoder(h, w, hidden, latent).ok_or_else(|| {
            format!(
                "the {h}x{w} image is smaller than TD-MPC's convolutions read ({}x{} at least)",
                CONVS[0], CONVS[0]
            )
        })?;
        // The batch's frames stay on the GPU through the step, with their shifted copy.
        let pixels = CHANNELS * h * w * frames * if shifted { 2 } else { 1 };
        // The no-grad encodings of the next frames (after the rollout, :365-374): their
        // first map and its ReLU's output. They belong to the model's part, which runs by
        // then; a camera the file does not list keeps them here, where the lower bound drops
        // them with the encoder.
        encodings = horizon * 2 * enc.first_map;
        let here = if imgs.unread { encodings } else { 0 };
        let dims = opaque(enc.params, enc.maps, pixels, here);
        let mut trained = vec![("name", "image encoder".into()), ("dims", dims)];
        let mut target = vec![
            ("name", "target image encoder".into()),
            ("dims", opaque(enc.params, 0, 0, 0)),
            ("frozen", true.into()),
        ];
        if imgs.unread {
            trained.push(("count_least", int(0)));
            target.push(("count_least", int(0)));
        }
        parts.push(part(trained));
        targets.push(part(target));
        seen = if imgs.unread {
            format!("the dataset's camera, if any, counted at {h}x{w}")
        } else {
            format!("one camera at {h}x{w}")
        };
    }
    let listed = if imgs.unread { 0 } else { encodings };
    parts.push(part(vec![
        ("name", "model".into()),
        ("dims", opaque(told, kept, 0, listed)),
    ]));
    targets.push(part(vec![
        ("name", "target model".into()),
        ("dims", opaque(told, 0, 0, 0)),
        ("frozen", true.into()),
    ]));
    parts.extend(targets);
    let mut source = format!(
        "{}: TOLD over {seen}, {}, a {action}-wide action; latent {latent}, MLPs {mlp} wide, {ensemble} Q heads, rolled out over {horizon} steps; its frozen EMA target copy",
        t.source,
        match (state, env) {
            (Some(s), Some(e)) => format!("a {s}-wide state and a {e}-wide environment state"),
            (Some(s), None) => format!("a {s}-wide state"),
            (None, Some(e)) => format!("a {e}-wide environment state"),
            (None, None) => "no state".to_string(),
        }
    );
    if !unread.is_empty() {
        source.push_str(&format!(
            " (the file lists no features: counted with {}, each dimension a few thousand parameters)",
            unread.join(" and ")
        ));
    }
    let least_when = imgs.unread.then(|| {
        format!(
            "the dataset's camera: TD-MPC encodes one image or none, and `{}` lists no features, which LeRobot fills from the dataset's metadata at start-up",
            r.full(&spec.features)
        )
    });
    Ok(composite(parts, source, least_when))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xarm_told_matches_the_hand_count() {
        // rules/models.toml's walk of tdmpc.yaml on xarm: the image encoder is 63,414.
        let enc = image_encoder(84, 84, 32, 50).unwrap();
        assert_eq!(enc.params, 63_414);
        // 39, 18, 8 and 3 pixels a side.
        assert_eq!(enc.maps, 32 * (39 * 39 + 18 * 18 + 8 * 8 + 3 * 3) + 100);
        assert_eq!(enc.first_map, 32 * 39 * 39);
        assert!(image_encoder(6, 6, 32, 50).is_none());
    }
}
