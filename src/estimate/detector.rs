//! Detectors as detectron2 and MMDetection build them over a ResNet-FPN backbone: the
//! parameters of the feature pyramid and the heads, what one image keeps for backward beside
//! the backbone's own activations (activations.rs walks the ResNet), and the transient at the
//! step's largest instant. Two kinds:
//! - two-stage (detectron2's `GeneralizedRCNN` over `build_resnet_fpn_backbone`,
//!   `StandardRPNHead` and `StandardROIHeads`; MMDetection's `FasterRCNN`/`MaskRCNN` with an
//!   FPN, `RPNHead` and `StandardRoIHead`, the same modules);
//! - RetinaNet (detectron2's `RetinaNet` over `build_retinanet_resnet_fpn_backbone`;
//!   MMDetection's `RetinaNet` with an FPN from `start_level` 1 and `RetinaHead`), a dense head
//!   over P3-P7.
//!
//! What each module keeps, at detectron2@02b5c4e295e9 (paths under detectron2/modeling/; the
//! MMDetection modules rules/dialects/mmengine.toml cites keep the same):
//! - the pyramid (backbone/fpn.py:139-167): a 1x1 lateral convolution reads each stage's output
//!   (kept as its input), the top-down sum is kept by the 3x3 output convolution, and each
//!   level's output by the head's convolution; the two-stage P6 is a stride-2 max-pool of P5
//!   (:188-200), which keeps its int64 indices; RetinaNet's P6 is a stride-2 3x3 convolution
//!   of res5 and P7 one of `relu(P6)` (`LastLevelP6P7`, :203-221), so P6 and its ReLU are kept;
//! - the RPN head (proposal_generator/rpn.py:102-118, 158-180): a 3x3 convolution and ReLU per
//!   level, whose output both 1x1 convolutions keep, and their objectness and box-delta maps;
//! - the box head (roi_heads/box_head.py, fast_rcnn.py): `BATCH_SIZE_PER_IMAGE` sampled proposals
//!   an image, pooled to p x p over the pyramid's channels (kept by the first layer), each
//!   convolution's and fully connected layer's ReLU output, and the class scores with their
//!   log-softmax;
//! - the mask head (roi_heads/mask_head.py:215-290, 65-111) over the foreground proposals, at most
//!   `POSITIVE_FRACTION` of them: the pooled features, each convolution's output, the 2x
//!   deconvolution's, and the gathered mask logits with their fp32 targets;
//! - RetinaNet's head (meta_arch/retinanet.py:362-386, 418-440): at every level a class and a box
//!   tower of `NUM_CONVS` 3x3 convolutions, each ReLU's output kept by the next convolution,
//!   then 3x3 convolutions to A x K logits and A x 4 deltas.
//!
//! The transient is the largest of
//! - the anchor matching, one image at a time: `pairwise_iou` of the image's boxes against
//!   every anchor holds the [boxes, anchors, 2] fp32 minimum, maximum and difference at once
//!   (structures/boxes.py:325-327) and then the IoU's [boxes, anchors] terms; detectron2's RPN
//!   moves it to the CPU when it does not fit (`retry_if_cuda_oom`, rpn.py:339-340);
//!   MMDetection's `bbox_overlaps` holds more (`matching_bytes`);
//! - backward at the finest level: the gradients the heads send to it and their sum;
//! - RetinaNet's focal loss over every anchor and class at the end of forward (below,
//!   `FOCAL_LOSS_BYTES`).
//!
//! Not counted: cuDNN's convolution workspaces, the anchors and the proposals' boxes (a few MB).
use serde::Deserialize;

use super::activations::Regime;

/// Which detector the heads make.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An RPN over P2-P6 and ROI heads over P2-P5 (Faster and Mask R-CNN).
    #[default]
    TwoStage,
    /// Class and box towers over P3-P7, trained with a sigmoid focal loss.
    Retinanet,
}

/// How RetinaNet's focal loss is computed, which decides what it holds.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FocalLoss {
    /// detectron2: fvcore's `sigmoid_focal_loss` over every anchor at once, as autograd
    /// records its elementwise ops (`FOCAL_LOSS_BYTES`).
    #[default]
    Fvcore,
    /// MMDetection: mmcv's CUDA `sigmoid_focal_loss` one level at a time
    /// (mmdet/models/losses/focal_loss.py `sigmoid_focal_loss`), which saves only its input
    /// and integer targets; its output and the weighted loss live until the level's sum.
    Mmcv,
}

