//! Adapters as the file sets them (#25 item 4): LitGPT's six `lora_*` switches, axolotl's
//! `adapter` gate, `lora_target_linear` and `lora_modules_to_save`, LLaMA-Factory's
//! `additional_target` and TRL's `lora_modules_to_save`. Each fixture in fixtures/adapters/ cites
//! the framework source its reading follows.

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::memory::{estimate, Checkpointing};
use hwlint::estimate::plan::Planned;
use support::gib;

const DIR: &str = "fixtures/adapters";

fn planned(rel: &str) -> Planned {
    support::planned(DIR, rel)
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
fn llama_factory_dora_keeps_each_adapted_layers_outputs() {
    let got = planned("llama-factory-dora.yaml");
    let p = &got.plan;
    assert!(p.dora);
    assert_eq!(targets(p), Some((16, "all-linear".to_string())));
    let mut lora = p.clone();
    lora.dora = false;
    // Llama-2-7B, 2 x 1024 tokens, 32 blocks, nothing recomputed: per token each adapted
    // linear keeps its bf16 base output and its fp32 LoRA output; the outputs of q/k/v/o are
    // 4096 wide, gate/up 11008, down 4096.
    let per_token = ((2 + 4) * (5 * 4096 + 2 * 11008)) as f64;
    let want = per_token * (2 * 1024 * 32) as f64;
    let diff = estimate(p).activations_bytes - estimate(&lora).activations_bytes;
    assert!((diff - want).abs() / want < 0.001, "{diff} vs {want}");
    assert!(gib(p) > gib(&lora));
}

/// DoRA with `lora_dropout` recomputes each adapted layer's base output over a copy of its
/// weight in the adapters' fp32, which backward keeps: under checkpointing, the recomputed
/// block's copies; without it, every block's. In bf16 weights without autocast, the copy and the
/// recomputed base output stay fp32. Every adapted input also keeps dropout's mask.
#[test]
fn dora_with_dropout_keeps_a_copy_of_each_adapted_weight() {
    let got = planned("axolotl-dora-dropout.yaml");
    let p = &got.plan;
    assert!(p.dora && p.lora_dropout);
    assert_eq!(p.checkpointing, Checkpointing::Full);
    assert!(
        got.assumed.iter().any(|a| a.contains("fp32 copies")),
        "{:?}",
        got.assumed
    );
    let mut no_dropout = p.clone();
    no_dropout.lora_dropout = false;
    // Llama-2-7B's block: q/k/v/o 4096 x 4096, gate/up/down 4096 x 11008, copied in fp32.
    let block_weights = (4_u64 * 4096 * 4096 + 3 * 4096 * 11008) as f64;
    let copies = 4.0 * block_weights;
    let (with, without) = (estimate(p), estimate(&no_dropout));
    // The recompute of the last block holds one block's copies (and its inputs' masks).
    let more = with.peak_bytes - without.peak_bytes;
    assert!(more >= copies, "{more} vs {copies}");
    // Without checkpointing all 32 blocks keep theirs.
    let mut full = p.clone();
    full.checkpointing = Checkpointing::None;
    let mut full_no_dropout = full.clone();
    full_no_dropout.lora_dropout = false;
    let diff = estimate(&full).activations_bytes - estimate(&full_no_dropout).activations_bytes;
    let tokens = (2 * 1024 * 32) as f64;
    // Per token: the masks (one byte per adapted input: q/k/v, o and gate/up read 4096, down
    // 11008) and the recomputed base outputs' two more bytes (outputs 5 x 4096 + 2 x 11008).
    let per_token = (6 * 4096 + 11008) as f64 + 2.0 * (5 * 4096 + 2 * 11008) as f64;
    let want = 32.0 * copies + per_token * tokens;
    assert!((diff - want).abs() / want < 0.001, "{diff} vs {want}");
}

#[test]
fn axolotl_lora_on_expert_weights_counts_every_experts_adapters() {
    let got = planned("axolotl-expert-parameters.yaml");
    let p = &got.plan;
    assert_eq!(
        p.lora_parameters,
        ["experts.gate_up_proj", "experts.down_proj"].map(String::from)
    );
    let mut modules_only = p.clone();
    modules_only.lora_parameters.clear();
    modules_only.merged_experts = false;
    // Qwen3-30B-A3B: 48 sparse layers of 128 experts (hidden 2048, expert width 768); r 16 x
    // 128 x (in + out) per weight: gate_up 2048 -> 1536, down 768 -> 2048.
    let experts = 48 * 16 * 128 * ((2048 + 1536) + (768 + 2048));
    assert_eq!(
        estimate(p).trainable_params - estimate(&modules_only).trainable_params,
        experts
    );
    assert!(
        got.bounded
            .iter()
            .any(|b| b.what.contains("merged expert weights")),
        "{:?}",
        got.bounded
    );
    // The low end builds no merged weights; peft's recompute of a layer holds its 128 merged
    // experts in bf16 and dW in fp32.
    let lower = got.lower.as_ref().expect("a bounded plan");
    assert!(!lower.merged_experts);
    assert!(gib(p) > gib(lower));
}

#[test]
fn a_base_hqq_quantizes_is_not_read_as_nf4() {
    let why = support::unsupported(DIR, "llama-factory-hqq-4bit.yaml");
    assert!(why.contains("HQQ"), "{why}");
}

#[test]
fn every_fixture_is_read() {
    support::every_fixture_named_in(DIR, include_str!("adapter_readings.rs"));
}
