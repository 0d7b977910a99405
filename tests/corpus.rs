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

fn corpus() -> Option<PathBuf> {
    shared::shared_path("corpus")
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
    assert_eq!(files, 600);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_fixes_keep_files_parseable_and_converge() {
    let Some(root) = corpus() else {
        return;
    };
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let config = LoadedConfig::empty().unwrap();
    let mut fixed_files = 0;
    for line in manifest.lines().skip(1) {
        let rel = line.split('\t').next().unwrap();
        let path = root.join(rel);
        let format = Format::from_path(&path).unwrap();
        let settings = config.for_file(&path, &Default::default()).unwrap();
        // Unsafe fixes too: the most edits the fixer can make, in memory only.
        let mode = FixMode::Apply(hwlint::fix::Applicability::Unsafe);
        let r = lint_path(&path, format, settings.clone(), mode);
        if !r.changed() {
            continue;
        }
        fixed_files += 1;
        hwlint::syntax::parse(&r.text, format)
            .unwrap_or_else(|e| panic!("{rel}: fix broke the file: {e:?}"));
        let again = hwlint::lint::lint_source(&path, &r.text, format, &settings, mode);
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
    eprintln!("corpus: {fixed_files} files would change under --fix --unsafe-fixes");
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
    let Some(root) = corpus() else {
        return;
    };
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let config = LoadedConfig::empty().unwrap();
    let mut estimated = 0;
    let mut failures = Vec::new();
    for line in manifest.lines().skip(1) {
        let rel = line.split('\t').next().unwrap();
        let path = root.join(rel);
        let format = Format::from_path(&path).unwrap();
        let mut settings = config.for_file(&path, &Default::default()).unwrap();
        settings.target.gpu = hwlint::hardware::catalog().gpu("b200").unwrap().clone();
        settings.target.gpus = None;
        settings.select = vec!["HW101".into(), "HW103".into()];
        let r = lint_path(&path, format, settings, FixMode::Off);
        for d in &r.diagnostics {
            if d.rule.code == "HW101" && !TOO_BIG_FOR_ONE_GPU.iter().any(|(f, _)| *f == rel) {
                failures.push(format!("{rel}: {}", d.message));
            } else {
                estimated += 1;
            }
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

/// Of the corpus configs that name a model, the share that get a memory estimate on the default
/// target (an exact one or a bounded one), and the reason for each of the others.
#[test]
fn corpus_configs_that_name_a_model_get_an_estimate() {
    use hwlint::dialect::Concept;
    use hwlint::estimate::plan::{memory_for, Gap, Inputs};
    let Some(root) = corpus() else {
        return;
    };
    let manifest = std::fs::read_to_string(root.join("MANIFEST.tsv")).unwrap();
    let config = LoadedConfig::empty().unwrap();
    let (mut named, mut estimated, mut bounded) = (0, 0, 0);
    let mut missing = Vec::new();
    for line in manifest.lines().skip(1) {
        let rel = line.split('\t').next().unwrap();
        let path = root.join(rel);
        let format = Format::from_path(&path).unwrap();
        let settings = config.for_file(&path, &Default::default()).unwrap();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(doc) = hwlint::syntax::parse(&text, format) else {
            continue;
        };
        // One per file, as HW901 reports it: the first document that names a model.
        for node in &doc.roots {
            let Some((d, node)) = hwlint::dialect::detect(&settings.dialects, node, format, &path)
            else {
                continue;
            };
            let setup = hwlint::dialect::resolve(d, &node);
            let Some((model, _)) = setup.str(Concept::Model) else {
                continue;
            };
            named += 1;
            let linked = hwlint::dialect::linked_deepspeed(&setup, &path, &settings.dialects);
            let result = memory_for(&Inputs {
                setup: &setup,
                linked: linked.as_ref().map(|l| &l.setup),
                models: &settings.models,
                base_dir: path.parent().unwrap(),
                target: &settings.target,
                data_parallel: None,
                mem_fraction: None,
                global_batch_splits: d.semantics.global_batch_splits_over_devices,
                sharding_in_file_only: d.semantics.sharding_in_file_only,
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
        let reviewed = NOT_ESTIMATED.iter().find(|(m, _)| m == model);
        eprintln!(
            "  {rel}: {model}: {why}{}",
            reviewed.map_or(String::new(), |(_, r)| format!(" ({r})"))
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
    let share = estimated as f64 / named as f64;
    eprintln!("coverage {:.1}%", share * 100.0);
    assert!(
        share >= COVERAGE_FLOOR,
        "coverage {:.1}% < {:.0}%",
        share * 100.0,
        COVERAGE_FLOOR * 100.0
    );
}

/// The share of model-naming corpus configs that must get an estimate.
const COVERAGE_FLOOR: f64 = 0.90;
