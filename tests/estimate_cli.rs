//! `hwlint estimate`: human and JSON output snapshots, and errors that say what to pass.

use assert_cmd::Command;

fn hwlint() -> Command {
    let mut c = Command::cargo_bin("hwlint").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = hwlint().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn from_flags_human() {
    let (code, out, _) = run(&[
        "estimate",
        "--model",
        "tinyllama-1.1b",
        "--batch-size",
        "8",
        "--seq-len",
        "2048",
        "--precision",
        "bf16-mixed",
        "--targets",
        "rtx-4090,a100-80gb,h100-sxm",
        "--steps",
        "10000",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("estimate_flags_human", out);
}

#[test]
fn from_a_config_json() {
    let (code, out, _) = run(&[
        "estimate",
        "fixtures/rules/HW101/bad-trl.yaml",
        "--target",
        "rtx-4090",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["fits"], false);
    assert!(v["peak_allocated_bytes"].as_f64().unwrap() > 0.0);
    assert!(v["max_micro_batch"].as_u64().unwrap() >= 1);
    insta::assert_snapshot!("estimate_config_json", out);
}

#[test]
fn lora_over_a_bf16_base_on_every_gpu() {
    let (code, out, _) = run(&[
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-8B",
        "--batch-size",
        "4",
        "--seq-len",
        "4096",
        "--precision",
        "bf16-true",
        "--lora-r",
        "16",
        "--checkpointing",
        "full",
        "--targets",
        "all",
    ]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("estimate_lora_matrix", out);
}

#[test]
fn errors_say_what_to_pass() {
    let (code, _, err) = run(&["estimate", "--batch-size", "8"]);
    assert_eq!(code, 2);
    assert!(err.contains("--model"), "{err}");
    // No sequence length: the need from 512 tokens to the model's context, and the longest
    // that fits (gpt2: all 1024 tokens at micro-batch 8 on the default RTX 4090).
    let (code, out, err) = run(&["estimate", "--model", "gpt2", "--batch-size", "8"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("the sequence length is not set (pass --seq-len N)"),
        "{out}"
    );
    // One verdict: one figure per length and one longest sequence, no "X-X GiB" ranges.
    assert!(
        out.lines()
            .any(|l| l == "  longest sequence that fits rtx-4090: all 1024 tokens"),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("512 "))
        .unwrap_or_default();
    assert!(row.ends_with(" GiB") && !row.contains('-'), "{out}");
    let (code, _, err) = run(&["estimate", "--model", "no-such-model", "--seq-len", "8"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model"), "{err}");
    let (code, _, err) = run(&[
        "estimate",
        "--model",
        "gpt2",
        "--seq-len",
        "8",
        "--memory-fraction",
        "1.5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("outside (0, 1]"), "{err}");
}

#[test]
fn jax_memory_fraction_shrinks_usable_memory() {
    let args = [
        "estimate",
        "--model",
        "gpt2",
        "--batch-size",
        "8",
        "--seq-len",
        "1024",
        "--target",
        "h100-sxm",
        "--format",
        "json",
    ];
    let (_, full, _) = run(&args);
    let mut with = args.to_vec();
    with.extend(["--memory-fraction", "0.75"]);
    let (_, frac, _) = run(&with);
    let u = |s: &str| {
        serde_json::from_str::<serde_json::Value>(s).unwrap()["usable_bytes"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(u(&frac), 0.75 * 85017493504.0);
    assert!(u(&full) > u(&frac));
}

/// A training config naming a local model folder: its config.json gives the architecture.
#[test]
fn local_model_folder_config_json() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("models/my-llama")).unwrap();
    std::fs::write(
        d.path().join("models/my-llama/config.json"),
        r#"{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 22, "num_attention_heads": 32,
            "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 32000}"#,
    )
    .unwrap();
    std::fs::write(
        d.path().join("sft.yaml"),
        "model_name_or_path: models/my-llama\ndataset_name: x/y\nmax_length: 2048\nper_device_train_batch_size: 8\ngradient_checkpointing: false\n",
    )
    .unwrap();
    let out = Command::cargo_bin("hwlint")
        .unwrap()
        .current_dir(d.path())
        .args([
            "estimate", "sft.yaml", "--target", "h100-sxm", "--format", "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // TinyLlama's dimensions: 1.1 B parameters.
    assert_eq!(v["params"], 1_100_048_384u64);
    // And `check` runs the memory rules on it (no HW901).
    let out = Command::cargo_bin("hwlint")
        .unwrap()
        .current_dir(d.path())
        .args([
            "check",
            "sft.yaml",
            "--output-format",
            "concise",
            "--target",
            "rtx-4090",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HW101") && !text.contains("HW901"), "{text}");
}

/// A model in the local Hugging Face cache is read from its config.json there: no catalog
/// entry, no network. Without the cache, the same name is unknown (HW901).
#[test]
fn a_model_in_the_hugging_face_cache_is_read_from_there() {
    let home = tempfile::tempdir().unwrap();
    let repo = home.path().join("hf/hub/models--acme--tiny-llama");
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::create_dir_all(repo.join("snapshots/abc123")).unwrap();
    std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
    std::fs::write(
        repo.join("snapshots/abc123/config.json"),
        r#"{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 22,
            "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 5632,
            "vocab_size": 32000, "torch_dtype": "bfloat16"}"#,
    )
    .unwrap();
    let config = home.path().join("sft.yaml");
    std::fs::write(
        &config,
        "model_name_or_path: acme/tiny-llama\ndataset_name: x/y\nper_device_train_batch_size: 2\nmax_length: 512\nlearning_rate: 1.0e-5\n",
    )
    .unwrap();
    let run_with = |hf_home: &std::path::Path, args: &[&str]| {
        let out = hwlint()
            .env("HOME", home.path())
            .env("HF_HOME", hf_home)
            .env_remove("HF_HUB_CACHE")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let hf = home.path().join("hf");
    let (code, out) = run_with(
        &hf,
        &[
            "estimate",
            "--model",
            "acme/tiny-llama",
            "--batch-size",
            "1",
            "--seq-len",
            "128",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // TinyLlama's dimensions: 1,100,048,384 parameters.
    assert_eq!(v["params"], 1_100_048_384u64);
    let path = config.to_str().unwrap();
    let (_, found) = run_with(&hf, &["check", path, "--output-format", "concise"]);
    assert!(!found.contains("HW901"), "{found}");
    let (_, missing) = run_with(
        &home.path().join("elsewhere"),
        &["check", path, "--output-format", "concise"],
    );
    assert!(
        missing.contains("HW901 model `acme/tiny-llama` is not in hwlint's catalog"),
        "{missing}"
    );
}

/// With a config, each flag replaces only the input it names; the `inputs` line credits the
/// file for what it gave and the flag for the rest, and options may follow the config.
#[test]
fn flags_override_only_their_own_input() {
    let (code, out, err) = run(&[
        "estimate",
        "fixtures/dialects/trl-sft.yaml",
        "--target",
        "rtx-4090",
        "--batch-size",
        "2",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let from = |input: &str| {
        v["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["input"] == input)
            .map(|i| i["from"].as_str().unwrap().to_string())
    };
    assert_eq!(from("batch_size").as_deref(), Some("flag"));
    assert_eq!(from("seq_len").as_deref(), Some("`max_length`"));
    assert_eq!(from("weight dtype").as_deref(), Some("`torch_dtype`"));
    assert_eq!(v["plan"]["batch"], 2);
    assert_eq!(v["plan"]["seq_len"], 2048);
    // The file's bf16 weights stay: the flag changed the batch only.
    assert_eq!(v["plan"]["precision"], "bf16-true");

    // A config that lacks an input gets it from its flag, and says so.
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("run.yaml");
    std::fs::write(
        &cfg,
        "model_name_or_path: Qwen/Qwen2.5-0.5B\nper_device_train_batch_size: 4\nnum_train_epochs: 1\nlearning_rate: 1.0e-5\noutput_dir: out\nbf16: true\n",
    )
    .unwrap();
    let path = cfg.to_str().unwrap();
    // The file gives no sequence length and TRL's SFT default does not apply to a file either
    // trainer could run: the need is bounded by the model's context, length by length.
    let (code, out, err) = run(&["estimate", path, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["by_length"]["context"], 32768);
    let needs = v["by_length"]["needs"].as_array().unwrap();
    assert_eq!(needs[0][0], 512);
    // The need grows with the length, and its least never exceeds its most.
    for w in needs.windows(2) {
        assert!(w[0][1].as_f64() < w[1][1].as_f64(), "{needs:?}");
    }
    for n in needs {
        assert!(n[2].as_f64() <= n[1].as_f64(), "{n:?}");
    }
    let (code, out, err) = run(&["estimate", path, "--seq-len", "512", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["plan"]["seq_len"], 512);
    assert_eq!(v["plan"]["batch"], 4);

    // `--zero` states the sharding, not the precision: torchtitan's FSDP keeps fp32 shards and
    // computes in bf16 whatever the stage; `--zero 0` (no FSDP) autocasts instead.
    let titan = "fixtures/estimate/torchtitan/defaults.toml";
    let plan_of = |extra: &[&str]| {
        let mut args = vec!["estimate", titan, "--gpus", "8", "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["plan"].clone()
    };
    let plain = plan_of(&[]);
    let zero3 = plan_of(&["--zero", "3"]);
    assert_eq!(plain["master_weights"], true, "{plain}");
    assert_eq!(zero3["master_weights"], plain["master_weights"]);
    assert_eq!(zero3["precision"], plain["precision"]);
    assert_eq!(zero3["zero_stage"], 3);
    let zero0 = plan_of(&["--zero", "0"]);
    assert_eq!(zero0["master_weights"], false, "{zero0}");
    assert_eq!(zero0["zero_stage"], 0);
}

/// `estimate FILE` and `check FILE` give one answer: over every fixture, on the default target
/// and on an H100, a run `estimate` says does not fit is one `check` reports (HW101, or HW104
/// when JAX's memory fraction is the limit), a one-run file `check` reports does not fit, and
/// HW102's "up to micro-batch N" is `estimate`'s max micro-batch.
#[test]
fn estimate_and_check_agree_on_every_fixture() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut compared = 0;
    for target in [None, Some("h100-sxm")] {
        let mut c = hwlint();
        c.args([
            "check",
            "fixtures",
            "--output-format",
            "json",
            "--exit-zero",
        ]);
        if let Some(t) = target {
            c.args(["--target", t]);
        }
        let out = c.output().unwrap();
        let diags: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        let mut by_file: std::collections::BTreeMap<String, Vec<&serde_json::Value>> =
            Default::default();
        for d in &diags {
            let file = d["filename"].as_str().unwrap();
            let rel = std::path::Path::new(file)
                .strip_prefix(root)
                .map_or(file.to_string(), |p| p.display().to_string());
            by_file.entry(rel).or_default().push(d);
        }
        let files = ignore::WalkBuilder::new(root.join("fixtures"))
            .hidden(false)
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(root).unwrap().to_path_buf())
            .filter(|p| hwlint::syntax::Format::from_path(p).is_some())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name != "hwlint.toml" && name != "pyproject.toml" && !name.contains(".fixed.")
            });
        for file in files {
            let name = file.display().to_string();
            let mut e = hwlint();
            e.args(["estimate", &name, "--output-format", "json"]);
            if let Some(t) = target {
                e.args(["--target", t]);
            }
            let out = e.output().unwrap();
            if out.status.code() != Some(0) {
                continue;
            }
            let est: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let found = by_file.get(&name).cloned().unwrap_or_default();
            let has = |code: &str| found.iter().any(|d| d["code"] == code);
            // A Hydra-composed file: a value another file of the composition writes is that
            // file's to report, so the finding may sit there (looked up only when needed).
            let composed_has = |code: &str| {
                let mut c = hwlint();
                c.args(["--show-settings", "--output-format", "json", &name]);
                let out = c.output().unwrap();
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
                v["files"][0]["runs"][0]["merged"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|x| x["what"].as_str().is_some_and(|w| w.starts_with("Hydra")))
                    .filter_map(|x| x["path"].as_str())
                    .any(|p| {
                        by_file
                            .get(p)
                            .is_some_and(|ds| ds.iter().any(|d| d["code"] == code))
                    })
            };
            let one_run = matches!(
                file.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml" | "json" | "toml")
            );
            let short = est["verdict"] == "does not fit";
            compared += 1;
            assert!(
                !short
                    || has("HW101")
                    || has("HW104")
                    || composed_has("HW101")
                    || composed_has("HW104"),
                "{name} on {target:?}: estimate says it does not fit, check reports neither HW101 nor HW104"
            );
            if one_run {
                assert!(
                    short || !has("HW101"),
                    "{name} on {target:?}: check reports HW101, estimate says {}",
                    est["verdict"]
                );
            }
            for d in found.iter().filter(|d| d["code"] == "HW102") {
                let message = d["message"].as_str().unwrap();
                let n = message
                    .split("up to micro-batch ")
                    .nth(1)
                    .and_then(|s| s.split(' ').next())
                    .unwrap();
                if one_run {
                    assert_eq!(
                        n,
                        est["max_micro_batch"].to_string(),
                        "{name} on {target:?}: HW102 says {message}"
                    );
                }
            }
        }
    }
    assert!(compared > 150, "{compared}");
}

/// A config that does not train has no training step: `estimate` says so (exit 2), and
/// `--show-settings --output-format json` gives it no memory, as the memory rules skip it.
#[test]
fn a_run_that_does_not_train_has_no_estimate() {
    let file = "fixtures/rules/HW202/clean-hf-trainer-eval-only.yaml";
    let (code, _, stderr) = run(&["estimate", file]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("not a training run") && stderr.contains("do_train"),
        "{stderr}"
    );
    let (_, out, _) = run(&["check", "--show-settings", "--output-format", "json", file]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let run = &v["files"][0]["runs"][0];
    assert!(
        run["not_training"].is_string() && run["memory"].is_null(),
        "{run}"
    );
}

/// A config that describes its model by its dimensions (OLMo's `model:` block) gets an estimate
/// of that model: 8 blocks of d_model 512 with a SwiGLU MLP of mlp_ratio 8 (a gate width of
/// 2048) and untied 50304-row embeddings are 8 x (4 x 512^2 + 3 x 512 x 2048) + 2 x 50304 x 512
/// = 85.1 M parameters. OLMo's own blocks bound the activations.
#[test]
fn a_model_described_by_its_dimensions_is_estimated() {
    let (code, out, err) = run(&[
        "estimate",
        "fixtures/dialects/olmo/tiny-single-gpu.yaml",
        "--target",
        "rtx-4090",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("the 8-layer, 512-wide model under `model`: 85.1 M parameters"),
        "{out}"
    );
    assert!(out.contains("the framework's own blocks"), "{out}");
}

/// GPT-NeoX configs describe their model by flat keys in either spelling. The Pythia block
/// (`gpt_j_residual: true`): 12 x (12 x 768^2 + 13 x 768) + 2 x 50304 x 768 (untied) + 2 x 768
/// = 162,322,944 parameters. The sequential block with hyphenated keys and no position table:
/// 24 x (12 x 1024^2 + 13 x 1024) + 2 x 50304 x 1024 + 2 x 1024 = 405,334,016. NeoX's
/// vocab-parallel cross-entropy holds 6 bytes a logit (bf16 logits and one fp32 buffer):
/// 8 x 2048 x 50304 x 6 = 4,945,084,416, where PyTorch's `cross_entropy` would hold 10 to 12.
#[test]
fn gpt_neox_models_are_read_from_their_dimension_keys() {
    let estimate = |file: &str| {
        let (code, out, err) = run(&[
            "estimate",
            file,
            "--target",
            "rtx-4090",
            "--output-format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let pythia = estimate("fixtures/dialects/gpt-neox/small-bf16.yml");
    assert_eq!(pythia["params"], 162_322_944, "{pythia}");
    assert_eq!(pythia["logits_bytes"], 4_945_084_416.0, "{pythia}");
    assert!(
        pythia["model"]
            .as_str()
            .unwrap()
            .contains("the config describes (`num_layers`, ...)"),
        "{pythia}"
    );
    let sequential = estimate("fixtures/dialects/gpt-neox/short-finetune.yml");
    assert_eq!(sequential["params"], 405_334_016, "{sequential}");
    assert!(
        sequential["model"]
            .as_str()
            .unwrap()
            .contains("(`num-layers`, ...)"),
        "{sequential}"
    );
}

/// A NeMo Megatron GPT config of GPT-2's block: 24 x (12 x 1024^2 + 13 x 1024) + 50304 x 1024
/// (tied) + 2048 x 1024 (learned positions of `encoder_seq_length`) + 2 x 1024 = 355,919,872
/// parameters; Megatron-core's vocab-parallel cross-entropy holds 32 x 2048 x 50304 x 6 bytes.
/// `megatron_amp_O2` casts the module: no fp32 weights outside the optimizer.
#[test]
fn nemo_megatron_gpt_is_read_from_its_dimension_keys() {
    let (code, out, err) = run(&[
        "estimate",
        "fixtures/dialects/nemo/megatron-gpt-350m-micro32.yaml",
        "--target",
        "h100-sxm",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["params"], 355_919_872, "{v}");
    assert_eq!(v["logits_bytes"], 19_780_337_664.0, "{v}");
    assert_eq!(v["plan"]["master_weights"], true, "{v}");
    // Without a tokenizer hwlint can size, there is no model.
    let (code, _, err) = run(&[
        "estimate",
        "fixtures/dialects/nemo/megatron-gpt-350m-sentencepiece.yaml",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("say which model"), "{err}");
}
