//! What the trainer optimises decides the step's shape: preference pairs run chosen and rejected
//! answers together, DPO runs a reference forward beside the policy's, GRPO trains on prompt +
//! completion with logits for the completion only, a reward model has no vocabulary logits.
//! Each fixture in fixtures/objective/ cites the framework source its reading follows; the
//! needs they give are checked against the same step read as plain SFT, which is what hwlint
//! read before (#25 items 1 and 2).

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::memory::{estimate, Checkpointing};
use hwlint::estimate::plan::Planned;
use support::gib;

const DIR: &str = "fixtures/objective";

fn planned(rel: &str) -> Planned {
    support::planned(DIR, rel)
}

/// The same step as one plain sequence per sample, with no reference forward: the reading
/// hwlint had before it knew the objective.
fn as_sft(plan: &hwlint::estimate::step::Plan) -> hwlint::estimate::step::Plan {
    let mut p = plan.clone();
    p.sequences = 1;
    p.reference_forward = false;
    p.logprob_loss = false;
    p.value_head = false;
    p.logits_tokens = None;
    p
}

#[test]
fn trl_dpo_runs_pairs_and_bounds_the_reference() {
    let got = planned("trl-dpo-full.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (4, 2, 1024));
    assert!(p.logprob_loss && !p.chunked_loss);
    // The top end runs a reference copy and its forward; the bottom end (ORPO/CPO) neither.
    assert!(p.reference_model && p.reference_forward);
    let lower = got.lower.as_ref().expect("the reference is bounded");
    assert!(!lower.reference_model && !lower.reference_forward);
    assert!(got
        .bounded
        .iter()
        .any(|b| b.what.contains("reference model")));
    // Eight sequences keep twice the activations of four, and the reference's forward is
    // the step's peak: the policy's logits and log-softmax (4 bytes a logit in bf16) plus the
    // reference's logits (2 more).
    let (e, sft) = (estimate(p), estimate(&as_sft(p)));
    let ratio = e.activations_bytes / sft.activations_bytes;
    assert!((ratio - 2.0).abs() < 0.01, "activations x{ratio:.3}");
    assert_eq!(e.peak_at, "the reference model's forward");
    let logits = 8.0 * 1024.0 * 151_936.0;
    assert!(
        (e.at_peak.logits / logits - 6.0).abs() < 0.01,
        "{} bytes a logit",
        e.at_peak.logits / logits
    );
}

#[test]
fn trl_dpo_with_precomputed_reference_runs_none() {
    let got = planned("trl-dpo-precomputed.yaml");
    let p = &got.plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.reference_model && !p.reference_forward);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
}

