//! What a rule sees: the setup, the target, and a writer that turns "set X to Y" into edits in
//! the file that set X.

use std::cell::OnceCell;
use std::path::Path;

use crate::dialect::{Concept, Dialect, LinkedConfig, Origin, TrainingSetup};
use crate::estimate::models::Architecture;
use crate::estimate::plan::{memory_for, Gap, Inputs, MemoryContext};
use crate::fix::{Applicability, Fix};
use crate::hardware::Target;
use crate::syntax::edit::{insert_key, replace_scalar, NewValue};
use crate::syntax::{Document, Node, Span};

/// Rule knobs from hwlint.toml.
#[derive(Debug, Clone)]
pub struct RuleOptions {
    /// Host RAM one dataloader worker uses (GB), for HW203.
    pub ram_per_worker_gb: f64,
    /// Bytes read from storage per sample, for HW206.
    pub bytes_per_sample: Option<f64>,
    /// Measured samples/s per process, for HW206 (else estimated from the step time).
    pub samples_per_second: Option<f64>,
}

impl Default for RuleOptions {
    fn default() -> Self {
        RuleOptions {
            ram_per_worker_gb: 2.5,
            bytes_per_sample: None,
            samples_per_second: None,
        }
    }
}

pub struct Context<'a> {
    pub setup: &'a TrainingSetup,
    /// The DeepSpeed JSON this file names, if it could be read.
    pub linked: Option<&'a LinkedConfig>,
    pub dialect: &'a Dialect,
    pub target: &'a Target,
    pub text: &'a str,
    /// Line starts of `text`, built on first use and once per file (see [`Context::lines`]).
    pub lines: &'a OnceCell<crate::syntax::LineIndex>,
    pub doc: &'a Document,
    /// The tree the dialect reads (for code and launch lines, what its mounts assemble).
    pub root: &'a Node,
    /// The front-end's own root this run comes from (a launch line's whole command, with its
    /// `env`, `launcher` and `background`), to compare it with the file's other roots.
    pub front: &'a Node,
    pub options: &'a RuleOptions,
    /// The linted file (model folders are looked up next to it).
    pub path: &'a Path,
    /// Architectures declared in hwlint.toml.
    pub models: &'a [Architecture],
    /// The memory estimate, computed on first use.
    pub memory: OnceCell<Result<MemoryContext, Gap>>,
    /// The rule selection (`select`, `ignore`): a rule that leaves a finding to another asks
    /// whether that one runs ([`Context::runs`]).
    pub selection: (&'a [String], &'a [String]),
}

/// One finding of a rule, before it is tied to a file and a rule entry.
#[derive(Debug, Clone)]
pub struct Violation {
    pub message: String,
    pub span: Span,
    pub fix: Option<Fix>,
}