/// A detector's input and heads, from its config.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Heads {
    #[serde(default)]
    pub kind: Kind,
    /// What the detector is, for messages (`R-50-FPN Mask R-CNN`).
    #[serde(default)]
    pub label: String,
    /// The largest padded input, height and width: the resize's longest short side and the
    /// long side it allows, padded to the pyramid's coarsest stride.
    pub input_height: u64,
    pub input_width: u64,
    /// The pyramid's channels (`FPN.OUT_CHANNELS`).
    pub fpn_channels: u64,
    /// Anchors per position of each pyramid level (sizes x aspect ratios).
    pub anchors: u64,
    /// RetinaNet: convolutions in each of its two towers (`RETINANET.NUM_CONVS`).
    #[serde(default)]
    pub tower_convs: u64,
    /// RetinaNet: P7 reads `relu(P6)` (detectron2's `LastLevelP6P7`), which keeps the ReLU's
    /// output, rather than P6 itself (MMDetection's `relu_before_extra_convs` off).
    #[serde(default)]
    pub p6_relu: bool,
    #[serde(default)]
    pub focal_loss: FocalLoss,
    /// Proposals sampled per image for the ROI heads, and the most of them foreground.
    #[serde(default)]
    pub rois: u64,
    #[serde(default)]
    pub foreground_rois: u64,
    /// The box head: pooled side, convolutions and their width, fully connected layers and
    /// their width.
    #[serde(default)]
    pub box_pooler: u64,
    #[serde(default)]
    pub box_convs: u64,
    #[serde(default)]
    pub box_conv_dim: u64,
    #[serde(default)]
    pub box_fcs: u64,
    #[serde(default)]
    pub box_fc_dim: u64,
    /// Foreground classes (`ROI_HEADS.NUM_CLASSES`, `RETINANET.NUM_CLASSES`).
    pub classes: u64,
    /// One box regression for all classes (`CLS_AGNOSTIC_BBOX_REG`).
    #[serde(default)]
    pub class_agnostic_boxes: bool,
    /// The mask head (`MASK_ON`): pooled side, convolutions and their width.
    #[serde(default)]
    pub mask: bool,
    #[serde(default)]
    pub mask_pooler: u64,
    #[serde(default)]
    pub mask_convs: u64,
    #[serde(default)]
    pub mask_conv_dim: u64,
    #[serde(default)]
    pub class_agnostic_masks: bool,
    /// Ground-truth boxes an image for the anchor matching: the dataset decides, so this is an
    /// assumption the estimate states.
    pub boxes: u64,
    /// Bytes the IoU of one box against one anchor holds at its largest (detectron2's
    /// `pairwise_iou`: three [boxes, anchors, 2] fp32 tensors, 24; MMDetection's
    /// `bbox_overlaps`: 36, its own docstring's 9 x 4 bytes).
    pub matching_bytes: u64,
}

/// The two-stage pyramid's levels P2-P5 (strides 4-32), read from res2-res5, and P6 (stride
/// 64); RetinaNet's P3-P5, read from res3-res5, and P6 and P7 (strides 64 and 128).
const LEVELS: [f64; 4] = [4.0, 8.0, 16.0, 32.0];
const P6: f64 = 64.0;
const P7: f64 = 128.0;

/// Bytes the focal loss holds for each anchor and class at the end of RetinaNet's forward, in
/// fp32 (meta_arch/retinanet.py:160-191 and fvcore's `sigmoid_focal_loss`, which casts its
/// inputs with `.float()` and is scripted with `torch.jit.script`, run as autograd records it):
/// - what the loss saves for backward, ten fp32 tensors of [anchors, classes]: the logits and
///   targets as floats (`binary_cross_entropy_with_logits`, `p * targets`), `p = sigmoid`,
///   `1 - p` and `1 - targets` (their product), `1 - p_t` (the power), `ce_loss` and the power
///   (their product), `alpha_t` and the unweighted loss (the last product);
/// - the int64 one-hot of the labels, alive until `losses` returns (`F.one_hot`, :179-181).
///
/// Beside these, in the compute dtype: the head's output (held by `predictions` until forward
/// returns), its permuted copy (`_transpose_dense_predictions`), and under autocast the
/// gathered logits and targets before `.float()`.
const FOCAL_LOSS_BYTES: f64 = 10.0 * 4.0 + 8.0;

