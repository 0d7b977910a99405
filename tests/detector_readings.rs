//! A detectron2 detector is sized per image from its own config (#26 item 4): the ResNet's
//! depth, groups and frozen stages, the pyramid and the heads, and the largest input the resize
//! allows; `SOLVER.IMS_PER_BATCH` is split over the GPUs; HW101 lowers it and scales
//! `SOLVER.BASE_LR` by the linear rule detectron2 documents. Any other detector is refused by
//! the key that makes it another. Fixtures in fixtures/detectors/ restate the model zoo's
//! configs (each cites its source); the zoo's own memory column is in
//! tests/data/published_peaks.toml.

#[path = "support/planned.rs"]
mod support;

#[path = "support/cli.rs"]
mod cli;

use serde_json::Value;

const DIR: &str = "fixtures/detectors";
/// Detectors hwlint does not size, under DIR.
const REFUSED: &str = "refused";
/// MMDetection's configs, under DIR, with their `_base_` modules.
const MMDET: &str = "mmdet";
const MMDET_BASES: &str = "_base_";
/// Launch lines over a config, under DIR, and the config they name.
const LAUNCH: &str = "launch";
const LAUNCHED: &str = "configs";

/// `hwlint estimate` of a fixture over `gpus` GPUs, as JSON.
fn estimate(rel: &str, gpus: u32) -> Value {
    support::hwlint_json(&[
        "estimate",
        &format!("{DIR}/{rel}"),
        "--gpus",
        &gpus.to_string(),
        "--output-format",
        "json",
    ])
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no `{key}` in {v}"))
}

/// The HW901 reason `hwlint check` gives a fixture it refuses.
fn refusal(rel: &str) -> String {
    let v = support::hwlint_json(&["check", &format!("{DIR}/{rel}"), "--output-format", "json"]);
    let found: Vec<&Value> = v.as_array().unwrap().iter().collect();
    assert_eq!(found.len(), 1, "{rel}: {v}");
    assert_eq!(found[0]["code"], "HW901", "{rel}");
    found[0]["message"].as_str().unwrap().to_string()
}

/// The fixtures `files` copied into a fresh folder, for a fix to change there.
fn copied(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let text = std::fs::read_to_string(support::fixture(DIR, f)).unwrap();
        cli::write(dir.path(), f, &text);
    }
    dir
}

/// What `hwlint check` finds in the launch script `script` on an RTX 4090, as JSON.
fn launched(script: &str) -> Vec<Value> {
    let out = cli::hwlint(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["check", &format!("{DIR}/{LAUNCH}/{script}")])
        .args(["--target", "rtx-4090", "--output-format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().unwrap().clone()
}

/// The number the first line of `text` starting with `key` (after indentation) holds.
fn number(text: &str, key: &str) -> f64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{key} in\n{text}"))
}

/// The fix wrote a lower `SOLVER.IMS_PER_BATCH` than the base's 16 under the child's `SOLVER`,
/// with the base's learning rate scaled by the same factor (the linear scaling rule).
fn lowered_in_child(dir: &tempfile::TempDir, child: &str, base_lr: f64) {
    let fixed = std::fs::read_to_string(dir.path().join(child)).unwrap();
    let solver = fixed.split("SOLVER:").nth(1).unwrap_or_default();
    let images = number(solver, "IMS_PER_BATCH:");
    assert!((1.0..16.0).contains(&images), "{fixed}");
    assert!(
        (number(solver, "BASE_LR:") - base_lr * images / 16.0).abs() < 1e-9,
        "{fixed}"
    );
}

#[test]
fn every_fixture_is_read_by_a_test() {
    let source = include_str!("detector_readings.rs");
    support::every_fixture_named_in(DIR, source);
    support::every_fixture_named_in(&format!("{DIR}/{REFUSED}"), source);
    support::every_fixture_named_in(&format!("{DIR}/{MMDET}"), source);
    assert!(support::fixture(DIR, &format!("{MMDET}/{MMDET_BASES}")).is_dir());
    support::every_fixture_named_in(&format!("{DIR}/{LAUNCH}"), source);
    assert!(support::fixture(
        DIR,
        &format!("{LAUNCH}/{LAUNCHED}/mask_rcnn_X_101_FPN.yaml")
    )
    .is_file());
    for entry in std::fs::read_dir(support::fixture(DIR, "")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with('#') && text.contains("detectron2@02b5c4e295e9"),
                "{}: the header cites the detectron2 commit it restates",
                path.display()
            );
        }
    }
}

