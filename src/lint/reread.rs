//! Every fix is read back before it stands: applied in memory, the text parsed again and each
//! run composed again (Hydra defaults and packages, `_base_`, linked files, launch lines) as the
//! framework would. The fix stands only when each setting it means to change now reads the
//! value it wrote, from the key it wrote, and no other setting the file states has changed.
//! A key written where the framework never looks (at the root of a Hydra `_global_` file
//! instead of under its `trainer:` block) is caught here, not in review. Fixes that set no
//! setting (suppression comments, HW601's re-spelled numbers) are left to the fixpoint's re-lint.

use std::ops::Range;
use std::path::Path;

use crate::dialect::{Origin, SettingValue, TrainingSetup};
use crate::fix::{apply_fixes, Fix, Intent};
use crate::settings::FileSettings;
use crate::syntax::edit::NewValue;
use crate::syntax::{self, Format};

/// The setups of each run of `text`, as `check` composes them; `None` when it does not parse.
fn setups(
    text: &str,
    format: Format,
    path: &Path,
    settings: &FileSettings,
) -> Option<Vec<TrainingSetup>> {
    let doc = syntax::parse(text, format).ok()?;
    Some(
        super::runs_in_text(&doc, text, path, &settings.dialects)
            .into_iter()
            .map(|(_, run)| run.setup)
            .collect(),
    )
}