impl Context<'_> {
    /// Whether rule `code` runs on this file. A rule that defers to another (HW101 to HW104,
    /// HW102's fix to HW103's) must not defer to one that is switched off, or the problem
    /// passes in silence.
    pub fn runs(&self, code: &str) -> bool {
        super::is_enabled(code, self.selection.0, self.selection.1)
    }

    /// The line index of the file: a rule must not rebuild it per finding.
    pub fn lines(&self) -> &crate::syntax::LineIndex {
        self.lines
            .get_or_init(|| crate::syntax::LineIndex::new(self.text))
    }

    /// The estimate of one training step on the target, or why there is none.
    pub fn memory(&self) -> &Result<MemoryContext, Gap> {
        self.memory.get_or_init(|| {
            memory_for(&Inputs {
                setup: self.setup,
                linked: self.linked.map(|l| &l.setup),
                models: self.models,
                base_dir: self.path.parent().unwrap_or(Path::new(".")),
                target: self.target,
                data_parallel: self.model_sharding_group().map(|(n, _)| n),
                mem_fraction: self
                    .mem_fraction()
                    .map(|(f, _)| f)
                    .or_else(|| self.held_share().map(|(s, _)| 1.0 - s)),
                semantics: &self.dialect.semantics,
            })
        })
    }

    /// The share of the card a JAX run may use, when the run says one (a valid one: HW104
    /// reports the others), and what set it.
    pub fn mem_fraction(&self) -> Option<(f64, &crate::dialect::Setting)> {
        self.setup
            .float(Concept::MemFraction)
            .filter(|(f, _)| *f > 0.0 && *f <= 1.0)
    }

    /// The share of each GPU a colocated engine takes (TRL's vLLM in colocate mode), when the
    /// run says so with a share in [0, 1), and what set it.
    pub fn colocated_share(&self) -> Option<(f64, &crate::dialect::Setting)> {
        self.setup
            .float(Concept::ColocatedShare)
            .filter(|(s, _)| *s > 0.0 && *s < 1.0)
    }

    /// The colocated engine's share when it holds it through the update too (TRL's vLLM
    /// without sleep mode, verl's rollout with `free_cache_engine: false`): training has the
    /// rest of each card. An engine that sleeps through the update takes its share only while
    /// it samples, an instant of the estimate of its own.
    pub fn held_share(&self) -> Option<(f64, &crate::dialect::Setting)> {
        let sleeps = self
            .setup
            .bool(Concept::EngineSleeps)
            .is_some_and(|(b, _)| b);
        self.colocated_share().filter(|_| !sleeps)
    }

    /// The estimate for the memory rules (HW101-HW105): none when the run does not train on
    /// the target's GPUs (CPU, TPU or another accelerator), or when there is no estimate.
    pub fn gpu_memory(&self) -> Option<&MemoryContext> {
        if !self.setup.uses_gpu() {
            return None;
        }
        self.memory().as_ref().ok()
    }

    /// Where a diagnostic about this setting points: its value, or the file start for a default.
    /// The setting that names the trained model: a PPO script's policy (TRL's
    /// `sft_model_path`) where the file has one, else the model.
    pub fn trained_model(&self) -> Concept {
        if self.setup.get(Concept::PolicyModel).is_some() {
            Concept::PolicyModel
        } else {
            Concept::Model
        }
    }

    pub fn span_of(&self, concept: Concept) -> Span {
        match self.setup.get(concept).map(|s| &s.origin) {
            Some(Origin::File { value_span, .. }) => value_span.clone(),
            _ => 0..0,
        }
    }

    /// Where a finding about the batch points: the micro-batch where the file sets it, else the
    /// global batch it is derived from (openpi), else the file start.
    pub fn batch_span(&self) -> Span {
        [
            Concept::MicroBatch,
            Concept::GlobalBatch,
            Concept::DeviceBatch,
        ]
        .into_iter()
        .find(|c| self.setup.get(*c).is_some_and(|s| s.origin.is_explicit()))
        .map_or(0..0, |c| self.span_of(c))
    }

    /// `the 8 GPUs of target X`: where a process count that no key sets comes from.
    fn target_gpus_phrase(&self, g: u32) -> String {
        format!(
            "the {g} GPU{} of target {}",
            if g == 1 { "" } else { "s" },
            self.target.name
        )
    }

    /// The keys the dialect reads the number of processes from (LitGPT `devices`): a setting
    /// read from one of them follows the world size, and no rule can change it on its own.
    pub fn world_size_keys(&self) -> Vec<&str> {
        [Concept::DevicesPerNode, Concept::Processes]
            .iter()
            .filter_map(|c| self.dialect.settings.get(c))
            .flat_map(|spec| spec.from.iter().map(|s| s.key.as_str()))
            .collect()
    }

    /// Processes that will run, when the file, `--gpus` or a chosen target says.
    pub fn world_size(&self) -> Option<(i64, String)> {
        let s = self.setup;
        if let Some((p, set)) = s.int(Concept::Processes) {
            return Some((p, set.origin.describe()));
        }
        if let Some((d, set)) = s.int(Concept::DevicesPerNode) {
            let nodes = s.int(Concept::Nodes).map_or(1, |(n, _)| n);
            // Past i64, no count of processes a launcher starts: unknown.
            return d.checked_mul(nodes).map(|ws| (ws, set.origin.describe()));
        }
        if let Some((g, set)) = s.int(Concept::ClusterGpus) {
            return Some((g, set.origin.describe()));
        }
        self.target
            .gpus
            .map(|g| (i64::from(g), self.target_gpus_phrase(g)))
    }

    /// Data-parallel processes, the ones that each take their own samples: the world size
    /// over the model-parallel degrees (TP x PP x CP) and the sequence-parallel degree.
    pub fn data_parallel(&self) -> Option<(i64, String)> {
        let (ws, mut source) = self.model_sharding_group()?;
        if self.setup.is_unknown(Concept::SequenceParallel) {
            return None;
        }
        match self.setup.int(Concept::SequenceParallel) {
            Some((sp, set)) if sp > 1 => (ws % sp == 0).then(|| {
                source = format!(
                    "{source} / {} {sp} sequence-parallel",
                    set.origin.describe()
                );
                (ws / sp, source)
            }),
            _ => Some((ws, source)),
        }
    }

    /// The ranks that hold one model replica's shards: the world size over TP x PP x CP.
    /// Sequence-parallel ranks are in it: DeepSpeed partitions ZeRO states over its
    /// sequence-data-parallel group (runtime/engine.py:1839, 1936, 2351).
    fn model_sharding_group(&self) -> Option<(i64, String)> {
        let (ws, source) = self.world_size()?;
        let mut model: i64 = 1;
        for c in [
            Concept::TensorParallel,
            Concept::PipelineParallel,
            Concept::ContextParallel,
        ] {
            if self.setup.is_unknown(c) {
                return None;
            }
            model = model.checked_mul(self.setup.int(c).map_or(1, |(v, _)| v.max(1)))?;
        }
        if model == 1 {
            return Some((ws, source));
        }
        (ws % model == 0).then(|| (ws / model, format!("{source} / {model} model-parallel")))
    }

    /// CPU cores each training process may use: what the scheduler gives it when the file says
    /// (`cpus_per_task`), else the host's cores shared by the processes on a node.
    pub fn cores_per_process(&self) -> Option<(i64, String)> {
        if let Some((c, s)) = self.setup.int(Concept::CpusPerProcess) {
            // No scheduler gives a process no cores: such a count says nothing to check against.
            return (c >= 1).then(|| (c, s.origin.describe()));
        }
        let cores = i64::from(self.target.host.cpu_cores?);
        let procs = self.processes_per_node();
        Some((
            cores / procs,
            format!(
                "{cores} CPU cores / {procs} processes on {}",
                self.target.describe()
            ),
        ))
    }

    /// Processes on one node: what the file says, else the target's GPUs, else one.
    pub fn processes_per_node(&self) -> i64 {
        self.processes_per_node_from().0
    }

    /// [`Context::processes_per_node`] and what says so (`--num_processes` 16 / `--num_machines`
    /// 2), for messages.
    pub fn processes_per_node_from(&self) -> (i64, String) {
        let s = self.setup;
        if let Some((p, ps)) = s.int(Concept::Processes) {
            return match s.int(Concept::Nodes).filter(|(n, _)| *n > 1) {
                Some((n, ns)) => (
                    (p / n).max(1),
                    format!(
                        "{} {p} / {} {n}",
                        ps.origin.describe(),
                        ns.origin.describe()
                    ),
                ),
                None => (p.max(1), format!("{} {p}", ps.origin.describe())),
            };
        }
        if let Some((d, ds)) = s.int(Concept::DevicesPerNode) {
            return (d.max(1), format!("{} {d}", ds.origin.describe()));
        }
        match self.target.gpus {
            Some(g) => (i64::from(g).max(1), self.target_gpus_phrase(g)),
            None => (1, "no GPU count is known: one assumed".into()),
        }
    }

    /// A fix that sets `concept` to `value` in this file: replaces the value where the file
    /// wrote it, or inserts the dialect's key where the framework default applied.
    pub fn set(
        &self,
        concept: Concept,
        value: NewValue,
        applicability: Applicability,
        message: String,
    ) -> Option<Fix> {
        let setting = self.setup.get(concept)?;
        let edit = self.write_key(setting.origin.key(), &value, setting.origin.is_explicit())?;
        Some(Fix {
            edits: vec![edit],
            applicability,
            message,
            sets: vec![crate::fix::Intent {
                concept,
                key: setting.origin.key().to_string(),
                value: Some(value),
            }],
        })
    }

    /// [`write_key_in`] on this file's text and tree. A key a base file sets (detectron2's
    /// `_BASE_`, mmengine's `_base_`: its node lies past this file's own text) is written into
    /// this file, which the framework merges over its bases: the override is inserted here.
    fn write_key(&self, key: &str, value: &NewValue, from_file: bool) -> Option<crate::fix::Edit> {
        if self.in_base(key) {
            return write_over_base(self.text, self.doc.format, self.front, key, value);
        }
        write_key_in(self.text, self.doc.format, self.root, key, value, from_file)
    }

    /// Whether the run reads `key` from a base file this one inherits through the dialect's
    /// `inherit` key, which merges this file over its bases dict by dict (not a launch line's
    /// config, whose keys the line cannot override in its own syntax, nor a Hydra group, whose
    /// package decides where a key lands).
    /// A key no file sets goes where its deepest parent some file sets is: a parent that only a
    /// base sets (`optim_wrapper` for `optim_wrapper.accumulative_counts`) is written over in
    /// this file, as the key itself would be.
    fn in_base(&self, key: &str) -> bool {
        let path: Vec<&str> = key.split('.').collect();
        let deepest = (1..=path.len())
            .rev()
            .find_map(|depth| self.root.get_path(&path[..depth]));
        self.dialect.inherit.is_some()
            && self.doc.format != crate::syntax::Format::Shell
            && deepest.is_some_and(|n| n.span.start >= self.text.len())
    }

    /// The edits of one fix that writes several keys. Two keys inserted at one point (both
    /// under a table the file lacks) are written one after the other into the text as it
    /// becomes, so they share one new table (`[training]` once, not once per key); the pair
    /// is then one insertion. `None` when a key cannot be written.
    pub fn write_keys(&self, writes: &[KeyWrite]) -> Option<Vec<crate::fix::Edit>> {
        let mut edits: Vec<crate::fix::Edit> = Vec::new();
        // A key set in a base is inserted here, as a key this file does not have.
        let writes: Vec<KeyWrite> = writes
            .iter()
            .map(|w| KeyWrite {
                from_file: w.from_file && !self.in_base(&w.key),
                ..w.clone()
            })
            .collect();
        for w in &writes {
            let e = self.write_key(&w.key, &w.value, w.from_file)?;
            let same_point = edits
                .iter()
                .position(|x| x.range.is_empty() && e.range.is_empty() && x.range == e.range);
            match same_point {
                Some(i) => edits[i] = self.insert_after(&edits[i], w)?,
                None => edits.push(e),
            }
        }
        Some(edits)
    }

    /// `first` (an insertion) and then the insertion of `w`, worked out on the text `first`
    /// makes, as one insertion at the same point.
    fn insert_after(&self, first: &crate::fix::Edit, w: &KeyWrite) -> Option<crate::fix::Edit> {
        let at = first.range.start;
        let (before, after) = self.text.split_at_checked(at)?;
        let text = format!("{before}{}{after}", first.content);
        let doc = crate::syntax::parse(&text, self.doc.format).ok()?;
        // A key set in a base is inserted into this file's own tree (see `write_key`).
        let tree = if self.in_base(&w.key) {
            self.front
        } else {
            self.root
        };
        let index = self.doc.roots.iter().position(|r| std::ptr::eq(r, tree))?;
        let second = if self.in_base(&w.key) {
            write_over_base(&text, doc.format, doc.roots.get(index)?, &w.key, &w.value)?
        } else {
            write_key_in(
                &text,
                doc.format,
                doc.roots.get(index)?,
                &w.key,
                &w.value,
                w.from_file,
            )?
        };
        let both = format!(
            "{}{}{}",
            text.get(..second.range.start)?,
            second.content,
            text.get(second.range.end..)?
        );
        // The result is one insertion exactly when the text around `at` is untouched.
        let inserted = both.strip_prefix(before)?.strip_suffix(after)?;
        Some(crate::fix::Edit::insert(at, inserted))
    }

    /// A fix that makes a mapped setting (precision, attention) read `canonical`: writes the
    /// highest-priority key of the dialect whose map yields it, and turns off the boolean key
    /// that currently yields the old value when that is a different key.
    pub fn set_mapped(
        &self,
        concept: Concept,
        canonical: &str,
        applicability: Applicability,
        message: String,
    ) -> Option<Fix> {
        let spec = self.dialect.settings.get(&concept)?;
        let current = self.setup.get(concept)?;
        let yields = |src: &&crate::dialect::Source| src.maps_to(canonical);
        // Rewrite the key that set the current value when it can say the new one; else the
        // highest-priority key that can.
        let cur_key = current.origin.key();
        let preferred = spec
            .from
            .iter()
            .filter(|s| current.origin.is_explicit() && s.key == cur_key)
            .find(yields);
        // A key read only under a condition the file does not meet (verl's FSDP dtype under
        // a Megatron actor) is no key to write.
        let applies = |src: &&crate::dialect::Source| {
            src.when.as_ref().is_none_or(|c| {
                crate::dialect::condition_holds(self.dialect.loader, self.root, c) != Some(false)
            })
        };
        let (source, raw) = preferred
            .into_iter()
            .chain(spec.from.iter().filter(applies))
            .find_map(|src| {
                let map = src.map.as_ref()?;
                // The most explicit spelling (`16-mixed` over `16`).
                map.iter()
                    .filter(|(_, v)| v.as_str() == Some(canonical))
                    .max_by_key(|(raw, _)| raw.len())
                    .map(|(raw, _)| (src, raw.clone()))
            })?;
        let new_value = raw_value(&raw);
        let mut edits = Vec::new();
        // A key that already holds the new value (LLaMA-Factory's `bf16: true` under
        // `fp8: true`) is left as it is, and said to be.
        let already = cur_key != source.key
            && self
                .root
                .get_dotted(&source.key)
                .and_then(|n| n.as_scalar())
                .is_some_and(|s| s.text.trim() == raw);
        // The message names every key written, so the reviewer of a diff need not guess.
        let mut said = if already {
            message.clone()
        } else {
            format!("{message}: set `{}` to {raw}", source.key)
        };
        if current.origin.is_explicit() && cur_key != source.key {
            // The key that set the old value must stop winning: a `true` flag becomes `false`.
            let node = self
                .root
                .get_path(&cur_key.split('.').collect::<Vec<_>>())?;
            let on = node.as_scalar().map(|s| s.value(self.dialect.loader));
            if on != Some(crate::syntax::Value::Bool(true)) {
                return None;
            }
            edits.push(replace_scalar(
                self.text,
                self.doc.format,
                node,
                &NewValue::Bool(false),
            )?);
            if already {
                said.push_str(&format!(
                    ": set `{cur_key}` to false (`{}` is already {raw})",
                    source.key
                ));
            } else {
                said.push_str(&format!(" and `{cur_key}` to false"));
            }
        }
        if !already {
            edits.push(self.write_key(
                &source.key,
                &new_value,
                current.origin.is_explicit() && cur_key == source.key,
            )?);
        }
        if edits.is_empty() {
            return None;
        }
        Some(Fix {
            edits,
            applicability,
            message: said,
            sets: vec![crate::fix::Intent {
                concept,
                key: source.key.clone(),
                value: Some(NewValue::Str(canonical.to_string())),
            }],
        })
    }
}

