//! A detector's training step (`[detector]` in a dialect) sized from its config: the ResNet
//! backbone (depth, groups, frozen stages, norm), the feature pyramid, the anchors, the heads
//! (an RPN with ROI box and mask heads, or RetinaNet's towers), and the largest input the
//! resize allows (src/estimate/detector.rs keeps the memory model).
//!
//! Only the models the dialect's `requires` describe are sized (detectron2's `GeneralizedRCNN`
//! and `RetinaNet` with a ResNet-FPN backbone and the standard heads, MMDetection's Faster and
//! Mask R-CNN with the same); any other (a C4 backbone, cascade or keypoint heads, deformable
//! convolutions, a normalized pyramid or head, checkpointed blocks) is refused by the key that
//! makes it another, so the estimate never stands for a model it did not read. Each dialect names its keys, their
//! defaults and what their values mean (`Field`), and how its input is resized (yacs keys, or a
//! data pipeline's resize step).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::described::int;
use super::policy::to_toml;
use super::setup::InlineModel;
use super::spec::Dialect;
use crate::estimate::detector::{FocalLoss, Kind};
use crate::syntax::{Loader, Node, NodeKind, Value};

/// The largest input side hwlint sizes: beyond it a typo would make a map of billions of
/// positions.
const MAX_SIDE: u64 = 16_384;

/// Where a detector's config keeps its model and input, with the framework's defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectorSpec {
    /// The key that names the model's kind; a file that names bases (`inherit`) but whose
    /// chain sets it not was read without them.
    pub meta: String,
    /// The framework has no default model: a file (and its bases) without `meta` describes
    /// none (an MMEngine schedule or runtime file).
    #[serde(default)]
    pub meta_required: bool,
    /// The model's kind when `meta` is not set, and the values that name a two-stage detector.
    #[serde(default)]
    pub meta_default: String,
    pub two_stage: Vec<String>,
    /// The one-stage RetinaNet, where the dialect sizes it.
    pub retinanet: Option<RetinanetSpec>,
    /// What the model must be for hwlint to size it.
    pub requires: Vec<Requirement>,
    pub depth: Field,
    /// Blocks per stage for each depth the backbone builds, and which depths use basic blocks.
    pub depths: BTreeMap<String, Vec<u64>>,
    pub basic_depths: Vec<u64>,
    pub groups: Field,
    pub width_per_group: Field,
    pub stride_in_1x1: Field,
    pub stem_channels: Field,
    pub res2_channels: Field,
    pub norm: Field,
    /// Norms whose scale and shift are buffers (keep nothing), and norms that train (keep
    /// their input).
    pub frozen_norms: Vec<String>,
    pub trained_norms: Vec<String>,
    pub freeze_at: Field,
    pub fpn_channels: Field,
    pub anchor_sizes: Field,
    pub aspect_ratios: Field,
    pub rois: Field,
    pub positive_fraction: Field,
    pub classes: Field,
    pub box_pooler: Field,
    pub box_convs: Field,
    pub box_conv_dim: Field,
    pub box_fcs: Field,
    pub box_fc_dim: Field,
    pub box_class_agnostic: Field,
    pub mask: Field,
    pub mask_pooler: Field,
    pub mask_convs: Field,
    pub mask_conv_dim: Field,
    pub mask_class_agnostic: Field,
    /// The resize as yacs keys (detectron2), or as a step of the data pipeline (MMDetection).
    pub resize: Option<YacsResize>,
    pub pipeline: Option<PipelineResize>,
    /// Batches group images by orientation; without it a batch pads a portrait and a
    /// landscape image to a square of the long side.
    pub aspect_grouping: Field,
    /// The batch is padded to a multiple of this.
    pub size_divisibility: Field,
    /// Ground-truth boxes an image the anchor matching is sized at (the dataset decides), and
    /// the bytes its IoU holds a box and anchor.
    pub boxes_assumed: u64,
    pub matching_bytes: u64,
    pub source: String,
}

/// RetinaNet's keys: the values of `meta` that name it, its head's, and what builds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetinanetSpec {
    pub is: Vec<String>,
    pub classes: Field,
    pub tower_convs: Field,
    /// Whether P7 reads `relu(P6)`.
    pub p6_relu: Field,
    pub focal_loss: FocalLoss,
    /// The head's own anchor keys, where they are not the detector's (MMDetection's
    /// `bbox_head.anchor_generator`).
    pub anchor_sizes: Option<Field>,
    pub aspect_ratios: Option<Field>,
    pub source: String,
}