impl Heads {
    /// The largest number it holds, for the estimator's bounds.
    pub fn largest(&self) -> u64 {
        [
            self.input_height,
            self.input_width,
            self.fpn_channels,
            self.anchors,
            self.tower_convs,
            self.rois,
            self.box_pooler,
            self.box_convs,
            self.box_conv_dim,
            self.box_fcs,
            self.box_fc_dim,
            self.classes,
            self.mask_pooler,
            self.mask_convs,
            self.mask_conv_dim,
            self.boxes,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// Positions of a level of stride `s` over the padded input.
    fn positions(&self, s: f64) -> f64 {
        (self.input_height as f64 / s).ceil() * (self.input_width as f64 / s).ceil()
    }

    /// The first of the backbone's stages (res2 is 0) the pyramid reads.
    fn first_stage(&self) -> usize {
        match self.kind {
            Kind::TwoStage => 0,
            Kind::Retinanet => 1,
        }
    }

    /// Positions of the levels read from the backbone (a lateral and an output convolution
    /// each), and of those made past it.
    fn pyramid_positions(&self) -> (f64, f64) {
        let read: f64 = LEVELS[self.first_stage()..]
            .iter()
            .map(|&s| self.positions(s))
            .sum();
        let extra = match self.kind {
            Kind::TwoStage => self.positions(P6),
            Kind::Retinanet => self.positions(P6) + self.positions(P7),
        };
        (read, extra)
    }

    /// Every anchor of the dense head: P2-P6 (the RPN) or P3-P7 (RetinaNet).
    pub fn anchor_count(&self) -> f64 {
        let (read, extra) = self.pyramid_positions();
        (read + extra) * self.anchors as f64
    }

    /// Parameters of the pyramid and the heads over a backbone whose stages give `stages`
    /// channels: all of them, those in matmuls (weights, not biases), and the largest tensor.
    pub fn params(&self, stages: &[u64]) -> (u64, u64, u64) {
        let f = self.fpn_channels;
        let mut all = 0;
        let mut weights = 0;
        let mut largest = 0;
        // A convolution or linear layer with a bias (every one here: no norm follows).
        let mut layer = |w: u64, bias: u64| {
            all += w + bias;
            weights += w;
            largest = largest.max(w);
        };
        for &c in stages.iter().skip(self.first_stage()) {
            layer(c * f, f);
            layer(9 * f * f, f);
        }
        let a = self.anchors;
        let k = self.classes;
        if self.kind == Kind::Retinanet {
            // P6 from res5, P7 from P6; the towers; the 3x3 class and box convolutions.
            layer(9 * stages.last().copied().unwrap_or(0) * f, f);
            layer(9 * f * f, f);
            for _ in 0..2 * self.tower_convs {
                layer(9 * f * f, f);
            }
            layer(9 * f * a * k, a * k);
            layer(9 * f * 4 * a, 4 * a);
            return (all, weights, largest);
        }
        layer(9 * f * f, f);
        layer(f * a, a);
        layer(f * 4 * a, 4 * a);
        let p2 = self.box_pooler * self.box_pooler;
        let mut width = f;
        for _ in 0..self.box_convs {
            layer(9 * width * self.box_conv_dim, self.box_conv_dim);
            width = self.box_conv_dim;
        }
        let mut flat = width * p2;
        for _ in 0..self.box_fcs {
            layer(flat * self.box_fc_dim, self.box_fc_dim);
            flat = self.box_fc_dim;
        }
        layer(flat * (k + 1), k + 1);
        let reg = if self.class_agnostic_boxes { 4 } else { 4 * k };
        layer(flat * reg, reg);
        if self.mask {
            let mut width = f;
            let d = self.mask_conv_dim;
            for _ in 0..self.mask_convs {
                layer(9 * width * d, d);
                width = d;
            }
            layer(4 * width * d, d);
            let out = if self.class_agnostic_masks { 1 } else { k };
            layer(d * out, out);
        }
        (all, weights, largest)
    }

    /// Bytes one image keeps for backward in the pyramid and the heads; `unkept` is, for each
    /// backbone stage, what its output holds that the backbone itself keeps not (a frozen
    /// stage's output, which the lateral convolution reading it keeps).
    pub fn kept_per_image(&self, rg: Regime, unkept: &[f64]) -> f64 {
        let c = rg.compute;
        let f = self.fpn_channels as f64;
        let laterals: f64 = unkept.iter().skip(self.first_stage()).sum();
        let (read, extra) = self.pyramid_positions();
        if self.kind == Kind::Retinanet {
            let (p6, p7) = (self.positions(P6), self.positions(P7));
            // The top-down sums and the outputs; P6 (and its ReLU); P7.
            let relu = if self.p6_relu { p6 } else { 0.0 };
            let pyramid = 2.0 * f * read * c + (p6 + relu + p7) * f * c;
            // Each tower convolution's ReLU output, at every level.
            let towers = 2.0 * self.tower_convs as f64 * f * (read + extra) * c;
            return laterals + pyramid + towers;
        }
        // The top-down sums and the outputs; P6 and its max-pool indices.
        let pyramid = 2.0 * f * read * c + f * extra * (c + 8.0);
        // The RPN's ReLU output and its two maps (objectness and 4 deltas per anchor).
        let rpn = (f + 5.0 * self.anchors as f64) * (read + extra) * c;
        let r = self.rois as f64;
        let p2 = (self.box_pooler * self.box_pooler) as f64;
        // Pooled input, each layer's ReLU output, the class scores and their log-softmax.
        let boxes = r
            * (f * p2
                + self.box_convs as f64 * self.box_conv_dim as f64 * p2
                + self.box_fcs as f64 * self.box_fc_dim as f64
                + 2.0 * (self.classes + 1) as f64)
            * c;
        let masks = if self.mask {
            let n = self.foreground_rois as f64;
            let m2 = (self.mask_pooler * self.mask_pooler) as f64;
            let d = self.mask_conv_dim as f64;
            let up = 4.0 * m2;
            // Pooled input, each convolution's output, the deconvolution's (kept by the
            // predictor), then the gathered logits and their fp32 targets.
            n * (f * m2 + self.mask_convs as f64 * d * m2 + d * up) * c + n * up * (c + 4.0)
        } else {
            0.0
        };
        laterals + pyramid + rpn + boxes + masks
    }

    /// The transient of the step's largest instant for `b` images a GPU: the anchor matching of
    /// one image, the gradients at the finest level in backward, or what the losses hold past
    /// what forward keeps (the mask predictor's logits for every class before the loss gathers
    /// each proposal's own, mask_head.py:77-81, which matter with LVIS's 1,230 classes;
    /// RetinaNet's focal loss), whichever is larger.
    pub fn transient(&self, rg: Regime, b: f64) -> f64 {
        let c = rg.compute;
        let anchors = self.anchor_count();
        let matching = (self.matching_bytes * self.boxes) as f64 * anchors;
        let finest = self.positions(LEVELS[self.first_stage()]);
        let fine = b * self.fpn_channels as f64 * finest * c;
        if self.kind == Kind::Retinanet {
            let k = self.classes as f64;
            let logits = anchors * k;
            // The head's output and its permuted copy, alive from the matching to the loss.
            let dense = b * 2.0 * c * (logits + 4.0 * anchors);
            let loss = match self.focal_loss {
                // The focal loss (above); autocast's gathered logits and targets; the box
                // regression's fp32 targets with the labels and matched boxes (int64, fp32
                // x 4).
                FocalLoss::Fvcore => {
                    let cast = if rg.autocast { 2.0 * c } else { 0.0 };
                    b * (logits * (FOCAL_LOSS_BYTES + cast) + anchors * (16.0 + 8.0 + 16.0))
                }
                // The targets `get_targets` stacks (int64 labels, fp32 label weights, box
                // targets and box weights: 44 B an anchor), the anchors (16 B), the L1 loss's
                // kept difference (16 B); the finest level's loss and its weighted copy.
                FocalLoss::Mmcv => {
                    let finest_logits = finest * self.anchors as f64 * k;
                    b * (anchors * (44.0 + 16.0 + 16.0) + 2.0 * c * finest_logits)
                }
            };
            // Backward at P3: the two towers' gradients and their sum.
            return (matching + dense).max(dense + loss).max(3.0 * fine);
        }
        let grads = if self.mask { 4.0 } else { 3.0 };
        let mask_logits = if self.mask {
            let classes = if self.class_agnostic_masks {
                1
            } else {
                self.classes
            };
            let up = 4.0 * (self.mask_pooler * self.mask_pooler) as f64;
            b * self.foreground_rois as f64 * classes as f64 * up * c
        } else {
            0.0
        };
        matching.max(grads * fine).max(mask_logits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fp32 throughout: every map 4 bytes an element.
    const FP32: Regime = Regime {
        compute: 4.0,
        residual: 4.0,
        autocast: false,
    };

    fn r50_fpn() -> Heads {
        Heads {
            input_height: 800,
            input_width: 1344,
            fpn_channels: 256,
            anchors: 3,
            rois: 512,
            foreground_rois: 128,
            box_pooler: 7,
            box_fcs: 2,
            box_fc_dim: 1024,
            classes: 80,
            mask_pooler: 14,
            mask_convs: 4,
            mask_conv_dim: 256,
            boxes: 100,
            matching_bytes: 24,
            ..Heads::default()
        }
    }

    #[test]
    fn faster_rcnn_heads_count_torchvisions_parameters() {
        // torchvision's fasterrcnn_resnet50_fpn has 41,755,286 parameters with 91 classes;
        // its pyramid, RPN and two-FC box head are detectron2's. Less the ResNet-50 body
        // (23,454,912 without BatchNorm, whose frozen scales are buffers) and its 91 classes
        // where detectron2 has 80: 91 scores for 81 (10 x (1024 + 1)), 364 deltas for 320
        // (44 x (1024 + 1)).
        let (all, _, largest) = r50_fpn().params(&[256, 512, 1024, 2048]);
        assert_eq!(all, 41_755_286 - 23_454_912 - 10 * 1025 - 44 * 1025);
        // The first FC layer: 256 x 7 x 7 inputs to 1024.
        assert_eq!(largest, 256 * 49 * 1024);
    }

    fn retinanet_r50() -> Heads {
        Heads {
            kind: Kind::Retinanet,
            input_height: 800,
            input_width: 1344,
            fpn_channels: 256,
            anchors: 9,
            tower_convs: 4,
            p6_relu: true,
            classes: 80,
            boxes: 100,
            matching_bytes: 24,
            ..Heads::default()
        }
    }

    #[test]
    fn retinanet_heads_count_torchvisions_parameters() {
        // torchvision's retinanet_resnet50_fpn has 34,014,999 parameters with 91 classes; its
        // pyramid reads res3-res5 and its head is detectron2's, but its P6 reads P5
        // (`LastLevelP6P7(256, 256)`) where detectron2's reads res5's 2048 channels, and it has
        // 11 classes more (9 anchors x 11 x 256 x 3 x 3 weights and 99 biases).
        let (all, _, largest) = retinanet_r50().params(&[256, 512, 1024, 2048]);
        let p6_from_p5 = 9 * 256 * 256 + 256;
        let p6_from_res5 = 9 * 2048 * 256 + 256;
        assert_eq!(
            all,
            34_014_999 - 23_454_912 - p6_from_p5 + p6_from_res5 - (9 * 11 * 256 * 9 + 99)
        );
        // P6's 2048 x 256 x 3 x 3 weights are larger than the class convolution's.
        assert_eq!(largest, 9 * 2048 * 256);
    }

    #[test]
    fn retinanet_anchors_cover_p3_to_p7_nine_a_position() {
        // 800 x 1344: 100 x 168 + 50 x 84 + 25 x 42 + 13 x 21 + 7 x 11 positions.
        assert_eq!(
            retinanet_r50().anchor_count(),
            9.0 * (16_800.0 + 4_200.0 + 1_050.0 + 273.0 + 77.0)
        );
    }

    #[test]
    fn the_focal_loss_over_every_anchor_and_class_is_retinanets_transient() {
        let heads = retinanet_r50();
        let anchors = 201_600.0;
        let logits = anchors * 80.0;
        // Two images: the head's outputs and their permuted copies (4 B each), the loss's ten
        // fp32 tensors and int64 one-hot (48 B a logit), the labels, matched boxes and box
        // targets (40 B an anchor): 1.84 GB, more than the matching's 24 B x 100 boxes x
        // 201,600 anchors (484 MB) beside the head's outputs.
        let dense = 2.0 * 8.0 * (logits + 4.0 * anchors);
        let loss = 2.0 * (48.0 * logits + 40.0 * anchors);
        assert_eq!(heads.transient(FP32, 2.0), dense + loss);
        assert!(24.0 * 100.0 * anchors + dense < dense + loss);
    }

    #[test]
    fn mmcvs_focal_loss_holds_a_level_not_every_anchor_ten_times() {
        let mm = Heads {
            focal_loss: FocalLoss::Mmcv,
            p6_relu: false,
            matching_bytes: 36,
            ..retinanet_r50()
        };
        let anchors = 201_600.0;
        let logits = anchors * 80.0;
        // Two images: the head's outputs and permuted copies (8 B a logit and box delta),
        // 76 B an anchor of targets, anchors and L1 difference, and P3's 151,200 anchors x 80
        // classes twice (the op's output and its weighted copy).
        let dense = 2.0 * 8.0 * (logits + 4.0 * anchors);
        let loss = 2.0 * (76.0 * anchors + 8.0 * 151_200.0 * 80.0);
        // With no box to match (a dataset of empty images) the loss is the largest instant.
        let empty = Heads {
            boxes: 0,
            ..mm.clone()
        };
        assert_eq!(empty.transient(FP32, 2.0), dense + loss);
        // detectron2's fvcore loss holds over three times as much.
        assert!(empty.transient(FP32, 2.0) * 3.0 < retinanet_r50().transient(FP32, 2.0));
        // Without the ReLU between P6 and P7, one P6 map fewer: 13 x 21 x 256 x 4 B.
        assert_eq!(
            retinanet_r50().kept_per_image(FP32, &[]) - mm.kept_per_image(FP32, &[]),
            273.0 * 256.0 * 4.0
        );
    }

    #[test]
    fn a_frozen_stage_the_pyramid_reads_not_is_not_kept() {
        // res2's output is read by the two-stage pyramid's lateral, not by RetinaNet's.
        let unkept = [1e6, 0.0, 0.0, 0.0];
        let two = r50_fpn();
        assert_eq!(
            two.kept_per_image(FP32, &unkept) - two.kept_per_image(FP32, &[]),
            1e6
        );
        let dense = retinanet_r50();
        assert_eq!(
            dense.kept_per_image(FP32, &unkept),
            dense.kept_per_image(FP32, &[])
        );
    }

    #[test]
    fn anchors_cover_p2_to_p6_three_a_position() {
        // 800 x 1344: 200 x 336 + 100 x 168 + 50 x 84 + 25 x 42 + 13 x 21 positions.
        assert_eq!(
            r50_fpn().anchor_count(),
            3.0 * (67_200.0 + 16_800.0 + 4_200.0 + 1_050.0 + 273.0)
        );
    }

    #[test]
    fn many_classes_make_the_mask_logits_the_transient() {
        let coco = Heads {
            mask: true,
            ..r50_fpn()
        };
        // COCO's 80 classes: 2 x 128 x 80 x 28 x 28 fp32 logits (64 MB) are less than the
        // anchor matching's 24 B x 100 boxes x 268,569 anchors (645 MB).
        let matching = 24.0 * 100.0 * coco.anchor_count();
        assert_eq!(coco.transient(FP32, 2.0), matching);
        // LVIS's 1,230: 2 x 128 x 1230 x 784 x 4 B = 987 MB.
        let lvis = Heads {
            classes: 1230,
            ..coco.clone()
        };
        assert_eq!(
            lvis.transient(FP32, 2.0),
            2.0 * 128.0 * 1230.0 * 784.0 * 4.0
        );
    }

    #[test]
    fn the_mask_head_keeps_its_maps_at_the_foreground_cap() {
        let faster = r50_fpn();
        let mask = Heads {
            mask: true,
            ..r50_fpn()
        };
        let extra = mask.kept_per_image(FP32, &[]) - faster.kept_per_image(FP32, &[]);
        // 128 proposals: 256 x 14 x 14 pooled, 4 x 256 x 14 x 14 conv outputs, 256 x 28 x 28
        // deconvolved, in fp32; 28 x 28 logits and targets.
        let maps = 128.0 * (5.0 * 256.0 * 196.0 + 256.0 * 784.0) * 4.0;
        assert_eq!(extra, maps + 128.0 * 784.0 * 8.0);
    }
}
