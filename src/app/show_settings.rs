//! `hwlint check --show-settings`: what hwlint read from each file, and from where, as text for
//! a person or as JSON (`--output-format json`) for tools such as the GitHub Action's job
//! summary.
//!
//! The JSON schema (`"schema": 1`) is stable: fields are only added.
//!
//! ```text
//! { "schema": 1,
//!   "files": [{
//!     "path": "configs/sft.yaml",
//!     "dialect": "trl" | null,                      // null: not a training config
//!     "target": { "name", "gpu", "gpu_memory_bytes", "gpus": N | null, "cpu_cores", "ram_gb",
//!                 "storage_mb_s", "default": bool, "description" },
//!     "runs": [{
//!       "dialect": "trl", "name": "TrainConfig `pi0`" | null, "line": 1,
//!       "detected_by": { "keys": ["max_length", ...], "script": "lerobot-train" | null },
//!       "merged": [{ "what": "the --config_file", "path": "accelerate.yaml" }],
//!       "not_training": "why" | null,
//!       "made_for": "torchtune's single-device recipe (the file name `x.yaml`): why" | null,
//!       "framework_version": { "version": "0.19.0", "from": "setup.py:4 (...)", "pinned": true }
//!         | null (a dialect that names no package),
//!       "bitsandbytes_version": { "version": "0.42.0", "from": "requirements.txt:3 (...)",
//!         "pinned": true } | null (no base bitsandbytes quantizes),
//!       "settings": [{ "concept": "micro_batch", "value": 8 | 2.0e-5 | true | "bf16"
//!                      | { "unknown": "${oc.env:BS}" },
//!                      "origin": "file" | "default" | "flag" | "implied", "key": "per_device_train_batch_size",
//!                      "file": "configs/sft.yaml", "line": 3 | null, "described": "..." }],
//!       "memory": { "model", "micro_batch", "seq_len", "precision", "peak_allocated_bytes",
//!                   "need_bytes", "least_need_bytes" | null, "usable_bytes",
//!                   "verdict": "fits" | "may fit" | "does not fit", "max_micro_batch",
//!                   "bounded": [..], "assumed": [..] }
//!               | { "none": "why there is no estimate" }
//!               | null   // null: the run does not train, or not on a GPU
//!     }] }] }
//! ```

use serde_json::{json, Value};

use crate::dialect::{Concept, Origin, SettingValue};
use crate::estimate::plan::Gap;
use crate::estimate::verdict::{max_micro_batch, HEADROOM_LINE};
use crate::lint::{run_memories, runs_in_text, shown_path, FileResult, RunMemory};
use crate::syntax::Format;

