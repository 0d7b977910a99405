//! The estimator next to the figures published in hardware guides (issue "Sanity checks from
//! the hardware guides"). Every comparison is asserted. A published range is quoted exactly as
//! published and never widened: where the estimate falls outside it, the gap is a named
//! `*_DEVIATION_GB` constant with its reason, asserted both ways (the estimate is outside the
//! range, by no more than the constant), so the test fails if the estimate moves further away,
//! and also when it moves back inside (then the constant is stale and goes).
//!
//! Estimates are peak allocated memory in decimal GB (the guides' unit), as in
//! research/memory.md section 5. The guides' figures may include the CUDA context (~0.6 GB) and
//! the allocator's cache (x 1.1-1.4), which the estimate leaves out.

use hwlint::estimate::memory::{estimate, Checkpointing, Plan, Precision};
use hwlint::estimate::models::lookup;

fn gb(
    model: &str,
    batch: u64,
    precision: Precision,
    ckpt: Checkpointing,
    lora: Option<(u64, &str)>,
) -> f64 {
    let plan = Plan {
        batch,
        seq_len: 1,
        precision,
        checkpointing: ckpt,
        lora: lora.map(|(r, t)| (r, t.split(',').map(String::from).collect())),
        ..Plan::new(
            model,
            lookup(model).unwrap_or_else(|| panic!("{model}")).clone(),
        )
    };
    estimate(&plan).peak_bytes / 1e9
}

fn show(what: &str, est: f64, published: &str, why: &str) {
    eprintln!("{what:<58} estimate {est:>6.1} GB | published {published:<14} | {why}");
}

/// A published range `(low, high)` in GB, both ends inclusive.
type Range = (f64, f64);

/// The estimate lies inside the published range.
fn assert_inside(what: &str, est: f64, (lo, hi): Range) {
    assert!(
        (lo..=hi).contains(&est),
        "{what}: estimate {est:.2} GB is outside the published {lo}-{hi} GB"
    );
}

/// The estimate lies above the published range by more than nothing and at most `deviation`
/// GB (the documented gap).
fn assert_above_by(what: &str, est: f64, (_, hi): Range, deviation: f64) {
    assert_outside_by(what, est, hi, "above", est - hi, deviation);
}

/// The estimate lies below the published range by more than nothing and at most `deviation`
/// GB (the documented gap).
fn assert_below_by(what: &str, est: f64, (lo, _): Range, deviation: f64) {
    assert_outside_by(what, est, lo, "below", lo - est, deviation);
}

/// `gap` is how far `est` lies past `edge` on the side named by `side`: it must be there, and
/// by no more than the documented `deviation`.
fn assert_outside_by(what: &str, est: f64, edge: f64, side: &str, gap: f64, deviation: f64) {
    assert!(
        gap > 0.0,
        "{what}: estimate {est:.2} GB is no longer {side} the published {edge} GB: the documented \
         deviation is stale, remove it and assert the range"
    );
    assert!(
        gap <= deviation,
        "{what}: estimate {est:.2} GB is {gap:.2} GB {side} the published {edge} GB, more than \
         the documented {deviation} GB"
    );
}

// LeRobot, "Compute HW Guide for LeRobot Training" (huggingface.co/docs/lerobot/en/hardware_guide),
// table "Memory by policy group", column "Peak VRAM (BS 8, AdamW)", as published. The guide
// calls its numbers "indicative — order-of-magnitude figures for picking hardware, not exact
// predictions" and does not say which dtype or which memory counter they are.

/// "Light BC | act, vqbet, tdmpc | ~2–6GB".
const LIGHT_BC: Range = (2.0, 6.0);
/// "Diffusion | diffusion, multi_task_dit | ~8–14GB".
const DIFFUSION: Range = (8.0, 14.0);
/// "Small VLA | smolvla | ~10–16GB".
const SMALL_VLA: Range = (10.0, 16.0);
/// "Large VLA | pi0, pi0_fast, pi05, xvla, wall_x | ~24–40GB".
const LARGE_VLA: Range = (24.0, 40.0);