/// A dialect map key (`true`, `16`, `bf16-mixed`) as the value to write.
fn raw_value(raw: &str) -> NewValue {
    match raw {
        "true" => NewValue::Bool(true),
        "false" => NewValue::Bool(false),
        _ => match raw.parse::<i64>() {
            Ok(i) => NewValue::Int(i),
            Err(_) => NewValue::Str(raw.to_string()),
        },
    }
}

/// A key a fix writes: its dotted path, the value, and whether the setting was read from the
/// file (then the key is only ever replaced, never inserted).
#[derive(Debug, Clone)]
pub struct KeyWrite {
    pub concept: Concept,
    pub key: String,
    pub value: NewValue,
    pub from_file: bool,
}

impl KeyWrite {
    /// The write of `value` to the key a setting came from (or would come from).
    pub fn of(concept: Concept, setting: &crate::dialect::Setting, value: NewValue) -> KeyWrite {
        KeyWrite {
            concept,
            key: setting.origin.key().to_string(),
            value,
            from_file: setting.origin.is_explicit(),
        }
    }

    /// What the write means the run to read once it is applied.
    pub fn intent(&self) -> crate::fix::Intent {
        crate::fix::Intent {
            concept: self.concept,
            key: self.key.clone(),
            value: Some(self.value.clone()),
        }
    }
}

