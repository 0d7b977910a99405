//! The framework version a repository pins decides the defaults that changed between releases
//! (#25 item 9): TRL's SFT loss was the whole logits ("nll") until 1.7 and chunked since. The
//! fixtures in fixtures/versions/ pin TRL in a setup.py and a uv.lock above the config.

#[path = "support/planned.rs"]
mod support;

use serde_json::Value;

fn settings(rel: &str) -> Value {
    support::show_settings(rel)
}

fn setting<'v>(run: &'v Value, concept: &str) -> &'v Value {
    run["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["concept"] == concept)
        .unwrap_or_else(|| panic!("no {concept}"))
}

/// A release in the JSON of `--show-settings` (`framework_version`, `bitsandbytes_version`)
/// that a file pinned: `version`, from the line `from` begins with.
fn assert_pinned(v: &Value, version: &str, from: &str) {
    assert_eq!(v["version"], version);
    assert_eq!(v["pinned"], true);
    assert!(v["from"].as_str().unwrap().starts_with(from), "{v}");
}

#[test]
fn a_setup_py_pin_gives_that_releases_defaults() {
    let run = settings("fixtures/versions/trl-0.19/recipes/sft.yaml");
    assert_pinned(&run["framework_version"], "0.19.0", "../setup.py:6");
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

fn peak_allocated(run: &Value) -> f64 {
    run["memory"]["peak_allocated_bytes"].as_f64().unwrap()
}

fn estimated_peak(config: &str, bitsandbytes: &str) -> f64 {
    support::hwlint_json(&[
        "estimate",
        config,
        "--bitsandbytes",
        bitsandbytes,
        "--output-format",
        "json",
    ])["peak_allocated_bytes"]
        .as_f64()
        .unwrap()
}

/// #25 item 7: bitsandbytes' MatMul4Bit kept each input for backward until 0.43.2.
#[test]
fn a_bitsandbytes_pin_decides_what_the_4bit_matmuls_keep() {
    let old = settings("fixtures/versions/bnb-0.42/recipes/qlora.yaml");
    assert_pinned(
        &old["bitsandbytes_version"],
        "0.42.0",
        "../requirements.txt:4",
    );
    let new = settings("fixtures/versions/bnb-newest/qlora.yaml");
    assert_eq!(new["bitsandbytes_version"]["pinned"], false);
    // Llama-2-7B (hidden 4096, intermediate 11008, 32 layers), 4 x 2048 tokens, nothing
    // recomputed: 0.42.0 also keeps, in bf16, the normed input of q/k/v and of gate/up and the
    // SwiGLU product down reads (the attention output o reads is SDPA's own, kept anyway).
    let kept = ((2_u64 * 4096 + 11008) * 2 * 32 * 4 * 2048) as f64;
    let diff = peak_allocated(&old) - peak_allocated(&new);
    assert!(
        (diff - kept).abs() < 0.01 * kept,
        "0.42.0 keeps {diff} bytes more, expected {kept}"
    );
    // `--bitsandbytes` stands over the pin.
    let flagged = estimated_peak("fixtures/versions/bnb-0.42/recipes/qlora.yaml", "0.43.2");
    assert_eq!(flagged, peak_allocated(&new));
}

/// torchtune's NF4 is torchao's, which keeps no input whatever bitsandbytes the repository pins.
#[test]
fn torchao_nf4_follows_no_bitsandbytes_release() {
    let config = "fixtures/versions/bnb-0.42/recipes/torchtune_qlora.yaml";
    let run = settings(config);
    assert_eq!(setting(&run, "load_in_4bit")["value"], true);
    assert_eq!(setting(&run, "quantizer")["value"], "torchao");
    assert!(run["bitsandbytes_version"].is_null(), "{run}");
    assert_eq!(
        estimated_peak(config, "0.42.0"),
        estimated_peak(config, "0.50.1")
    );
}

/// A config whose repository pins the Trainer's default to adamw_torch, and the pin that decided
/// it: the optimizer step keeps foreach AdamW's temporaries on top of the states the fused
/// default's step has (Qwen2.5-1.5B: more than 2 GiB).
fn assert_unfused_default(config: &str, decided_by: &str) {
    let old = settings(config);
    let optim = setting(&old, "optimizer");
    assert_eq!(optim["value"], "adamw_torch");
    assert!(
        optim["described"].as_str().unwrap().contains(decided_by),
        "{optim}"
    );
    let new = settings("fixtures/versions/torch-newest/full.yaml");
    assert_eq!(setting(&new, "optimizer")["value"], "adamw_torch_fused");
    let (old_need, new_need) = (
        old["memory"]["need_bytes"].as_f64().unwrap(),
        new["memory"]["need_bytes"].as_f64().unwrap(),
    );
    assert!(
        old_need > new_need + 2.0 * (1u64 << 30) as f64,
        "{old_need} vs {new_need}"
    );
}

/// transformers' Trainer defaults `optim` to adamw_torch_fused only on torch 2.8 or later: the
/// torch a repository pins decides the foreach temporaries of the optimizer step.
#[test]
fn a_torch_pin_decides_the_trainers_default_optimizer() {
    assert_unfused_default(
        "fixtures/versions/torch-2.5/recipes/full.yaml",
        "under torch 2.5.1 (../requirements.txt:4)",
    );
}

/// The fused default came with transformers 4.54.0: an older transformers on a new torch still
/// defaults to adamw_torch.
#[test]
fn a_transformers_pin_decides_the_trainers_default_optimizer() {
    assert_unfused_default(
        "fixtures/versions/transformers-4.53/recipes/full.yaml",
        "under transformers 4.53.3 (../requirements.txt:6)",
    );
}

/// A dialect whose defaults were read at one release says so when the repository pins an older
/// one, on the version line and on every default it gives.
#[test]
fn a_pin_older_than_the_release_read_is_said_to_be_unchecked() {
    let old = settings("fixtures/versions/axolotl-0.12/recipes/lora.yml");
    let from = old["framework_version"]["from"].as_str().unwrap();
    assert_eq!(old["framework_version"]["version"], "0.12.2");
    assert!(
        from.contains("read at 0.18.0, none checked for older releases"),
        "{from}"
    );
    let workers = setting(&old, "num_workers");
    assert!(
        workers["described"]
            .as_str()
            .unwrap()
            .contains("not set: axolotl 0.18.0 default, not checked for the pinned 0.12.2"),
        "{workers}"
    );
    // Without a pin: the release read, with nothing to flag.
    let new = settings("fixtures/objective/axolotl-dpo-lora.yaml");
    assert!(setting(&new, "num_workers")["described"]
        .as_str()
        .unwrap()
        .contains("not set: axolotl 0.18.0 default"));
}

/// What TRL's GRPO samples at once and whether it keeps a KV cache changed between releases
/// (#25 item 2): before 0.18 each micro-batch sampled its own; from 0.18 one generation serves
/// the accumulation's micro-batches; before 0.22 a checkpointed model sampled in training mode,
/// with no cache.
#[test]
fn grpo_sampling_follows_the_trl_release() {
    let generation = |config: &str| {
        support::hwlint_json(&["estimate", config, "--output-format", "json"])["plan"]["generation"]
            .clone()
    };
    let g = generation("fixtures/versions/trl-0.17-grpo/recipes/grpo.yaml");
    assert_eq!(
        (g["rows"].clone(), g["steps"].clone()),
        (Value::Null, 1.into())
    );
    assert_eq!(g["cache"], false);
    let g = generation("fixtures/versions/trl-0.18-grpo/recipes/grpo.yaml");
    assert_eq!(g["rows"], 64);
    assert_eq!(g["cache"], false);
    let g = generation("fixtures/objective/trl-grpo.yaml");
    assert_eq!(g["rows"], 64);
    assert_eq!(g["cache"], true);
}

/// A config named without a folder, run from its own folder, finds the pin beside it (its
/// parent is the empty path, which is the current folder).
#[test]
fn a_bare_file_name_finds_the_pin_in_the_current_folder() {
    let dir = support::fixture("fixtures/versions", "trl-0.19/recipes");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
        .current_dir(&dir)
        .args(["--show-settings", "--output-format", "json", "sft.yaml"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_pinned(
        &v["files"][0]["runs"][0]["framework_version"],
        "0.19.0",
        "../setup.py:6",
    );
}

/// Lightning ships as `lightning` and as `pytorch-lightning` (spelled `pytorch_lightning` too):
/// either pin decides the release.
#[test]
fn a_pytorch_lightning_pin_is_a_lightning_pin() {
    let run = settings("fixtures/versions/lightning-pl/configs/fit.yaml");
    assert_pinned(&run["framework_version"], "2.1.3", "../requirements.txt:1");
}

/// #25: keys only torchtune's unreleased main reads (`since = "0.7.0"`) have no effect where the
/// repository pins 0.6.1: the recipe trains in `dtype` (not fp8), without context parallelism,
/// and saves and validates per epoch. The same file with no pin above it is read as written.
#[test]
fn a_pinned_torchtune_release_ignores_keys_it_does_not_read() {
    let rel = "fixtures/versions/torchtune-0.6.1/configs/llama3_1_8B_full_fp8_cp.yaml";
    let run = settings(rel);
    assert_pinned(&run["framework_version"], "0.6.1", "../requirements.txt:2");
    let precision = setting(&run, "precision");
    assert_eq!(precision["value"], "bf16-true");
    assert_eq!(precision["key"], "dtype");
    let cp = setting(&run, "context_parallel");
    assert_eq!(cp["value"], 1);
    assert!(
        cp["described"]
            .as_str()
            .unwrap()
            .contains("set, but torchtune reads it from 0.7.0 on"),
        "{cp}"
    );
    let ignored = support::concepts(&run["ignored"]);
    assert_eq!(
        ignored,
        [
            "save_interval",
            "eval_interval",
            "precision",
            "context_parallel"
        ]
    );
    for concept in ["save_interval", "eval_interval"] {
        assert!(
            run["settings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["concept"] != concept),
            "{concept} is read"
        );
    }
    // Estimated in bf16, where main's fp8 has no recipe.
    assert!(
        run["memory"]["need_bytes"].as_f64().is_some(),
        "{}",
        run["memory"]
    );

    // Without the pin: main's keys are read.
    let dir = tempfile::tempdir().unwrap();
    let loose = dir.path().join("llama3_1_8B_full_fp8_cp.yaml");
    std::fs::copy(rel, &loose).unwrap();
    let run = settings(loose.to_str().unwrap());
    assert_eq!(run["framework_version"]["pinned"], false);
    assert_eq!(setting(&run, "precision")["value"], "fp8");
    assert_eq!(setting(&run, "context_parallel")["value"], 2);
    assert_eq!(setting(&run, "save_interval")["value"], 500);
    assert!(run["ignored"].as_array().unwrap().is_empty());
}
