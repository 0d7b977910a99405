//! How the estimator reads weight dtype, compute precision, optimizer, quantization, loss and
//! checkpointing from each framework's configs. Every fixture in fixtures/estimate/ names the
//! framework source line its reading follows (YAML/TOML: a comment at the top of the file;
//! JSON: `source` in the table below). Two readings the estimator once got wrong have tests of
//! their own.

use std::path::{Path, PathBuf};

#[path = "support/planned.rs"]
mod support;

use hwlint::estimate::plan::Planned;
use hwlint::estimate::step::{Checkpointing, Optimizer, Precision};

/// What the estimator should read from one fixture.
#[derive(Debug, Clone, Copy)]
struct Expect {
    precision: Precision,
    master_weights: bool,
    optimizer: Optimizer,
    checkpointing: Checkpointing,
    chunked_loss: bool,
    /// Every how many blocks one is checkpointed (torchtitan `selective_ac_option = N`).
    checkpoint_every: u64,
    load_in_4bit: bool,
    double_quant: bool,
    load_in_8bit: bool,
    /// LoRA rank and targets (comma-separated, as the plan holds them).
    lora: Option<(u64, &'static str)>,
    /// Tokens per sample (0 for vision and robot policies).
    seq_len: u64,
    accumulating: bool,
    /// Data-parallel processes passed to the estimator (`None`: unknown, as `hwlint check`).
    data_parallel: Option<i64>,
    zero_stage: u8,
    gpus: u64,
    /// Substrings of the bounded options, one per entry of `Planned::bounded`; empty means the
    /// reading is exact and `lower` is `None`.
    bounded: &'static [&'static str],
    /// `lower`'s precision, checkpointing and optimizer when something is bounded.
    lower: Option<(Precision, Checkpointing, Optimizer)>,
}

/// A bf16-true full fine-tune with fused AdamW and full checkpointing, nothing bounded.
const BASE: Expect = Expect {
    precision: Precision::Bf16True,
    master_weights: false,
    optimizer: Optimizer::AdamwFused,
    checkpointing: Checkpointing::Full,
    chunked_loss: false,
    checkpoint_every: 1,
    load_in_4bit: false,
    double_quant: false,
    load_in_8bit: false,
    lora: None,
    seq_len: 1024,
    accumulating: false,
    data_parallel: None,
    zero_stage: 0,
    gpus: 1,
    bounded: &[],
    lower: None,
};

/// TRL's defaults on top of BASE: chunked loss (trl/trainer/sft_config.py:334-336).
const TRL: Expect = Expect {
    chunked_loss: true,
    ..BASE
};

/// axolotl: its dialect reads `bnb_4bit_use_double_quant` as true by default
/// (src/axolotl/loaders/model.py:712-740); the flag only matters for a 4-bit base.
const AXOLOTL: Expect = Expect {
    double_quant: true,
    ..BASE
};

/// LLaMA-Factory: `double_quantization` defaults to true (hparams/model_args.py:291-293).
const LLAMA_FACTORY: Expect = Expect {
    double_quant: true,
    ..BASE
};

/// torchtitan FSDP2 defaults: a bf16 module over fp32 sharded masters, fused AdamW,
/// llama3/8B at 4096 tokens.
const TORCHTITAN: Expect = Expect {
    master_weights: true,
    seq_len: 4096,
    ..BASE
};

/// A LeRobot policy: no sequence length, torch AdamW with no flag (foreach), no checkpointing.
const LEROBOT: Expect = Expect {
    precision: Precision::Fp32,
    optimizer: Optimizer::Adamw,
    checkpointing: Checkpointing::None,
    seq_len: 0,
    ..BASE
};

/// One fixture, the citation for a JSON fixture (which cannot hold a comment), and the reading.
struct Case {
    file: &'static str,
    source: &'static str,
    expect: Expect,
}

const IN_FILE: &str = "in the fixture's header comment";

