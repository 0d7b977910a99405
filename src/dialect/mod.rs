//! Dialects: recognise which framework wrote a config and map its keys onto one
//! [`TrainingSetup`]. The per-framework knowledge is data in `rules/dialects/*.toml`.

mod described;
mod detector;
mod jepa;
mod jepa_ac;
mod mount;
mod policy;
mod recipe;
mod resolve;
mod setup;
mod spec;
pub mod version;

use std::path::Path;

pub use mount::view;
pub use recipe::overlay as recipe_overlay;
pub(crate) use resolve::condition_holds;
pub use resolve::resolve;
pub use setup::{Concept, InlineModel, Origin, Setting, SettingValue, TrainingSetup, ValueType};
pub use spec::Mount;

pub use spec::{
    ArchitectureSource, ArchitectureSpec, Condition, Dialect, Documents, DuplicateKeys, LoadSpec,
    NotTraining, Recipe, Semantics, SettingSpec, Signature, Source,
};

use crate::syntax::{Format, Node};

/// Each built-in dialect: its file's name, its TOML (the source, kept for the test that the
/// two read the same), and the JSON build.rs converts it to (what start-up parses), its
/// settings apart (read when the dialect is first used).
macro_rules! builtin_dialects {
    ($($name:literal),* $(,)?) => {
        &[$((
            concat!($name, ".toml"),
            include_str!(concat!("../../rules/dialects/", $name, ".toml")),
            include_str!(concat!(env!("OUT_DIR"), "/rules/dialects/", $name, ".json")),
            include_str!(concat!(env!("OUT_DIR"), "/rules/dialects/", $name, ".settings.json")),
        )),*]
    };
}

/// The dialects compiled into the binary, most specific first (ties go to the earlier one).
const BUILTIN: &[(&str, &str, &str, &str)] = builtin_dialects![
    "openpi",
    "lerobot",
    "lerobot-hydra",
    "open-instruct",
    "trl",
    "llama-factory-v1",
    "llama-factory",
    "hf-trainer",
    "axolotl",
    "torchtitan",
    "litgpt",
    "torchtune",
    "llm-foundry",
    "olmo",
    "gpt-neox",
    "verl",
    "detectron2",
    "yolov5",
    "ultralytics",
    "pytorchjob",
    "deepspeed",
    "nemo",
    "lightning-hydra",
    "lightning",
    "vjepa",
    "vjepa-eval",
    "accelerate",
    "mmengine",
    "pytorch",
    "burn",
];

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("invalid dialect file {file}: {message}")]
#[diagnostic(
    code(hwlint::dialect),
    help("see rules/dialects/*.toml for the schema")
)]
pub struct DialectError {
    pub file: String,
    pub message: String,
}