/// A key the builder reads, with the framework's default (an empty key: the framework fixes
/// the value), and what its values mean where they are not the number or switch itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    #[serde(default)]
    pub key: String,
    pub default: Option<toml::Value>,
    /// Values (as text; `*` any other) and what each means (`style = "caffe"`: stride in 1x1).
    #[serde(default)]
    pub map: BTreeMap<String, toml::Value>,
    /// Added to a whole number (MMDetection's `frozen_stages` -1 is detectron2's `FREEZE_AT` 0).
    #[serde(default)]
    pub offset: i64,
    /// The value is whether the key is set to something other than null (a mask head).
    #[serde(default)]
    pub present: bool,
}

/// detectron2's resize keys: the short side (one size, choices or a range: the largest counts)
/// and the long side's cap.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YacsResize {
    pub min_size: Field,
    pub max_size: Field,
}

/// A resize step of a data pipeline (a list of `dict(type=..., ...)`): the first list found,
/// the step types that resize, and the keys that hold their `(long, short)` scale or a list of
/// scales.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineResize {
    pub lists: Vec<String>,
    pub types: Vec<String>,
    pub scale_keys: Vec<String>,
    /// Keys of the step that make the image larger than its scale (a ratio range): hwlint
    /// does not read them, so such a step is refused.
    #[serde(default)]
    pub refused_keys: Vec<String>,
}

/// A key whose value (or default) must be one of `is` for the model to be the one sized;
/// a list must be one of them as `[a, b]` text.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub key: String,
    pub default: String,
    pub is: Vec<String>,
    /// Only when this key holds one of its values (the mask head's name, under `MASK_ON`).
    pub when: Option<super::spec::Condition>,
    /// Only for this kind of detector (the RPN's keys for a two-stage one); else for all.
    pub heads: Option<Kind>,
}

