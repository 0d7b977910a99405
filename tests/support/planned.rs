//! The estimator's reading of one fixture on one H100, as `hwlint check` plans it: for the
//! readings tests whose fixtures each cite the framework source they follow.

use std::path::{Path, PathBuf};

use hwlint::dialect::Concept;
use hwlint::estimate::memory::estimate;
use hwlint::estimate::plan::{plan_for, Gap, Inputs, Planned};
use hwlint::estimate::step::Plan;
use hwlint::estimate::verdict::need_bytes;
use hwlint::settings::{resolve_target, LoadedConfig};
use hwlint::syntax::Format;

/// `rel` under the fixtures folder `dir` (`fixtures/objective`).
pub fn fixture(dir: &str, rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(rel)
}

/// The plan of a fixture whose header comment cites a framework source line, on one H100.
pub fn read(dir: &str, rel: &str) -> Result<Planned, Gap> {
    let path = fixture(dir, rel);
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

pub fn planned(dir: &str, rel: &str) -> Planned {
    read(dir, rel).unwrap_or_else(|gap| panic!("{rel}: no estimate: {gap:?}"))
}

/// What the allocator reserves at the plan's peak, GiB.
pub fn gib(plan: &Plan) -> f64 {
    need_bytes(&estimate(plan)) / (1u64 << 30) as f64
}

/// Every fixture in `dir` is named, in quotes, in the test's `source`.
pub fn every_fixture_named_in(dir: &str, source: &str) {
    for entry in std::fs::read_dir(fixture(dir, "")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            source.contains(&format!("\"{name}\"")),
            "{name} is read by no test"
        );
    }
}
