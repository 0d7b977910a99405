//! A run is the sum of its sources (DESIGN.md, flow step 3). A launch line's flags lie over the
//! config file it names (`--config_path`), over the setup its first argument names (openpi's
//! `scripts/train.py pi0_libero`), or over the argparse defaults of the script it runs; the
//! launcher's own flags (`torchrun --nproc_per_node`) say how many processes run. Every setting
//! keeps the span that set it: the merged sources' texts follow the launch file's own text
//! ([`Run::text`]) in [`Run::merged_text`], as if appended to it, so a span past
//! [`Run::own_len`] is in another file, which [`Run::source_at`] names. The file's own text is
//! never copied: a script whose many lines name one config holds one copy of each.

mod hydra;
mod inherit;
mod launchers;
mod merge;
mod sources;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::dialect::{self, Dialect, Mount, TrainingSetup};
use crate::syntax::{Format, Node};

pub use launchers::program;
pub use sources::{identity_lexical, new_file};

/// Another file whose settings are part of a run.
#[derive(Debug, Clone)]
pub struct Merged {
    pub path: PathBuf,
    /// Its format, to lint it on its own.
    pub format: Format,
    /// Where its text starts in [`Run::text`].
    pub start: usize,
    pub len: usize,
    /// Which of its document roots the run reads.
    pub root_index: usize,
    /// The span in the launch file that names it (the `--config_path` value, the config name).
    pub named_at: crate::syntax::Span,
    /// How a message refers to the part of it the run reads (`TrainConfig \`pi0_libero\``).
    pub what: String,
}

/// One training setup and the tree and text it was read from.
pub struct Run<'a> {
    pub dialect: &'a Dialect,
    pub root: Cow<'a, Node>,
    pub setup: TrainingSetup,
    /// The file's own text.
    pub text: Cow<'a, str>,
    /// Each merged source's text, each after a line break, lying (for spans) right after the
    /// file's own text: a span `s` past [`Run::own_len`] is `s - own_len` here.
    pub merged_text: String,
    /// The length of the file's own text: spans at or past it are in [`Run::merged`].
    pub own_len: usize,
    pub merged: Vec<Merged>,
    /// Hydra composed it: each merged file is a config of the same tree, linted on its own
    /// as part of the same composition, so it reports what it sets.
    pub composed: bool,
    /// Where the file's chain of bases or Hydra defaults loops back on itself, and the chain:
    /// the framework never finishes loading such a file (HW902).
    pub cycles: Vec<(crate::syntax::Span, String)>,
}

impl Run<'_> {
    /// The tree the dialect was recognised in: what a composed run composes, else the file's
    /// own document root `front` (for `--verbose` and the JSON's `detected_by`).
    pub fn recognised_in<'n>(&'n self, front: &'n Node) -> &'n Node {
        if self.composed {
            &self.root
        } else {
            front
        }
    }

    /// Where the next merged source's text starts, as a span counts it.
    fn next_start(&self) -> usize {
        self.own_len + self.merged_text.len() + 1
    }

    /// The text a span covers, in the file's own text or in one merged source's.
    pub fn slice(&self, span: std::ops::Range<usize>) -> Option<&str> {
        if span.end <= self.own_len {
            return self.text.get(span);
        }
        let from = span.start.checked_sub(self.own_len)?;
        self.merged_text.get(from..span.end - self.own_len)
    }

    /// A merged source's own text.
    pub fn source_text(&self, m: &Merged) -> &str {
        self.slice(m.start..m.start + m.len).unwrap_or("")
    }

    /// Appends `found`'s text (at [`Run::next_start`]) as a merged source named at `named_at`.
    fn push_merged(&mut self, found: &sources::Found, named_at: crate::syntax::Span, what: String) {
        let start = self.next_start();
        self.merged_text.push('\n');
        self.merged_text.push_str(&found.text);
        self.merged.push(Merged {
            path: found.path.clone(),
            format: found.doc.format,
            start,
            len: found.text.len(),
            root_index: 0,
            named_at,
            what,
        });
    }

    /// The merged source a span of [`Run::text`] falls in (`None`: the file's own text).
    pub fn source_at(&self, at: usize) -> Option<&Merged> {
        if at < self.own_len {
            return None;
        }
        self.merged
            .iter()
            .find(|m| at >= m.start && at <= m.start + m.len)
    }
}