/// pi0 in bf16 comes out just above the Large VLA group's 40 GB (40.1 GB when this was
/// written): 3 cameras x 256 + 48 language tokens = 816 prefix tokens through Gemma 2B keep
/// ~30 GB of activations at batch 8. The guide's range is one envelope for five policies and
/// "order-of-magnitude"; a 0.1 GB excess is inside what it claims, but it is outside the
/// numbers it prints, so it is written down here rather than hidden by widening the range.
const PI0_DEVIATION_GB: f64 = 0.25;
/// pi0.5 (LeRobot's `tokenizer_max_length` 200: a 200-token prompt, so 968 prefix tokens against
/// pi0's 816) keeps ~19% more prefix activations than pi0: 44.1 GB, 4.1 GB above the guide's
/// 40 GB. The guide's one envelope for pi0 and pi05 does not separate the longer prompt.
const PI05_DEVIATION_GB: f64 = 4.5;
/// VQ-BeT is 0.7 GB: a ResNet-18 on 96 px frames of 5 observation steps and an 8-layer,
/// 512-wide GPT (~40M parameters with their AdamW states) hold little at batch 8. The guide's
/// 2 GB floor is the whole Light BC group's (act at 480x640 sets it); the CUDA context
/// (~0.6 GB) and cuDNN workspaces that nvidia-smi would add are not in the estimate.
const VQBET_DEVIATION_GB: f64 = 1.5;
/// Diffusion policy is 5.2 GB: its ~260M UNet's fp32 states (16 B/param) dominate and its
/// activations (84 px crops, a 16-step horizon) are small, so the estimate stays near 5 GB at
/// any batch. The guide's 8 GB floor looks like an nvidia-smi reading (context, allocator cache,
/// cuDNN workspaces) at a larger batch; 2.8 GB below it when this was written.
const DIFFUSION_DEVIATION_GB: f64 = 3.0;
/// SmolVLA with its VLM frozen (train_expert_only, freeze_vision_encoder) is 3.0 GB at batch 8:
/// a frozen VLM keeps no activations for backward and has no optimizer state, so only the
/// ~100M expert trains. The guide's 10 GB floor matches the estimate at its recipes' batch 64
/// only with the reserve and context added, or a run that trains the VLM; 7.0 GB below it when
/// this was written.
const SMOLVLA_DEVIATION_GB: f64 = 7.5;