#[test]
fn the_zoo_rows_read_their_backbone_heads_and_share_of_the_batch() {
    // The model each zoo config describes over Base-RCNN-FPN.yaml, and its parameters:
    // torchvision's fasterrcnn_resnet50_fpn (41,755,286) and maskrcnn_resnet50_fpn
    // (44,401,393) are detectron2's R50-FPN models with 91 classes, not 80: 91 scores where
    // detectron2 has 81 (10 x (1024 + 1) more), 364 deltas for 320 (44 x (1024 + 1)) and, for
    // masks, 91 mask logits for 80 (11 x (256 + 1)).
    let rows = [
        (
            "faster_rcnn_R_50_FPN_3x.yaml",
            "R-50-FPN Faster R-CNN",
            Some(41_699_936),
        ),
        (
            "faster_rcnn_R_101_FPN_3x.yaml",
            "R-101-FPN Faster R-CNN",
            None,
        ),
        (
            "faster_rcnn_X_101_32x8d_FPN_3x.yaml",
            "X-101-32x8d-FPN Faster R-CNN",
            None,
        ),
        (
            "mask_rcnn_R_50_FPN_3x.yaml",
            "R-50-FPN Mask R-CNN",
            Some(44_343_216),
        ),
        ("mask_rcnn_R_101_FPN_3x.yaml", "R-101-FPN Mask R-CNN", None),
        (
            "mask_rcnn_X_101_32x8d_FPN_3x.yaml",
            "X-101-32x8d-FPN Mask R-CNN",
            None,
        ),
    ];
    assert_eq!(41_755_286 - 10 * 1025 - 44 * 1025, 41_699_936);
    assert_eq!(44_401_393 - 10 * 1025 - 44 * 1025 - 11 * 257, 44_343_216);
    let mut acts = Vec::new();
    for (file, label, params) in rows {
        let e = estimate(file, 8);
        assert!(
            e["model"].as_str().unwrap().contains(label),
            "{file}: {}",
            e["model"]
        );
        if let Some(p) = params {
            assert_eq!(num(&e, "params") as u64, p, "{file}");
        }
        // IMS_PER_BATCH 16 over 8 GPUs; detectron2's SGD with momentum; plain DDP's buckets.
        assert_eq!(e["plan"]["batch"], 2, "{file}");
        assert_eq!(e["plan"]["optimizer"], "sgd-momentum", "{file}");
        assert_eq!(e["plan"]["ddp_buckets"], true, "{file}");
        assert_eq!(e["plan"]["checkpointing"], "none", "{file}");
        acts.push(num(&e, "activations_bytes"));
    }
    // Deeper and wider backbones keep more; a mask head adds to the same backbone.
    assert!(acts[0] < acts[1] && acts[1] < acts[2], "{acts:?}");
    assert!(acts[3] < acts[4] && acts[4] < acts[5], "{acts:?}");
    assert!((0..3).all(|i| acts[i] < acts[i + 3]), "{acts:?}");
    // On one GPU the step takes all 16 images and there is no DDP.
    let one = estimate("faster_rcnn_R_50_FPN_3x.yaml", 1);
    assert_eq!(one["plan"]["batch"], 16);
    assert_eq!(one["plan"]["ddp_buckets"], false);
}