/// The detector the file describes, when the dialect sizes detectors and the file is one.
pub fn architecture(dialect: &Dialect, root: &Node) -> Result<Option<InlineModel>, String> {
    let Some(spec) = dialect.detector.as_ref() else {
        return Ok(None);
    };
    let loader = dialect.loader;
    let named = root.get_dotted(&spec.meta).is_some();
    if spec.meta_required
        && !named
        && dialect
            .inherit
            .as_ref()
            .is_none_or(|k| root.get_dotted(k).is_none())
    {
        return Ok(None);
    }
    if let Some(inherit) = &dialect.inherit {
        if root.get_dotted(inherit).is_some() && root.get_dotted(&spec.meta).is_none() {
            return Err(format!(
                "the file names bases (`{inherit}`), but neither it nor the bases hwlint could read set the model (`{}`)",
                spec.meta
            ));
        }
    }
    let r = Reader { loader, root };
    let meta = r
        .text(&spec.meta)
        .unwrap_or_else(|| spec.meta_default.clone());
    let named_by = |names: &[String]| names.iter().any(|v| v.eq_ignore_ascii_case(&meta));
    let kind = match &spec.retinanet {
        _ if named_by(&spec.two_stage) => Kind::TwoStage,
        Some(d) if named_by(&d.is) => Kind::Retinanet,
        dense => {
            let sized: Vec<&str> = spec
                .two_stage
                .iter()
                .chain(dense.iter().flat_map(|d| &d.is))
                .map(String::as_str)
                .collect();
            return Err(format!(
                "`{}` is {meta}; hwlint sizes {} only",
                spec.meta,
                sized.join(" or ")
            ));
        }
    };
    for req in &spec.requires {
        if req.heads.is_some_and(|h| h != kind) {
            continue;
        }
        if let Some(when) = &req.when {
            if super::resolve::unmet(loader, root, when) {
                continue;
            }
        }
        let text = r.text(&req.key).unwrap_or_else(|| req.default.clone());
        if !req.is.iter().any(|v| v.eq_ignore_ascii_case(&text)) {
            let sized: Vec<&str> = req
                .is
                .iter()
                .map(|v| if v.is_empty() { "\"\" (none)" } else { v })
                .collect();
            return Err(format!(
                "`{}` is {text}; hwlint sizes {} only",
                req.key,
                sized.join(" or ")
            ));
        }
    }
    let depth = r.int(&spec.depth)?;
    let blocks = spec
        .depths
        .get(&depth.to_string())
        .ok_or_else(|| format!("`{}` is {depth}, not a depth hwlint sizes", spec.depth.key))?;
    let basic = spec.basic_depths.contains(&depth);
    let groups = r.int(&spec.groups)?.max(1);
    let width = r.int(&spec.width_per_group)?;
    let stem = r.int(&spec.stem_channels)?;
    let res2 = r.int(&spec.res2_channels)?;
    let norm = r.string(&spec.norm)?;
    let frozen_bn = if spec.frozen_norms.contains(&norm) {
        true
    } else if spec.trained_norms.contains(&norm) {
        false
    } else {
        return Err(format!(
            "`{}` is {norm}, a norm hwlint does not size",
            spec.norm.key
        ));
    };
    let dense = spec.retinanet.as_ref().filter(|_| kind == Kind::Retinanet);
    let anchors = anchors_per_position(
        &r,
        dense
            .and_then(|d| d.anchor_sizes.as_ref())
            .unwrap_or(&spec.anchor_sizes),
        dense
            .and_then(|d| d.aspect_ratios.as_ref())
            .unwrap_or(&spec.aspect_ratios),
    )?;
    let (height, width_px) = input(&r, spec)?;
    let mut heads = toml::Table::new();
    for (field, value) in [
        ("input_height", height),
        ("input_width", width_px),
        ("fpn_channels", r.int(&spec.fpn_channels)?),
        ("anchors", anchors),
        ("boxes", spec.boxes_assumed),
        ("matching_bytes", spec.matching_bytes),
    ] {
        heads.insert(field.into(), int(value));
    }
    let (mask, source) = match dense {
        Some(dense) => {
            heads.insert("kind".into(), "retinanet".into());
            heads.insert("classes".into(), int(r.int(&dense.classes)?));
            heads.insert("tower_convs".into(), int(r.int(&dense.tower_convs)?));
            heads.insert("p6_relu".into(), r.bool(&dense.p6_relu)?.into());
            let loss = match dense.focal_loss {
                FocalLoss::Fvcore => "fvcore",
                FocalLoss::Mmcv => "mmcv",
            };
            heads.insert("focal_loss".into(), loss.into());
            (false, dense.source.as_str())
        }
        None => {
            two_stage_heads(&r, spec, &mut heads)?;
            (r.bool(&spec.mask)?, spec.source.as_str())
        }
    };
    let hidden: Vec<u64> = (0..4).map(|i| res2 << i).collect();
    let mut table = toml::Table::new();
    table.insert("family".into(), "detector".into());
    table.insert(
        "layer_type".into(),
        if basic { "basic" } else { "bottleneck" }.into(),
    );
    table.insert(
        "depths".into(),
        toml::Value::Array(blocks.iter().map(|&n| int(n)).collect()),
    );
    table.insert(
        "hidden_sizes".into(),
        toml::Value::Array(hidden.iter().map(|&n| int(n)).collect()),
    );
    table.insert("embedding_size".into(), int(stem));
    if !basic {
        table.insert("groups".into(), int(groups));
        table.insert("width_per_group".into(), int(width));
        table.insert("stride_in_1x1".into(), r.bool(&spec.stride_in_1x1)?.into());
    }
    table.insert("frozen_batch_norm".into(), frozen_bn.into());
    table.insert("frozen_stages".into(), int(r.int(&spec.freeze_at)?));
    // The side of a square of the same pixels, for what reads one image size (throughput).
    table.insert(
        "image_size".into(),
        int(((height * width_px) as f64).sqrt().round() as u64),
    );
    table.insert("detector".into(), toml::Value::Table(heads));
    let name = format!(
        "{}-{depth}{}-FPN {}",
        if groups > 1 { "X" } else { "R" },
        if groups > 1 {
            format!("-{groups}x{width}d")
        } else {
            String::new()
        },
        match kind {
            Kind::Retinanet => "RetinaNet",
            Kind::TwoStage if mask => "Mask R-CNN",
            Kind::TwoStage => "Faster R-CNN",
        }
    );
    let name = format!("{name} on {height} x {width_px} images");
    if let Some(toml::Value::Table(h)) = table.get_mut("detector") {
        h.insert("label".into(), name.clone().into());
    }
    table.insert(
        "source".into(),
        format!(
            "{name} as {source} (the largest input the resize allows, padded; the anchor matching sized at {} boxes an image, which the dataset decides)",
            spec.boxes_assumed
        )
        .into(),
    );
    // The mapping that holds the model: `MODEL` (detectron2), `model` (MMDetection).
    let at = spec.meta.split('.').next().unwrap_or_default();
    let model = InlineModel {
        table,
        key: at.to_string(),
        span: root
            .get_dotted(at)
            .map_or(root.span.clone(), |n| n.span.clone()),
        flat: false,
        own_blocks: false,
        configures_named: true,
    };
    if crate::estimate::plan::inline_architecture(&model).is_none() {
        return Err("the model its keys describe is past what hwlint sizes".into());
    }
    Ok(Some(model))
}