/// The edit that writes `value` at the dotted `key` of `root` in `text`: a replacement when the
/// key is there, else an insertion into the deepest mapping on its path that exists.
/// `key`, which a base sets, written into the file's own tree `front`, which the framework
/// merges over its bases: under the mapping the file has, or, in a Python module that does not
/// assign the key's top-level name at all, as a new assignment at its end (an existing
/// assignment of another kind would be replaced by it, not merged).
fn write_over_base(
    text: &str,
    format: crate::syntax::Format,
    front: &Node,
    key: &str,
    value: &NewValue,
) -> Option<crate::fix::Edit> {
    let path: Vec<&str> = key.split('.').collect();
    write_key_in(text, format, front, key, value, false).or_else(|| {
        (format == crate::syntax::Format::Python && front.get_path(&path[..1]).is_none())
            .then(|| crate::syntax::python::append_assignment(text, &path, value))
            .flatten()
    })
}

fn write_key_in(
    text: &str,
    format: crate::syntax::Format,
    root: &Node,
    key: &str,
    value: &NewValue,
    from_file: bool,
) -> Option<crate::fix::Edit> {
    let path: Vec<&str> = key.split('.').collect();
    // A key the file has is replaced, also where the framework's default stood for it (a
    // value the dialect drops, torchtitan's `global_batch_size = -1`): an insertion there
    // would write the key twice.
    if let Some(node) = root.get_path(&path) {
        return replace_scalar(text, format, node, value);
    }
    // The setting came from the file at a place no dotted path reaches (a merge key, a list
    // item): inserting the key would add a second, competing one.
    if from_file {
        return None;
    }
    let mut depth = path.len();
    loop {
        depth = depth.checked_sub(1)?;
        if let Some(node) = root.get_path(&path[..depth]) {
            if node.as_map().is_some() {
                return insert_key(text, format, node, &path[depth..], value);
            }
            return None;
        }
    }
}