/// The run of a Hydra config (a primary config with a `defaults:` list, or an option of a
/// config group), read as Hydra composes it, when the dialect that recognises the composed
/// tree is one Hydra loads (`hydra = true`). `None` otherwise: the file is read on its own.
pub fn hydra_run<'a>(
    dialects: &'a [Dialect],
    root: &Node,
    text: &'a str,
    path: &Path,
) -> Option<Run<'a>> {
    let composed = hydra::compose(root, text, path)?;
    let (dialect, view) = dialect::detect(dialects, &composed.root, Format::Yaml, path)?;
    if !dialect.hydra {
        return None;
    }
    let view = view.into_owned();
    Some(Run {
        dialect,
        setup: dialect::resolve(dialect, &view),
        root: Cow::Owned(view),
        own_len: text.len(),
        text: Cow::Borrowed(text),
        merged_text: composed.text,
        merged: composed.merged,
        composed: true,
        cycles: composed.cycles,
    })
}

/// The run one document root gives, read through `dialect`'s `view` of it.
pub fn assemble<'a>(
    dialects: &[Dialect],
    dialect: &'a Dialect,
    view: Cow<'a, Node>,
    front_root: &Node,
    format: Format,
    path: &Path,
    text: &'a str,
) -> Run<'a> {
    let plain = |view: Cow<'a, Node>| Run {
        dialect,
        setup: dialect::resolve(dialect, &view),
        root: view,
        text: Cow::Borrowed(text),
        merged_text: String::new(),
        own_len: text.len(),
        merged: Vec::new(),
        composed: false,
        cycles: Vec::new(),
    };
    if format != Format::Shell {
        let mut run = match dialect.inherit.as_deref() {
            Some(key) if view.get_path(&[key]).is_some() => {
                inherit::run(dialect, view, key, path, text).unwrap_or_else(plain)
            }
            _ => plain(view),
        };
        linked_files(&mut run, path);
        dialect::recipe_overlay(&mut run.setup, dialect, &run.root, path, text);
        return run;
    }
    let script = front_root
        .get_path(&["script"])
        .and_then(|n| n.as_scalar())
        .map(|s| s.text.clone())
        .unwrap_or_default();
    let mount = dialect
        .mount
        .iter()
        .find(|m| m.format == Format::Shell && m.takes_script(&script));
    let named = mount.and_then(|m| named_source(dialect, m, &view, front_root, path));
    let mut run = match named {
        Some((found, index, named_at, what)) => {
            let start = text.len() + 1;
            let base_root = &found.doc.roots[index];
            let base_view = dialect::view(dialect, base_root, found.doc.format)
                .map_or_else(|| base_root.clone(), Cow::into_owned);
            // The named config's own bases (detectron2's `_BASE_`), as when it is linted on
            // its own: they lie after its text, so everything moves by `start` together.
            let inherited = match dialect.inherit.as_deref() {
                Some(key) if base_view.get_path(&[key]).is_some() => inherit::run(
                    dialect,
                    Cow::Borrowed(&base_view),
                    key,
                    &found.path,
                    &found.text,
                )
                .ok()
                .map(|r| (r.root.into_owned(), r.merged_text, r.merged, r.cycles)),
                _ => None,
            };
            let (base_view, bases_text, bases, cycles) =
                inherited.unwrap_or((base_view, String::new(), Vec::new(), Vec::new()));
            let shift = |s: &crate::syntax::Span| s.start + start..s.end + start;
            let merged_root = merge::overlay(&merge::shifted(&base_view, start), &view);
            // The launch line names the whole chain: findings in a base are re-anchored at
            // its `--config-file`, as the named file's are.
            let mut merged = vec![Merged {
                path: found.path.clone(),
                format: found.doc.format,
                start,
                len: found.text.len(),
                root_index: index,
                named_at: named_at.clone(),
                what,
            }];
            merged.extend(bases.into_iter().map(|m| Merged {
                start: m.start + start,
                named_at: named_at.clone(),
                ..m
            }));
            Run {
                dialect,
                setup: dialect::resolve(dialect, &merged_root),
                root: Cow::Owned(merged_root),
                text: Cow::Borrowed(text),
                merged_text: format!("\n{}{bases_text}", found.text),
                own_len: text.len(),
                merged,
                composed: false,
                cycles: cycles
                    .into_iter()
                    .map(|(span, chain)| (shift(&span), chain))
                    .collect(),
            }
        }
        None => plain(view),
    };
    launcher_config(&mut run, front_root, path, dialects);
    launchers::overlay(&mut run.setup, front_root);
    run
}