/// The RPN's sampling and the ROI box and mask heads of a two-stage detector.
fn two_stage_heads(r: &Reader, spec: &DetectorSpec, heads: &mut toml::Table) -> Result<(), String> {
    let rois = r.int(&spec.rois)?;
    let fraction = r.float(&spec.positive_fraction)?;
    for (field, value) in [
        ("rois", rois),
        (
            "foreground_rois",
            (rois as f64 * fraction.clamp(0.0, 1.0)) as u64,
        ),
        ("box_pooler", r.int(&spec.box_pooler)?),
        ("box_convs", r.int(&spec.box_convs)?),
        ("box_conv_dim", r.int(&spec.box_conv_dim)?),
        ("box_fcs", r.int(&spec.box_fcs)?),
        ("box_fc_dim", r.int(&spec.box_fc_dim)?),
        ("classes", r.int(&spec.classes)?),
    ] {
        heads.insert(field.into(), int(value));
    }
    heads.insert(
        "class_agnostic_boxes".into(),
        r.bool(&spec.box_class_agnostic)?.into(),
    );
    if r.bool(&spec.mask)? {
        heads.insert("mask".into(), true.into());
        for (field, key) in [
            ("mask_pooler", &spec.mask_pooler),
            ("mask_convs", &spec.mask_convs),
            ("mask_conv_dim", &spec.mask_conv_dim),
        ] {
            heads.insert(field.into(), int(r.int(key)?));
        }
        heads.insert(
            "class_agnostic_masks".into(),
            r.bool(&spec.mask_class_agnostic)?.into(),
        );
    }
    Ok(())
}