#[test]
fn lerobot_compute_guide_batch_8() {
    use Checkpointing::None as NoCkpt;
    let act = gb("act", 8, Precision::Fp32, NoCkpt, None);
    show(
        "ACT, fp32, AdamW",
        act,
        "~2–6GB",
        "inside: ResNet-18 activations at 480x640 dominate",
    );
    assert_inside("ACT", act, LIGHT_BC);

    let pi0 = gb("pi0", 8, Precision::Bf16True, NoCkpt, None);
    show(
        "pi0, bf16 weights, SigLIP frozen, 3 cameras",
        pi0,
        "~24–40GB",
        "just above: 816 prefix tokens through Gemma 2B keep ~30 GB (PI0_DEVIATION_GB)",
    );
    assert!(pi0 >= LARGE_VLA.0, "pi0 {pi0:.2} GB");
    assert_above_by("pi0 bf16", pi0, LARGE_VLA, PI0_DEVIATION_GB);

    // LeRobot's pi0 default `policy.dtype` is float32. The guide does not say which dtype its
    // envelope is for; in float32 every tensor (weights, gradients, AdamW states, activations)
    // is twice as wide, so that run cannot be inside the bf16-sized envelope. Asserted: it is
    // above the range, and the gap is the dtype: float32 / bf16 is 1.85-2.0 (2 where every
    // byte doubles; a little less because the fp32 logits and loss buffers do not).
    let pi0_fp32 = gb("pi0", 8, Precision::Fp32, NoCkpt, None);
    show(
        "pi0 with LeRobot's default dtype float32",
        pi0_fp32,
        "~24–40GB",
        "above: every tensor twice as wide as in bf16",
    );
    assert!(pi0_fp32 > LARGE_VLA.1, "pi0 fp32 {pi0_fp32:.2} GB");
    let ratio = pi0_fp32 / pi0;
    assert!(
        (1.85..=2.0).contains(&ratio),
        "pi0 float32 / bf16 = {ratio:.3} ({pi0_fp32:.2} / {pi0:.2} GB): not the dtype's factor"
    );

    let pi05 = gb("pi05", 8, Precision::Bf16True, NoCkpt, None);
    show(
        "pi0.5, bf16, 200-token prompt",
        pi05,
        "~24–40GB",
        "above: 968 prefix tokens vs pi0's 816 (PI05_DEVIATION_GB)",
    );
    assert_above_by("pi0.5 bf16", pi05, LARGE_VLA, PI05_DEVIATION_GB);
    // The gap is the prompt: pi0.5 differs from pi0 only in its 152 more prefix tokens.
    assert!(pi05 > pi0, "pi0.5 {pi05:.2} GB <= pi0 {pi0:.2} GB");

    let vqbet = gb("vqbet", 8, Precision::Fp32, NoCkpt, None);
    show(
        "VQ-BeT, fp32",
        vqbet,
        "~2–6GB",
        "below: a ResNet-18 on 96 px frames and an 8-layer GPT (VQBET_DEVIATION_GB)",
    );
    assert_below_by("VQ-BeT", vqbet, LIGHT_BC, VQBET_DEVIATION_GB);

    let diffusion = gb("diffusion", 8, Precision::Fp32, NoCkpt, None);
    let diffusion64 = gb("diffusion", 64, Precision::Fp32, NoCkpt, None);
    show(
        "Diffusion policy, fp32",
        diffusion,
        "~8–14GB",
        &format!("below: states of ~260M params dominate; {diffusion64:.1} GB at batch 64 (DIFFUSION_DEVIATION_GB)"),
    );
    assert_below_by(
        "Diffusion policy",
        diffusion,
        DIFFUSION,
        DIFFUSION_DEVIATION_GB,
    );
    // States dominate: eight times the batch adds less than a quarter.
    assert!(
        diffusion64 < diffusion * 1.25,
        "diffusion {diffusion:.2} GB at batch 8, {diffusion64:.2} GB at 64"
    );

    let smolvla = gb("smolvla", 8, Precision::Fp32, NoCkpt, None);
    let smolvla64 = gb("smolvla", 64, Precision::Fp32, NoCkpt, None);
    show(
        "SmolVLA, fp32, VLM frozen (train_expert_only)",
        smolvla,
        "~10–16GB",
        &format!("below: a frozen VLM keeps nothing; {smolvla64:.1} GB at its recipes' batch 64 (SMOLVLA_DEVIATION_GB)"),
    );
    assert_below_by("SmolVLA", smolvla, SMALL_VLA, SMOLVLA_DEVIATION_GB);
}

// openpi README (github.com/Physical-Intelligence/openpi), "Requirements", as published:
// "| Fine-Tuning (LoRA) | > 22.5 GB | RTX 4090 |" and
// "| Fine-Tuning (Full) | > 70 GB | A100 (80GB) / H100 |". No batch size is given.

/// "Fine-Tuning (Full) > 70 GB".
const OPENPI_FULL_MIN_GB: f64 = 70.0;
/// "Fine-Tuning (LoRA) > 22.5 GB", on an "RTX 4090" (24 GB).
const OPENPI_LORA_MIN_GB: f64 = 22.5;
const RTX_4090_GB: f64 = 24.0;
/// The LoRA estimate stays below the README's 22.5 GB at every batch up to 32 (17.9 GB at
/// batch 32 when this was written, 4.6 GB below): openpi is JAX, and XLA's buffers and
/// compile-time workspaces are not modelled (openpi preallocates a fraction of the card, so
/// what its README can report is what JAX held, not what the step needed).
const OPENPI_LORA_DEVIATION_GB: f64 = 5.0;

