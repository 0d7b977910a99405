//! A LeRobot policy is sized from the policy config the user commits (#26 item 1): which
//! parts train follows its freeze flags, its cameras and their images come from
//! `input_features` (or the resize the policy applies), and its chunk and prompt set the
//! tokens. Each fixture in fixtures/policies/ cites the LeRobot source its reading follows.

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::memory::{estimate, Precision};
use hwlint::estimate::plan::Planned;
use hwlint::estimate::step::Plan;
use support::gib;

const DIR: &str = "fixtures/policies";
/// openpi's `TrainConfig`s, under DIR.
const OPENPI: &str = "openpi";

fn openpi(file: &str, gpus: i64) -> Planned {
    let path = support::fixture(DIR, &format!("{OPENPI}/{file}"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with('#') && text.contains(".py:"), "{file}");
    support::plan_at(&path, Some(gpus)).unwrap()
}

fn planned(rel: &str) -> Planned {
    support::planned(DIR, rel)
}

/// Each part's name, whether it is frozen, how many inputs per sample it sees and its tokens.
fn parts(p: &Plan) -> Vec<(String, bool, u64, Option<u64>)> {
    p.arch
        .parts
        .iter()
        .map(|x| (x.name.clone(), x.frozen, x.count, x.tokens))
        .collect()
}

/// What `hwlint check --output-format concise` says of `text`, written to a temporary `name`.
fn concise(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
        .args(["check", "--output-format", "concise"])
        .arg(&path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn trainable(p: &Plan) -> u64 {
    estimate(p).trainable_params
}

#[test]
fn every_fixture_is_read_by_a_test() {
    let source = include_str!("policy_readings.rs");
    support::every_fixture_named_in(DIR, source);
    support::every_fixture_named_in(&format!("{DIR}/{OPENPI}"), source);
}

#[test]
fn pi0_trains_everything_unless_its_flags_freeze_a_part() {
    // LeRobot's defaults (configuration_pi0.py:86-87): nothing frozen. Three 224x224 cameras
    // of 256 tokens each and the 48-token prompt; the expert reads the state and the chunk.
    let all = planned("pi0-defaults.yaml").plan;
    assert_eq!(
        parts(&all),
        [
            ("vision".into(), false, 3, None),
            ("vlm".into(), false, 1, Some(3 * 256 + 48)),
            ("action_expert".into(), false, 1, Some(51)),
        ]
    );
    assert_eq!(all.precision, Precision::Fp32);
    // float32 with every part trained: more than an H100 holds at batch 8 (the catalog's
    // frozen-SigLIP pi0 was 77.5 GiB, a headroom warning).
    let need = gib(&all);
    assert!((85.0..100.0).contains(&need), "{need:.1} GiB");

    let vision_frozen = planned("pi0-frozen-vision.yaml").plan;
    let expert_only = planned("pi0-expert-only.yaml").plan;
    let frozen = |p: &Plan| -> Vec<bool> { parts(p).iter().map(|x| x.1).collect() };
    assert_eq!(frozen(&vision_frozen), [true, false, false]);
    assert_eq!(frozen(&expert_only), [true, true, false]);
    // What trains: all 3.23B, all but SigLIP's 0.41B, the 0.3B expert.
    let (a, v, e) = (
        trainable(&all),
        trainable(&vision_frozen),
        trainable(&expert_only),
    );
    assert!(
        a > 3_200_000_000 && a - v > 400_000_000 && e < 320_000_000,
        "{a} {v} {e}"
    );
    // Expert-only training in bf16 needs about a tenth of the default run (~10 GiB).
    let expert = gib(&expert_only);
    assert!((8.0..11.0).contains(&expert), "{expert:.1} GiB");
}

#[test]
fn pi0_in_bfloat16_keeps_siglip_in_float32() {
    // `dtype: bfloat16` casts PaliGemma and the expert, then puts the vision tower back to
    // float32 (modeling_pi0.py:247-268): its weights, gradients and AdamW states stay 4 bytes.
    let got = planned("pi0-bf16-checkpointing.yaml");
    let p = &got.plan;
    assert_eq!(p.precision, Precision::Bf16True);
    let sub = p.part_plans();
    assert_eq!(sub[0].0.precision, Precision::Fp32, "SigLIP");
    assert_eq!(sub[1].0.precision, Precision::Bf16True, "Gemma 2B");
    let e = estimate(p);
    let siglip = hwlint::estimate::params::count(&p.arch.parts[0].arch).total as f64;
    let rest = trainable(p) as f64 - siglip;
    assert!(
        (e.weights_bytes - (4.0 * siglip + 2.0 * rest)).abs() < 1e6,
        "weights {} for {siglip} fp32 + {rest} bf16 parameters",
        e.weights_bytes
    );
    // The docs' command at batch 8: ~32-35 GiB by hand (29.1 GB of states and foreach
    // AdamW's temporaries at the optimizer step).
    let need = gib(p);
    assert!((32.0..36.0).contains(&need), "{need:.1} GiB");
}

#[test]
fn cameras_the_file_does_not_list_are_bounded() {
    // No input_features: LeRobot fills them from the dataset, so the cameras are 1 to 4, and
    // the prompt of pi0.5 is 200 tokens with no state token in the expert's sequence.
    let got = planned("pi05-no-features.yaml");
    assert_eq!(
        parts(&got.plan),
        [
            ("vision".into(), false, 4, None),
            ("vlm".into(), false, 1, Some(4 * 256 + 200)),
            ("action_expert".into(), false, 1, Some(50)),
            // The expert's adaRMS projections (modeling_pi05.py:336-337).
            ("adarms".into(), false, 1, None),
        ]
    );
    let lower = got.lower.as_ref().expect("the cameras are bounded");
    assert_eq!(lower.arch.parts[0].count, 1);
    assert_eq!(lower.arch.parts[1].tokens, Some(256 + 200));
    assert!(got
        .bounded
        .iter()
        .any(|b| b.what.contains("the dataset's cameras, 1 to 4")
            && b.what.contains("`policy.input_features`")));
}

#[test]
fn smolvla_freezes_its_vlm_unless_told_not_to() {
    // Both flags default to true (configuration_smolvla.py:69-70); two cameras resized to
    // 512x512 make 64 tokens each after the 4x4 pixel shuffle; prompt 48 and the state token.
    let frozen = planned("smolvla-defaults.yaml").plan;
    assert_eq!(
        parts(&frozen),
        [
            ("vision".into(), true, 2, None),
            ("vlm".into(), true, 1, Some(2 * 64 + 48 + 1)),
            ("action_expert".into(), false, 1, Some(50)),
        ]
    );
    let all = planned("smolvla-train-all.yaml").plan;
    assert!(parts(&all).iter().all(|x| !x.1));
    let (f, a) = (gib(&frozen), gib(&all));
    assert!(f < 4.0 && a > 3.0 * f, "{f:.1} vs {a:.1} GiB");
}

#[test]
fn act_reads_its_cameras_and_dimensions() {
    // Four 480x640 cameras: the ResNet runs over 4 images a sample, and each 15x20 feature map
    // is 300 encoder tokens beside the latent and the state (modeling_act.py:472-492).
    let four = planned("act-aloha-4cam.yaml").plan;
    assert_eq!(
        parts(&four),
        [
            ("backbone".into(), false, 4, None),
            ("encoder".into(), false, 1, Some(4 * 300 + 2)),
            ("decoder".into(), false, 1, Some(100)),
            ("vae_encoder".into(), false, 1, Some(102)),
        ]
    );
    assert!(four.arch.parts[0].arch.frozen_batch_norm);
    assert!(four.arch.parts[1].arch.mha_weights);
    // The Hydra era's `input_shapes` reads the same.
    let hydra = planned("act-hydra-aloha.yaml").plan;
    assert_eq!(parts(&hydra), parts(&four));
    // ~8 GiB by hand: the encoder's kept attention probabilities alone are 4 layers x 8
    // heads x 1202^2 x 9 bytes x 8 samples = 3.3 GB.
    let need = gib(&four);
    assert!((7.0..10.0).contains(&need), "{need:.1} GiB");
    // The config's own dimensions: 256 wide, 2 encoder layers, one camera.
    let small = planned("act-aloha-1cam.yaml").plan;
    let enc = &small.arch.parts[1].arch;
    assert_eq!((enc.hidden_size, enc.num_layers), (256, 2));
    assert_eq!(small.arch.parts[0].count, 1);
    assert!(gib(&small) < need / 4.0);
}

#[test]
fn diffusion_runs_one_resnet_per_camera_over_its_observation_steps() {
    // `use_separate_rgb_encoder_per_camera` (configuration_diffusion.py:130): two ResNet-18s,
    // each over 2 observation steps of 240x320 images (`resize_shape`).
    let p = planned("diffusion-2cam.yaml").plan;
    let got: Vec<(String, u64, u64)> = p
        .arch
        .parts
        .iter()
        .map(|x| (x.name.clone(), x.count, x.image_size.unwrap_or(0)))
        .collect();
    let side = ((240.0f64 * 320.0).sqrt()).round() as u64;
    assert_eq!(
        got,
        [
            ("backbone 1".into(), 2, side),
            ("backbone 2".into(), 2, side),
            ("unet".into(), 1, 0),
        ]
    );
}

#[test]
fn openpi_lora_adapts_the_gemmas_and_trains_siglip_whole() {
    // `gemma_2b_lora` / `gemma_300m_lora` (models/gemma.py:88-108): ranks 16 and 32; the freeze
    // filter leaves SigLIP trainable; every block rematerialised; EMA off (`ema_decay=None`).
    let got = openpi("pi0-lora.py", 1);
    let p = &got.plan;
    let lora: Vec<(String, Option<u64>)> = p
        .arch
        .parts
        .iter()
        .map(|x| (x.name.clone(), x.lora_rank))
        .collect();
    assert_eq!(
        lora,
        [
            ("vision".into(), None),
            ("vlm".into(), Some(16)),
            ("action_expert".into(), Some(32)),
        ]
    );
    assert!(p.arch.remat && !p.arch.ema_copy);
    assert_eq!(
        p.checkpointing,
        hwlint::estimate::memory::Checkpointing::Full
    );
    assert!(got.assumed.iter().any(|a| a.contains("rematerialised")));
    // The frozen Gemma bases are bfloat16 (scripts/train.py:102-104) and SigLIP's 0.41B
    // parameters train in fp32 with the adapters: ~0.45B trainable.
    let sub = p.part_plans();
    assert_eq!(sub[1].0.precision, Precision::Bf16True);
    assert_eq!(sub[0].0.precision, Precision::Bf16Mixed);
    let t = trainable(p);
    assert!((440_000_000..470_000_000).contains(&t), "{t}");
}

#[test]
fn openpi_pi05_keeps_an_ema_copy_and_its_adarms_projections() {
    // pi05_libero: global batch 256 over one GPU here, a 200-token prompt, horizon 10 and no
    // state token; `ema_decay=0.999` keeps a copy of every parameter.
    let got = openpi("pi05-full.py", 8);
    let p = &got.plan;
    assert_eq!(p.batch, 32);
    let tokens: Vec<Option<u64>> = p.arch.parts.iter().map(|x| x.tokens).collect();
    assert_eq!(tokens, [None, Some(3 * 256 + 200), Some(10), None]);
    assert!(p.arch.ema_copy);
    let e = estimate(p);
    let params = e.trainable_params as f64;
    // 3.35B fp32 weights and their EMA copy.
    assert!(
        (e.weights_bytes - 2.0 * 4.0 * params).abs() < 1e6,
        "{} for {params}",
        e.weights_bytes
    );
    assert!(
        (3_340_000_000.0..3_360_000_000.0).contains(&params),
        "{params}"
    );
}

#[test]
fn a_policy_its_keys_cannot_size_is_refused_by_name() {
    // Never the catalog's other configuration of the policy: HW901 names the key and why.
    for (body, why) in [
        (
            "  vision_backbone: resnet101\n",
            "`policy.vision_backbone` is `resnet101`, and hwlint sizes only resnet18, resnet34, resnet50",
        ),
        (
            "  n_encoder_layers: 1000000\n",
            "the encoder's num_layers is 1000000",
        ),
        (
            "  input_features:\n    observation.images.top: {type: VISUAL, shape: [480, 640]}\n",
            "`policy.input_features.observation.images.top` has no [channels, height, width] shape",
        ),
    ] {
        let text = concise(
            "act.yaml",
            &format!("dataset: {{repo_id: x}}\nbatch_size: 8\npolicy:\n  type: act\n{body}"),
        );
        assert!(
            text.contains("HW901") && text.contains("the model was not read") && text.contains(why),
            "{body}: {text}"
        );
    }
}

#[test]
fn vqbet_encodes_every_observation_step_and_reads_its_tokens() {
    // One 96x96 camera, cropped to 84x84 (configuration_vqbet.py:98), over 5 steps: the ResNet
    // sees 5 crops a sample; the GPT reads 5 x (camera + state + action query) + 3 - 1 tokens
    // (modeling_vqbet.py:358-372).
    let p = planned("vqbet-pusht.yaml").plan;
    assert_eq!(
        parts(&p),
        [
            ("backbone".into(), false, 5, None),
            ("policy".into(), false, 1, Some(17)),
            ("gpt input and output".into(), false, 1, None),
        ]
    );
    assert_eq!(p.arch.parts[0].image_size, Some(84));
    // ResNet-18 without its classifier (11.2M) and the GPT: 8 blocks of 12 x 512^2 plus
    // biases and norms, the 500 x 512 position table and the 512 x 512 input and output layers.
    let gpt = 8 * (12 * 512 * 512 + 13 * 512) + 500 * 512 + 2 * 512 * 512 + 512 + 2 * 512;
    let all = trainable(&p);
    assert!(
        all > 11_000_000 + gpt && all < 11_300_000 + gpt,
        "{all} vs {gpt} + ResNet-18"
    );
    // Cameras from the dataset: 1-4 of them over 3 steps, 96x96 crops: bounded.
    let open = planned("vqbet-no-features.yaml").plan;
    let backbone = &open.arch.parts[0];
    assert_eq!(
        (backbone.count, backbone.count_least, backbone.image_size),
        (12, Some(3), Some(96))
    );
    let policy = &open.arch.parts[1];
    assert_eq!((policy.tokens, policy.tokens_least), (Some(20), Some(11)));
}

#[test]
fn pi0_fast_is_paligemma_alone_with_the_action_tokens_logits() {
    // No expert; the VLM reads 2 x 256 image tokens, the 200-token prompt and the 256 FAST
    // tokens, and its loss reads the 257,152-token vocabulary at the 256 action positions.
    let p = planned("pi0-fast-2cam.yaml").plan;
    assert_eq!(
        parts(&p),
        [
            ("vision".into(), false, 2, None),
            ("vlm".into(), false, 1, Some(2 * 256 + 200 + 256)),
        ]
    );
    let vlm = &p.arch.parts[1];
    assert!(vlm.lm_loss && vlm.arch.vocab_size == 257_152);
    assert_eq!(vlm.logits_tokens, Some(256));
    assert!(p.arch.parts[0].keeps_fp32);
    // PaliGemma 3B trains whole: 2.92B parameters.
    let all = trainable(&p);
    assert!((2_900_000_000..2_950_000_000).contains(&all), "{all}");
}

#[test]
fn openpi_pi0_fast_reads_its_prompt_and_the_logits_at_it() {
    // Three image slots of 256 tokens and the 180-token prompt (state and FAST tokens in it);
    // the loss reads the vocabulary at 179 positions (models/pi0_fast.py:209-233); the Gemma is
    // a rank-16 LoRA, SigLIP trains whole; no expert.
    let got = openpi("pi0-fast-lora.py", 1);
    let p = &got.plan;
    // (name, tokens, logits tokens, LoRA rank) of each part.
    type Seen = (String, Option<u64>, Option<u64>, Option<u64>);
    let seen: Vec<Seen> = p
        .arch
        .parts
        .iter()
        .map(|x| (x.name.clone(), x.tokens, x.logits_tokens, x.lora_rank))
        .collect();
    assert_eq!(
        seen,
        [
            ("vision".into(), None, None, None),
            ("vlm".into(), Some(3 * 256 + 180), Some(179), Some(16)),
        ]
    );
    assert!(p.arch.remat && !p.arch.ema_copy);
    assert_eq!(p.arch.parts[1].arch.vocab_size, 257_152);
}

#[test]
fn tdmpc_counts_its_told_model_and_the_target_copy_from_its_features() {
    // xArm: one 84x84 camera, a 4-wide state and action: rules/models.toml's hand count of the
    // TOLD model, trained, and its frozen EMA copy.
    let p = planned("tdmpc-xarm.yaml").plan;
    assert_eq!(
        parts(&p),
        [
            ("image encoder".into(), false, 1, None),
            ("model".into(), false, 1, None),
            ("target image encoder".into(), true, 1, None),
            ("target model".into(), true, 1, None),
        ]
    );
    let e = estimate(&p);
    assert_eq!((e.trainable_params, e.params), (2_734_573, 2 * 2_734_573));
    // Kept per sample, fp32: the 6 frames and their shifted copies (2 x 6 x 3 x 84 x 84), the
    // four ReLU maps (32 x (39^2 + 18^2 + 8^2 + 3^2)) and 2 x 50 over the latent; the state
    // encoder (4 + 2 x 256 + 2 x 50); per rollout step, the Mish MLPs (3 x 6 x 512), the
    // dynamics' 2 x 50, pi's 4, the Tanh/ELU MLPs (6 x 4 x 512), [z, a] twice and z.
    let image = 2 * 6 * 3 * 84 * 84 + 32 * (39 * 39 + 18 * 18 + 8 * 8 + 3 * 3) + 100;
    let step = 18 * 512 + 100 + 4 + 24 * 512 + 2 * 54 + 50;
    let kept: u64 = image + 616 + 5 * step;
    assert_eq!(kept, 424_938);
    assert_eq!(e.activations_bytes, (kept * 4 * 256) as f64);
    // The no-grad encodings of the 5 next frames: the first map and its ReLU.
    assert!(e.temporary_bytes >= (5 * 2 * 32 * 39 * 39 * 4 * 256) as f64);

    // PushT keypoints: no image encoder; an environment-state encoder beside the state's.
    let k = planned("tdmpc-keypoints.yaml").plan;
    assert_eq!(k.arch.parts.len(), 2);
    assert_eq!(estimate(&k).trainable_params, 2_679_755);

    // The Hydra era's, its widths interpolated from the env group inside `input_shapes`' lists.
    let file = "tdmpc-hydra-xarm.yaml";
    let hydra = support::hwlint_json(&[
        "estimate",
        &format!("{DIR}/{file}"),
        "--output-format",
        "json",
    ]);
    assert_eq!(hydra["trainable_params"], 2_734_573);
    assert_eq!(hydra["activations_bytes"], e.activations_bytes);
    assert_eq!(hydra["peak_at"], "the forward's no-grad passes");

    // Features from the dataset: the camera is bounded (one or none), the widths assumed.
    let open = planned("tdmpc-no-features.yaml");
    let encoder = &open.plan.arch.parts[0];
    assert_eq!(
        (encoder.name.as_str(), encoder.count, encoder.count_least),
        ("image encoder", 1, Some(0))
    );
    let lower = open.lower.expect("a bounded camera gives a range");
    assert_eq!(lower.arch.parts.len(), 2);
    assert!(open
        .plan
        .arch
        .source
        .contains("a 14-wide state and a 14-wide action"));
    // Twice the horizon keeps about twice the rollout's activations.
    let rollout = |p: &Plan| {
        let model = p.arch.parts.iter().find(|x| x.name == "model").unwrap();
        model.dims.as_ref().unwrap().kept_per_sample
    };
    assert!(rollout(&open.plan) > 2 * 5 * 21_000 && rollout(&lower) == rollout(&open.plan));
}

#[test]
fn groot_trains_the_groups_its_tune_flags_name() {
    // Defaults: the backbone frozen; the VL self-attention (201,437,184 with vlln), the DiT
    // (1,091,722,240) and the projectors (327,356,544) train, by the walk in rules/models.toml.
    let p = planned("groot-libero.yaml").plan;
    let e = estimate(&p);
    assert_eq!(e.params, 3_144_016_000);
    assert_eq!(
        e.trainable_params,
        201_437_184 + 1_091_722_240 + 327_356_544
    );
    assert_eq!(p.precision, Precision::Bf16Mixed);
    // Two cameras x 66 tokens + the 5-token template + a 1-64 token task; 1 + 40 action rows.
    assert_eq!(
        parts(&p),
        [
            ("vision".into(), true, 2, Some(256)),
            ("vision mergers".into(), true, 2, None),
            ("vlm".into(), true, 1, Some(201)),
            ("backbone outputs".into(), false, 1, None),
            ("vl self-attention".into(), false, 1, Some(201)),
            ("action expert".into(), false, 1, Some(41)),
            ("action expert extras".into(), false, 1, None),
            ("projectors".into(), false, 1, None),
        ]
    );
    assert_eq!(p.arch.parts[2].tokens_least, Some(138));
    // The hardware guide's multimodal row: ~24-40 GB at batch 8 with AdamW
    // (docs/source/hardware_guide.mdx:17): fp32 weights (12.6 GB), gradients and moments of
    // the 1.62B trained (32.4 GB with the weights) before activations.
    let gb = e.peak_bytes / 1e9;
    assert!((32.4..42.0).contains(&gb), "{gb}");
    // Before the action head runs, the backbone returns 17 hidden states (fp32) and the LM
    // head's logits at each of the 201 positions (bf16): 8 x 201 x (151,936 + 2 x 17 x 2,048)
    // x 2 bytes, held with nothing else the step keeps.
    let outputs = p.arch.parts.iter().find(|x| x.name == "backbone outputs");
    let outputs = outputs.unwrap().dims.as_ref().unwrap().transient_per_sample;
    assert_eq!(outputs, 201 * (151_936 + 2 * 17 * 2048));

    // The top 4 LLM layers train; the DiT reads 1 + 16 rows; no autocast.
    let top = planned("groot-top-layers.yaml").plan;
    let layers: Vec<(String, bool, u64)> = top
        .arch
        .parts
        .iter()
        .filter(|x| x.name.starts_with("vlm"))
        .map(|x| (x.name.clone(), x.frozen, x.arch.num_layers))
        .collect();
    assert_eq!(
        layers,
        [
            ("vlm".into(), true, 12),
            ("vlm top layers".into(), false, 4)
        ]
    );
    // Each half of the LLM counts a final RMSNorm (2,048), which the model has once.
    let te = estimate(&top);
    assert_eq!(te.params, 3_144_016_000 + 2048);
    assert_eq!(
        te.trainable_params,
        e.trainable_params + 4 * 50_336_000 + 2048
    );
    assert_eq!(top.precision, Precision::Fp32);
    let dit = top.arch.parts.iter().find(|x| x.name == "action expert");
    assert_eq!(dit.unwrap().tokens, Some(17));

    // A trained vision tower under the frozen LLM: the LLM gets no gradients or moments but
    // keeps what its backward to the tower needs.
    let visual = planned("groot-tune-visual.yaml").plan;
    let llm = visual.arch.parts.iter().find(|x| x.name == "vlm").unwrap();
    assert!(llm.passes_gradients && !llm.frozen);
    let ve = estimate(&visual);
    assert_eq!(ve.trainable_params, e.trainable_params + 406_957_056);
    assert!(ve.activations_bytes > e.activations_bytes + 1e9);

    // Cameras from the dataset: 1-4 frames in the prompt.
    let open = planned("groot-no-features.yaml");
    let vision = &open.plan.arch.parts[0];
    assert_eq!((vision.count, vision.count_least), (4, Some(1)));
    let vlm = &open.plan.arch.parts[2];
    assert_eq!(
        (vlm.tokens, vlm.tokens_least),
        (Some(4 * 66 + 5 + 64), Some(66 + 5 + 1))
    );
}

#[test]
fn groot_with_parameters_in_the_checkpoints_dtype_is_refused() {
    let text = concise(
        "groot.yaml",
        "dataset: {repo_id: x}\nbatch_size: 8\npolicy:\n  type: groot\n  model_params_fp32: false\n",
    );
    assert!(
        text.contains("HW901") && text.contains("`policy.model_params_fp32` is false"),
        "{text}"
    );
}

#[test]
fn xvla_reads_its_views_freeze_flags_and_florence_dimensions() {
    // Florence-2-large and the soft-prompted transformer: 879,851,096 parameters by the walk
    // in research (DaViT 360,632,320, projector 2,201,600, BART encoder 207,873,024, the
    // transformer and its heads 309,144,152), plus the BERT pooler hwlint's encoder family
    // holds and BART has not (1024 x 1024 + 1024).
    let p = planned("xvla-libero.yaml").plan;
    let e = estimate(&p);
    assert_eq!(e.params, 879_851_096 + 1_049_600);
    assert_eq!(e.trainable_params, e.params);
    // Three 224x224 views: the DaViT's grids 56, 28, 14 and 7 a side, 1 + 7 x 7 tokens a view;
    // the encoder over the first view and 64 prompt tokens; the transformer over the 32-step
    // chunk, 3 x 50, 64 and 32 soft prompts.
    let tokens: Vec<(String, u64, Option<u64>)> = p
        .arch
        .parts
        .iter()
        .map(|x| (x.name.clone(), x.count, x.tokens))
        .collect();
    assert_eq!(
        tokens[..4],
        [
            ("vision stage 1".into(), 3, Some(3136)),
            ("vision stage 2".into(), 3, Some(784)),
            ("vision stage 3".into(), 3, Some(196)),
            ("vision stage 4".into(), 3, Some(49)),
        ]
    );
    let find = |p: &Plan, name: &str| p.arch.parts.iter().find(|x| x.name == name).cloned();
    assert_eq!(find(&p, "language encoder").unwrap().tokens, Some(114));
    assert_eq!(find(&p, "action transformer").unwrap().tokens, Some(278));

    // bfloat16, both encoders frozen, a smaller Florence-2 in the remote-code names: what
    // trains is the transformer (302,835,712 with its 512-row position table), its input and
    // output layers for a 14-wide joint action (4,432,292), the soft prompts (983,040) and the
    // projector, which no flag freezes (1024 x 768 + 2 x 768).
    let f = planned("xvla-frozen-encoders-bf16.yaml").plan;
    let fe = estimate(&f);
    assert_eq!(
        fe.trainable_params,
        302_835_712 + 4_432_292 + 983_040 + 1024 * 768 + 2 * 768
    );
    assert_eq!(f.precision, Precision::Bf16True);
    let bart = find(&f, "language encoder").unwrap();
    assert!(bart.passes_gradients && !bart.frozen);
    assert_eq!((bart.arch.hidden_size, bart.arch.num_layers), (768, 6));
    assert!(find(&f, "vision stage 3").unwrap().frozen);
    assert_eq!(
        find(&f, "action transformer").unwrap().tokens,
        Some(30 + 50 + 64 + 32)
    );

    // Cameras from the dataset: at most one 480x640 view runs (two pass max_len_seq).
    let open = planned("xvla-no-features.yaml");
    let t = find(&open.plan, "action transformer").unwrap();
    assert_eq!(
        (t.tokens, t.tokens_least),
        (Some(32 + 301 + 64 + 32), Some(32 + 10 + 64 + 32))
    );
    assert!(open
        .plan
        .arch
        .source
        .contains("at the most 1 camera(s) of 480x640"));
    assert!(open.lower.is_some());
}

#[test]
fn xvla_views_past_its_sequence_are_refused() {
    let text = concise(
        "xvla.yaml",
        "dataset: {repo_id: x}\nbatch_size: 8\npolicy:\n  type: xvla\n  input_features:\n    observation.images.a: {type: VISUAL, shape: [3, 480, 640]}\n    observation.images.b: {type: VISUAL, shape: [3, 480, 640]}\n",
    );
    assert!(
        text.contains("HW901")
            && text.contains("698 tokens")
            && text.contains("`policy.max_len_seq` 512"),
        "{text}"
    );
}

#[test]
fn a_policy_loaded_from_a_checkpoint_is_said_not_checked() {
    // `--policy.path` takes the policy's config from the checkpoint (configs/train.py:207-218
    // at lerobot@7427f318), which hwlint does not read: HW901 says so and what to write,
    // never "All checks passed".
    let text = concise(
        "train.sh",
        "lerobot-train --policy.path=lerobot/xvla-base --dataset.repo_id=x --batch_size=8\n",
    );
    assert!(
        text.contains("HW901")
            && text.contains("policy `lerobot/xvla-base`")
            && text.contains("its config is the checkpoint's")
            && text.contains("`policy.input_features`")
            && !text.contains("All checks passed"),
        "{text}"
    );
}

#[test]
fn a_policy_trained_through_peft_adapters_is_said_not_checked() {
    // `peft` wraps the policy in adapters over modules each policy names (scripts/
    // lerobot_train.py:479-491 at lerobot@7427f318); counted as full training, pi0 at batch 8
    // would be an error on an H100. Set in the file or on the launch line, HW901 says it was
    // not read; `peft: null` is no adapter.
    let pi0 = "policy:\n  type: pi0\n  input_features:\n    observation.images.a: {type: VISUAL, shape: [3, 224, 224]}\n    observation.state: {type: STATE, shape: [8]}\n";
    let why = "`peft` is set: LeRobot trains PEFT adapters";
    for (name, text) in [
        (
            "pi0.yaml",
            format!("dataset: {{repo_id: x}}\nbatch_size: 8\npeft:\n  r: 8\n{pi0}"),
        ),
        (
            "train.sh",
            "lerobot-train --policy.type=smolvla --dataset.repo_id=x --batch_size=64 --peft.r=16\n"
                .to_string(),
        ),
    ] {
        let out = concise(name, &text);
        assert!(
            out.contains("HW901") && out.contains(why) && !out.contains("All checks passed"),
            "{name}: {out}"
        );
    }
    let plain = concise(
        "pi0.yaml",
        &format!("dataset: {{repo_id: x}}\nbatch_size: 8\npeft: null\n{pi0}"),
    );
    assert!(!plain.contains(why), "{plain}");
}

#[test]
fn hostile_sizes_of_the_newer_policies_are_refused_by_name() {
    // Each would overflow the products that size the parts, or builds nothing: HW901 names
    // the key, never a panic.
    let cams = "  input_features:\n    observation.images.a: {type: VISUAL, shape: [3, 224, 224]}\n    observation.state: {type: STATE, shape: [6]}\n";
    for (policy, body, why) in [
        (
            "xvla",
            "  num_domains: 1000000000000\n",
            "`policy.num_domains` is 1000000000000, past the 1048576",
        ),
        ("xvla", "  num_heads: 0\n", "`policy.num_heads` is 0"),
        (
            "xvla",
            "  florence_config: {text_config: {d_model: 1000000000000000000}}\n",
            "`policy.florence_config.text_config.d_model` is 1000000000000000000",
        ),
        (
            "xvla",
            "  mlp_ratio: 1.0e300\n",
            "`policy.mlp_ratio` is not a ratio",
        ),
        (
            "tdmpc",
            "  horizon: 999999999999\n",
            "`policy.horizon` is 999999999999, outside the 1-1024",
        ),
        (
            "tdmpc",
            "  mlp_dim: 99999999999\n",
            "`policy.mlp_dim` is 99999999999, outside the 1-65536",
        ),
        (
            "groot",
            "  tune_top_llm_layers: 99999\n",
            "`policy.tune_top_llm_layers` is 99999, more than the LLM's 16 layers",
        ),
    ] {
        let text = concise(
            "p.yaml",
            &format!(
                "dataset: {{repo_id: x}}\nbatch_size: 8\npolicy:\n  type: {policy}\n{body}{cams}"
            ),
        );
        assert!(
            text.contains("HW901") && text.contains("the model was not read") && text.contains(why),
            "{policy} {body}: {text}"
        );
    }
}