const CASES: &[Case] = &[
    // ---- TRL ------------------------------------------------------------------------------
    Case {
        file: "trl/dtype-bf16.yaml",
        source: IN_FILE,
        expect: TRL,
    },
    Case {
        file: "trl/torch-dtype-bf16.yaml",
        source: IN_FILE,
        expect: TRL,
    },
    Case {
        file: "trl/model-init-kwargs-dtype.yaml",
        source: IN_FILE,
        expect: Expect {
            seq_len: 2048,
            ..TRL
        },
    },
    Case {
        file: "trl/defaults.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Bf16Mixed,
            ..TRL
        },
    },
    Case {
        file: "trl/loss-nll.yaml",
        source: IN_FILE,
        expect: Expect {
            chunked_loss: false,
            ..TRL
        },
    },
    Case {
        file: "trl/qlora.yaml",
        source: IN_FILE,
        expect: Expect {
            load_in_4bit: true,
            double_quant: false,
            lora: Some((16, "q_proj,k_proj,v_proj,o_proj")),
            ..TRL
        },
    },
    Case {
        file: "trl/optim-paged-adamw-32bit.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::PagedAdamw,
            // A full fine-tune: the paged state is most of the need, and the driver may move
            // all of it to host memory.
            bounded: &["optimizer `paged_adamw_32bit` pages its state"],
            lower: Some((Precision::Bf16True, Checkpointing::Full, Optimizer::Sgd)),
            ..TRL
        },
    },
    Case {
        file: "trl/optim-adamw-torch.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::Adamw,
            ..TRL
        },
    },
    // ---- Hugging Face Trainer ---------------------------------------------------------------
    Case {
        file: "hf-trainer/torch-dtype-bf16.yaml",
        source: IN_FILE,
        expect: Expect {
            checkpointing: Checkpointing::None,
            seq_len: 0,
            ..BASE
        },
    },
    Case {
        file: "hf-trainer/unset.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Fp32,
            checkpointing: Checkpointing::None,
            seq_len: 0,
            bounded: &["precision not set", "activation checkpointing not set"],
            lower: Some((
                Precision::Bf16True,
                Checkpointing::Full,
                Optimizer::AdamwFused,
            )),
            ..BASE
        },
    },
    // ---- axolotl ----------------------------------------------------------------------------
    Case {
        file: "axolotl/bf16-true.yaml",
        source: IN_FILE,
        expect: AXOLOTL,
    },
    Case {
        file: "axolotl/fp16.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Fp16True,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/bf16-false.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Fp32,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/qlora.yaml",
        source: IN_FILE,
        expect: Expect {
            load_in_4bit: true,
            double_quant: true,
            lora: Some((16, "all-linear")),
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/lora-8bit.yaml",
        source: IN_FILE,
        expect: Expect {
            load_in_8bit: true,
            lora: Some((16, "all-linear")),
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/liger-flce.yaml",
        source: IN_FILE,
        expect: Expect {
            chunked_loss: true,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/liger-rms-norm.yaml",
        source: IN_FILE,
        expect: Expect {
            checkpointing: Checkpointing::None,
            bounded: &["fused kernels"],
            lower: Some((
                Precision::Bf16True,
                Checkpointing::Full,
                Optimizer::AdamwFused,
            )),
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/optim-adamw-bnb-8bit.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::Adamw8bit,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/optim-muon.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::Muon,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/optim-lion-8bit.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::Lion8bit,
            ..AXOLOTL
        },
    },
    Case {
        file: "axolotl/optim-schedule-free.yaml",
        source: IN_FILE,
        expect: Expect {
            optimizer: Optimizer::Adamw,
            bounded: &["optimizer `schedule_free_adamw`"],
            lower: Some((Precision::Bf16True, Checkpointing::Full, Optimizer::Sgd)),
            ..AXOLOTL
        },
    },
    // ---- torchtitan -------------------------------------------------------------------------
    Case {
        file: "torchtitan/defaults.toml",
        source: IN_FILE,
        expect: Expect {
            checkpoint_every: 2,
            ..TORCHTITAN
        },
    },
    Case {
        file: "torchtitan/ac-full.toml",
        source: IN_FILE,
        expect: TORCHTITAN,
    },
    Case {
        file: "torchtitan/ac-selective-op.toml",
        source: IN_FILE,
        expect: Expect {
            checkpointing: Checkpointing::Selective,
            ..TORCHTITAN
        },
    },
    Case {
        file: "torchtitan/ac-memory-budget.toml",
        source: IN_FILE,
        expect: Expect {
            checkpointing: Checkpointing::None,
            bounded: &["activation checkpointing `memory_budget`"],
            lower: Some((
                Precision::Bf16True,
                Checkpointing::Full,
                Optimizer::AdamwFused,
            )),
            ..TORCHTITAN
        },
    },
    // ---- DeepSpeed (a TRL file naming ds_zero2_bf16.json) -----------------------------------
    Case {
        file: "deepspeed/trl-zero2.yaml",
        source: IN_FILE,
        expect: Expect {
            master_weights: true,
            ..TRL
        },
    },
    Case {
        file: "deepspeed/trl-zero2.yaml",
        source: IN_FILE,
        expect: Expect {
            master_weights: true,
            data_parallel: Some(8),
            zero_stage: 2,
            gpus: 8,
            ..TRL
        },
    },
    // ---- LeRobot (draccus train_config.json) ------------------------------------------------
    Case {
        file: "lerobot/pi0-dtype-bf16.json",
        source: "pi0 `dtype: bfloat16` casts the language model and action expert to bf16 \
                 (huggingface/lerobot@7427f318 src/lerobot/policies/pi0/modeling_pi0.py:247-268, \
                 configuration_pi0.py:33; the SigLIP tower stays fp32); \
                 `accelerator.mixed_precision` defaults to \"no\" (configs/accelerator.py:190-217); \
                 AdamWConfig.build passes no fused/foreach flag (optim/optimizers.py:104-116). \
                 Expected: bf16-true, adamw (foreach).",
        expect: Expect {
            precision: Precision::Bf16True,
            ..LEROBOT
        },
    },
    Case {
        file: "lerobot/act-mixed-precision-bf16.json",
        source: "`accelerator.mixed_precision: bf16` selects accelerate-native AMP over fp32 \
                 params (huggingface/lerobot@7427f318 src/lerobot/configs/accelerator.py:190-217, \
                 :241; forward under accelerator.autocast(), scripts/lerobot_train.py:195). \
                 Expected: bf16-mixed.",
        expect: Expect {
            precision: Precision::Bf16Mixed,
            ..LEROBOT
        },
    },
    Case {
        file: "lerobot/act-defaults.json",
        source: "`accelerator.mixed_precision` defaults to \"no\" (huggingface/lerobot@7427f318 \
                 src/lerobot/configs/accelerator.py:190-217) and ACT has no `dtype` field: fp32. \
                 Expected: fp32, adamw (foreach).",
        expect: LEROBOT,
    },
    // ---- LeRobot, Hydra era -----------------------------------------------------------------
    Case {
        file: "lerobot-hydra/act-use-amp.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Fp16Mixed,
            ..LEROBOT
        },
    },
    Case {
        file: "lerobot-hydra/act-defaults.yaml",
        source: IN_FILE,
        expect: LEROBOT,
    },
    // ---- LLaMA-Factory ----------------------------------------------------------------------
    Case {
        file: "llama-factory/full-bf16.yaml",
        source: IN_FILE,
        expect: Expect {
            precision: Precision::Bf16Mixed,
            ..LLAMA_FACTORY
        },
    },
    Case {
        file: "llama-factory/pure-bf16.yaml",
        source: IN_FILE,
        expect: LLAMA_FACTORY,
    },
    Case {
        file: "llama-factory/lora-defaults.yaml",
        source: IN_FILE,
        expect: Expect {
            // The frozen base loads as the checkpoint's dtype (`torch_dtype: auto`, bf16 for
            // Qwen2.5); the catalog does not record it, so the reading is bounded between an
            // fp32 base under autocast and a bf16 base.
            precision: Precision::Bf16Mixed,
            lora: Some((8, "all-linear")),
            seq_len: 2048,
            accumulating: true,
            bounded: &["weight dtype `auto`"],
            lower: Some((
                Precision::Bf16True,
                Checkpointing::Full,
                Optimizer::AdamwFused,
            )),
            ..LLAMA_FACTORY
        },
    },
    Case {
        file: "llama-factory/qlora-4bit.yaml",
        source: IN_FILE,
        expect: Expect {
            // Llama-3.2-1B's config.json declares bfloat16 (recorded in the catalog): the
            // `auto` load is exact.
            precision: Precision::Bf16True,
            load_in_4bit: true,
            lora: Some((8, "all-linear")),
            accumulating: true,
            ..LLAMA_FACTORY
        },
    },
];

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/estimate")
        .join(rel)
}

