//! Optimizer tricks as the file sets them (#25 item 3): GaLore's projected state and layer-wise
//! steps, optimizers hwlint has no recipe for (APOLLO) bounded, LitGPT's quantized runs on
//! bitsandbytes' PagedAdamW. Each fixture in fixtures/optimizers/ cites its source.

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::memory::estimate;
use hwlint::estimate::plan::Planned;
use support::gib;

const DIR: &str = "fixtures/optimizers";

fn planned(rel: &str) -> Planned {
    support::planned(DIR, rel)
}

#[test]
fn galore_layerwise_keeps_rank_r_moments_and_no_gradient_set() {
    let p = planned("llama-factory-galore-layerwise.yaml").plan;
    assert_eq!(p.galore, Some((128, vec!["all".to_string()])));
    assert!(p.step_in_backward, "layer-wise GaLore steps in backward");
    let e = estimate(&p);
    // Llama-3-8B: per block, each m x n linear keeps 128 x (2 max + min) elements (q and o
    // 1.57 M, k and v 1.18 M, gate/up/down 4.19 M each): 15.0 M x 32 blocks; the embedding,
    // head and norms (1.05 B) keep AdamW's two moments. All in bf16 (`pure_bf16`).
    let per_block: u64 =
        2 * 128 * (2 * 4096 + 4096) + 2 * 128 * (2 * 4096 + 1024) + 3 * 128 * (2 * 14336 + 4096);
    let projected = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336);
    let rest = e.trainable_params - projected;
    let want = (per_block * 32 + 2 * rest) as f64 * 2.0;
    assert!(
        (e.optimizer_bytes - want).abs() / want < 0.001,
        "{} vs {want}",
        e.optimizer_bytes
    );
    assert_eq!(e.gradients_bytes, 0.0);
    // Without GaLore the same full fine-tune needs AdamW's whole state and gradients.
    let mut plain = p.clone();
    plain.galore = None;
    plain.step_in_backward = false;
    assert!(
        gib(&p) < gib(&plain) / 2.0,
        "{} vs {}",
        gib(&p),
        gib(&plain)
    );
}

/// Asserts that `got`'s optimizer bytes are GaLore's: `state` projected elements over
/// `projected` parameters, the rest at the optimizer's own two moments, each element in the
/// bytes `plain` (the same step without GaLore) gives one.
fn assert_galore_bytes(got: &Planned, plain: &Planned, projected: u64, state: u64) {
    let e = estimate(&plain.plan);
    let per_element = e.optimizer_bytes / (2.0 * e.trainable_params as f64);
    let want = (2.0 * (e.trainable_params - projected) as f64 + state as f64) * per_element;
    let have = estimate(&got.plan).optimizer_bytes;
    assert!((have - want).abs() / want < 0.001, "{have} vs {want}");
}

#[test]
fn trainer_galore_reads_rank_from_optim_args_and_regex_targets() {
    let got = planned("hf-galore-adamw-8bit-attn-mlp.yaml");
    let p = &got.plan;
    assert_eq!(
        p.galore,
        Some((64, vec![".*.attn.*".to_string(), ".*.mlp.*".to_string()]))
    );
    assert_eq!(p.optimizer, hwlint::estimate::step::Optimizer::Adamw8bit);
    assert!(!p.step_in_backward);
    // Llama-2-7B: the regexes take every attention and MLP linear. Per block, q/k/v/o keep
    // 64 x (2 x 4096 + 4096) elements each, gate/up/down 64 x (2 x 11008 + 4096).
    let state = 32 * (4 * 64 * (2 * 4096 + 4096) + 3 * 64 * (2 * 11008 + 4096));
    let projected = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008);
    let mut plain = got.clone();
    plain.plan.galore = None;
    assert_galore_bytes(&got, &plain, projected, state);
}

#[test]
fn trainer_galore_layerwise_defaults_to_rank_128() {
    let got = planned("hf-galore-layerwise-default-rank.yaml");
    let p = &got.plan;
    let attention: Vec<String> = ["q_proj", "k_proj", "v_proj", "o_proj"]
        .map(String::from)
        .to_vec();
    assert_eq!(p.galore, Some((128, attention)));
    assert_eq!(p.optimizer, hwlint::estimate::step::Optimizer::Adamw);
    assert!(
        p.step_in_backward,
        "a layer-wise optimizer steps in backward"
    );
    assert_eq!(estimate(p).gradients_bytes, 0.0);
    // Only the four attention projections are projected; the MLP keeps AdamW's full moments.
    let state = 32 * 4 * 128 * (2 * 4096 + 4096);
    let projected = 32 * 4 * 4096 * 4096;
    let mut plain = got.clone();
    plain.plan.galore = None;
    plain.plan.step_in_backward = false;
    assert_galore_bytes(&got, &plain, projected, state);
}

#[test]
fn apollo_is_bounded_not_guessed() {
    let got = planned("llama-factory-apollo.yaml");
    assert!(
        got.bounded.iter().any(|b| b.what.contains("apollo")),
        "{:?}",
        got.bounded
    );
}

#[test]
fn litgpt_quantized_runs_on_paged_adamw() {
    let p = planned("litgpt-qlora-paged.yaml").plan;
    assert_eq!(p.optimizer, hwlint::estimate::step::Optimizer::PagedAdamw);
}

/// Every fixture in the folder is read by a test above.
#[test]
fn every_fixture_is_read() {
    support::every_fixture_named_in(DIR, include_str!("optimizer_readings.rs"));
}