#[test]
fn retinanet_rows_read_their_dense_head_and_python_anchor_sizes() {
    // Base-RetinaNet.yaml's anchor sizes are a comprehension yacs evaluates (3 sizes at each of
    // 5 levels); with the 3 default aspect ratios, 9 anchors a position over P3-P7.
    let r50 = estimate("retinanet_R_50_FPN_3x.yaml", 8);
    assert!(
        r50["model"]
            .as_str()
            .unwrap()
            .contains("R-50-FPN RetinaNet on 800 x 1344 images"),
        "{}",
        r50["model"]
    );
    // torchvision's retinanet_resnet50_fpn (34,014,999) is this model with 91 classes and a
    // P6 over P5: detectron2's P6 reads res5 (9 x 2048 x 256 weights for 9 x 256 x 256), and
    // 11 classes fewer are 9 anchors x 11 x (256 x 9 + 1) parameters fewer.
    let p6 = 9 * (2048 - 256) * 256;
    assert_eq!(
        num(&r50, "params") as u64,
        34_014_999 + p6 - 9 * 11 * (256 * 9 + 1)
    );
    // R101 adds 17 bottlenecks to res4, 1024 -> 256 -> 256 -> 1024 without biases or
    // trained norms.
    let r101 = estimate("retinanet_R_101_FPN_3x.yaml", 8);
    let block = 1024 * 256 + 9 * 256 * 256 + 256 * 1024;
    assert_eq!(
        num(&r101, "params") as u64 - num(&r50, "params") as u64,
        17 * block
    );
    for e in [&r50, &r101] {
        assert_eq!(e["plan"]["batch"], 2);
        assert_eq!(e["plan"]["optimizer"], "sgd-momentum");
        assert_eq!(e["plan"]["precision"], "fp32");
    }
    // The focal loss over 201,600 anchors x 80 classes an image is the largest transient:
    // the head's outputs and permuted copies (8 B a logit and box delta), the loss's ten fp32
    // tensors and int64 one-hot (48 B a logit), and 40 B an anchor of labels and box targets.
    let (anchors, logits) = (201_600.0, 201_600.0 * 80.0);
    let transient = 2.0 * (8.0 * (logits + 4.0 * anchors) + 48.0 * logits + 40.0 * anchors);
    assert_eq!(num(&r50, "temporary_bytes"), transient);
    // A Faster R-CNN on the same backbone and input keeps more for backward (its ROI heads
    // and P2) but has no such loss.
    let faster = estimate("faster_rcnn_R_50_FPN_3x.yaml", 8);
    assert!(num(&faster, "temporary_bytes") < transient / 2.0);
}

#[test]
fn mmdetection_retinanet_reads_its_octave_anchors_and_keeps_mmcvs_lean_loss() {
    // `scales_per_octave=3` x 3 ratios: the 9 anchors a position of detectron2's, over the
    // same pyramid and head. The parameters are detectron2's RetinaNet R50 (37,915,572) plus
    // ResNet-50's 53,120 trained BN weights and biases, as for the R-CNN rows.
    let r50 = "retinanet_r50_fpn_1x_coco.py";
    let mm = estimate(&format!("{MMDET}/{r50}"), 8);
    assert!(
        mm["model"]
            .as_str()
            .unwrap()
            .contains("R-50-FPN RetinaNet on 800 x 1344 images"),
        "{}",
        mm["model"]
    );
    assert_eq!(num(&mm, "params") as u64, 37_915_572 + 53_120);
    // The deeper and wider backbones, as for the R-CNN rows.
    let mut params = vec![num(&mm, "params")];
    for file in [
        "retinanet_r101_fpn_1x_coco.py",
        "retinanet_x101-32x4d_fpn_1x_coco.py",
        "retinanet_x101-64x4d_fpn_1x_coco.py",
    ] {
        params.push(num(&estimate(&format!("{MMDET}/{file}"), 8), "params"));
    }
    assert!(params[0] + 18e6 < params[1] && params[2] < params[1] && params[1] < params[3]);
    assert_eq!(mm["plan"]["batch"], 2);
    // mmcv's focal loss keeps its input only, one level at a time: beside two images' head
    // outputs and permuted copies (8 B a logit and box delta) it holds 76 B an anchor of
    // targets and P3's 151,200 anchors x 80 classes twice (the loss and its weighted copy),
    // less than the anchor matching's bbox_overlaps (36 B x 100 boxes x 201,600 anchors), which
    // is the largest instant.
    let (anchors, logits) = (201_600.0, 201_600.0 * 80.0);
    let dense = 2.0 * 8.0 * (logits + 4.0 * anchors);
    let loss = 2.0 * (76.0 * anchors + 8.0 * 151_200.0 * 80.0);
    let matching = 36.0 * 100.0 * anchors;
    assert!(loss < matching);
    assert_eq!(num(&mm, "temporary_bytes"), dense + matching);
    // detectron2's fvcore loss on the same step holds 1.84 GB.
    let d2 = estimate("retinanet_R_50_FPN_3x.yaml", 8);
    assert!(num(&mm, "temporary_bytes") < num(&d2, "temporary_bytes") * 0.6);
}