/// The estimator's reading of a fixture, on an H100 (where axolotl's `bf16: auto` is bf16).
fn read(rel: &str, data_parallel: Option<i64>) -> Planned {
    support::plan_at(&fixture(rel), data_parallel)
        .unwrap_or_else(|gap| panic!("{rel}: no estimate: {gap:?}"))
}

/// Every field of the reading that differs from the expectation, named.
fn differences(rel: &str, e: &Expect) -> Vec<String> {
    let got = read(rel, e.data_parallel);
    let p = &got.plan;
    let mut diff = Vec::new();
    let mut check = |what: &str, want: String, have: String| {
        if want != have {
            diff.push(format!("{what}: expected {want}, read {have}"));
        }
    };
    check(
        "precision",
        format!("{:?}", e.precision),
        format!("{:?}", p.precision),
    );
    check(
        "master_weights",
        e.master_weights.to_string(),
        p.master_weights.to_string(),
    );
    check(
        "optimizer",
        format!("{:?}", e.optimizer),
        format!("{:?}", p.optimizer),
    );
    check(
        "checkpointing",
        format!("{:?}", e.checkpointing),
        format!("{:?}", p.checkpointing),
    );
    check(
        "chunked_loss",
        e.chunked_loss.to_string(),
        p.chunked_loss.to_string(),
    );
    check(
        "checkpoint_every",
        e.checkpoint_every.to_string(),
        p.checkpoint_every.to_string(),
    );
    check(
        "load_in_4bit",
        e.load_in_4bit.to_string(),
        p.load_in_4bit.to_string(),
    );
    check(
        "double_quant",
        e.double_quant.to_string(),
        p.double_quant.to_string(),
    );
    check(
        "load_in_8bit",
        e.load_in_8bit.to_string(),
        p.load_in_8bit.to_string(),
    );
    check(
        "prequantized",
        "None".into(),
        format!("{:?}", p.prequantized),
    );
    check(
        "lora",
        format!("{:?}", e.lora.map(|(r, t)| (r, t.to_string()))),
        format!("{:?}", p.lora.as_ref().map(|(r, t)| (*r, t.join(",")))),
    );
    check("seq_len", e.seq_len.to_string(), p.seq_len.to_string());
    check(
        "accumulating",
        e.accumulating.to_string(),
        p.accumulating.to_string(),
    );
    check(
        "zero_stage",
        e.zero_stage.to_string(),
        p.zero_stage.to_string(),
    );
    check("gpus", e.gpus.to_string(), p.gpus.to_string());
    check(
        "bounded",
        format!("{} entries matching {:?}", e.bounded.len(), e.bounded),
        if got.bounded.len() == e.bounded.len()
            && e.bounded
                .iter()
                .zip(&got.bounded)
                .all(|(want, have)| have.what.contains(want))
        {
            format!("{} entries matching {:?}", e.bounded.len(), e.bounded)
        } else {
            format!("{:?}", got.bounded)
        },
    );
    check(
        "lower",
        format!("{:?}", e.lower),
        format!(
            "{:?}",
            got.lower
                .as_ref()
                .map(|l| (l.precision, l.checkpointing, l.optimizer))
        ),
    );
    diff.into_iter().map(|d| format!("{rel}: {d}")).collect()
}