/// The text form: one block per file, one line per setting.
pub fn render_text(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(settings) = &r.settings else {
            continue;
        };
        let Some(name) = &r.dialect else {
            out.push_str(&format!(
                "{}: not a training config hwlint knows\n",
                r.path.display()
            ));
            continue;
        };
        out.push_str(&format!(
            "{}: {name} · target {}\n",
            r.path.display(),
            settings.target.describe()
        ));
        let Ok(doc) =
            crate::syntax::parse(&r.text, Format::from_path(&r.path).unwrap_or(Format::Yaml))
        else {
            continue;
        };
        let runs = runs_in_text(&doc, &r.text, &r.path, &settings.dialects);
        let several = runs.len() > 1 || doc.format == Format::Shell;
        for (index, run) in &runs {
            if several {
                let (line, _) = r.lines().position(&r.text, doc.roots[*index].span.start);
                let named = run
                    .dialect
                    .setup_name
                    .as_deref()
                    .and_then(|k| run.root.get_path(&[k]))
                    .and_then(|n| n.as_scalar())
                    .map_or(String::new(), |n| format!(" `{}`", n.text));
                out.push_str(&format!("  line {line}: {}{named}\n", run.dialect.name));
            }
            for m in &run.merged {
                out.push_str(&format!(
                    "  over {}: {}\n",
                    m.what,
                    shown_path(&m.path).display()
                ));
            }
            if let Some(why) = &run.setup.recipe {
                out.push_str(&format!("  made for {why}\n"));
            }
            // The release whose defaults the settings below take.
            if let Some(v) = &run.setup.version {
                out.push_str(&format!(
                    "  {} {}: {}\n",
                    run.dialect.title, v.version, v.from
                ));
            }
            if let Some(b) = quantizing_bitsandbytes(&run.setup) {
                out.push_str(&format!("  bitsandbytes {}: {}\n", b.version, b.from));
            }
            if let Some(why) = &run.setup.not_training {
                out.push_str(&format!("  not a training run: {why}\n"));
            }
            // The model the file describes, as the memory rules read it (V-JEPA's step names
            // the tokens each part sees).
            if let Some(inline) = &run.setup.architecture {
                match crate::estimate::plan::inline_architecture(inline) {
                    Some(a) => out.push_str(&format!("  model: {}\n", a.source)),
                    None => out.push_str(&format!(
                        "  model: described {}, not completely enough to estimate\n",
                        inline.place()
                    )),
                }
            }
            // A file that names its model (`hf_causal_lm`'s Hub id) describes none to read.
            // A policy or detector described past what hwlint sizes is not read either.
            let unread = run.setup.architecture_unread.as_ref().or(run
                .setup
                .unread
                .get(&crate::dialect::Concept::Model)
                .filter(|_| run.setup.architecture.is_none()));
            if let (Some(why), None) = (unread, run.setup.get(crate::dialect::Concept::Model)) {
                out.push_str(&format!("  model not read: {why}\n"));
            }
            for (concept, s) in &run.setup.settings {
                let from = match &s.origin {
                    Origin::File { value_span, .. } => {
                        run.source_at(value_span.start).map_or(String::new(), |m| {
                            format!(" in {}", shown_path(&m.path).display())
                        })
                    }
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "  {:<26} {:<22} {}{from}\n",
                    format!("{concept:?}"),
                    format!("{:?}", s.value),
                    s.origin.describe()
                ));
            }
            // Keys the file sets that the pinned release does not read, where the line above
            // does not already say so (it names another key, or there is no setting).
            for (concept, why) in &run.setup.ignored {
                let said = run
                    .setup
                    .settings
                    .get(concept)
                    .is_some_and(|s| !s.origin.is_explicit());
                if !said {
                    out.push_str(&format!(
                        "  {:<26} {:<22} {why}\n",
                        format!("{concept:?}"),
                        "ignored"
                    ));
                }
            }
        }
    }
    out
}

fn value(v: &SettingValue) -> Value {
    match v {
        SettingValue::Int(i) => json!(i),
        SettingValue::Float(f) => json!(f),
        SettingValue::Bool(b) => json!(b),
        SettingValue::Str(s) => json!(s),
        SettingValue::Unknown(s) => json!({ "unknown": s }),
    }
}

/// The JSON form (schema in the module documentation).
pub fn render_json(results: &[FileResult]) -> String {
    let files: Vec<Value> = results.iter().filter_map(file_json).collect();
    let mut s =
        serde_json::to_string_pretty(&json!({ "schema": 1, "files": files })).unwrap_or_default();
    s.push('\n');
    s
}

fn file_json(r: &FileResult) -> Option<Value> {
    let settings = r.settings.as_ref()?;
    let t = &settings.target;
    let target = json!({
        "name": t.name,
        "gpu": t.gpu.key,
        "gpu_memory_bytes": t.gpu.vram_bytes,
        "gpus": t.gpus,
        "cpu_cores": t.host.cpu_cores,
        "ram_gb": t.host.ram_gb,
        "storage_mb_s": t.host.storage_mb_s,
        "default": t.is_default,
        "description": t.describe(),
    });
    let format = Format::from_path(&r.path).unwrap_or(Format::Yaml);
    let doc = r
        .dialect
        .as_ref()
        .and_then(|_| crate::syntax::parse(&r.text, format).ok());
    let runs: Vec<Value> = doc.as_ref().map_or_else(Vec::new, |doc| {
        run_memories(doc, &r.text, &r.path, settings, &|_| {})
            .iter()
            .map(|m| run_json(r, doc, m))
            .collect()
    });
    Some(json!({
        "path": r.path.display().to_string(),
        "dialect": r.dialect,
        "target": target,
        "runs": runs,
    }))
}