/// Anchors at each position: sizes x aspect ratios of a level, the same at every level (the
/// head predicts one count, `StandardRPNHead` and `RetinaNetHead` assert it); a single list
/// (or count) serves all levels.
fn anchors_per_position(r: &Reader, sizes: &Field, ratios: &Field) -> Result<u64, String> {
    let per_level = |k: &Field| -> Result<Vec<u64>, String> {
        if let Some(levels) = (!k.key.is_empty())
            .then(|| r.root.get_dotted(&k.key))
            .flatten()
            .and_then(|n| evaluated_levels(n, r.loader))
        {
            return levels.map_err(|why| format!("`{}` {why}", k.key));
        }
        match r.value(k) {
            // A count of sizes at every level (MMDetection's `scales_per_octave`).
            Some(toml::Value::Integer(n)) if (1..=1 << 10).contains(&n) => Ok(vec![n as u64]),
            // One list for every level (MMDetection's `scales=[8]`).
            Some(toml::Value::Array(flat))
                if !flat.is_empty() && flat.iter().all(|v| !v.is_array()) =>
            {
                Ok(vec![flat.len() as u64])
            }
            Some(toml::Value::Array(levels)) if !levels.is_empty() => levels
                .iter()
                .map(|l| match l {
                    toml::Value::Array(v) if !v.is_empty() => Ok(v.len() as u64),
                    _ => Err(()),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| format!("`{}` is not a list of lists", k.key)),
            _ => Err(format!(
                "`{}` is not a list of lists hwlint can read",
                k.key
            )),
        }
    };
    let (sizes_key, ratios_key) = (&sizes.key, &ratios.key);
    let sizes = per_level(sizes)?;
    let ratios = per_level(ratios)?;
    let at = |v: &[u64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let levels = sizes.len().max(ratios.len());
    if (sizes.len() != 1 && sizes.len() != levels) || (ratios.len() != 1 && ratios.len() != levels)
    {
        return Err(format!(
            "`{}` and `{}` list different numbers of levels",
            sizes_key, ratios_key
        ));
    }
    let counts: Vec<u64> = (0..levels)
        .map(|i| at(&sizes, i) * at(&ratios, i))
        .collect();
    match counts.as_slice() {
        [first, rest @ ..] if rest.iter().all(|c| c == first) => Ok(*first),
        _ => Err(format!(
            "`{sizes_key}` gives each level a different number of anchors"
        )),
    }
}

/// Entries of each level of a list PyYAML builds by evaluating Python text, or `None` when the
/// node is not such a list. detectron2's Base-RetinaNet.yaml writes its anchor sizes as
/// `!!python/object/apply:eval ["[[x, x * 2**(1.0/3), x * 2**(2.0/3) ] for x in [32, ...]]"]`,
/// which yacs's `yaml.unsafe_load` evaluates (detectron2 config/config.py `load_yaml_with_base`
/// allows it for detectron2's own files). hwlint evaluates nothing: it counts a literal list of
/// lists, or a comprehension `[[e1, ..., en] for x in [a1, ..., am]]` as m levels of n.
fn evaluated_levels(node: &Node, loader: Loader) -> Option<Result<Vec<u64>, String>> {
    use ruff_python_ast::Expr;
    if !node
        .tag
        .as_deref()
        .is_some_and(|t| t.ends_with("python/object/apply:eval"))
    {
        return None;
    }
    let not_read = || Err("is Python text whose lists hwlint cannot count".to_string());
    let text = match &node.kind {
        NodeKind::Seq(args) => match args.as_slice() {
            [one] => one.as_scalar().map(|s| s.value(loader)),
            _ => None,
        },
        _ => None,
    };
    let Some(Value::Str(text)) = text else {
        return Some(not_read());
    };
    let Ok(parsed) = ruff_python_parser::parse_expression(&text) else {
        return Some(not_read());
    };
    let items = |e: &Expr| -> Option<usize> {
        let elts = match e {
            Expr::List(l) => &l.elts,
            Expr::Tuple(t) => &t.elts,
            _ => return None,
        };
        (!elts.is_empty() && !elts.iter().any(Expr::is_starred_expr)).then_some(elts.len())
    };
    let levels = match parsed.expr() {
        Expr::List(outer) => outer.elts.iter().map(items).collect::<Option<Vec<_>>>(),
        Expr::ListComp(comp) => match comp.generators.as_slice() {
            [gen] if gen.ifs.is_empty() && !gen.is_async => {
                let each = items(&comp.elt);
                let count = items(&gen.iter);
                each.zip(count).map(|(n, m)| vec![n; m])
            }
            _ => None,
        },
        _ => None,
    };
    Some(match levels {
        Some(v) if !v.is_empty() => Ok(v.into_iter().map(|n| n as u64).collect()),
        _ => not_read(),
    })
}

/// The largest padded input a batch can hold: the resize's largest short side by the long
/// side's cap (a long image is scaled down to it), both padded to the size divisibility; a
/// square of the long side when batches mix orientations.
fn input(r: &Reader, spec: &DetectorSpec) -> Result<(u64, u64), String> {
    let (short, long) = match (&spec.resize, &spec.pipeline) {
        (Some(y), _) => yacs_sides(r, y)?,
        (None, Some(p)) => pipeline_sides(r, p)?,
        (None, None) => return Err("the dialect names no resize".into()),
    };
    let d = r.int(&spec.size_divisibility)?.max(1);
    let pad = |n: u64| n.div_ceil(d) * d;
    let (h, w) = (pad(short.min(long)), pad(long.max(short)));
    if w > MAX_SIDE {
        return Err(format!(
            "the input ({h} x {w}) is larger than hwlint sizes ({MAX_SIDE} a side)"
        ));
    }
    Ok(if r.bool(&spec.aspect_grouping)? {
        (h, w)
    } else {
        (w, w)
    })
}

/// detectron2's `ResizeShortestEdge(MIN_SIZE_TRAIN, MAX_SIZE_TRAIN)`: the largest short side
/// and the cap of the long one.
fn yacs_sides(r: &Reader, y: &YacsResize) -> Result<(u64, u64), String> {
    let short = match r.value(&y.min_size) {
        Some(toml::Value::Integer(n)) if n > 0 => n as u64,
        Some(toml::Value::Array(v)) => v
            .iter()
            .filter_map(|n| n.as_integer())
            .max()
            .filter(|&n| n > 0 && v.iter().all(|x| x.as_integer().is_some()))
            .map(|n| n as u64)
            .ok_or_else(|| format!("`{}` is not a list of sizes", y.min_size.key))?,
        // yacs reads a string such as "(640, 672, 800)" as the Python tuple it spells
        // (yacs config.py `_decode_cfg_value`, `literal_eval`).
        Some(toml::Value::String(s)) => tuple_max(&s)
            .ok_or_else(|| format!("`{}` is {s}, not a tuple of sizes", y.min_size.key))?,
        _ => return Err(format!("`{}` is not a size", y.min_size.key)),
    };
    Ok((short, r.int(&y.max_size)?))
}

/// The resize step of a data pipeline: its `(long, short)` scale, or the largest sides of its
/// list of scales.
fn pipeline_sides(r: &Reader, p: &PipelineResize) -> Result<(u64, u64), String> {
    let (list_key, list) = p
        .lists
        .iter()
        .find_map(|k| r.root.get_dotted(k).map(|n| (k, n)))
        .ok_or_else(|| format!("`{}` is not set", p.lists.join("` or `")))?;
    let NodeKind::Seq(steps) = &list.kind else {
        return Err(format!("`{list_key}` is not a list of steps"));
    };
    let step = steps
        .iter()
        .find(|s| {
            s.get_dotted("type")
                .and_then(|t| to_toml(r.loader, t))
                .and_then(|t| t.as_str().map(|t| p.types.iter().any(|x| x == t)))
                .unwrap_or(false)
        })
        .ok_or_else(|| {
            format!(
                "`{list_key}` has no resize step ({}) hwlint reads",
                p.types.join(", ")
            )
        })?;
    if let Some(k) = p.refused_keys.iter().find(|k| step.get_dotted(k).is_some()) {
        return Err(format!(
            "the resize step in `{list_key}` sets `{k}`, which hwlint does not read"
        ));
    }
    let scale = p
        .scale_keys
        .iter()
        .find_map(|k| step.get_dotted(k).and_then(|n| to_toml(r.loader, n)))
        .ok_or_else(|| format!("the resize step in `{list_key}` has no scale hwlint can read"))?;
    let pair = |v: &toml::Value| -> Option<(u64, u64)> {
        match v.as_array()?.as_slice() {
            [a, b] => {
                let (a, b) = (a.as_integer()?, b.as_integer()?);
                (a > 0 && b > 0).then(|| (a.min(b) as u64, a.max(b) as u64))
            }
            _ => None,
        }
    };
    // One scale, or a list of them (multi-scale training): the largest of each side.
    let sides = match pair(&scale) {
        Some(one) => Some(one),
        None => scale.as_array().and_then(|all| {
            let pairs = all.iter().map(pair).collect::<Option<Vec<_>>>()?;
            let short = pairs.iter().map(|p| p.0).max()?;
            let long = pairs.iter().map(|p| p.1).max()?;
            Some((short, long))
        }),
    };
    sides.ok_or_else(|| format!("the resize step in `{list_key}` has a scale hwlint cannot read"))
}

/// The largest of a Python tuple or list of whole numbers written as text: `(640, 800)`,
/// `(800,)`, `[800]`.
fn tuple_max(s: &str) -> Option<u64> {
    let inner = s
        .trim()
        .strip_prefix(['(', '['])?
        .strip_suffix([')', ']'])?;
    let mut most = None;
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: u64 = part.parse().ok().filter(|&n| n > 0)?;
        most = most.max(Some(n));
    }
    most
}

struct Reader<'a> {
    loader: Loader,
    root: &'a Node,
}