#[test]
fn readings_follow_the_framework_sources() {
    let mut failures = Vec::new();
    for case in CASES {
        assert!(
            !case.source.is_empty(),
            "{}: every reading cites its source",
            case.file
        );
        if case.file.ends_with(".json") {
            assert_ne!(
                case.source, IN_FILE,
                "{}: JSON holds no comment: cite the source in the table",
                case.file
            );
        } else {
            let text = std::fs::read_to_string(fixture(case.file)).unwrap();
            assert!(
                text.starts_with('#') && text.contains(".py:"),
                "{}: the header comment cites a framework source line",
                case.file
            );
        }
        failures.extend(differences(case.file, &case.expect));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Every fixture (but the DeepSpeed JSON, which names no model) is in the table or in a test
/// of its own below.
#[test]
fn every_fixture_is_read() {
    let own_test = [
        "torchtitan/dtype-bf16.toml",
        "axolotl/lora-8bit-bf16-unset.yaml",
    ];
    let root = fixture("");
    let mut missing = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        for file in std::fs::read_dir(&dir).unwrap() {
            let file = file.unwrap().path();
            let rel = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "deepspeed/ds_zero2_bf16.json" || own_test.contains(&rel.as_str()) {
                continue;
            }
            if !CASES.iter().any(|c| c.file == rel) {
                missing.push(rel);
            }
        }
    }
    assert!(missing.is_empty(), "fixtures not in CASES: {missing:?}");
}

/// torchtitan `training.dtype = "bfloat16"`: "put all parameters, gradients, and optimizer
/// states in bfloat16, without an extra copy of fp32 weights" (pytorch/torchtitan HEAD
/// torchtitan/config/configs.py:88-92; v0.2.2 config/job_config.py:275, train.py:147-151).
#[test]
fn torchtitan_bf16_training_dtype_keeps_no_fp32_master() {
    let diff = differences("torchtitan/dtype-bf16.toml", &TORCHTITAN_BF16);
    assert!(diff.is_empty(), "\n{}", diff.join("\n"));
}

const TORCHTITAN_BF16: Expect = Expect {
    master_weights: false,
    ..TORCHTITAN
};

/// axolotl `load_in_8bit` with `bf16` unwritten: `bf16` defaults to "auto" (schemas/config.py:
/// 559-563), True on a bf16 GPU (utils/config/__init__.py:157-167), and resolve_dtype checks it
/// before load_in_8bit (:191-196): the model loads in bf16 on an H100.
#[test]
fn axolotl_8bit_with_default_bf16_loads_bf16() {
    let e = Expect {
        load_in_8bit: true,
        lora: Some((16, "all-linear")),
        ..AXOLOTL
    };
    let diff = differences("axolotl/lora-8bit-bf16-unset.yaml", &e);
    assert!(diff.is_empty(), "\n{}", diff.join("\n"));
}

/// torchtitan's float8 converter runs torchao's Float8Linear, which saves the bf16 input and
/// weight for backward and casts again there (pytorch/ao@36027d8 torchao/float8/
/// float8_linear.py:45): the step keeps bf16's, and the plan says so.
#[test]
fn float8_matmuls_keep_what_bf16_ones_keep() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/rules/HW404/hopper/clean-torchtitan-float8.toml");
    let got = support::plan_at(&path, Some(8)).unwrap();
    assert!(
        got.assumed
            .iter()
            .any(|a| a.starts_with("FP8 matmuls keep what bf16 ones keep")),
        "{:?}",
        got.assumed
    );
}