/// Whether a setting read back holds the value a fix wrote.
fn holds(written: &NewValue, read: &SettingValue) -> bool {
    match (written, read) {
        (NewValue::Int(w), SettingValue::Int(r)) => w == r,
        (NewValue::Int(w), SettingValue::Float(r)) => *w as f64 == *r,
        (NewValue::Bool(w), SettingValue::Bool(r)) => w == r,
        (NewValue::Str(w), SettingValue::Str(r)) => w == r,
        // A number written as text (an environment variable's value) reads as the number.
        (NewValue::Raw(w) | NewValue::Str(w), SettingValue::Float(r)) => {
            w.parse::<f64>().is_ok_and(|w| w == *r)
        }
        (NewValue::Raw(w) | NewValue::Str(w), SettingValue::Int(r)) => {
            w.parse::<i64>().is_ok_and(|w| w == *r)
        }
        _ => false,
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
}

/// Why `fix`, applied to `before`, does not do what it says; `None` when it does (or when it
/// changes nothing, which the fixpoint's own check handles).
#[cfg(test)]
fn fix_misreads(
    before: &str,
    fix: &Fix,
    format: Format,
    path: &Path,
    settings: &FileSettings,
) -> Option<String> {
    fixes_misread(before, &[fix], format, path, settings)
}

/// Why `fixes`, applied to `before` together, do not do what they say; `None` when they do (or
/// change nothing, which the fixpoint's own check handles). One reading of the file for all of
/// them, so a file with a fix on each of 1,000 launch lines is read twice, not 2,000 times;
/// the caller checks them one by one only when together they fail.
pub(super) fn fixes_misread(
    before: &str,
    fixes: &[&Fix],
    format: Format,
    path: &Path,
    settings: &FileSettings,
) -> Option<String> {
    // A fix that sets nothing (a suppression comment removed, a quoted number written bare)
    // is checked by the fixpoint's re-lint; reading a file again per such fix would make a file
    // of 100,000 suppressions quadratic.
    let fixes: Vec<&Fix> = fixes
        .iter()
        .copied()
        .filter(|f| !f.sets.is_empty())
        .collect();
    if fixes.is_empty() {
        return None;
    }
    let (after, applied) = apply_fixes(before, fixes.iter().copied());
    if applied < fixes.len() {
        // Some overlap, and apply_fixes skipped them: only each alone says which does what.
        return (fixes.len() > 1).then(|| "fixes overlap".to_string());
    }
    let sets: Vec<&Intent> = fixes.iter().flat_map(|f| f.sets.iter()).collect();
    let edits: Vec<&crate::fix::Edit> = fixes.iter().flat_map(|f| f.edits.iter()).collect();
    let old = setups(before, format, path, settings)?;
    let Some(new) = setups(&after, format, path, settings) else {
        return Some("the fixed text does not parse".into());
    };
    if old.len() != new.len() {
        return Some(format!(
            "the file holds {} runs after the fix and {} before",
            new.len(),
            old.len()
        ));
    }
    for Intent {
        concept,
        key,
        value,
    } in sets.iter().copied()
    {
        let read = |s: &TrainingSetup| s.get(*concept).cloned();
        let took = new.iter().map(read).any(|s| {
            s.is_some_and(|s| {
                s.origin.is_explicit()
                    && s.origin.key() == key
                    && value.as_ref().is_none_or(|v| holds(v, &s.value))
            })
        });
        if !took {
            let now = new
                .iter()
                .filter_map(read)
                .map(|s| format!("{:?} from {}", s.value, s.origin.describe()))
                .next()
                .unwrap_or_else(|| "nothing".into());
            return Some(format!(
                "after it, {concept:?} does not read {} from `{key}`: it reads {now}",
                value
                    .as_ref()
                    .map_or("a value".to_string(), |v| format!("`{v}`"))
            ));
        }
    }
    let intended = |c| sets.iter().any(|i| i.concept == c);
    // A setting read only when (or unless) a key the fix writes has some value follows that key:
    // `num_workers` raised from 0 brings `persistent_workers`, already in the file, into play.
    let follows = |setup: &TrainingSetup, c: crate::dialect::Concept| {
        settings
            .dialects
            .iter()
            .find(|d| d.name == setup.dialect)
            .and_then(|d| d.settings.get(&c))
            .is_some_and(|spec| {
                spec.when
                    .iter()
                    .chain(spec.unless.iter())
                    .chain(spec.from.iter().filter_map(|s| s.when.as_ref()))
                    .any(|cond| sets.iter().any(|i| i.key == cond.key))
            })
    };
    // A key the fix writes can be read by more than one concept (axolotl's `bf16` gives both
    // the precision and the weights' dtype): each of them may change with it.
    let written = |key: &str| sets.iter().any(|i| i.key == key);
    let edited = |span: &Range<usize>| edits.iter().any(|e| overlaps(&e.range, span));
    for (o, n) in old.iter().zip(&new) {
        for (&concept, was) in &o.settings {
            let Origin::File { value_span, .. } = &was.origin else {
                continue;
            };
            if intended(concept)
                || edited(value_span)
                || written(was.origin.key())
                || follows(o, concept)
            {
                continue;
            }
            let same = n
                .settings
                .get(&concept)
                .is_some_and(|now| now.value == was.value && now.origin.key() == was.origin.key());
            if !same {
                return Some(format!(
                    "it also changes {concept:?}, which {} set to {:?}",
                    was.origin.describe(),
                    was.value
                ));
            }
        }
        for (&concept, now) in &n.settings {
            let stated_before = o
                .settings
                .get(&concept)
                .is_some_and(|was| was.origin.is_explicit());
            if now.origin.is_explicit()
                && !stated_before
                && !intended(concept)
                && !written(now.origin.key())
                && !follows(n, concept)
            {
                return Some(format!(
                    "it also makes the file state {concept:?} ({} is {:?})",
                    now.origin.describe(),
                    now.value
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Concept;
    use crate::fix::{Applicability, Edit};
    use crate::lint::tests::settings;

    /// A Hydra experiment (`# @package _global_`) beside the lightning-hydra fixture's
    /// primary, which composes it as `experiment=big`.
    fn experiment() -> (tempfile::TempDir, std::path::PathBuf) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/dialects/lightning-hydra/predictor/configs");
        let d = tempfile::tempdir().unwrap();
        let configs = d.path().join("configs");
        for group in ["", "data", "model", "trainer", "experiment"] {
            std::fs::create_dir_all(configs.join(group)).unwrap();
        }
        for f in [
            "train.yaml",
            "data/frame_tokens.yaml",
            "model/ac_predictor.yaml",
            "trainer/gpu.yaml",
        ] {
            std::fs::copy(from.join(f), configs.join(f)).unwrap();
        }
        let train = std::fs::read_to_string(configs.join("train.yaml")).unwrap();
        std::fs::write(
            configs.join("train.yaml"),
            train.replace(
                "  - trainer: gpu\n",
                "  - trainer: gpu\n  - experiment: null\n",
            ),
        )
        .unwrap();
        let path = configs.join("experiment/big.yaml");
        std::fs::write(&path, EXPERIMENT).unwrap();
        (d, path)
    }

    const EXPERIMENT: &str =
        "# @package _global_\ndata:\n  batch_size: 96\ntrainer:\n  max_epochs: 10\n";

    fn fix(edits: Vec<Edit>, sets: Vec<Intent>) -> Fix {
        Fix {
            edits,
            applicability: Applicability::Safe,
            message: String::new(),
            sets,
        }
    }

    fn accumulation(key: &str) -> Intent {
        Intent {
            concept: Concept::GradAccum,
            key: key.into(),
            value: Some(NewValue::Int(2)),
        }
    }

    /// The model this experiment runs is described in `model/ac_predictor.yaml`: its span is in
    /// the composed text, past the experiment's own, and HW901's note must not slice the
    /// experiment's text with it (it panicked once).
    #[test]
    fn a_note_on_a_model_described_in_another_file_points_within_this_one() {
        let (_d, path) = experiment();
        let s = settings(&path);
        let text = EXPERIMENT.replace("batch_size: 96", "batch_size: 16");
        let (diags, _) = crate::lint::lint_text(&text, Format::Yaml, &path, &s);
        let note = diags.iter().find(|d| d.rule.code == "HW901");
        assert!(
            note.is_some_and(
                |d| d.message.starts_with("memory not decided") && d.span.end <= text.len()
            ),
            "{diags:?}"
        );
    }

    #[test]
    fn a_key_written_at_the_root_of_a_global_package_is_not_where_the_trainer_reads() {
        let (_d, path) = experiment();
        let s = settings(&path);
        // What the issue saw: `accumulate_grad_batches: 2` inserted at the file's root.
        let at_root = fix(
            vec![Edit::insert(
                EXPERIMENT.len(),
                "accumulate_grad_batches: 2\n",
            )],
            vec![accumulation("trainer.accumulate_grad_batches")],
        );
        let why = fix_misreads(EXPERIMENT, &at_root, Format::Yaml, &path, &s);
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("GradAccum does not read `2`")),
            "{why:?}"
        );
        // Under the experiment's own `trainer:` block it is the Trainer's.
        let under = EXPERIMENT.find("  max_epochs").unwrap();
        let in_block = fix(
            vec![Edit::insert(under, "  accumulate_grad_batches: 2\n")],
            vec![accumulation("trainer.accumulate_grad_batches")],
        );
        assert_eq!(
            fix_misreads(EXPERIMENT, &in_block, Format::Yaml, &path, &s),
            None
        );
    }

    /// OLMo reads `data.persistent_workers` only with workers (`unless num_workers is 0`):
    /// HW202 raising the workers brings the key the file already has into play, which is the
    /// framework's own consequence, not a setting the fix wrote.
    #[test]
    fn a_setting_that_follows_the_written_key_may_change_with_it() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("olmo.yaml");
        let text = "run_name: t\nmodel:\n  d_model: 256\n  n_layers: 2\n  n_heads: 4\n  max_sequence_length: 512\n  block_type: sequential\n  init_fn: normal\ntokenizer:\n  identifier: gpt2\nglobal_train_batch_size: 8\ndevice_train_microbatch_size: 2\nmax_duration: 100\nsave_interval_unsharded: 50\ndistributed_strategy: ddp\ndata:\n  memmap_dtype: uint16\n  num_workers: 0\n  persistent_workers: true\n  paths: [a.npy]\n";
        std::fs::write(&path, text).unwrap();
        let s = settings(&path);
        let at = text.find("num_workers: 0").unwrap() + "num_workers: ".len();
        let raise = fix(
            vec![Edit::replace(at..at + 1, "4")],
            vec![Intent {
                concept: Concept::NumWorkers,
                key: "data.num_workers".into(),
                value: Some(NewValue::Int(4)),
            }],
        );
        assert_eq!(fix_misreads(text, &raise, Format::Yaml, &path, &s), None);
    }

    #[test]
    fn a_fix_that_changes_a_setting_it_does_not_name_is_withheld() {
        let (_d, path) = experiment();
        let s = settings(&path);
        // Says it sets the accumulation, and also rewrites the epochs.
        let epochs = EXPERIMENT.find("10").unwrap();
        let both = fix(
            vec![
                Edit::insert(
                    EXPERIMENT.find("  max_epochs").unwrap(),
                    "  accumulate_grad_batches: 2\n",
                ),
                Edit::replace(epochs..epochs + 2, "20"),
            ],
            vec![accumulation("trainer.accumulate_grad_batches")],
        );
        // The epochs' own value is edited: a change the fix makes on purpose is its own; a
        // setting it adds without saying so is not.
        assert_eq!(
            fix_misreads(EXPERIMENT, &both, Format::Yaml, &path, &s),
            None
        );
        let unsaid = fix(
            vec![Edit::insert(
                EXPERIMENT.find("  max_epochs").unwrap(),
                "  accumulate_grad_batches: 2\n  precision: 16-mixed\n",
            )],
            vec![accumulation("trainer.accumulate_grad_batches")],
        );
        let why = fix_misreads(EXPERIMENT, &unsaid, Format::Yaml, &path, &s);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("Precision")),
            "{why:?}"
        );
    }
}