fn run_json(r: &FileResult, doc: &crate::syntax::Document, m: &RunMemory) -> Value {
    let run = &m.run;
    let (line, _) = r.lines().position(&r.text, doc.roots[m.index].span.start);
    let settings: Vec<Value> = run
        .setup
        .settings
        .iter()
        .map(|(concept, s)| {
            let (origin, file, line) = match &s.origin {
                Origin::File { value_span, .. } => {
                    let (file, line) = written_at(r, run, value_span.start);
                    ("file", file, Some(line))
                }
                Origin::Default { .. } => ("default", r.path.display().to_string(), None),
                Origin::Flag { .. } => ("flag", r.path.display().to_string(), None),
                Origin::Implied { .. } => ("implied", r.path.display().to_string(), None),
            };
            json!({
                "concept": concept,
                "value": value(&s.value),
                "origin": origin,
                "key": s.origin.key(),
                "file": file,
                "line": line,
                "described": s.origin.describe(),
            })
        })
        .collect();
    let why = crate::dialect::evidence(
        run.dialect,
        run.recognised_in(&doc.roots[m.index]),
        doc.format,
    );
    json!({
        "dialect": run.dialect.name,
        "detected_by": { "keys": why.keys, "script": why.script },
        "name": m.name(),
        "line": line,
        "merged": run.merged.iter().map(|m| json!({
            "what": m.what,
            "path": shown_path(&m.path).display().to_string(),
        })).collect::<Vec<_>>(),
        "not_training": run.setup.not_training,
        "ignored": run
            .setup
            .ignored
            .iter()
            .map(|(c, why)| json!({ "concept": c, "why": why }))
            .collect::<Vec<_>>(),
        "made_for": run.setup.recipe,
        "framework_version": run.setup.version.as_ref().map(|v| json!({
            "version": v.version,
            "from": v.from,
            "pinned": v.pinned,
        })),
        "bitsandbytes_version": quantizing_bitsandbytes(&run.setup).map(|v| json!({
            "version": v.version,
            "from": v.from,
            "pinned": v.pinned,
        })),
        "settings": settings,
        "memory": memory_json(m),
        // checked, bounded (with what decides it) or not-checked (with what it needs); null
        // where the file describes no GPU training step.
        "memory_outcome": m.outcome,
    })
}

/// The file and line a value at `at` of the run's text is written at: the linked file's own
/// line for a value from a merged source.
fn written_at(r: &FileResult, run: &crate::launch::Run, at: usize) -> (String, usize) {
    match run.source_at(at) {
        None => (
            r.path.display().to_string(),
            r.lines().position(&r.text, at).0,
        ),
        Some(m) => {
            let text = run.source_text(m);
            let at = (at - m.start).min(text.len());
            (
                shown_path(&m.path).display().to_string(),
                crate::syntax::LineIndex::new(text).position(text, at).0,
            )
        }
    }
}

/// The run's memory as HW101-HW105 see it; `null` when it does not train on the GPU.
fn memory_json(m: &RunMemory) -> Value {
    let Some(memory) = m.checked() else {
        return Value::Null;
    };
    let c = match memory {
        Ok(c) => c,
        Err(gap) => {
            let why = match gap {
                Gap::UnknownModel(name) => format!("model `{name}` is not in hwlint's catalog"),
                Gap::Missing(what) => format!("the {what} is not known"),
                Gap::Unsupported(what) => format!("no recipe for {what}"),
            };
            return json!({ "none": why });
        }
    };
    let most = &c.most;
    json!({
        "model": most.plan.model,
        "micro_batch": most.plan.batch,
        "seq_len": most.plan.seq_len,
        "precision": most.plan.precision_label(),
        "peak_allocated_bytes": most.estimate.peak_bytes,
        "need_bytes": most.verdict.need_bytes,
        "least_need_bytes": c.least.as_ref().map(|l| l.verdict.need_bytes),
        "usable_bytes": most.verdict.usable_bytes,
        "verdict": c.verdict_word(),
        "max_micro_batch": max_micro_batch(&most.plan, most.verdict.usable_bytes, HEADROOM_LINE),
        "bounded": c.least_reasons(),
        "assumed": c.assumptions,
    })
}

/// The bitsandbytes release of a run whose base bitsandbytes quantizes (4-bit or 8-bit): what
/// its matmuls keep for backward follows the release.
fn quantizing_bitsandbytes(
    setup: &crate::dialect::TrainingSetup,
) -> Option<&crate::dialect::version::Resolved> {
    let quantized = [Concept::LoadIn4bit, Concept::LoadIn8bit]
        .iter()
        .any(|c| setup.bool(*c).is_some_and(|(b, _)| b));
    if quantized && setup.bitsandbytes_quantizes() {
        setup.bitsandbytes.as_ref()
    } else {
        None
    }
}