// ---- `hwlint estimate FILE --target h100-sxm --gpus 1`, one snapshot per fixture -------------

fn estimate_output(rel: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .args(["estimate", &format!("fixtures/estimate/{rel}")])
        .args(["--target", "h100-sxm", "--gpus", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{rel}: hwlint estimate failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

macro_rules! snapshot {
    ($($(#[$attr:meta])* $name:ident => $file:literal,)*) => {$(
        #[test]
        $(#[$attr])*
        fn $name() {
            insta::assert_snapshot!(stringify!($name), estimate_output($file));
        }
    )*};
}

snapshot! {
    trl_dtype_bf16 => "trl/dtype-bf16.yaml",
    trl_torch_dtype_bf16 => "trl/torch-dtype-bf16.yaml",
    trl_model_init_kwargs_dtype => "trl/model-init-kwargs-dtype.yaml",
    trl_defaults => "trl/defaults.yaml",
    trl_loss_nll => "trl/loss-nll.yaml",
    trl_qlora => "trl/qlora.yaml",
    trl_optim_paged_adamw_32bit => "trl/optim-paged-adamw-32bit.yaml",
    trl_optim_adamw_torch => "trl/optim-adamw-torch.yaml",
    hf_trainer_torch_dtype_bf16 => "hf-trainer/torch-dtype-bf16.yaml",
    hf_trainer_unset => "hf-trainer/unset.yaml",
    axolotl_bf16_true => "axolotl/bf16-true.yaml",
    axolotl_fp16 => "axolotl/fp16.yaml",
    axolotl_bf16_false => "axolotl/bf16-false.yaml",
    axolotl_qlora => "axolotl/qlora.yaml",
    axolotl_lora_8bit => "axolotl/lora-8bit.yaml",
    axolotl_liger_flce => "axolotl/liger-flce.yaml",
    axolotl_liger_rms_norm => "axolotl/liger-rms-norm.yaml",
    axolotl_optim_muon => "axolotl/optim-muon.yaml",
    axolotl_optim_schedule_free => "axolotl/optim-schedule-free.yaml",
    deepspeed_trl_zero2 => "deepspeed/trl-zero2.yaml",
    lerobot_pi0_dtype_bf16 => "lerobot/pi0-dtype-bf16.json",
    lerobot_act_mixed_precision_bf16 => "lerobot/act-mixed-precision-bf16.json",
    lerobot_act_defaults => "lerobot/act-defaults.json",
    lerobot_hydra_act_use_amp => "lerobot-hydra/act-use-amp.yaml",
    lerobot_hydra_act_defaults => "lerobot-hydra/act-defaults.yaml",
    llama_factory_full_bf16 => "llama-factory/full-bf16.yaml",
    llama_factory_pure_bf16 => "llama-factory/pure-bf16.yaml",
    llama_factory_lora_defaults => "llama-factory/lora-defaults.yaml",
    llama_factory_qlora_4bit => "llama-factory/qlora-4bit.yaml",

    axolotl_optim_adamw_bnb_8bit => "axolotl/optim-adamw-bnb-8bit.yaml",
    axolotl_optim_lion_8bit => "axolotl/optim-lion-8bit.yaml",
    torchtitan_defaults => "torchtitan/defaults.toml",
    torchtitan_ac_full => "torchtitan/ac-full.toml",
    torchtitan_ac_selective_op => "torchtitan/ac-selective-op.toml",
    torchtitan_ac_memory_budget => "torchtitan/ac-memory-budget.toml",
    torchtitan_dtype_bf16 => "torchtitan/dtype-bf16.toml",
    axolotl_lora_8bit_bf16_unset => "axolotl/lora-8bit-bf16-unset.yaml",
}

/// #26: LeRobot's Hydra-era trainer runs on one device (lerobot/scripts/train.py:307, 428 at
/// huggingface/lerobot@1ee1acf8: `get_safe_torch_device(cfg.device)`, no DDP, FSDP or
/// accelerate), so its estimate carries no "model states sharded over any number of GPUs" low
/// end, whatever the GPU count: before, ACT at batch 8 read 1.7-2.2 GiB where 2.2 is the step.
#[test]
fn lerobot_hydra_trains_on_one_device_unsharded() {
    let path = fixture("lerobot-hydra/act-defaults.yaml");
    let path = path.to_str().unwrap();
    for extra in [&[][..], &["--gpus", "4"][..]] {
        let mut args = vec!["estimate", path, "--output-format", "json"];
        args.extend_from_slice(extra);
        let v = support::hwlint_json(&args);
        assert!(
            v["least_peak_allocated_bytes"].is_null(),
            "{extra:?}: a low end {} ({})",
            v["least_peak_allocated_bytes"],
            v["bounded"]
        );
        assert_eq!(v["plan"]["zero_stage"], 0);
    }
}