#[test]
fn frozen_stages_and_norms_change_what_the_backbone_keeps() {
    let base = num(
        &estimate("faster_rcnn_R_50_FPN_3x.yaml", 8),
        "activations_bytes",
    );
    // FREEZE_AT 0 trains the stem and res2: per image (800 x 1344 padded, fp32) the stem's
    // ReLU output (64 x 400 x 672), the max-pool's int64 indices and output (64 x 200 x 336),
    // and res2's three blocks (64 + 64 + 256 channels at 200 x 336 each); res2's output was
    // already kept as res3's input.
    let (stem, pooled, res2) = (64.0 * 400.0 * 672.0, 64.0 * 200.0 * 336.0, 200.0 * 336.0);
    let per_image = 4.0 * stem + (8.0 + 4.0) * pooled + 3.0 * 4.0 * (64.0 + 64.0 + 256.0) * res2
        - 4.0 * 256.0 * res2;
    let thawed = num(
        &estimate("r50-fpn-freeze-at-0.yaml", 8),
        "activations_bytes",
    );
    assert_eq!(thawed - base, 2.0 * per_image);
    // A trained norm (SyncBN) keeps each convolution's output in the trained stages.
    let synced = num(&estimate("r50-fpn-syncbn.yaml", 8), "activations_bytes");
    assert!(synced > base * 1.1, "{synced} vs {base}");
}

#[test]
fn the_input_is_the_largest_the_resize_and_batching_allow() {
    let zoo = estimate("faster_rcnn_R_50_FPN_3x.yaml", 8);
    assert!(zoo["model"]
        .as_str()
        .unwrap()
        .contains("on 800 x 1344 images"));
    // MIN_SIZE_TRAIN 1024 with the long side capped at 1333, padded to 32; batches that mix
    // orientations pad both sides to the long one. AMP halves the kept maps.
    let amp = estimate("r50-fpn-amp-square.yaml", 8);
    assert!(
        amp["model"]
            .as_str()
            .unwrap()
            .contains("on 1344 x 1344 images"),
        "{}",
        amp["model"]
    );
    assert_eq!(amp["plan"]["precision"], "fp16-mixed");
    assert!(num(&amp, "activations_bytes") < num(&zoo, "activations_bytes"));
}

