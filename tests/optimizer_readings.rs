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
