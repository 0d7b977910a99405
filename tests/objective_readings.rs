//! What the trainer optimises decides the step's shape: preference pairs run chosen and rejected
//! answers together, DPO runs a reference forward beside the policy's, GRPO trains on prompt +
//! completion with logits for the completion only, a reward model has no vocabulary logits.
//! Each fixture in fixtures/objective/ cites the framework source its reading follows; the
//! needs they give are checked against the same step read as plain SFT, which is what hwlint
//! read before (#25 items 1 and 2).

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::memory::estimate;
use hwlint::estimate::plan::Planned;
use support::gib;

const DIR: &str = "fixtures/objective";

fn planned(rel: &str) -> Planned {
    support::planned(DIR, rel)
}

/// The same step as one plain sequence per sample, with no reference forward: the reading
/// hwlint had before it knew the objective.
fn as_sft(plan: &hwlint::estimate::step::Plan) -> hwlint::estimate::step::Plan {
    let mut p = plan.clone();
    p.sequences = 1;
    p.reference_forward = false;
    p.logprob_loss = false;
    p.value_head = false;
    p.logits_tokens = None;
    p
}

#[test]
fn trl_dpo_runs_pairs_and_bounds_the_reference() {
    let got = planned("trl-dpo-full.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (4, 2, 1024));
    assert!(p.logprob_loss && !p.chunked_loss);
    // The top end runs a reference copy and its forward; the bottom end (ORPO/CPO) neither.
    assert!(p.reference_model && p.reference_forward);
    let lower = got.lower.as_ref().expect("the reference is bounded");
    assert!(!lower.reference_model && !lower.reference_forward);
    assert!(got
        .bounded
        .iter()
        .any(|b| b.what.contains("reference model")));
    // Eight sequences keep twice the activations of four, and the reference's forward is
    // the step's peak: the policy's logits and log-softmax (4 bytes a logit in bf16) plus the
    // reference's logits (2 more).
    let (e, sft) = (estimate(p), estimate(&as_sft(p)));
    let ratio = e.activations_bytes / sft.activations_bytes;
    assert!((ratio - 2.0).abs() < 0.01, "activations x{ratio:.3}");
    assert_eq!(e.peak_at, "the reference model's forward");
    let logits = 8.0 * 1024.0 * 151_936.0;
    assert!(
        (e.at_peak.logits / logits - 6.0).abs() < 0.01,
        "{} bytes a logit",
        e.at_peak.logits / logits
    );
}

#[test]
fn trl_dpo_with_precomputed_reference_runs_none() {
    let got = planned("trl-dpo-precomputed.yaml");
    let p = &got.plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.reference_model && !p.reference_forward);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
}

#[test]
fn trl_grpo_trains_prompt_and_completion() {
    let got = planned("trl-grpo.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (16, 1, 1536));
    assert_eq!(p.logits_tokens, Some(1024));
    assert!(!p.reference_model && !p.reference_forward && !p.chunked_loss);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
    // Read as SFT the step was 1024 tokens (TRL's `max_length` default) with a chunked loss;
    // the GRPO step holds 1536 tokens of activations and the completion's logits.
    let mut sft = as_sft(p);
    sft.seq_len = 1024;
    sft.chunked_loss = true;
    assert!(gib(p) > gib(&sft) * 1.5, "{} vs {}", gib(p), gib(&sft));
}

#[test]
fn trl_grpo_with_beta_loads_a_reference_and_bounds_an_unbounded_prompt() {
    let got = planned("trl-grpo-beta.yaml");
    let p = &got.plan;
    assert!(p.reference_model, "beta 0.04 loads a reference");
    // Its forward runs while completions are scored, not inside the training step.
    assert!(!p.reference_forward);
    assert_eq!(p.logits_tokens, Some(256));
    // The prompt runs up to Qwen2.5's 32768-token context less the completion.
    assert_eq!(p.seq_len, 32768);
    let lower = got.lower.as_ref().expect("the prompt is bounded");
    assert_eq!(lower.seq_len, 256);
    assert!(got.bounded.iter().any(|b| b.what.contains("prompt length")));
}

#[test]
fn trl_reward_model_has_no_vocabulary_logits() {
    let p = planned("trl-reward.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.arch.has_lm_loss());
    let e = estimate(&p);
    assert_eq!(e.logits_bytes, 0.0);
    assert!(
        e.params < 1_544_000_000,
        "no separate LM head: {}",
        e.params
    );
}

#[test]
fn llama_factory_dpo_lora_runs_the_reference_forward_without_a_copy() {
    let got = planned("llama-factory-dpo-lora.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (1, 2, 2048));
    assert!(
        !p.reference_model,
        "LoRA: the reference is the base with adapters off"
    );
    assert!(p.reference_forward);
    assert!(!p.logprob_loss, "LLaMA-Factory upcasts the logits to fp32");
    // The stage and loss name the trainer: nothing about the reference is bounded.
    assert!(
        !got.bounded.iter().any(|b| b.what.contains("reference")),
        "{:?}",
        got.bounded
    );
    let e = estimate(p);
    assert_eq!(e.peak_at, "the reference model's forward");
    assert!(gib(p) > gib(&as_sft(p)) * 1.4);
}

#[test]
fn llama_factory_orpo_runs_pairs_without_a_reference() {
    let p = planned("llama-factory-orpo-full.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.reference_model && !p.reference_forward);
}

#[test]
fn llama_factory_reward_model_computes_and_drops_its_logits() {
    let p = planned("llama-factory-rm-lora.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(p.value_head && !p.reference_forward);
    let e = estimate(&p);
    // Nothing of the logits survives into backward.
    assert_eq!(e.logits_bytes, 0.0);
}

#[test]
fn llama_factory_ppo_is_not_estimated() {
    let what = support::unsupported(DIR, "llama-factory-ppo.yaml");
    assert!(what.contains("PPO"), "{what}");
}

/// Every fixture in the folder is read by a test above.
#[test]
fn every_fixture_is_read() {
    support::every_fixture_named_in(DIR, include_str!("objective_readings.rs"));
}

#[test]
fn torchtune_lora_dpo_runs_pairs_and_the_base_as_reference() {
    let p = planned("torchtune-lora-dpo.yaml").plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (4, 2, 1024));
    assert!(p.reference_forward && !p.reference_model);
    let e = estimate(&p);
    // q (4096 + 4096), v (4096 + 1024), output_proj (4096 + 4096), gate/up (4096 + 14336) and
    // down (14336 + 4096), at rank 8 over 32 blocks.
    assert_eq!(
        e.trainable_params,
        32 * 8 * (8192 + 5120 + 8192 + 3 * 18432)
    );
    assert_eq!(e.peak_at, "the reference model's forward");
}