impl Reader<'_> {
    /// The field's value: the file's (through its map, plus its offset), else the default.
    fn value(&self, f: &Field) -> Option<toml::Value> {
        let node = (!f.key.is_empty())
            .then(|| self.root.get_dotted(&f.key))
            .flatten();
        if f.present {
            let set = node.is_some_and(|n| !n.is_null(self.loader));
            return Some(toml::Value::Boolean(set));
        }
        let Some(node) = node else {
            return f.default.clone();
        };
        let v = to_toml(self.loader, node)?;
        let v = if f.map.is_empty() {
            v
        } else {
            let text = show(&v);
            f.map.get(&text).or_else(|| f.map.get("*")).cloned()?
        };
        Some(match v {
            toml::Value::Integer(n) if f.offset != 0 => toml::Value::Integer(n + f.offset),
            v => v,
        })
    }

    /// A value as text to compare: a name, `true`, a number, a list as `[a, b]`, `none`.
    fn text(&self, key: &str) -> Option<String> {
        let node = self.root.get_dotted(key)?;
        Some(match to_toml(self.loader, node) {
            Some(v) => show(&v),
            None if node.is_null(self.loader) => "none".into(),
            None => "a value hwlint cannot read".into(),
        })
    }

    fn int(&self, f: &Field) -> Result<u64, String> {
        match self.value(f) {
            Some(toml::Value::Integer(n)) if (0..=1 << 20).contains(&n) => Ok(n as u64),
            _ => Err(format!("`{}` is not a whole number hwlint sizes", f.key)),
        }
    }

    fn float(&self, f: &Field) -> Result<f64, String> {
        match self.value(f) {
            Some(toml::Value::Integer(n)) => Ok(n as f64),
            Some(toml::Value::Float(x)) => Ok(x),
            _ => Err(format!("`{}` is not a number", f.key)),
        }
    }

    fn bool(&self, f: &Field) -> Result<bool, String> {
        match self.value(f) {
            Some(toml::Value::Boolean(b)) => Ok(b),
            _ => Err(format!("`{}` is not true or false", f.key)),
        }
    }

    fn string(&self, f: &Field) -> Result<String, String> {
        match self.value(f) {
            Some(toml::Value::String(s)) => Ok(s),
            _ => Err(format!("`{}` is not a name", f.key)),
        }
    }
}