/// Parses one dialect file.
pub fn parse_dialect(file: &str, text: &str) -> Result<Dialect, DialectError> {
    let dialect: Dialect = toml::from_str(text).map_err(|e| DialectError {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    // A default is reported at the key a user would add to change it: a setting needs one.
    if let Some((concept, _)) = dialect.settings.iter().find(|(_, s)| s.from.is_empty()) {
        return Err(DialectError {
            file: file.to_string(),
            message: format!(
                "[settings.{}] has an empty `from`: name at least the key that sets it",
                serde_json::to_value(concept)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
        });
    }
    // A glob that does not compile would match nothing, silently: say which.
    for sig in &dialect.detect {
        for (field, globs) in [("filenames", &sig.filenames), ("not_paths", &sig.not_paths)] {
            for g in globs {
                if let Err(e) = globset::Glob::new(g) {
                    return Err(DialectError {
                        file: file.to_string(),
                        message: format!("[[detect]] `{field}`: `{g}` is not a valid glob ({e})"),
                    });
                }
            }
        }
    }
    Ok(dialect)
}

/// The built-in dialects.
pub fn builtin() -> Vec<Dialect> {
    BUILTIN
        .iter()
        // Compiled-in files are checked by a unit test; a failure is a build bug.
        .map(|(f, _, json, settings)| {
            let mut d: Dialect =
                serde_json::from_str(json).unwrap_or_else(|e| panic!("built-in dialect {f}: {e}"));
            d.settings = spec::Settings::lazy(settings);
            d
        })
        .collect()
}

/// Loads user dialect files (from `dialects = [...]` in hwlint.toml), ahead of the built-ins.
pub fn with_user_dialects(paths: &[std::path::PathBuf]) -> Result<Vec<Dialect>, DialectError> {
    let mut out = Vec::new();
    for p in paths {
        let text =
            crate::source::read_text(p, crate::source::MAX_FILE_BYTES).map_err(|message| {
                DialectError {
                    file: p.display().to_string(),
                    message,
                }
            })?;
        out.push(parse_dialect(&p.display().to_string(), &text)?);
    }
    out.extend(builtin());
    Ok(out)
}

/// A config another one points at (the DeepSpeed JSON named by `deepspeed:`), read through
/// its own dialect so rules can compare the two.
#[derive(Debug, Clone)]
pub struct LinkedConfig {
    /// The path as the referring file wrote it.
    pub path: String,
    pub setup: TrainingSetup,
}

/// Reads the DeepSpeed JSON that `setup` names, looked up next to `file` and then in each folder
/// above it (frameworks resolve it against the launch folder, usually the repository root).
pub fn linked_deepspeed(
    setup: &TrainingSetup,
    file: &Path,
    dialects: &[Dialect],
) -> Option<LinkedConfig> {
    let (written, _) = setup.str(Concept::DeepspeedConfig)?;
    if !written.ends_with(".json") {
        return None;
    }
    let dialect = dialects.iter().find(|d| d.name == "deepspeed")?;
    let start = std::path::absolute(file).ok()?;
    let found = if Path::new(written).is_absolute() {
        Some(Path::new(written).to_path_buf())
    } else {
        start
            .ancestors()
            .skip(1)
            .map(|dir| dir.join(written))
            .find(|p| p.is_file())
    }?;
    let text = crate::source::read_text(&found, crate::source::MAX_FILE_BYTES).ok()?;
    let doc = crate::syntax::parse(&text, Format::Json).ok()?;
    let root = doc.roots.first()?;
    let mut linked = resolve(dialect, root);
    if dialects
        .iter()
        .any(|d| d.name == setup.dialect && d.semantics.fills_deepspeed_auto)
    {
        fill_auto(&mut linked, setup);
    }
    Some(LinkedConfig {
        path: written.to_string(),
        setup: linked,
    })
}

/// The Trainer's arguments in place of the DeepSpeed JSON's `"auto"`: the micro-batch, the
/// accumulation, bf16/fp16 (`trainer_config_process`), the warmup and the run length as the
/// scheduler's total steps (`trainer_config_finalize`; transformers
/// integrations/deepspeed.py:136-184, 245-256 at transformers 5.24.0). Each keeps the origin of
/// the Trainer argument that sets it. The train batch needs the world size: it stays unknown.
fn fill_auto(linked: &mut TrainingSetup, trainer: &TrainingSetup) {
    for (ds, from) in [
        (Concept::MicroBatch, Concept::MicroBatch),
        (Concept::GradAccum, Concept::GradAccum),
        (Concept::Precision, Concept::Precision),
        (Concept::WarmupSteps, Concept::WarmupSteps),
        (Concept::DecaySteps, Concept::TotalSteps),
    ] {
        let auto = matches!(
            linked.get(ds).map(|s| &s.value),
            Some(SettingValue::Unknown(v)) if v == "auto"
        );
        let known = trainer
            .get(from)
            .filter(|s| !matches!(s.value, SettingValue::Unknown(_)));
        if let (true, Some(s)) = (auto, known) {
            linked.settings.insert(ds, s.clone());
        }
    }
}

fn has_path(root: &Node, dotted: &str) -> bool {
    root.get_dotted(dotted).is_some()
}

/// A dialect's dotted key as path segments: a quoted segment may hold dots (Kubernetes'
/// `limits."nvidia.com/gpu"`), and a number indexes a list (`containers.0`).
pub fn key_path(dotted: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = dotted;
    loop {
        if let Some(quoted) = rest.strip_prefix('"') {
            let Some(end) = quoted.find('"') else {
                out.push(quoted);
                return out;
            };
            out.push(&quoted[..end]);
            match quoted[end + 1..].strip_prefix('.') {
                Some(next) => rest = next,
                None => return out,
            }
        } else {
            match rest.find('.') {
                Some(i) => {
                    out.push(&rest[..i]);
                    rest = &rest[i + 1..];
                }
                None => {
                    out.push(rest);
                    return out;
                }
            }
        }
    }
}

/// The best-matching dialect for a document root, with the tree it reads there (see
/// [`view`]), or `None` when it is not a training config hwlint knows.
pub fn detect<'d, 'r>(
    dialects: &'d [Dialect],
    root: &'r Node,
    format: Format,
    path: &Path,
) -> Option<(&'d Dialect, std::borrow::Cow<'r, Node>)> {
    root.as_map()?;
    let mut best: Option<(u32, &Dialect, std::borrow::Cow<'r, Node>)> = None;
    for d in dialects {
        if !d.formats.contains(&format) {
            continue;
        }
        let Some(view) = view(d, root, format) else {
            continue;
        };
        // A launch line that runs a script the dialect names (`lerobot-train`) is the
        // dialect's, whatever flags it passes (perhaps only `--config_path`).
        let named_script = format == Format::Shell
            && d.mount
                .iter()
                .any(|m| m.format == Format::Shell && m.names_its_lines() && m.takes_line(root));
        let root: &Node = &view;
        let mut hit = named_script.then_some(u32::MAX / 2);
        for sig in &d.detect {
            if !sig.applies_to(path) {
                continue;
            }
            if sig.exclude.iter().any(|k| has_path(root, k)) {
                continue;
            }
            if !sig.require_any.is_empty() && !sig.require_any.iter().any(|k| has_path(root, k)) {
                continue;
            }
            let score: u32 = sig
                .keys
                .iter()
                .filter(|(k, _)| has_path(root, k))
                .map(|(_, w)| *w)
                .sum();
            let top = hit.max(best.as_ref().map(|(b, _, _)| *b));
            if score >= sig.min_score && top.is_none_or(|b| score > b) {
                hit = Some(score);
            }
        }
        if let Some(score) = hit {
            best = Some((score, d, view));
        }
    }
    best.map(|(_, d, v)| (d, v))
}

/// Why [`detect`] recognised a dialect: the signature keys present, or the script a launch
/// line runs (for `--verbose` and the JSON outputs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    pub keys: Vec<String>,
    pub script: Option<String>,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.keys.is_empty() {
            write!(f, "keys {}", self.keys.join(", "))
        } else if let Some(script) = &self.script {
            write!(f, "it runs `{script}`")
        } else {
            Ok(())
        }
    }
}

/// Why [`detect`] recognised `d` in `root`.
pub fn evidence(d: &Dialect, root: &Node, format: Format) -> Evidence {
    let Some(view) = view(d, root, format) else {
        return Evidence::default();
    };
    let mut keys: Vec<String> = d
        .detect
        .iter()
        .flat_map(|sig| sig.keys.keys())
        .filter(|k| has_path(&view, k))
        .cloned()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let script = if keys.is_empty() {
        root.get_path(&["script"])
            .and_then(|n| n.as_scalar())
            .map(|s| s.text.clone())
    } else {
        None
    };
    Evidence { keys, script }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A framework with a global batch and a micro-batch but no accumulation key derives the
    /// accumulation from them: its dialect must say how (from a global batch it states, or
    /// one it derives from the ranks), or a batch fix would call a smaller micro-batch a
    /// smaller effective batch (as LitGPT's once did).
    #[test]
    fn derived_accumulation_is_declared() {
        for d in builtin() {
            let has = |c: Concept| d.settings.contains_key(&c);
            if has(Concept::GlobalBatch) && has(Concept::MicroBatch) && !has(Concept::GradAccum) {
                assert!(
                    d.semantics.accumulation_derived || d.semantics.global_batch_minus_one_is_derived,
                    "{}: a global batch and a micro-batch with no accumulation key, but [semantics] says not how accumulation follows",
                    d.name
                );
            }
        }
    }

    #[test]
    fn deepspeed_auto_values_come_from_the_trainer() {
        let dir = tempfile::tempdir().unwrap();
        let ds = dir.path().join("ds.json");
        std::fs::write(
            &ds,
            r#"{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                "train_batch_size": "auto", "bf16": {"enabled": "auto"},
                "zero_optimization": {"stage": 2}}"#,
        )
        .unwrap();
        let cfg = dir.path().join("args.yaml");
        let text = "output_dir: out\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nbf16: true\nmax_steps: 100\nlearning_rate: 1.0e-5\ndeepspeed: ds.json\n";
        std::fs::write(&cfg, text).unwrap();
        let dialects = builtin();
        let doc = crate::syntax::parse(text, Format::Yaml).unwrap();
        let (d, view) = detect(&dialects, &doc.roots[0], Format::Yaml, &cfg).unwrap();
        assert_eq!(d.name, "hf-trainer");
        let setup = resolve(d, &view);
        let linked = linked_deepspeed(&setup, &cfg, &dialects).unwrap().setup;
        assert_eq!(linked.int(Concept::MicroBatch).map(|(v, _)| v), Some(4));
        assert_eq!(linked.int(Concept::GradAccum).map(|(v, _)| v), Some(8));
        assert_eq!(
            linked.str(Concept::Precision).map(|(v, _)| v),
            Some("bf16-mixed")
        );
        // The world size is not in either file: the train batch stays "auto".
        assert!(linked.is_unknown(Concept::GlobalBatch));
        assert_eq!(linked.int(Concept::ZeroStage).map(|(v, _)| v), Some(2));
    }

    #[test]
    fn key_paths_quote_dots_and_index_lists() {
        assert_eq!(key_path("a.b"), ["a", "b"]);
        assert_eq!(
            key_path("containers.0.limits.\"nvidia.com/gpu\""),
            ["containers", "0", "limits", "nvidia.com/gpu"]
        );
        let doc = crate::syntax::parse(
            "containers:\n  - limits:\n      nvidia.com/gpu: 2\n",
            Format::Yaml,
        )
        .unwrap();
        let n = doc.roots[0]
            .get_dotted("containers.0.limits.\"nvidia.com/gpu\"")
            .unwrap();
        assert_eq!(n.as_scalar().unwrap().text, "2");
    }

    #[test]
    fn builtin_dialects_parse() {
        let all = builtin();
        assert_eq!(all.len(), BUILTIN.len());
        // The JSON start-up reads is the TOML, and passes the checks a TOML dialect gets.
        for ((file, toml, _, _), from_json) in BUILTIN.iter().zip(&all) {
            let from_toml = parse_dialect(file, toml).unwrap();
            assert_eq!(format!("{from_toml:?}"), format!("{from_json:?}"), "{file}");
        }
        for d in &all {
            assert!(!d.detect.is_empty(), "{}", d.name);
            for (c, spec) in d.settings.iter() {
                assert!(!spec.from.is_empty(), "{} {c:?}", d.name);
            }
        }
    }
}