#[test]
fn sixteen_x101_images_on_one_24gb_card_are_lowered_with_the_learning_rate() {
    let dir = copied(&["Base-RCNN-FPN.yaml", "x101-mask-one-gpu.yaml"]);
    let args = ["--target", "rtx-4090", "--gpus", "1"];
    let out = cli::hwlint(dir.path())
        .args(["check", "x101-mask-one-gpu.yaml", "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = &v.as_array().unwrap()[0];
    assert_eq!(found["code"], "HW101", "{v}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.contains("X-101-32x8d-FPN Mask R-CNN") && message.contains("micro-batch 16"),
        "{message}"
    );
    let fix = found["fix"]["message"].as_str().unwrap();
    assert_eq!(found["fix"]["applicability"], "unsafe", "{fix}");
    assert!(fix.contains("linear scaling rule"), "{fix}");
    cli::hwlint(dir.path())
        .args(["check", "x101-mask-one-gpu.yaml", "--fix", "--unsafe-fixes"])
        .args(args)
        .assert()
        .success();
    let fixed = std::fs::read_to_string(dir.path().join("x101-mask-one-gpu.yaml")).unwrap();
    let images = number(&fixed, "IMS_PER_BATCH:");
    assert!((1.0..16.0).contains(&images), "{fixed}");
    // 0.02 at 16 images, scaled as the batch: GETTING_STARTED.md's 16 at 0.02 -> 2 at 0.0025.
    assert!(
        (number(&fixed, "BASE_LR:") - 0.02 * images / 16.0).abs() < 1e-9,
        "{fixed}"
    );
    // Only those two lines changed, and the lowered step fits the card.
    let before = std::fs::read_to_string(support::fixture(DIR, "x101-mask-one-gpu.yaml")).unwrap();
    let changed: Vec<(&str, &str)> = before
        .lines()
        .zip(fixed.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert_eq!(before.lines().count(), fixed.lines().count());
    cli::hwlint(dir.path())
        .args(["check", "x101-mask-one-gpu.yaml"])
        .args(args)
        .assert()
        .success();
}

#[test]
fn other_detectors_are_refused_by_the_key_that_makes_them_another() {
    for (file, says) in [
        ("c4.yaml", "`MODEL.BACKBONE.NAME` is build_resnet_backbone"),
        ("cascade.yaml", "`MODEL.ROI_HEADS.NAME` is CascadeROIHeads"),
        (
            "deformable.yaml",
            "`MODEL.RESNETS.DEFORM_ON_PER_STAGE` is [false, true, true, true]",
        ),
        (
            "retinanet-gn.yaml",
            "`MODEL.RETINANET.NORM` is GN; hwlint sizes \"\" (none) only",
        ),
        (
            "missing-base.yaml",
            "neither it nor the bases hwlint could read set the model (`MODEL.META_ARCHITECTURE`)",
        ),
    ] {
        let why = refusal(&format!("{REFUSED}/{file}"));
        assert!(why.contains(says), "{file}: {why}");
    }
}

#[test]
fn mmdetection_rows_read_their_backbone_heads_and_norms() {
    // MMDetection's ResNet keeps BN with trainable affine parameters (norm_cfg requires_grad,
    // only its mode frozen by norm_eval): detectron2's R50-FPN plus ResNet-50's 53,120 BN
    // weights and biases.
    let rows = [
        (
            "faster-rcnn_r50_fpn_1x_coco.py",
            "R-50-FPN Faster R-CNN",
            Some(41_699_936 + 53_120),
        ),
        (
            "faster-rcnn_r101_fpn_1x_coco.py",
            "R-101-FPN Faster R-CNN",
            None,
        ),
        (
            "faster-rcnn_x101-32x4d_fpn_1x_coco.py",
            "X-101-32x4d-FPN Faster R-CNN",
            None,
        ),
        (
            "faster-rcnn_x101-64x4d_fpn_1x_coco.py",
            "X-101-64x4d-FPN Faster R-CNN",
            None,
        ),
        (
            "mask-rcnn_r50_fpn_1x_coco.py",
            "R-50-FPN Mask R-CNN",
            Some(44_343_216 + 53_120),
        ),
        (
            "mask-rcnn_r101_fpn_1x_coco.py",
            "R-101-FPN Mask R-CNN",
            None,
        ),
        (
            "mask-rcnn_x101-32x4d_fpn_1x_coco.py",
            "X-101-32x4d-FPN Mask R-CNN",
            None,
        ),
        (
            "mask-rcnn_x101-64x4d_fpn_1x_coco.py",
            "X-101-64x4d-FPN Mask R-CNN",
            None,
        ),
    ];
    for (file, label, params) in rows {
        let e = estimate(&format!("{MMDET}/{file}"), 8);
        let model = e["model"].as_str().unwrap();
        assert!(
            model.contains(label) && model.contains("on 800 x 1344 images under `model`"),
            "{file}: {model}"
        );
        if let Some(p) = params {
            assert_eq!(num(&e, "params") as u64, p, "{file}");
        }
        // train_dataloader.batch_size is per GPU; SGD with momentum 0.9 (schedule_1x.py).
        assert_eq!(e["plan"]["batch"], 2, "{file}");
        assert_eq!(e["plan"]["optimizer"], "sgd-momentum", "{file}");
        assert_eq!(e["plan"]["ddp_buckets"], true, "{file}");
    }
    // BN in eval mode still keeps its input: the same R50-FPN keeps more than under
    // detectron2's FrozenBN, and more again with the stride in the 3x3 (pytorch style).
    let d2 = num(
        &estimate("faster_rcnn_R_50_FPN_3x.yaml", 8),
        "activations_bytes",
    );
    let mm = num(
        &estimate(&format!("{MMDET}/faster-rcnn_r50_fpn_1x_coco.py"), 8),
        "activations_bytes",
    );
    assert!(mm > d2 * 1.3, "{mm} vs {d2}");
    for (file, says) in [
        (
            "refused-retinanet-giou.py",
            "`model.bbox_head.reg_decoded_bbox` is true",
        ),
        ("refused-with-cp.py", "`model.backbone.with_cp` is true"),
    ] {
        let why = refusal(&format!("{MMDET}/{file}"));
        assert!(why.contains(says), "{file}: {why}");
    }
}

#[test]
fn the_launch_line_sets_the_gpus_the_global_batch_splits_over() {
    // `train_net.py --num-gpus N --config-file F`: 16 images over 1 GPU do not fit a 24 GB
    // card; over the 8 GPUs the config is made for, 2 a GPU fit.
    let codes = |script: &str| -> Vec<String> {
        launched(script)
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(codes("train-one-gpu.sh"), ["HW101"]);
    assert_eq!(codes("train-eight-gpus.sh"), Vec::<String>::new());
}

#[test]
fn a_launch_line_follows_the_base_chain_of_the_config_it_names() {
    // `--config-file` names the zoo child, whose `_BASE_` holds the batch and the FPN: the
    // chain is followed as fvcore's merge_from_file does, and the finding names the base that
    // sets the 16 images.
    let found = launched("train-zoo-chain.sh");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["code"], "HW101");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("X-101-32x8d-FPN Mask R-CNN") && message.contains("Base-RCNN-FPN.yaml"),
        "{message}"
    );
}

#[test]
fn a_batch_the_base_sets_is_lowered_by_an_override_in_the_child() {
    // The zoo child sets no SOLVER.IMS_PER_BATCH: its base does (16). The fix writes the
    // lowered batch and learning rate into the child, which fvcore merges over the base
    // (fvcore/common/config.py:78-110); the base is left as it was.
    let child = "mask_rcnn_X_101_32x8d_FPN_3x.yaml";
    let dir = copied(&["Base-RCNN-FPN.yaml", child]);
    let args = ["--target", "rtx-4090", "--gpus", "1"];
    cli::hwlint(dir.path())
        .args(["check", child, "--fix", "--unsafe-fixes"])
        .args(args)
        .assert()
        .success();
    let base = std::fs::read_to_string(dir.path().join("Base-RCNN-FPN.yaml")).unwrap();
    assert_eq!(
        base,
        std::fs::read_to_string(support::fixture(DIR, "Base-RCNN-FPN.yaml")).unwrap()
    );
    lowered_in_child(&dir, child, 0.02);
}

#[test]
fn sixteen_retinanet_images_on_one_24gb_card_are_lowered_in_the_child() {
    // Base-RetinaNet.yaml's 16 images a step on one RTX 4090: the focal loss alone holds
    // 16 x 0.9 GB. The fix lowers the batch in the child and scales the base's learning rate
    // (0.01, RetinaNet's own) by the same factor.
    let child = "retinanet_R_101_FPN_3x.yaml";
    let dir = copied(&["Base-RetinaNet.yaml", child]);
    let args = ["--target", "rtx-4090", "--gpus", "1"];
    let out = cli::hwlint(dir.path())
        .args(["check", child, "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v.as_array().unwrap();
    assert_eq!(found.len(), 1, "{v}");
    assert_eq!(found[0]["code"], "HW101", "{v}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("R-101-FPN RetinaNet") && message.contains("micro-batch 16"),
        "{message}"
    );
    cli::hwlint(dir.path())
        .args(["check", child, "--fix", "--unsafe-fixes"])
        .args(args)
        .assert()
        .success();
    lowered_in_child(&dir, child, 0.01);
}

#[test]
fn a_child_linted_alone_hears_what_its_base_sets() {
    // The R50 child describes the model its base does (DEPTH 50 is the default), so its
    // finding is the base's word for word. Linted together, the base says it once; linted
    // alone (a pre-commit run over the changed child), the child says it, naming the base.
    let child = "retinanet_R_50_FPN_3x.yaml";
    let dir = copied(&["Base-RetinaNet.yaml", child]);
    let found = |paths: &[&str]| -> Vec<(String, String)> {
        let out = cli::hwlint(dir.path())
            .arg("check")
            .args(paths)
            .args(["--target", "rtx-4090", "--gpus", "1"])
            .args(["--output-format", "json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let file = d["filename"].as_str().unwrap_or_default();
                let name = std::path::Path::new(file).file_name().unwrap();
                (
                    d["code"].as_str().unwrap().to_string(),
                    name.to_string_lossy().to_string(),
                )
            })
            .collect()
    };
    let pair = |file: &str| ("HW101".to_string(), file.to_string());
    assert_eq!(found(&["."]), [pair("Base-RetinaNet.yaml")]);
    assert_eq!(found(&[child]), [pair(child)]);
}

#[test]
fn an_mmdetection_batch_a_base_sets_is_lowered_by_new_assignments_in_the_child() {
    // The child assigns no `train_dataloader` or `optim_wrapper`: its base holds 16 images a
    // GPU. The fix appends both as dicts, which MMEngine merges key by key into the bases'
    // (Config._merge_a_into_b), so the per-device batch stays 8 x 2 and the bases stay as
    // they were.
    let child = "mask-rcnn_r101_fpn_4xb16_coco.py";
    let base = "mask-rcnn_r50_fpn_4xb16_coco.py";
    let dir = tempfile::tempdir().unwrap();
    let from = support::fixture(DIR, MMDET);
    let mut stack = vec![from.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(&from).unwrap().to_string_lossy().to_string();
                cli::write(dir.path(), &rel, &std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let args = ["--target", "t4", "--gpus", "1"];
    cli::hwlint(dir.path())
        .args(["check", child, "--fix"])
        .args(args)
        .assert()
        .success();
    let fixed = std::fs::read_to_string(dir.path().join(child)).unwrap();
    let original = std::fs::read_to_string(support::fixture(DIR, &format!("{MMDET}/{child}")));
    assert_eq!(
        fixed,
        format!(
            "{}train_dataloader = dict(batch_size=8)\noptim_wrapper = dict(accumulative_counts=2)\n",
            original.unwrap()
        )
    );
    let kept = std::fs::read_to_string(dir.path().join(base)).unwrap();
    let base_fixture = std::fs::read_to_string(support::fixture(DIR, &format!("{MMDET}/{base}")));
    assert_eq!(kept, base_fixture.unwrap());
    // Read back: 8 images a step, 2 steps an update, and HW101 is gone.
    let again = cli::hwlint(dir.path())
        .args(["check", child, "--output-format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert!(
        v.as_array().unwrap().iter().all(|d| d["code"] != "HW101"),
        "{v}"
    );
}