/// A value as text: a name as written, a list as `[a, b]`.
fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(show).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{evaluated_levels, tuple_max};
    use crate::syntax::Loader;

    #[test]
    fn python_anchor_lists_are_counted_not_evaluated() {
        let levels = |yaml: &str| {
            let doc = crate::syntax::yaml::parse(yaml).unwrap();
            let node = doc.roots[0].get_dotted("SIZES").unwrap().clone();
            evaluated_levels(&node, Loader::Yaml11)
        };
        // Base-RetinaNet.yaml's comprehension: 5 levels of 3 sizes.
        let comp = r#"SIZES: !!python/object/apply:eval ["[[x, x * 2**(1.0/3), x * 2**(2.0/3) ] for x in [32, 64, 128, 256, 512 ]]"]"#;
        assert_eq!(levels(comp), Some(Ok(vec![3; 5])));
        assert_eq!(
            levels(r#"SIZES: !!python/object/apply:eval ["[[32, 40], [64]]"]"#),
            Some(Ok(vec![2, 1]))
        );
        // Anything else is said to be unread, never guessed; an untagged list is not Python.
        for text in [
            r#"SIZES: !!python/object/apply:eval ["[[x] for x in range(5)]"]"#,
            r#"SIZES: !!python/object/apply:eval ["[[x] for x in [1, 2] if x]"]"#,
            r#"SIZES: !!python/object/apply:eval ["[[*a] for x in [1]]"]"#,
            r#"SIZES: !!python/object/apply:eval ["[[x for"]"#,
            r#"SIZES: !!python/object/apply:eval [1, 2]"#,
        ] {
            assert!(matches!(levels(text), Some(Err(_))), "{text}");
        }
        assert_eq!(levels("SIZES: [[32], [64]]"), None);
    }

    #[test]
    fn yacs_tuples_give_their_largest_size() {
        assert_eq!(tuple_max("(640, 672, 704, 736, 768, 800)"), Some(800));
        assert_eq!(tuple_max("(800,)"), Some(800));
        assert_eq!(tuple_max("[512]"), Some(512));
        assert_eq!(tuple_max("(640, x)"), None);
        assert_eq!(tuple_max("800"), None);
    }
}