/// The files a run's keys name in their place (the dialect's `[[link]]`: `fsdp_config:
/// fsdp.json`), each read as the key's mapping and merged as a source of its own.
fn linked_files(run: &mut Run, path: &Path) {
    for link in &run.dialect.link {
        let keys = dialect::key_path(&link.key);
        let Some(node) = run.root.get_path(&keys) else {
            continue;
        };
        let Some(written) = node.as_scalar().map(|s| s.text.clone()) else {
            continue;
        };
        if !matches!(
            Path::new(&written).extension().and_then(|e| e.to_str()),
            Some("json" | "yaml" | "yml")
        ) {
            continue;
        }
        let Some(found) = sources::named_file(path, &written).and_then(|f| sources::read(&f))
        else {
            continue;
        };
        if found.doc.format == Format::Shell {
            continue;
        }
        let Some(linked) = found.doc.roots.first().filter(|r| r.as_map().is_some()) else {
            continue;
        };
        let named_at = node.span.clone();
        let shifted = merge::shifted(linked, run.next_start());
        let Some(root) = replaced(&run.root, &keys, shifted) else {
            continue;
        };
        run.setup = dialect::resolve(run.dialect, &root);
        run.root = Cow::Owned(root);
        run.push_merged(&found, named_at, format!("`{written}`"));
    }
}

/// `root` with the value at `path` replaced by `node` (the file's own mappings, spans and
/// styles kept everywhere else, so a fix still edits the file).
fn replaced(root: &Node, path: &[&str], node: Node) -> Option<Node> {
    let (first, rest) = path.split_first()?;
    let map = root.as_map()?;
    let mut entries = map.entries.clone();
    let i = entries.iter().rposition(|e| e.key == *first)?;
    entries[i].value = if rest.is_empty() {
        node
    } else {
        replaced(&entries[i].value, rest, node)?
    };
    Some(Node {
        kind: crate::syntax::NodeKind::Map(crate::syntax::Map::new(entries, map.style)),
        ..root.clone()
    })
}

/// The launcher's own config file (`accelerate launch --config_file accel.yaml`): the process
/// count and devices it states join the run, as a merged source, under the launcher's flags.
fn launcher_config(run: &mut Run, front_root: &Node, path: &Path, dialects: &[Dialect]) {
    let Some((flag, name)) = launchers::config_of(front_root) else {
        return;
    };
    let Some(node) = front_root.get_path(&["launcher", flag]) else {
        return;
    };
    let Some(written) = node.as_scalar().map(|s| s.text.clone()) else {
        return;
    };
    let (Some(file), Some(config)) = (
        sources::named_file(path, &written),
        dialects.iter().find(|d| d.name == name),
    ) else {
        return;
    };
    let Some(found) = sources::read(&file).filter(|f| f.doc.format != Format::Shell) else {
        return;
    };
    let Some(root) = found.doc.roots.first() else {
        return;
    };
    let start = run.next_start();
    let stated = dialect::resolve(config, &merge::shifted(root, start));
    let mut took = false;
    for c in [
        crate::dialect::Concept::Processes,
        crate::dialect::Concept::Nodes,
        crate::dialect::Concept::UsesGpu,
    ] {
        if let Some(s) = stated.get(c).filter(|s| s.origin.is_explicit()) {
            run.setup.settings.insert(c, s.clone());
            took = true;
        }
    }
    if !took {
        return;
    }
    run.push_merged(&found, node.span.clone(), format!("`{written}`"));
}

