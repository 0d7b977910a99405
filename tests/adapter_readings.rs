//! Adapters as the file sets them (#25 item 4): LitGPT's six `lora_*` switches, axolotl's
//! `adapter` gate, `lora_target_linear` and `lora_modules_to_save`, LLaMA-Factory's
//! `additional_target` and TRL's `lora_modules_to_save`. Each fixture in fixtures/adapters/ cites
//! the framework source its reading follows.

use std::path::{Path, PathBuf};

use hwlint::dialect::Concept;
use hwlint::estimate::memory::estimate;
use hwlint::estimate::plan::{plan_for, Gap, Inputs, Planned};
use hwlint::estimate::verdict::need_bytes;
use hwlint::settings::{resolve_target, LoadedConfig};
use hwlint::syntax::Format;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/adapters")
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

fn targets(p: &hwlint::estimate::step::Plan) -> Option<(u64, String)> {
    p.lora.as_ref().map(|(r, t)| (*r, t.join(",")))
}

#[test]
fn litgpt_switches_name_the_adapted_layers() {
    let p = planned("litgpt-switches.yaml").plan;
    assert_eq!(
        targets(&p),
        Some((
            8,
            "q_proj,k_proj,v_proj,gate_proj,up_proj,down_proj".to_string()
        ))
    );
    let d = planned("litgpt-defaults.yaml").plan;
    assert_eq!(targets(&d), Some((8, "q_proj,v_proj".to_string())));
    // Key and MLP adapters on a 7B: the trainable count grows from q/v's 4.2 M to 16.4 M
    // (k: 4096 x (4096 + 4096) x 8 x 32 layers; MLP: 3 x 8 x (4096 + 11008) x 32).
    let (switched, default) = (estimate(&p).trainable_params, estimate(&d).trainable_params);
    assert_eq!(default, 4_194_304);
    assert_eq!(switched, 4_194_304 + 2_097_152 + 11_599_872);
}

#[test]
fn axolotl_lora_r_without_an_adapter_is_a_full_fine_tune() {
    let p = planned("axolotl-lora-r-no-adapter.yaml").plan;
    assert!(p.lora.is_none());
    let e = estimate(&p);
    assert_eq!(e.trainable_params, e.params);
}

#[test]
fn axolotl_target_linear_wins_and_modules_to_save_train_whole() {
    let p = planned("axolotl-linear-and-modules-to-save.yaml").plan;
    assert_eq!(targets(&p), Some((16, "all-linear".to_string())));
    assert_eq!(p.modules_to_save, ["embed_tokens", "lm_head"]);
    let mut without = p.clone();
    without.modules_to_save.clear();
    let more = estimate(&p).trainable_params - estimate(&without).trainable_params;
    assert_eq!(more, 2 * 151_936 * 896);
    assert!(
        gib(&p) > gib(&without) + 1.0,
        "{} vs {}",
        gib(&p),
        gib(&without)
    );
}

#[test]
fn llama_factory_additional_target_trains_whole() {
    let p = planned("llama-factory-additional-target.yaml").plan;
    assert_eq!(p.modules_to_save, ["embed_tokens", "lm_head"]);
}

#[test]
fn trl_lora_modules_to_save_trains_whole() {
    let p = planned("trl-modules-to-save.yaml").plan;
    assert_eq!(targets(&p), Some((16, "q_proj,v_proj".to_string())));
    assert_eq!(p.modules_to_save, ["lm_head"]);
}

/// Every fixture in the folder is read by a test above.
#[test]
fn every_fixture_is_read() {
    let source = include_str!("adapter_readings.rs");
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            source.contains(&format!("\"{name}\"")),
            "{name} is read by no test"
        );
    }
}
