//! Names real configs use for models the estimator already models (#25 item 8): LitGPT's own
//! names and its `checkpoints/ORG/NAME` folders, open-instruct's Tulu and OLMo 1.7 checkpoints,
//! StableLM alpha, Mistral 7B v0.2. Each resolves to the dimensions its source states (the
//! sources are cited in rules/models.toml).

use std::path::Path;

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::plan::find_model;

/// (name as a config writes it, hidden, layers, heads, KV heads, MLP width, vocabulary)
const NAMES: &[(&str, u64, u64, u64, u64, u64, u64)] = &[
    // LitGPT config_hub/finetune/tiny-llama/*.yaml; litgpt/config.py:2176-2200.
    (
        "checkpoints/TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T",
        2048,
        22,
        32,
        4,
        5632,
        32000,
    ),
    ("tiny-llama-1.1b", 2048, 22, 32, 4, 5632, 32000),
    // LitGPT config_hub/finetune/mistral-7b-v0.2/*.yaml; litgpt/config.py:2055-2073.
    (
        "checkpoints/unsloth/Mistral-7B-v0.2",
        4096,
        32,
        32,
        8,
        14336,
        32000,
    ),
    // LitGPT config_hub/finetune/stablelm-base-alpha-3b/*.yaml; litgpt/config.py:26-105, 275.
    (
        "checkpoints/stabilityai/stablelm-base-alpha-3b",
        4096,
        16,
        32,
        32,
        16384,
        50688,
    ),
    // open-instruct: Tulu 2 is Llama 2 7B, Tulu 3 8B is Llama 3.1 8B.
    ("allenai/tulu-2-7b", 4096, 32, 32, 32, 11008, 32000),
    (
        "allenai/Llama-3.1-Tulu-3-8B-SFT",
        4096,
        32,
        32,
        8,
        14336,
        128256,
    ),
    // allenai/OLMo configs/official-0724/OLMo-7B-0424.yaml (run_name OLMo-1.7-7B).
    ("allenai/OLMo-1.7-7B-hf", 4096, 32, 32, 32, 11008, 50304),
];

#[test]
fn config_names_resolve_to_their_dimensions() {
    let mut wrong = Vec::new();
    for &(name, hidden, layers, heads, kv, mlp, vocab) in NAMES {
        let Some(a) = find_model(name, &[], Path::new(".")) else {
            wrong.push(format!("{name}: not found"));
            continue;
        };
        let got = (
            a.hidden_size,
            a.num_layers,
            a.num_heads,
            a.kv_heads(),
            a.intermediate(),
            a.vocab_size,
        );
        if got != (hidden, layers, heads, kv, mlp, vocab) {
            wrong.push(format!(
                "{name}: {got:?}, its source says {:?}",
                (hidden, layers, heads, kv, mlp, vocab)
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// A vision-language model's decoder runs over the config's sequence: LLaMA-Factory's
/// `cutoff_len` 512 and 8192 give different needs (they gave the same 28.67 GiB when the
/// catalog's 2048 text tokens were used whatever the config said).
#[test]
fn a_vlm_decoder_follows_the_configs_sequence_length() {
    let need = |seq: &str| -> f64 {
        let v = support::hwlint_json(&[
            "estimate",
            "--model",
            "Qwen/Qwen3-VL-4B-Instruct",
            "--batch-size",
            "1",
            "--seq-len",
            seq,
            "--output-format",
            "json",
        ]);
        v["need_bytes"].as_f64().unwrap()
    };
    let (short, long) = (need("512"), need("8192"));
    assert!(long > short * 1.3, "{short} vs {long}");
}

/// #25 item 8: GPT-Neo is in the catalog, and as transformers runs it: no SDPA, so with no
/// `attn_implementation` the estimate keeps each head's score matrix and says why; attention
/// the run names (flash-attn in a config, `--attention sdpa` here) keeps none.
#[test]
fn gpt_neo_runs_eager_unless_the_run_asks_for_flash_attn() {
    let estimate = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "estimate",
            "--model",
            "EleutherAI/gpt-neo-125M",
            "--batch-size",
            "4",
            "--seq-len",
            "2048",
            "--output-format",
            "json",
        ];
        args.extend_from_slice(extra);
        support::hwlint_json(&args)
    };
    let eager = estimate(&[]);
    assert_eq!(eager["plan"]["attention"], "eager");
    assert!(
        eager["assumed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("no fused (SDPA) attention")),
        "{}",
        eager["assumed"]
    );
    let flash = estimate(&["--attention", "sdpa"]);
    assert_eq!(flash["plan"]["attention"], "sdpa");
    // 12 layers x 4 x 2048 tokens x 12 heads x 2048 scores x 6 bytes: 13.5 GiB more.
    let more =
        eager["activations_bytes"].as_f64().unwrap() - flash["activations_bytes"].as_f64().unwrap();
    let scores = 12.0 * 4.0 * 2048.0 * 12.0 * 2048.0 * 6.0;
    assert!((more / scores - 1.0).abs() < 0.01, "{more} vs {scores}");
}