/// The config file or named setup a launch line's flags lie over, if the mount names one and
/// it can be found: the file, the root of it the run reads, where the line names it, and how
/// to refer to it.
fn named_source(
    dialect: &Dialect,
    mount: &Mount,
    view: &Node,
    front_root: &Node,
    path: &Path,
) -> Option<(sources::Found, usize, crate::syntax::Span, String)> {
    if let Some(flag) = &mount.config_flag {
        let node = view.get_path(&flag.split('.').collect::<Vec<_>>())?;
        let written = &node.as_scalar()?.text;
        let file = sources::named_file(path, written)?;
        let found = sources::read(&file)?;
        // A config is data; a launch script named as one would launch itself in a loop.
        if found.doc.format == Format::Shell {
            return None;
        }
        let index = found
            .doc
            .roots
            .iter()
            .position(|r| dialect::view(dialect, r, found.doc.format).is_some())?;
        return Some((found, index, node.span.clone(), format!("`{written}`")));
    }
    if mount.named_config {
        let key = dialect.setup_name.as_deref().unwrap_or("name");
        let first = match &front_root.get_path(&["positional"])?.kind {
            crate::syntax::NodeKind::Seq(items) => items.first()?,
            _ => return None,
        };
        let name = &first.as_scalar()?.text;
        let (found, index) = sources::named_setup(path, name, key)?;
        let callee = found.doc.roots[index]
            .tag
            .as_deref()
            .and_then(|t| t.strip_prefix("call:"))
            .map(|c| c.rsplit('.').next().unwrap_or(c).to_string())
            .unwrap_or_else(|| "setup".into());
        return Some((
            found,
            index,
            first.span.clone(),
            format!("{callee} `{name}`"),
        ));
    }
    None
}

/// The run of a launch line that starts a Python script of the tree (`python train.py
/// --batch-size 64`, `torchrun --nproc_per_node=8 train.py`) which no dialect's launch mount
/// claims: the script is read as the config, and the line's flags replace its argparse
/// defaults (`args.batch_size`) and its environment lookups (`os.environ["NUM_WORKERS"]`)
/// wherever the script uses them. `None` when the script is not found or is no training
/// script hwlint knows.
pub fn script_run<'a>(
    dialects: &'a [Dialect],
    front_root: &Node,
    path: &Path,
    text: &'a str,
) -> Option<Run<'a>> {
    let script_node = front_root.get_path(&["script"])?;
    let written = &script_node.as_scalar()?.text;
    if !written.ends_with(".py") {
        return None;
    }
    let file = sources::named_file(path, written)?;
    let found = sources::read(&file)?;
    let module = found.doc.roots.first()?;
    let (dialect, view) = dialect::detect(dialects, module, Format::Python, &file)?;
    let start = text.len() + 1;
    // What the line gives each tagged value of the script; the first flag of a name wins, as
    // when each was substituted in turn.
    let mut with: HashMap<String, &Node> = HashMap::new();
    if let Some(args) = front_root.get_path(&["args"]) {
        for (dest, node) in flags(args) {
            with.entry(format!("arg:{dest}")).or_insert(node);
        }
    }
    if let Some(env) = front_root.get_path(&["env"]).and_then(|n| n.as_map()) {
        for e in &env.entries {
            with.entry(format!("env:{}", e.key)).or_insert(&e.value);
        }
    }
    let (root, replaced) = merge::substitute(&merge::shifted(&view, start), &with);
    // A line that changes nothing in the script adds nothing to what the script's own lint says.
    if !replaced && launchers::program(front_root).is_none_or(|p| p == "python") {
        return None;
    }
    let mut setup = dialect::resolve(dialect, &root);
    launchers::overlay(&mut setup, front_root);
    Some(Run {
        dialect,
        setup,
        root: Cow::Owned(root),
        text: Cow::Borrowed(text),
        merged_text: format!("\n{}", found.text),
        own_len: text.len(),
        merged: vec![Merged {
            path: found.path.clone(),
            format: Format::Python,
            start,
            len: found.text.len(),
            root_index: 0,
            named_at: script_node.span.clone(),
            what: format!("`{written}`"),
        }],
        composed: false,
        cycles: Vec::new(),
    })
}