#[test]
fn trl_grpo_trains_prompt_and_completion() {
    let got = planned("trl-grpo.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (16, 1, 1536));
    assert_eq!(p.logits_tokens, Some(1024));
    assert!(!p.reference_model && !p.reference_forward && !p.chunked_loss);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
    // Read as SFT the step was 1024 tokens (TRL's `max_length` default) with a chunked loss;
    // the GRPO step holds 1536 tokens of activations and the completion's logits.
    let mut sft = as_sft(p);
    sft.seq_len = 1024;
    sft.chunked_loss = true;
    assert!(gib(p) > gib(&sft) * 1.5, "{} vs {}", gib(p), gib(&sft));
}

#[test]
fn trl_grpo_with_beta_loads_a_reference_and_bounds_an_unbounded_prompt() {
    let got = planned("trl-grpo-beta.yaml");
    let p = &got.plan;
    assert!(p.reference_model, "beta 0.04 loads a reference");
    // Its forward runs while completions are scored, not inside the training step.
    assert!(!p.reference_forward);
    assert_eq!(p.logits_tokens, Some(256));
    // The prompt runs up to Qwen2.5's 32768-token context less the completion.
    assert_eq!(p.seq_len, 32768);
    let lower = got.lower.as_ref().expect("the prompt is bounded");
    assert_eq!(lower.seq_len, 256);
    assert!(got.bounded.iter().any(|b| b.what.contains("prompt length")));
}

/// `--num_generations "$NUM_GENERATIONS"`: a key only GRPOConfig has, set to a value known only
/// at run time, still makes the run GRPO's (it was read as SFT, the objective unknown).
#[test]
fn trl_grpo_launch_with_a_run_time_group_size_is_grpo() {
    let got = planned("trl-grpo-launch-variable.sh");
    let p = &got.plan;
    assert_eq!((p.batch, p.seq_len, p.logits_tokens), (8, 1024, Some(768)));
    assert!(p.generation.is_some() && p.logprob_loss);
}

#[test]
fn trl_reward_model_has_no_vocabulary_logits() {
    let p = planned("trl-reward.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.arch.has_lm_loss());
    let e = estimate(&p);
    assert_eq!(e.logits_bytes, 0.0);
    assert!(
        e.params < 1_544_000_000,
        "no separate LM head: {}",
        e.params
    );
}

#[test]
fn llama_factory_dpo_lora_runs_the_reference_forward_without_a_copy() {
    let got = planned("llama-factory-dpo-lora.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (1, 2, 2048));
    assert!(
        !p.reference_model,
        "LoRA: the reference is the base with adapters off"
    );
    assert!(p.reference_forward);
    assert!(!p.logprob_loss, "LLaMA-Factory upcasts the logits to fp32");
    // The stage and loss name the trainer: nothing about the reference is bounded.
    assert!(
        !got.bounded.iter().any(|b| b.what.contains("reference")),
        "{:?}",
        got.bounded
    );
    let e = estimate(p);
    assert_eq!(e.peak_at, "the reference model's forward");
    assert!(gib(p) > gib(&as_sft(p)) * 1.4);
}

#[test]
fn llama_factory_orpo_runs_pairs_without_a_reference() {
    let p = planned("llama-factory-orpo-full.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.reference_model && !p.reference_forward);
}

#[test]
fn llama_factory_reward_model_computes_and_drops_its_logits() {
    let p = planned("llama-factory-rm-lora.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(p.value_head && !p.reference_forward);
    let e = estimate(&p);
    // Nothing of the logits survives into backward.
    assert_eq!(e.logits_bytes, 0.0);
}

/// LLaMA-Factory's PPO with LoRA: prompt (`cutoff_len`) + `max_new_tokens`, the adapters'
/// policy as its own reference and reward, and TRL 0.9's loss over fp32 logits.
#[test]
fn llama_factory_ppo_lora_trains_prompt_and_response_with_the_value_head_loss() {
    let got = planned("llama-factory-ppo.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.seq_len), (1, 2048 + 512));
    assert!(p.value_head && p.logprob_loss && p.lora.is_some());
    assert!(!p.reference_model && !p.reference_forward && p.critic.is_none());
    assert_eq!(p.scorer_params, 0);
    assert_eq!(p.checkpointing, Checkpointing::Full);
    // One micro-batch sampled at a time, in the bf16 base's dtype, with its cache.
    let g = p.generation.expect("model.generate between updates");
    assert_eq!((g.rows(p.batch), g.completion, g.prompt), (1, 512, 2048));
    assert!(g.cache && g.scores_rows == 0 && g.dtype_bytes == Some(2));
    // Four fp32 vocabulary-wide tensors over the whole sequence at the loss.
    let e = estimate(p);
    let bsv = 2560.0 * 151_936.0;
    assert!(
        (e.logits_bytes / bsv - 16.0).abs() < 1e-9,
        "{} bytes a logit",
        e.logits_bytes / bsv
    );
    assert!(gib(p) > 12.0 && gib(p) < 20.0, "{:.1} GiB", gib(p));
}

/// Full fine-tuning: a second copy as the reference and the reward model of its own, both
/// frozen in bf16 beside the fp32 policy.
#[test]
fn llama_factory_ppo_full_holds_a_reference_copy_and_the_reward_model() {
    let got = planned("llama-factory-ppo-full.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.seq_len), (2, 1024 + 256));
    assert!(p.reference_model && p.lora.is_none());
    assert_eq!(p.reference_bytes, Some(2.0));
    assert_eq!(p.scorer_bytes, 2.0);
    assert!(p.scorer_params > 0);
    // The fp32 policy generates in fp32.
    assert_eq!(p.generation.and_then(|g| g.dtype_bytes), Some(4));
    let e = estimate(p);
    let mut alone = p.clone();
    alone.reference_model = false;
    alone.scorer_params = 0;
    let solo = estimate(&alone);
    let policy = e.params as f64;
    let frozen = e.weights_bytes - solo.weights_bytes;
    assert!(
        (frozen - 2.0 * policy - 2.0 * p.scorer_params as f64).abs() < 1.0,
        "{frozen} bytes of frozen models"
    );
}

/// Every fixture in the folder is read by a test above.
#[test]
fn every_fixture_is_read() {
    support::every_fixture_named_in(DIR, include_str!("objective_readings.rs"));
}

#[test]
fn torchtune_lora_dpo_runs_pairs_and_the_base_as_reference() {
    let p = planned("torchtune-lora-dpo.yaml").plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (4, 2, 1024));
    assert!(p.reference_forward && !p.reference_model);
    let e = estimate(&p);
    // q (4096 + 4096), v (4096 + 1024), output_proj (4096 + 4096), gate/up (4096 + 14336) and
    // down (14336 + 4096), at rank 8 over 32 blocks.
    assert_eq!(
        e.trainable_params,
        32 * 8 * (8192 + 5120 + 8192 + 3 * 18432)
    );
    assert_eq!(e.peak_at, "the reference model's forward");
}

/// #25 item 2: between updates TRL's GRPO samples its completions with `model.generate` in the
/// training process (no `use_vllm`). One generation serves the accumulation's micro-batches
/// (`steps_per_generation` defaults to `gradient_accumulation_steps`), and since TRL 0.22 it
/// samples with checkpointing off, keeping a KV cache.
#[test]
fn trl_grpo_samples_the_accumulated_micro_batches_with_a_kv_cache() {
    let p = planned("trl-grpo.yaml").plan;
    let g = p
        .generation
        .expect("model.generate in the training process");
    assert_eq!((g.rows(p.batch), g.prompt, g.completion), (64, 512, 1024));
    assert!(g.cache && !g.whole_model);
    let e = estimate(&p);
    // Qwen2.5-1.5B: 28 layers, keys and values of 2 heads x 128, in bf16, for 64 x 1536 tokens.
    let kv = (64_u64 * 1536 * 28 * 2 * 256 * 2) as f64;
    assert_eq!(e.generation_kv_bytes, kv);
    // No gradients or saved activations while sampling: the weights, the optimizer state, the
    // cache at its largest instant and a no-grad forward's working set.
    assert!(e.generation_bytes() > e.weights_bytes + e.optimizer_bytes);
    assert!(
        e.generation_bytes() < e.weights_bytes + e.optimizer_bytes + kv + 2.5 * (1u64 << 30) as f64
    );
    // A fix that lowers the micro-batch and raises the accumulation keeps what one generation
    // samples: the sampling does not shrink with the micro-batch.
    let mut smaller = p.clone();
    smaller.batch = 4;
    assert_eq!(estimate(&smaller).generation_bytes(), e.generation_bytes());
}

/// `generation_batch_size` counts the completions of all processes (TRL divides it over them):
/// with the GPUs unknown, each samples between all of them and its micro-batch.
#[test]
fn trl_grpo_generation_batch_splits_over_the_gpus() {
    let path = support::fixture(DIR, "trl-grpo-generation-batch.yaml");
    let eight = support::plan_at(&path, Some(8)).unwrap();
    assert_eq!(eight.plan.generation.unwrap().rows(8), 32);
    let unknown = support::plan_at(&path, None).unwrap();
    assert_eq!(unknown.plan.generation.unwrap().rows(8), 256);
    let lower = unknown
        .lower
        .as_ref()
        .expect("the generation batch is bounded");
    assert_eq!(lower.generation.unwrap().rows(8), 8);
    assert!(unknown
        .bounded
        .iter()
        .any(|b| b.what.contains("generation batch 256")));
}

/// vLLM samples on its own GPUs (server mode) or in the share HW101 takes off the card
/// (colocated): nothing of it is counted in the training step.
#[test]
fn trl_grpo_with_vllm_samples_outside_the_training_step() {
    for f in [
        "fixtures/rules/HW101/one-h100/clean-trl-grpo-vllm-server.yaml",
        "fixtures/rules/HW101/one-h100/bad-trl-grpo-vllm-colocate.yaml",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(f);
        let p = support::plan_at(&path, Some(1)).unwrap().plan;
        assert!(p.generation.is_none(), "{f}");
        assert_eq!(estimate(&p).generation_bytes(), 0.0, "{f}");
    }
}

/// Under DeepSpeed ZeRO-3, TRL gathers the whole model to sample unless
/// `ds3_gather_for_generation: false`: the sampling holds the bf16 weights whole beside the shards.
#[test]
fn trl_grpo_under_zero3_gathers_the_whole_model_to_sample() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules/HW101/cluster");
    let gathers = support::plan_at(&dir.join("bad-trl-grpo-zero3-gathers-whole.yaml"), Some(8))
        .unwrap()
        .plan;
    let kept = support::plan_at(&dir.join("clean-trl-grpo-zero3-shards-kept.yaml"), Some(8))
        .unwrap()
        .plan;
    assert_eq!(gathers.zero_stage, 3);
    assert!(gathers.generation.unwrap().whole_model);
    assert!(!kept.generation.unwrap().whole_model);
    let (g, k) = (estimate(&gathers), estimate(&kept));
    assert_eq!(k.generating.map(|g| g.weights), Some(k.weights_bytes));
    // Qwen2.5-14B's 14.77 B parameters in bf16 (29.5 GB), less the units the shards had in
    // flight: the 0.78 B-parameter LM head and a block (2.1 GB).
    let whole = 2.0 * g.params as f64;
    let weights =
        |e: &hwlint::estimate::memory::MemoryEstimate| e.generating.map_or(0.0, |g| g.weights);
    let added = weights(&g) - weights(&k);
    assert!(added < whole && added > 0.9 * whole, "{added} of {whole}");
    assert_eq!(g.peak_at, hwlint::estimate::memory::GENERATING);
}

/// axolotl's `rl:` picks TRL's preference trainers: pairs run together over `sequence_len`,
/// DPO with a LoRA adapter runs the reference as the policy with its adapters disabled (no copy,
/// a forward), and the loss keeps TRL's row-wise log-softmax. Before, these read as plain SFT.
#[test]
fn axolotl_dpo_with_an_adapter_runs_pairs_and_a_reference_forward_without_a_copy() {
    let got = planned("axolotl-dpo-lora.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences, p.seq_len), (2, 2, 2048));
    assert!(p.reference_forward && !p.reference_model && p.logprob_loss);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
    let e = estimate(p);
    assert_eq!(e.peak_at, "the reference model's forward");
    assert!(gib(p) > gib(&as_sft(p)));
}

/// `rl_adapter_ref_model: true` loads the reference as its own copy under the adapter: its
/// 16-bit weights are counted beside the 4-bit policy, and `assumed` says they are the upper
/// side.
#[test]
fn axolotl_dpo_with_a_reference_copy_under_an_adapter_counts_the_copy() {
    let got = planned("axolotl-dpo-qlora-ref-copy.yaml");
    let p = &got.plan;
    assert_eq!((p.batch, p.sequences), (2, 2));
    assert!(p.reference_model && p.reference_forward && p.load_in_4bit);
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
    assert!(
        got.assumed
            .iter()
            .any(|a| a.contains("reference") && a.contains("16 bit")),
        "{:?}",
        got.assumed
    );
    // The copy is Llama-3-8B's 8.03e9 weights at 2 bytes: 15.0 GiB over the same run without it.
    let mut without = p.clone();
    without.reference_model = false;
    let copy = estimate(p).weights_bytes - estimate(&without).weights_bytes;
    let expected = 8.03e9 * 2.0;
    assert!(
        (copy / expected - 1.0).abs() < 0.01,
        "{copy} bytes of reference"
    );
}

/// LLaMA-Factory's `ref_model` under LoRA loads the named model as the reference.
#[test]
fn llama_factory_dpo_lora_with_ref_model_counts_the_copy() {
    let with = planned("llama-factory-dpo-lora-ref-model.yaml").plan;
    let without = planned("llama-factory-dpo-lora.yaml").plan;
    assert!(with.reference_model && with.reference_forward);
    assert!(!without.reference_model);
    // Qwen3-4B's 4.02e9 weights in bf16.
    let copy = estimate(&with).weights_bytes - estimate(&without).weights_bytes;
    assert!((copy / (4.02e9 * 2.0) - 1.0).abs() < 0.01, "{copy}");
}

/// A `ref_model` naming another model is that model's size, not the policy's.
#[test]
fn llama_factory_dpo_ref_model_of_another_size_counts_its_own_weights() {
    let other = planned("llama-factory-dpo-lora-ref-other.yaml").plan;
    let same = planned("llama-factory-dpo-lora-ref-model.yaml").plan;
    let eight = other.reference_params.expect("Qwen3-8B's own count") as f64;
    assert!((eight / 8.19e9 - 1.0).abs() < 0.01, "{eight}");
    assert_eq!(same.reference_params, None);
    // The difference in weights is the two references' in bf16.
    let more = estimate(&other).weights_bytes - estimate(&same).weights_bytes;
    let four = estimate(&same).params as f64;
    assert!(
        (more - 2.0 * (eight - four)).abs() < 1e3,
        "{more} bytes more"
    );
}

#[test]
fn axolotl_orpo_runs_pairs_without_a_reference() {
    let p = planned("axolotl-orpo.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(!p.reference_model && !p.reference_forward && p.logprob_loss);
}

/// A full SimPO fine-tune: axolotl loads a reference copy though CPOTrainer never runs it; the
/// copy's bf16 weights are counted (and its forward, the upper side).
#[test]
fn axolotl_simpo_full_fine_tune_counts_the_loaded_copy() {
    let p = planned("axolotl-simpo-full.yaml").plan;
    assert_eq!(p.sequences, 2);
    assert!(p.reference_model);
    let mut no_copy = p.clone();
    no_copy.reference_model = false;
    let copy = estimate(&p).weights_bytes - estimate(&no_copy).weights_bytes;
    assert_eq!(copy, 2.0 * estimate(&p).params as f64);
}

/// axolotl's GDPO is TRL's GRPO under `trl:`: the prompt runs whole (bounded by the context),
/// the completion is `trl.max_completion_length`, and `model.generate` samples the 8
/// accumulated micro-batches at once in the training process.
#[test]
fn axolotl_gdpo_samples_in_the_training_process_with_an_unbounded_prompt() {
    let got = planned("axolotl-gdpo.yaml");
    let p = &got.plan;
    assert_eq!(p.logits_tokens, Some(128));
    assert!(p.reference_model, "a full fine-tune loads a reference copy");
    let g = p
        .generation
        .expect("model.generate in the training process");
    assert_eq!((g.rows(p.batch), g.completion), (8, 128));
    // Llama-3.2-1B's context of 131072 tokens, less the completion.
    assert_eq!(g.prompt, 131072 - 128);
    assert!(got.bounded.iter().any(|b| b.what.contains("prompt length")));
    let lower = got.lower.as_ref().expect("the prompt is bounded");
    assert_eq!(lower.generation.unwrap().prompt, 0);
}

/// With `trl.use_vllm` and no mode, the TRL axolotl pins colocates vLLM with 0.3 of the GPU.
#[test]
fn axolotl_grpo_with_vllm_colocates_it_by_default() {
    let path = support::fixture(DIR, "axolotl-grpo-vllm.yaml");
    let got = support::plan_at(&path, Some(1)).unwrap();
    assert!(got.plan.generation.is_none());
    let run = support::hwlint_json(&[
        "check",
        "--show-settings",
        "--output-format",
        "json",
        path.to_str().unwrap(),
    ])["files"][0]["runs"][0]
        .clone();
    let share = run["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["concept"] == "colocated_share")
        .unwrap_or_else(|| panic!("no colocated_share in {run}"))
        .clone();
    assert_eq!(share["value"], 0.3);
}

/// TRL's PPO: the policy and a separate value model train in one step, beside a reference copy
/// and a frozen reward model; the sequence is prompt + `response_length`, checkpointing never
/// on, and the rollout samples and runs its no-grad forwards between updates.
#[test]
fn trl_ppo_trains_the_value_model_in_the_policys_step() {
    let got = planned("trl-ppo.yaml");
    let p = &got.plan;
    // Prompt bounded by the model's context (2048) less the 53 sampled tokens; the loss reads
    // the response's log-softmax rows while the logits cover the whole sequence.
    assert_eq!((p.batch, p.seq_len), (4, 2048));
    assert_eq!((p.logits_tokens, p.logprob_tokens), (None, Some(53)));
    assert_eq!(p.checkpointing, Checkpointing::None);
    assert!(p.checkpointing_fixed && p.reference_model && !p.reference_forward);
    let critic = p.critic.as_ref().expect("a value model");
    assert!(critic.joint && critic.plan.arch.no_lm_loss);
    assert_eq!((critic.plan.batch, critic.plan.seq_len), (4, 2048));
    // The rollout: 4 x 8 prompts, 32 at once (under the default 64), their scores kept.
    let g = p.generation.expect("model.generate between updates");
    assert_eq!((g.rows, g.scores_rows, g.completion), (Some(32), 32, 53));
    let f = p.logprob_forward.expect("the reference's forward");
    assert!(f.layers_kept && f.scores_held && f.rows == 32);
    // Weights: the policy, its reference copy (fp32 like it), the value model and the reward
    // model, both pythia-1b without the LM head (50304 x 2048).
    let e = estimate(p);
    let policy = 1_011_781_632.0_f64;
    let scorer = policy - 50_304.0 * 2048.0;
    assert_eq!(p.scorer_params as f64, scorer);
    let weights = 4.0 * (2.0 * policy + 2.0 * scorer);
    assert!(
        (e.weights_bytes / weights - 1.0).abs() < 1e-9,
        "{} vs {weights}",
        e.weights_bytes
    );
    // Gradients and AdamW state for both trained models (accumulating over 8 micro-batches).
    assert!((e.gradients_bytes / (4.0 * (policy + scorer)) - 1.0).abs() < 1e-9);
    assert!((e.optimizer_bytes / (8.0 * (policy + scorer)) - 1.0).abs() < 1e-9);
    // Without the value model the step holds less by at least its states and activations.
    let mut alone = p.clone();
    alone.critic = None;
    let solo = estimate(&alone);
    assert!(e.activations_bytes > 1.8 * solo.activations_bytes);
    // Its weights, gradients and AdamW state in the step; through the rollout its weights and
    // state only (its gradients were set to none).
    assert!(e.fwd_bwd_bytes - solo.fwd_bwd_bytes > 16.0 * scorer);
    let rollout = |e: &hwlint::estimate::memory::MemoryEstimate| {
        e.logprob_forward.expect("the rollout's forward").total()
    };
    assert!((rollout(&e) - rollout(&solo) - 12.0 * scorer).abs() < 1e6);
    // The rollout's fp32 scores (32 prompts x 53 tokens x 50304) stay referenced through the
    // update: the step holds them beside everything else.
    let mut unscored = p.clone();
    if let Some(g) = &mut unscored.generation {
        g.scores_rows = 0;
    }
    let held = 32.0 * 53.0 * 50_304.0 * 4.0;
    let dropped = e.fwd_bwd_bytes - estimate(&unscored).fwd_bwd_bytes;
    assert!((dropped - held).abs() < 1.0, "{dropped} vs {held}");
    // Under ZeRO-3 the whole wrapper, policy and value model, is gathered to generate.
    let mut z3 = p.clone();
    z3.zero_stage = 3;
    z3.gpus = 8;
    if let Some(g) = &mut z3.generation {
        g.whole_model = true;
    }
    let generation = z3.generation;
    if let Some(c) = &mut z3.critic {
        c.plan.zero_stage = 3;
        c.plan.gpus = 8;
        c.plan.generation = generation;
    }
    let gathered = estimate(&z3).generating.expect("sampling").weights;
    assert!(
        gathered > 4.0 * (policy + scorer) && gathered < 4.0 * (2.0 * policy + 2.0 * scorer),
        "{gathered} bytes gathered"
    );
    // The reference's forward over 32 rows of 2048 tokens, in fp32 outside autocast, with
    // every layer's hidden state and cache, is this run's peak.
    assert_eq!(e.peak_at, "the log-prob forward");
    assert!(gib(p) > 60.0 && gib(p) < 75.0, "{:.1} GiB", gib(p));
}

/// The TL;DR launch line names its trainer by its script and bounds the prompt at 512 tokens;
/// under peft the reference is the policy itself and the value model trains whole.
#[test]
fn trl_ppo_tldr_script_with_peft() {
    let got = planned("trl-ppo-tldr-peft.sh");
    let p = &got.plan;
    assert_eq!(p.model, "cleanrl/EleutherAI_pythia-1b-deduped__sft__tldr");
    assert_eq!((p.batch, p.seq_len), (16, 512 + 53));
    assert!(got.bounded.is_empty(), "{:?}", got.bounded);
    assert!(p.lora.is_some() && !p.reference_model);
    let critic = p.critic.as_ref().expect("a value model");
    assert!(critic.plan.lora.is_none());
    let g = p.generation.expect("model.generate between updates");
    assert_eq!((g.rows, g.scores_rows), (Some(16), 64));
    let e = estimate(p);
    let (policy, scorer) = (1_011_781_632.0_f64, 1_011_781_632.0 - 50_304.0 * 2048.0);
    // The frozen policy, the value model (trained, fp32) and the reward model; no reference.
    let adapters = e.weights_bytes - 4.0 * (policy + 2.0 * scorer);
    assert!(
        adapters > 0.0 && adapters < 0.01 * policy,
        "{adapters} bytes of adapters"
    );
    assert!(e.trainable_params as f64 > scorer);
}

/// Under TRL 0.11 `PPOTrainer` was the value-head trainer: not estimated, and said so.
#[test]
fn trl_ppo_before_0_12_is_not_estimated() {
    let path = support::fixture(DIR, OLD_TRL).join("ppo.yaml");
    let found = findings_on_h100(&path);
    assert!(
        found
            .iter()
            .any(|(code, m)| code == "HW901" && m.contains("before 0.12")),
        "{found:?}"
    );
}

/// When a no-grad forward of TRL's rollout is the peak, HW101 names the setting that sets its
/// rows and the most that fit; it never suggests the checkpointing PPOTrainer ignores.
#[test]
fn trl_ppo_rollout_forward_peak_names_its_rows() {
    let path = support::fixture(DIR, "trl-ppo-rollout-rows.sh");
    let messages: Vec<String> = findings_on(&path, &["--target", "a100-40gb", "--gpus", "1"])
        .into_iter()
        .filter(|(code, _)| code == "HW101")
        .map(|(_, m)| m)
        .collect();
    let [m] = messages.as_slice() else {
        panic!("one HW101: {messages:?}")
    };
    assert!(m.contains("no-grad forward of the rollout"), "{m}");
    assert!(m.contains("128 sequences of 565 tokens"), "{m}");
    assert!(
        m.contains("lower `local_rollout_forward_batch_size` to"),
        "{m}"
    );
    assert!(!m.contains("checkpointing"), "{m}");
}

/// The value-head PPOConfig's own keys name that trainer, never SFT.
#[test]
fn trl_value_head_ppo_keys_are_not_read_as_sft() {
    let why = support::unsupported(DIR, "trl-ppo-value-head-keys.yaml");
    assert!(why.contains("online RL"), "{why}");
}

/// A folder whose requirements.txt pins TRL 0.11.
const OLD_TRL: &str = "trl-0.11";

/// `hwlint check --target h100-sxm --output-format json` on a fixture: the codes and messages
/// it reports, whatever its exit status.
fn findings_on_h100(path: &std::path::Path) -> Vec<(String, String)> {
    findings_on(path, &["--target", "h100-sxm"])
}

/// `hwlint check ARGS --output-format json` on a fixture: the codes and messages it reports.
fn findings_on(path: &std::path::Path, args: &[&str]) -> Vec<(String, String)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("check")
        .args(args)
        .args(["--output-format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    found
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// #25 item 2: verl's GRPO runs its phases on the same GPUs. With the rollout engine at 0.9 of
/// each card and the actor's fp32 shards and Adam state left on the GPUs while it samples, the
/// sampling is the peak: 0.9 x the card + 12 bytes x 7.6 B / 8 GPUs, whatever the actor's
/// micro-batch. Before, verl was not estimated at all.
#[test]
fn verl_grpo_samples_with_the_engine_share_beside_the_actor_states() {
    let path = support::fixture(DIR, "verl-grpo-engine-share.yaml");
    let got = support::plan_at(&path, Some(8)).unwrap();
    let p = &got.plan;
    assert_eq!((p.batch, p.seq_len, p.gpus, p.zero_stage), (16, 1536, 8, 3));
    assert!(p.master_weights && p.fp32_reduce && p.logprob_loss);
    // The reference sits on the CPU: no resident copy, no forward inside the update.
    assert!(!p.reference_model && !p.reference_forward);
    let engine = p
        .engine
        .expect("the rollout engine sleeps between samplings");
    let vram = 85_017_493_504.0;
    assert!((engine.reserved / (0.9 * vram) - 1.0).abs() < 1e-9);
    assert!(engine.params_kept && engine.optimizer_kept);
    let lp = p.logprob_forward.expect("the log-prob forwards");
    assert_eq!(lp.rows, 16);
    // With the padding removed a step holds its real tokens: from one a sequence to prompt +
    // response at their limits, approached as responses grow.
    let lower = got.lower.as_ref().expect("the packed tokens are bounded");
    assert_eq!(lower.seq_len, 1);
    assert!(got
        .bounded
        .iter()
        .any(|b| b.what.starts_with("padding removed")
            && b.decided_by == hwlint::estimate::plan::Decider::Steps));
    let e = estimate(p);
    assert_eq!(e.peak_at, "the rollout engine's sampling");
    let at = e.engine_sampling.unwrap();
    let states = 12.0 * e.trainable_params as f64 / 8.0;
    assert!(
        ((at.weights + at.optimizer) / states - 1.0).abs() < 0.01,
        "{} bytes of states",
        at.weights + at.optimizer
    );
    let found = findings_on_h100(&path);
    let hw101 = found
        .iter()
        .find(|(c, _)| c == "HW101")
        .unwrap_or_else(|| panic!("no HW101 in {found:?}"));
    assert!(
        hw101.1.contains("gpu_memory_utilization` to 0.85")
            && hw101.1.contains("param_offload: true"),
        "{}",
        hw101.1
    );
}

/// The same run with `param_offload`/`optimizer_offload`: the actor's states leave the GPUs
/// before the engine wakes, so the sampling holds the engine's share alone and fits.
#[test]
fn verl_grpo_with_the_actor_offloaded_samples_with_the_share_alone() {
    let path = support::fixture(DIR, "verl-grpo-engine-offload.yaml");
    let p = support::plan_at(&path, Some(8)).unwrap().plan;
    let engine = p.engine.unwrap();
    assert!(!engine.params_kept && !engine.optimizer_kept);
    let lp = p.logprob_forward.unwrap();
    assert!(!lp.optimizer_kept);
    let at = estimate(&p).engine_sampling.unwrap();
    assert_eq!(at.weights + at.optimizer, 0.0);
    let found = findings_on_h100(&path);
    assert!(
        !found.iter().any(|(c, _)| c.starts_with("HW10")),
        "{found:?}"
    );
}

/// TRL's vLLM in sleep mode gives the update the whole card: its share counts only while it
/// samples, beside the weights and optimizer state training keeps. Held through the update
/// (no sleep mode) the same share leaves the step too little.
#[test]
fn trl_grpo_with_vllm_sleep_mode_takes_its_share_only_to_sample() {
    let path = support::fixture(DIR, "trl-grpo-vllm-sleep.yaml");
    let p = support::plan_at(&path, Some(1)).unwrap().plan;
    let engine = p.engine.expect("the engine sleeps through the update");
    assert!(engine.params_kept && engine.optimizer_kept);
    assert!(p.logprob_forward.is_none());
    assert!(findings_on_h100(&path).is_empty());
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "vllm_enable_sleep_mode: true",
        "vllm_enable_sleep_mode: false",
    );
    let dir = tempfile::tempdir().unwrap();
    let held = dir.path().join("grpo.yaml");
    std::fs::write(&held, text).unwrap();
    let found = findings_on_h100(&held);
    assert!(
        found
            .iter()
            .any(|(c, m)| c == "HW101" && m.contains("vLLM takes beside training")),
        "{found:?}"
    );
}

/// #25 item 2: verl's PPO trains a critic on the same GPUs. Its update, a one-output model on
/// the actor's sequences at its own micro-batch, is an instant of its own beside the actor's
/// kept states, and the critic's kept states sit beside every instant of the actor's. Without
/// checkpointing its 32 sequences are the peak; HW101 names the critic's key and the
/// micro-batch that fits.
#[test]
fn verl_ppo_counts_the_critic_update_and_its_states_beside_the_actor() {
    let path = support::fixture(DIR, "verl-ppo-critic.yaml");
    let p = support::plan_at(&path, Some(8)).unwrap().plan;
    let c = p.critic.as_ref().expect("gae trains a critic");
    assert_eq!((c.plan.batch, c.plan.seq_len), (32, 1536));
    assert!(c.plan.arch.no_lm_loss && c.plan.checkpointing == Checkpointing::None);
    assert!(c.params_kept && c.optimizer_kept && c.actor_params_kept);
    let e = estimate(&p);
    assert_eq!(e.peak_at, "the critic's update");
    // The critic's fp32 shard and Adam state (12 bytes a parameter over 8 GPUs) are beside
    // the engine's share, as the actor's are: the sampling holds both.
    let alone = estimate(&hwlint::estimate::step::Plan {
        critic: None,
        ..p.clone()
    });
    let sampling = e.engine_sampling.unwrap().total() - alone.engine_sampling.unwrap().total();
    let critic_states = 12.0 * estimate(&c.plan).params as f64 / 8.0;
    assert!(
        (sampling / critic_states - 1.0).abs() < 0.01,
        "{sampling} beside the sampling for {critic_states}"
    );
    let found = findings_on_h100(&path);
    assert!(
        found.iter().any(|(c, m)| c == "HW101"
            && m.contains("at micro-batch 16 x 1536 tokens")
            && m.contains("lower `critic.ppo_micro_batch_size_per_gpu` to")),
        "{found:?}"
    );
}

/// verl's legacy reward worker scores between the actor's phases: its bf16 units gathered one at
/// a time from the CPU and its forward's working set, beside the actor's and critic's kept
/// states.
#[test]
fn verl_legacy_reward_model_scores_as_an_instant_of_its_own() {
    let got = planned("verl-ppo-reward-model.yaml");
    let p = &got.plan;
    let r = p.reward_forward.as_ref().expect("the legacy reward worker");
    assert_eq!((r.plan.batch, r.plan.seq_len), (32, 1024 + 2048));
    assert!(r.plan.arch.no_lm_loss && r.actor_params_kept && r.actor_optimizer_kept);
    let e = estimate(p);
    let f = e.reward_forward.expect("its instant");
    // Llama-3.2-3B in bf16: the root unit (128256 x 3072 embedding) and one block in flight;
    // per token the MLP's three 8192-wide tensors and four 3072-wide ones.
    let working = 32.0 * 3072.0 * 2.0 * (3.0 * 8192.0 + 4.0 * 3072.0);
    assert_eq!(f.temporary, working);
    assert!(f.weights > 128_256.0 * 3072.0 * 2.0, "{}", f.weights);
    // The actor's and critic's kept states sit beside it.
    assert!(f.optimizer > 0.0);
    assert_ne!(e.peak_at, "the reward model's forward");
    // At 256 rows it is the run's peak.
    let mut wide = p.clone();
    if let Some(r) = &mut wide.reward_forward {
        r.plan.batch = 256;
    }
    assert_eq!(estimate(&wide).peak_at, "the reward model's forward");
    // HW101 on 8 H100s at 512 rows names the key that sets them and the most that fit.
    let base =
        std::fs::read_to_string(support::fixture(DIR, "verl-ppo-reward-model.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wide = dir.path().join("wide.yaml");
    std::fs::write(
        &wide,
        base.replace(
            "  micro_batch_size_per_gpu: 32",
            "  micro_batch_size_per_gpu: 512",
        ),
    )
    .unwrap();
    let m = findings_on(&wide, &["--target", "h100-sxm", "--gpus", "8"])
        .into_iter()
        .find(|(code, _)| code == "HW101")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert!(
        m.contains("the peak is the reward model's forward, 512 sequences of 3072 tokens")
            && m.contains("lower `reward_model.micro_batch_size_per_gpu` to"),
        "{m}"
    );
    // Without `use_reward_loop: false` verl 0.7 serves it from an inference engine: no
    // forward of the trainer's own.
    let path = dir.path().join("run.yaml");
    std::fs::write(&path, base.replace("  use_reward_loop: false\n", "")).unwrap();
    let p = support::plan_at(&path, Some(8)).unwrap().plan;
    assert!(p.reward_forward.is_none() && p.reward_engine.is_some());
}

/// #25: verl's reward loop (the default since v0.7.0) wakes its own engine to score, after the
/// rollout engine has gone to sleep: an instant of its share of each card (0.8 here) beside the
/// actor's and critic's fp32 shards and Adam state. Before, the run was refused by name.
#[test]
fn verl_reward_loop_scores_with_its_share_beside_the_kept_states() {
    let got =
        support::plan_at(&support::fixture(DIR, "verl-ppo-reward-loop.yaml"), Some(8)).unwrap();
    let p = &got.plan;
    assert!(p.reward_forward.is_none());
    let r = p.reward_engine.expect("the reward loop's engine");
    let vram = 85_017_493_504.0;
    assert!((r.reserved / (0.8 * vram) - 1.0).abs() < 1e-9);
    assert!(r.params_kept && r.optimizer_kept);
    let e = estimate(p);
    assert_eq!(e.peak_at, "the reward engine's scoring");
    let at = e.reward_engine.expect("its instant");
    // Two Qwen2.5-3B models' fp32 shards and two Adam moments over 8 GPUs: 12 bytes a parameter.
    let states = 2.0 * 12.0 * e.trainable_params as f64 / 8.0;
    assert!(
        ((at.weights + at.optimizer) / states - 1.0).abs() < 0.01,
        "{} bytes of states",
        at.weights + at.optimizer
    );
    assert_eq!(at.reward_engine, r.reserved);
    assert_eq!(at.engine, 0.0, "the rollout engine sleeps while it scores");
    // It fits on 8 H100s at 0.8 (near the line: HW105 gives no micro-batch advice there); at 0.9
    // HW101 names the share that fits and the actor's offload switches.
    let base = std::fs::read_to_string(support::fixture(DIR, "verl-ppo-reward-loop.yaml")).unwrap();
    let h100 = ["--target", "h100-sxm", "--gpus", "8"];
    let as_is = findings_on(&support::fixture(DIR, "verl-ppo-reward-loop.yaml"), &h100);
    assert!(as_is.is_empty(), "{as_is:?}");
    let dir = tempfile::tempdir().unwrap();
    let high = dir.path().join("high.yaml");
    std::fs::write(
        &high,
        base.replace(
            "    gpu_memory_utilization: 0.8",
            "    gpu_memory_utilization: 0.9",
        ),
    )
    .unwrap();
    let m = findings_on(&high, &h100)
        .into_iter()
        .find(|(code, _)| code == "HW101")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert!(
        m.contains("the peak is the reward engine's scoring, its 0.90 of each card")
            && m.contains("lower `reward_model.rollout.gpu_memory_utilization` to 0.85")
            && m.contains("`actor_rollout_ref.actor.fsdp_config.param_offload: true`"),
        "{m}"
    );
    // An engine that never sleeps keeps its share through every phase: refused by name.
    let awake = dir.path().join("awake.yaml");
    std::fs::write(
        &awake,
        base.replace(
            "    tensor_model_parallel_size: 1\n    prompt_length",
            "    tensor_model_parallel_size: 1\n    free_cache_engine: false\n    prompt_length",
        ),
    )
    .unwrap();
    match support::plan_at(&awake, Some(8)) {
        Err(hwlint::estimate::plan::Gap::Unsupported(what)) => {
            assert!(what.contains("free_cache_engine: false"), "{what}")
        }
        other => panic!("{:?}", other.map(|p| p.plan.model)),
    }
}

/// verl runs hwlint has no recipe for are refused with their reason, never sized as the actor
/// alone: LoRA on the fp32 actor (a rank or a saved adapter), the Megatron actor, the
/// TensorRT-LLM rollout (its share is of the memory free when it starts).
#[test]
fn verl_runs_with_lora_or_megatron_are_not_estimated() {
    let base =
        std::fs::read_to_string(support::fixture(DIR, "verl-grpo-engine-offload.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (from, to, why) in [
        (
            "    use_remove_padding: true",
            "    use_remove_padding: true\n    lora_rank: 64",
            "LoRA",
        ),
        (
            "    use_remove_padding: true",
            "    use_remove_padding: true\n    lora_adapter_path: /ckpt/adapter",
            "LoRA",
        ),
        (
            "    ppo_mini_batch_size: 256",
            "    ppo_mini_batch_size: 256\n    strategy: megatron",
            "Megatron",
        ),
        ("    name: vllm", "    name: trtllm", "TensorRT-LLM"),
    ] {
        let path = dir.path().join("run.yaml");
        std::fs::write(&path, base.replace(from, to)).unwrap();
        match support::plan_at(&path, Some(8)) {
            Err(hwlint::estimate::plan::Gap::Unsupported(what)) => {
                assert!(what.contains(why), "{why}: {what}")
            }
            other => panic!("{why}: {:?}", other.map(|p| p.plan.model)),
        }
    }
}

/// axolotl passes `trl.vllm_enable_sleep_mode` to TRL under colocate mode: the engine's share is
/// an instant of its own beside the weights, not taken off the update's card.
#[test]
fn axolotl_grpo_with_vllm_sleep_mode_takes_its_share_only_to_sample() {
    let path = support::fixture(DIR, "axolotl-grpo-vllm-sleep.yaml");
    let p = support::plan_at(&path, Some(1)).unwrap().plan;
    let engine = p.engine.expect("the engine sleeps through the update");
    let vram = 85_017_493_504.0;
    assert!((engine.reserved / (0.5 * vram) - 1.0).abs() < 1e-9);
    assert!(engine.params_kept && engine.optimizer_kept);
    let at = estimate(&p).engine_sampling.unwrap();
    // The frozen 16-bit base and the fp32 adapters with their AdamW moments stay.
    assert!(at.weights > 1.5e9 * 2.0 && at.optimizer > 0.0, "{at:?}");
}

/// #25: in code the config class names the trainer. A `GRPOConfig(...)` that sets only the
/// Trainer's own arguments is GRPO with its defaults (8 x 4 completions of up to 256 tokens,
/// sampled with `model.generate`, no reference model since TRL 0.19), its model the trainer's
/// `model="..."`; before, no GRPO-only keyword meant the file was not read at all.
#[test]
fn a_grpo_config_in_code_is_grpo_with_its_defaults() {
    let got = planned("trl-grpo-config.py");
    let p = &got.plan;
    assert_eq!(p.model, "Qwen/Qwen2-0.5B-Instruct");
    assert!(!p.reference_model && p.logprob_loss);
    let g = p.generation.expect("GRPO samples in the training process");
    assert_eq!(g.completion, 256);
    assert_eq!(p.logits_tokens, Some(256));
}

/// `PPOConfig(...)` in code is TRL's PPO, never SFT. The trainer takes its models as objects:
/// the policy, value and reward models are read where `PPOTrainer(model=..., value_model=...,
/// reward_model=...)` builds them from a name (`from_pretrained(policy_name, ...)` here), never
/// from the config's `reward_model_path` or the scripts' pythia-160m default. Without the
/// trainer's call the value model is not known.
#[test]
fn a_ppo_config_in_code_is_ppo_whose_models_the_trainer_takes() {
    let path = support::fixture(DIR, "trl-ppo-config.py");
    let got = support::plan_at(&path, None).unwrap();
    let p = &got.plan;
    assert_eq!(p.model, "Qwen/Qwen2.5-1.5B-Instruct");
    let critic = p
        .critic
        .as_ref()
        .expect("the value model trains with the policy");
    assert!(critic.joint);
    assert_eq!(critic.plan.model, "Qwen/Qwen2.5-1.5B-Instruct");
    assert!(p.scorer_params > 0, "the reward model sits on the GPUs");
    // At the low end the value model reads the policy's shortest sequences too.
    let lower = got.lower.as_ref().expect("the prompt is bounded");
    assert_eq!(
        lower.critic.as_ref().unwrap().plan.seq_len,
        lower.seq_len,
        "the value model's sequences at the low end"
    );

    let text = std::fs::read_to_string(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config_only = dir.path().join("ppo_config.py");
    let cut = text.find("trainer = PPOTrainer(").unwrap();
    std::fs::write(
        &config_only,
        text[..cut].replace(
            "bf16=True,",
            "bf16=True,\n    vf_coef=0.1,\n    reward_model_path=\"EleutherAI/pythia-1b\",",
        ),
    )
    .unwrap();
    // No model is taken from the config's paths or the scripts' defaults.
    let run = support::show_settings(config_only.to_str().unwrap());
    assert_eq!(run["dialect"], "trl");
    let concepts = support::concepts(&run["settings"]);
    assert!(concepts.contains(&"objective"), "{concepts:?}");
    for absent in ["critic_model", "reward_scorer", "policy_model", "model"] {
        assert!(!concepts.contains(&absent), "{absent} in {concepts:?}");
    }
    let found = findings_on_h100(&config_only);
    let hw901 = found
        .iter()
        .find(|(c, _)| c == "HW901")
        .unwrap_or_else(|| panic!("no HW901 in {found:?}"));
    assert!(
        hw901.1.contains("set the trainer's `model`") && !hw901.1.contains("pythia"),
        "{}",
        hw901.1
    );
}