#[test]
fn openpi_readme_requirements() {
    let full = gb(
        "openpi-pi0",
        8,
        Precision::Bf16Mixed,
        Checkpointing::None,
        None,
    );
    show(
        "openpi pi0 full fine-tune, fp32 master + bf16 autocast",
        full,
        "> 70 GB",
        "inside: 16 B/param states + the 2 B/param autocast copies",
    );
    assert!(full > OPENPI_FULL_MIN_GB, "{full}");

    let lora = |batch| {
        gb(
            "openpi-pi0",
            batch,
            Precision::Bf16True,
            Checkpointing::Full,
            Some((16, "all-linear")),
        )
    };
    let (b8, b32) = (lora(8), lora(32));
    show(
        "openpi pi0 LoRA, bf16, blocks rematerialized, batch 8",
        b8,
        "> 22.5 GB",
        "fits the README's RTX 4090",
    );
    show(
        "openpi pi0 LoRA, bf16, blocks rematerialized, batch 32",
        b32,
        "> 22.5 GB",
        "below: JAX/XLA buffers not modelled (OPENPI_LORA_DEVIATION_GB)",
    );
    // The README's card holds the LoRA run at every batch checked.
    assert!(b8 < b32 && b32 < RTX_4090_GB, "LoRA {b8:.2} / {b32:.2} GB");
    assert_below_by(
        "openpi LoRA batch 32",
        b32,
        (OPENPI_LORA_MIN_GB, f64::INFINITY),
        OPENPI_LORA_DEVIATION_GB,
    );
}

// V-JEPA 2-AC: research/memory.md section 5 records "~80 GB" for the action-conditioned
// predictor at batch 64 (AMP, frozen ViT-g) and a 24 GB recipe at batch 16 with 4 accumulation
// steps; its source is not named there. "Needs 80 GB" is read as: more than the next smaller
// card (48 GB) and within an 80 GB card.

#[test]
fn vjepa2_action_conditioned_predictor() {
    let b64 = gb(
        "vjepa2-ac",
        64,
        Precision::Bf16Mixed,
        Checkpointing::None,
        None,
    );
    show("V-JEPA 2-AC, AMP, predictor over 4 x 258 tokens, batch 64", b64, "~80 GB", "modelled with 4 time steps of 258 tokens, which the ~80 GB figure matches; 8 steps would double the activations (memory.md section 5)");
    assert!(
        b64 > 48.0 && b64 <= 80.0,
        "V-JEPA 2-AC batch 64: {b64:.2} GB is not an 80 GB card's run"
    );

    let b16 = gb(
        "vjepa2-ac",
        16,
        Precision::Bf16Mixed,
        Checkpointing::None,
        None,
    );
    let b16_ckpt = gb(
        "vjepa2-ac",
        16,
        Precision::Bf16Mixed,
        Checkpointing::Full,
        None,
    );
    show(
        "V-JEPA 2-AC, batch 16 (x 4 accumulation)",
        b16,
        "fits 24 GB",
        &format!(
            "above: {b16_ckpt:.1} GB with activation checkpointing, which the 24 GB recipe needs"
        ),
    );
    // Without checkpointing batch 16 does not fit 24 GB; with it, it does: the 24 GB recipe
    // is explained by activation checkpointing.
    assert!(
        b16 > 24.0,
        "V-JEPA 2-AC batch 16 without checkpointing: {b16:.2} GB"
    );
    assert!(
        b16_ckpt <= 24.0,
        "V-JEPA 2-AC batch 16 with checkpointing: {b16_ckpt:.2} GB"
    );
}