/// A line's flags as argparse destinations: `--batch-size 64` and `--batch_size=64` both set
/// `batch_size` (argparse turns dashes in a long option into underscores), `--a.b` sets `a.b`.
fn flags(args: &Node) -> Vec<(String, &Node)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, &Node)> = vec![(String::new(), args)];
    while let Some((prefix, node)) = stack.pop() {
        let Some(m) = node.as_map() else {
            out.push((prefix.replace('-', "_"), node));
            continue;
        };
        for e in &m.entries {
            let key = if prefix.is_empty() {
                e.key.clone()
            } else {
                format!("{prefix}.{}", e.key)
            };
            stack.push((key, &e.value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{builtin, detect, Concept, Origin};
    use crate::syntax::parse;

    /// A launch line's tree as the shell front-end builds it, written as YAML.
    fn line(yaml: &str, program: &str) -> Node {
        let mut root = parse(yaml, Format::Yaml).unwrap().roots.remove(0);
        root.tag = Some(format!("launch:{program}"));
        root
    }

    #[test]
    fn a_lerobot_line_lies_over_the_config_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = "dataset: {repo_id: lerobot/pusht}\npolicy: {type: act}\nbatch_size: 64\nnum_workers: 0\nsteps: 100000\n";
        std::fs::write(dir.path().join("cfg.yaml"), cfg).unwrap();
        let launch = dir.path().join("train.sh");
        let text = "script: lerobot-train\nargs: {config_path: cfg.yaml, batch_size: 8}\n";
        let front = line(text, "lerobot-train");
        let dialects = builtin();
        let (d, view) = detect(&dialects, &front, Format::Shell, &launch).unwrap();
        assert_eq!(d.name, "lerobot");
        let run = assemble(&dialects, d, view, &front, Format::Shell, &launch, text);
        assert_eq!(run.merged.len(), 1);
        let (bs, set) = run.setup.int(Concept::MicroBatch).unwrap();
        assert_eq!(bs, 8);
        // The line set it: its span is in the launch file's own text.
        let Origin::File { value_span, .. } = &set.origin else {
            panic!("{set:?}")
        };
        assert!(value_span.end <= run.own_len);
        assert_eq!(run.slice(value_span.clone()), Some("8"));
        // The config set the workers: its span is past the launch text, in the config's.
        let (w, set) = run.setup.int(Concept::NumWorkers).unwrap();
        assert_eq!(w, 0);
        let Origin::File { value_span, .. } = &set.origin else {
            panic!("{set:?}")
        };
        let m = run.source_at(value_span.start).unwrap();
        assert!(m.path.ends_with("cfg.yaml"));
        assert_eq!(run.slice(value_span.clone()), Some("0"));
        assert_eq!(&text[m.named_at.clone()], "cfg.yaml");
    }

    #[test]
    fn launcher_flags_say_the_processes() {
        let dir = tempfile::tempdir().unwrap();
        let launch = dir.path().join("train.sh");
        let text = "script: run_clm.py\nlauncher: {program: torchrun, nproc_per_node: 8}\nargs: {per_device_train_batch_size: 4, gradient_accumulation_steps: 2, num_train_epochs: 3, learning_rate: 1e-4, output_dir: out}\n";
        let front = line(text, "torchrun");
        let dialects = builtin();
        let (d, view) = detect(&dialects, &front, Format::Shell, &launch).unwrap();
        assert_eq!(d.name, "hf-trainer");
        let run = assemble(&dialects, d, view, &front, Format::Shell, &launch, text);
        assert_eq!(run.setup.int(Concept::DevicesPerNode).unwrap().0, 8);
        assert!(run
            .setup
            .get(Concept::DevicesPerNode)
            .unwrap()
            .origin
            .is_explicit());
        // torchrun without the flag starts one process.
        let text = "script: run_clm.py\nlauncher: {program: torchrun}\nargs: {per_device_train_batch_size: 4, gradient_accumulation_steps: 2, num_train_epochs: 3, output_dir: out}\n";
        let front = line(text, "torchrun");
        let (d, view) = detect(&dialects, &front, Format::Shell, &launch).unwrap();
        let run = assemble(&dialects, d, view, &front, Format::Shell, &launch, text);
        let (n, set) = run.setup.int(Concept::DevicesPerNode).unwrap();
        assert_eq!(n, 1);
        assert!(!set.origin.is_explicit());
    }

    #[test]
    fn flags_read_as_argparse_destinations() {
        let args = parse("{batch-size: 8, policy: {type: act}}", Format::Yaml).unwrap();
        let mut got: Vec<String> = flags(&args.roots[0]).into_iter().map(|(k, _)| k).collect();
        got.sort();
        assert_eq!(got, ["batch_size", "policy.type"]);
    }
}
