//! The framework version a repository pins decides the defaults that changed between releases
//! (#25 item 9): TRL's SFT loss was the whole logits ("nll") until 1.7 and chunked since. The
//! fixtures in fixtures/versions/ pin TRL in a setup.py and a uv.lock above the config.

#[path = "support/planned.rs"]
mod support;

use serde_json::Value;

fn settings(rel: &str) -> Value {
    support::hwlint_json(&["--show-settings", "--output-format", "json", rel])["files"][0]["runs"]
        [0]
    .clone()
}

fn setting<'v>(run: &'v Value, concept: &str) -> &'v Value {
    run["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["concept"] == concept)
        .unwrap_or_else(|| panic!("no {concept}"))
}

#[test]
fn a_setup_py_pin_gives_that_releases_defaults() {
    let run = settings("fixtures/versions/trl-0.19/recipes/sft.yaml");
    let v = &run["framework_version"];
    assert_eq!(v["version"], "0.19.0");
    assert_eq!(v["pinned"], true);
    assert!(
        v["from"].as_str().unwrap().starts_with("../setup.py:6"),
        "{v}"
    );
    let chunked = setting(&run, "chunked_loss");
    assert_eq!(chunked["value"], false);
    assert!(
        chunked["described"]
            .as_str()
            .unwrap()
            .contains("0.19.0 default"),
        "{chunked}"
    );
    // The whole logits of 4 x 8192 tokens: the step needs far more than the chunked one.
    let (pinned, newest) = (
        run["memory"]["need_bytes"].as_f64().unwrap(),
        settings("fixtures/versions/trl-uv-lock/recipes/sft.yaml")["memory"]["need_bytes"]
            .as_f64()
            .unwrap(),
    );
    assert!(pinned > newest * 1.3, "{pinned} vs {newest}");
}

#[test]
fn a_lock_file_gives_the_installed_release() {
    let run = settings("fixtures/versions/trl-uv-lock/recipes/sft.yaml");
    assert_eq!(run["framework_version"]["version"], "1.7.1");
    assert_eq!(run["framework_version"]["from"], "../uv.lock:11");
    assert_eq!(setting(&run, "chunked_loss")["value"], true);
}

#[test]
fn no_pin_gives_the_newest_release_hwlint_knows() {
    let run = settings("fixtures/dialects/trl-sft.yaml");
    let v = &run["framework_version"];
    assert_eq!(v["pinned"], false);
    assert_eq!(v["version"], "1.9.0");
}

#[test]
fn grpo_without_beta_loads_a_reference_before_trl_0_19() {
    let old = settings("fixtures/versions/trl-0.18-grpo/recipes/grpo.yaml");
    assert_eq!(old["framework_version"]["version"], "0.18.0");
    assert_eq!(setting(&old, "reference_model")["value"], true);
    // The same recipe under the newest TRL: beta 0.0, no reference.
    let new = settings("fixtures/objective/trl-grpo.yaml");
    assert_eq!(setting(&new, "reference_model")["value"], false);
    assert!(
        old["memory"]["need_bytes"].as_f64().unwrap()
            > new["memory"]["need_bytes"].as_f64().unwrap()
    );
}
