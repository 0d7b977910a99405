//! The estimator's reading of one fixture on one H100, as `hwlint check` plans it, and the
//! binary's JSON answer to one command: for the readings tests. Each test crate uses a part.
#![allow(dead_code)]

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

/// The plan of the config at `path` on one H100 (where axolotl's `bf16: auto` is bf16), with
/// the DeepSpeed JSON it names and `data_parallel` processes (`None`: unknown, as `check`).
pub fn plan_at(path: &Path, data_parallel: Option<i64>) -> Result<Planned, Gap> {
    let shown = path.display();
    let config = LoadedConfig::empty().unwrap();
    let settings = config.for_file(path, &Default::default()).unwrap();
    let target = resolve_target("h100-sxm", Path::new("."), "test").unwrap();
    let format = Format::from_path(path).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let doc = hwlint::syntax::parse(&text, format).unwrap();
    // The first root a dialect reads: the document, or in code the first config call.
    let (dialect, node) = doc
        .roots
        .iter()
        .find_map(|node| hwlint::dialect::detect(&settings.dialects, node, format, path))
        .unwrap_or_else(|| panic!("{shown}: no dialect detected"));
    let setup = hwlint::dialect::resolve(dialect, &node);
    assert!(
        setup.str(Concept::Model).is_some(),
        "{shown}: names no model"
    );
    let linked = hwlint::dialect::linked_deepspeed(&setup, path, &settings.dialects);
    plan_for(&Inputs {
        setup: &setup,
        linked: linked.as_ref().map(|l| &l.setup),
        models: &settings.models,
        base_dir: path.parent().unwrap(),
        target: &target,
        data_parallel,
        mem_fraction: None,
        semantics: &dialect.semantics,
    })
}

/// The plan of a fixture whose header comment cites a framework source line, on one GPU.
pub fn read(dir: &str, rel: &str) -> Result<Planned, Gap> {
    let path = fixture(dir, rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with('#') && text.contains(".py:"),
        "{rel}: the header comment cites a framework source line"
    );
    plan_at(&path, Some(1))
}

/// `hwlint ARGS` run in the repository, which must succeed, and its JSON output.
pub fn hwlint_json(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hwlint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first run of `hwlint --show-settings --output-format json PATH`: its settings, version,
/// ignored keys and memory.
pub fn show_settings(path: &str) -> serde_json::Value {
    hwlint_json(&["--show-settings", "--output-format", "json", path])["files"][0]["runs"][0]
        .clone()
}

/// The `concept` of each entry of a JSON list of settings (`settings`, `ignored`).
pub fn concepts(list: &serde_json::Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["concept"].as_str().unwrap())
        .collect()
}

/// What the estimator has no recipe for in a fixture the tests expect it to refuse (read
/// through [`read`], so the fixture cites its source).
pub fn unsupported(dir: &str, rel: &str) -> &'static str {
    match read(dir, rel) {
        Err(Gap::Unsupported(what)) => what,
        Err(other) => panic!("{rel}: expected no recipe, got {other:?}"),
        Ok(p) => panic!("{rel}: expected no recipe, got a plan: {:?}", p.plan),
    }
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
