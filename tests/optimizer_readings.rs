//! Optimizer tricks as the file sets them (#25 item 3): GaLore's projected state and layer-wise
//! steps, optimizers hwlint has no recipe for (APOLLO) bounded, LitGPT's quantized runs on
//! bitsandbytes' PagedAdamW. Each fixture in fixtures/optimizers/ cites its source.

use std::path::{Path, PathBuf};

use hwlint::dialect::Concept;
use hwlint::estimate::memory::estimate;
use hwlint::estimate::plan::{plan_for, Gap, Inputs, Planned};
use hwlint::estimate::verdict::need_bytes;
use hwlint::settings::{resolve_target, LoadedConfig};
use hwlint::syntax::Format;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/optimizers")
        .join(rel)
}

/// The estimator's reading of a fixture on one H100.
fn read(rel: &str) -> Result<Planned, Gap> {
    let path = fixture(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with('#') && text.contains(".py:"),
        "{rel}: the header comment cites a framework source line"
    );
    let config = LoadedConfig::empty().unwrap();
    let settings = config.for_file(&path, &Default::default()).unwrap();
    let target = resolve_target("h100-sxm", Path::new("."), "test").unwrap();
    let format = Format::from_path(&path).unwrap();
    let doc = hwlint::syntax::parse(&text, format).unwrap();
    let node = doc.roots.first().expect("one document");
    let (dialect, node) = hwlint::dialect::detect(&settings.dialects, node, format, &path)
        .unwrap_or_else(|| panic!("{rel}: no dialect detected"));
    let setup = hwlint::dialect::resolve(dialect, &node);
    assert!(setup.str(Concept::Model).is_some(), "{rel}: names no model");
    plan_for(&Inputs {
        setup: &setup,
        linked: None,
        models: &settings.models,
        base_dir: path.parent().unwrap(),
        target: &target,
        data_parallel: Some(1),
        mem_fraction: None,
        global_batch_splits: false,
        sharding_in_file_only: false,
    })
}

fn planned(rel: &str) -> Planned {
    read(rel).unwrap_or_else(|gap| panic!("{rel}: no estimate: {gap:?}"))
}

fn gib(plan: &hwlint::estimate::step::Plan) -> f64 {
    need_bytes(&estimate(plan)) / (1u64 << 30) as f64
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
    let source = include_str!("optimizer_readings.rs");
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            source.contains(&format!("\"{name}\"")),
            "{name} is read by no test"
        );
    }
}
