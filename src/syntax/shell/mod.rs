//! Launch scripts (`.sh`, `.bash`): a tolerant scanner of command lines, not a shell. What it
//! does not understand is skipped, never an error.
//!
//! The tree (the contract the launch merge and the dialect data rely on): one root per command
//! that launches training, in source order, each a mapping of style `Command` whose span runs
//! from the command's first word to its last argument, tagged `launch:<program>` (`lerobot-train`,
//! `torchrun`, `accelerate`, `deepspeed`, `python`), holding
//! * `env`: the variables the launched process sees (`VAR=value cmd`, and earlier `export VAR=v`
//!   lines, or `VAR=v` lines exported later or before), values spanning their token;
//! * `launcher`: the launcher's own flags (`nproc_per_node`, `nnodes`, `num_processes`,
//!   `mixed_precision`, `config_file`, `num_gpus`), dashes in names read as underscores, and
//!   `program` (`torchrun`);
//! * `script`: the script or module launched (`scripts/train.py`, `lerobot.scripts.train`);
//! * `positional`: the script's positional arguments (openpi's config name), a sequence;
//! * `args`: the script's flags, `--key.sub=value`, `--key value` and bare `--flag` (`true`),
//!   and Hydra `key=value` overrides, nested at the dots (a mapping of style `Command` over the
//!   command's span, tagged `hydra` when it holds only Hydra overrides);
//! * `background`: `true` when the command ends in `&`.
//!
//! Values are plain scalars (typed by the dialect's loader, as the program parses its flags),
//! span the token including its quotes, and `$VAR` resolves to a variable set once in the script
//! to a literal (`shared` when the variable is used more than once, so a fix edits it only when
//! it is the single use); anything else (`$(..)`, a variable set twice) is unknown (`CustomTag`).

mod words;

use std::collections::HashMap;

use super::{
    Document, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError, Quote, ScalarKind, Span,
    MAX_DEPTH,
};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;
use words::{Command, Piece, Word};

/// The environment entries one script may give its launch lines in all, at least: each launch
/// line holds every variable exported before it, so N exports before N lines is N^2 entries
/// (about 300 bytes each). Real scripts stay far below: a 20,000-line sweep with 30 exports is
/// 600,000 entries in about a megabyte. Past the larger of this and one entry per byte of the
/// script, the script is refused.
const ENV_ENTRIES: usize = 100_000;

/// Scans a launch script. What is not understood is skipped; the only failure is a script
/// whose launch lines would see more environment than [`ENV_ENTRIES`] allows.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    let cmds = words::commands(text);
    let vars = Variables::of(&cmds);
    let later = vars.exported_later(&cmds);
    let budget = ENV_ENTRIES.max(text.len());
    let mut spent = 0usize;
    let mut roots = Vec::new();
    let mut exported: HashMap<String, Node> = HashMap::new();
    for (i, cmd) in cmds.iter().enumerate() {
        let (prefix, rest) = split_assignments(&cmd.words);
        if rest.is_empty() {
            continue;
        }
        let program = rest[0].literal().unwrap_or_default();
        if program == "export" || program == "declare" {
            for w in &rest[1..] {
                if let Some((name, value)) = assignment(w, &vars) {
                    exported.insert(name, value);
                } else if let Some(name) = w.literal().filter(|n| is_name(n)) {
                    // `export NAME` after `NAME=v`: the plain assignment is now exported.
                    if let Some(v) = vars.value_of(&name) {
                        exported.insert(name, v);
                    }
                }
            }
            continue;
        }
        let Some(launch) = launch_of(rest, &vars) else {
            continue;
        };
        // `VAR=v` lines the script exports further down still count when exported before the
        // run starts; a plain one never exported stays the shell's own.
        let from_later = later.iter().take_while(|(last, _, _)| *last >= i);
        spent += exported.len() + from_later.clone().count() + prefix.len();
        if spent > budget {
            return Err(ParseError {
                message: format!(
                    "this script gives its launch lines more than {budget} environment variables in all (each line sees every variable exported before it): more than hwlint reads in one file"
                ),
                span: cmd.words.first().map_or(0, |w| w.span.start)..cmd.words.last().map_or(0, |w| w.span.end),
            });
        }
        let mut env = exported.clone();
        for (_, name, value) in from_later {
            env.entry(name.clone()).or_insert_with(|| value.clone());
        }
        for w in prefix {
            if let Some((name, value)) = assignment(w, &vars) {
                env.insert(name, value);
            }
        }
        roots.push(launch.into_node(cmd, env));
    }
    Ok(Document {
        format: Format::Shell,
        roots,
        duplicates: Vec::new(),
    })
}

fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Leading `NAME=value` words, and the rest of the command.
fn split_assignments(words: &[Word]) -> (&[Word], &[Word]) {
    let n = words
        .iter()
        .take_while(|w| {
            matches!(w.pieces.first(), Some(Piece::Lit { text, quoted: None })
                if text.split_once('=').is_some_and(|(k, _)| is_name(k)))
        })
        .count();
    words.split_at(n)
}

/// `NAME=value` as a name and the value's node.
fn assignment(w: &Word, vars: &Variables) -> Option<(String, Node)> {
    let (name, value) = split_at_equals(w)?;
    if !is_name(&name) {
        return None;
    }
    Some((name, value_node(&value, vars)))
}

/// Splits `key=value` at its first unquoted `=`: the key text and the value as a word of its own
/// (its span starts after the `=`).
fn split_at_equals(w: &Word) -> Option<(String, Word)> {
    let Some(Piece::Lit { text, quoted: None }) = w.pieces.first() else {
        return None;
    };
    let at = text.find('=')?;
    // The span of a plain literal is its text, so the offset of `=` carries over when no escape
    // came before it.
    let raw_at = w.span.start + at;
    let mut pieces = Vec::new();
    let rest = &text[at + 1..];
    if !rest.is_empty() {
        pieces.push(Piece::Lit {
            text: rest.to_string(),
            quoted: None,
        });
    }
    pieces.extend(w.pieces[1..].iter().cloned());
    Some((
        text[..at].to_string(),
        Word {
            pieces,
            span: raw_at + 1..w.span.end,
        },
    ))
}

/// The script's variables: each assigned once to a literal resolves `$NAME`.
struct Variables {
    /// Name -> its assignments' value nodes.
    assigned: HashMap<String, Vec<Node>>,
    /// Name -> how many times `$NAME` appears.
    uses: HashMap<String, usize>,
}

impl Variables {
    fn of(cmds: &[Command]) -> Variables {
        let mut assigned: HashMap<String, Vec<Node>> = HashMap::new();
        let mut uses: HashMap<String, usize> = HashMap::new();
        for cmd in cmds {
            for w in &cmd.words {
                for p in &w.pieces {
                    if let Piece::Var { name, .. } = p {
                        *uses.entry(name.clone()).or_default() += 1;
                    }
                }
            }
            let (prefix, rest) = split_assignments(&cmd.words);
            let words: Vec<&Word> = if rest.is_empty() {
                prefix.iter().collect()
            } else if matches!(
                rest[0].literal().as_deref(),
                Some("export" | "declare" | "local" | "readonly")
            ) {
                rest[1..].iter().collect()
            } else {
                Vec::new()
            };
            for w in words {
                if let Some((name, value)) = split_at_equals(w) {
                    if is_name(&name) {
                        assigned.entry(name).or_default().push(literal_node(&value));
                    }
                }
            }
            // `for X in ...` and `read X` assign too: such a name is never resolved.
            if let Some("for" | "read") = cmd.words.first().and_then(|w| w.literal()).as_deref() {
                if let Some(name) = cmd.words.get(1).and_then(|w| w.literal()) {
                    assigned.entry(name).or_default().push(unknown("", 0..0));
                }
            }
        }
        Variables { assigned, uses }
    }

    /// The node `$NAME` stands for, when it was set exactly once, to a literal.
    fn value_of(&self, name: &str) -> Option<Node> {
        match self.assigned.get(name).map(Vec::as_slice) {
            Some([one])
                if one
                    .as_scalar()
                    .is_some_and(|s| s.kind != ScalarKind::CustomTag) =>
            {
                let mut n = one.clone();
                n.shared = self.uses.get(name).copied().unwrap_or(0) > 1;
                Some(n)
            }
            _ => None,
        }
    }

    /// Plain `NAME=v` assignments of the script that an `export NAME` exports: the index of
    /// the last command that exports each, its name and value, the latest first. A launch at
    /// command `i` sees those whose index is `i` or more (one pass for the whole script: asked
    /// per launch line from that line on, it was quadratic in the script's length).
    fn exported_later(&self, cmds: &[Command]) -> Vec<(usize, String, Node)> {
        let mut last: HashMap<String, usize> = HashMap::new();
        for (i, cmd) in cmds.iter().enumerate() {
            let (_, rest) = split_assignments(&cmd.words);
            if rest.first().and_then(|w| w.literal()).as_deref() != Some("export") {
                continue;
            }
            for w in &rest[1..] {
                if let Some(name) = w.literal().filter(|n| is_name(n)) {
                    last.insert(name, i);
                }
            }
        }
        let mut out: Vec<(usize, String, Node)> = last
            .into_iter()
            .filter_map(|(name, i)| Some((i, self.value_of(&name)?, name)))
            .map(|(i, v, name)| (i, name, v))
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        out
    }
}

fn unknown(text: &str, span: Span) -> Node {
    Node::scalar(text, ScalarKind::CustomTag, span)
}

/// A word as a value without resolving variables (for the variables' own values).
fn literal_node(w: &Word) -> Node {
    match w.literal() {
        Some(text) => scalar(text, w.quoted(), w.span.clone()),
        None => unknown(&raw_text(w), w.span.clone()),
    }
}

fn raw_text(w: &Word) -> String {
    w.pieces
        .iter()
        .map(|p| match p {
            Piece::Lit { text, .. } => text.clone(),
            Piece::Var { name, .. } => format!("${name}"),
            Piece::Dynamic => "$(...)".into(),
        })
        .collect()
}

fn scalar(text: String, quoted: Option<char>, span: Span) -> Node {
    let kind = match quoted {
        Some('\'') => ScalarKind::Str(Quote::Single),
        Some(_) => ScalarKind::Str(Quote::Double),
        None => ScalarKind::Plain,
    };
    Node::scalar(text, kind, span)
}

/// A word as a value: literal, one variable the script sets once, or unknown.
fn value_node(w: &Word, vars: &Variables) -> Node {
    if let [Piece::Var { name, default }] = w.pieces.as_slice() {
        if let Some(n) = vars.value_of(name) {
            return n;
        }
        // `${X:-8}` with X never set in the script: the default, but it sits inside the
        // expansion, so a fix leaves it alone.
        if let (Some(d), None) = (default, vars.assigned.get(name)) {
            let mut n = scalar(d.clone(), None, w.span.clone());
            n.shared = true;
            return n;
        }
    }
    literal_node(w)
}

/// What a launch command runs, read from its words.
struct Launch<'w> {
    program: String,
    program_word: &'w Word,
    launcher: Vec<(String, Span, Node)>,
    script: Option<(String, Span)>,
    args: &'w [Word],
    vars: &'w Variables,
}

/// Flags of the launchers that take no value.
const BARE_FLAGS: &[&str] = &[
    "standalone",
    "no_python",
    "run_path",
    "module",
    "multi_gpu",
    "use_deepspeed",
    "use_fsdp",
    "use_megatron_lm",
    "cpu",
    "debug",
    "quiet",
    "same_network",
    "no_local_rank",
    "autotuning",
    "force_multi",
    "enable_each_rank_log",
    "tpu",
    "use_xpu",
    "dynamo_use_fullgraph",
];

/// Words that run the next word (`nohup python ...`), with the flags they take values for.
fn wrapper_len(words: &[Word]) -> usize {
    let first = words[0].literal().unwrap_or_default();
    let base = first.rsplit('/').next().unwrap_or(&first).to_string();
    let next = words.get(1).and_then(|w| w.literal()).unwrap_or_default();
    match base.as_str() {
        "nohup" | "exec" | "time" | "command" | "nice" | "stdbuf" => 1,
        "env" => 1,
        "uv" | "poetry" | "pdm" | "pixi" | "hatch" if next == "run" => {
            let mut k = 2;
            while let Some(w) = words.get(k).and_then(|w| w.literal()) {
                if !w.starts_with('-') {
                    break;
                }
                // `uv run --with x`, `--python 3.11`: options with a value.
                k += if [
                    "--with",
                    "--python",
                    "-p",
                    "--extra",
                    "--group",
                    "--env-file",
                    "--project",
                    "--directory",
                ]
                .contains(&w.as_str())
                {
                    2
                } else {
                    1
                };
            }
            k
        }
        "conda" | "mamba" | "micromamba" if next == "run" => {
            let mut k = 2;
            while let Some(w) = words.get(k).and_then(|w| w.literal()) {
                if !w.starts_with('-') {
                    break;
                }
                k += if ["-n", "--name", "-p", "--prefix"].contains(&w.as_str()) {
                    2
                } else {
                    1
                };
            }
            k
        }
        "srun" | "mpirun" | "mpiexec" => {
            let mut k = 1;
            while let Some(w) = words.get(k).and_then(|w| w.literal()) {
                if !w.starts_with('-') {
                    break;
                }
                let takes = !w.contains('=') && w.len() == 2
                    || [
                        "--ntasks",
                        "--gres",
                        "--nodes",
                        "--cpus-per-task",
                        "--partition",
                        "--time",
                        "--job-name",
                        "--account",
                        "--qos",
                        "--np",
                        "-np",
                    ]
                    .contains(&w.as_str());
                k += if takes { 2 } else { 1 };
            }
            k
        }
        _ => 0,
    }
}

/// The launch a command is, if it is one.
fn launch_of<'w>(words: &'w [Word], vars: &'w Variables) -> Option<Launch<'w>> {
    let mut w = words;
    loop {
        if w.is_empty() {
            return None;
        }
        let n = wrapper_len(w);
        if n == 0 {
            break;
        }
        w = &w[n.min(w.len())..];
        // `env A=1 python ...`
        let (_, rest) = split_assignments(w);
        w = rest;
    }
    let first = w[0].literal()?;
    let base = first.rsplit('/').next().unwrap_or(&first).to_string();
    // `uv run scripts/train.py`, `./train.py`: the script runs under Python.
    if base.ends_with(".py") {
        return Some(Launch {
            program: "python".into(),
            program_word: &w[0],
            launcher: Vec::new(),
            script: Some((first.clone(), w[0].span.clone())),
            args: &w[1..],
            vars,
        });
    }
    let mut launch = Launch {
        program: base.clone(),
        program_word: &w[0],
        launcher: Vec::new(),
        script: None,
        args: &[],
        vars,
    };
    let rest: &[Word] = match base.as_str() {
        // Console scripts that are the training program themselves (`litgpt finetune_lora`).
        "lerobot-train" | "litgpt" => {
            launch.script = Some((base.clone(), w[0].span.clone()));
            launch.args = &w[1..];
            return Some(launch);
        }
        "torchrun" => &w[1..],
        "accelerate" if w.get(1).and_then(|x| x.literal()).as_deref() == Some("launch") => {
            launch.program = "accelerate".into();
            &w[2..]
        }
        "deepspeed" => &w[1..],
        b if b == "python" || b.starts_with("python3") || b == "python2" => {
            // `python -m torch.distributed.run`: torchrun under another name.
            let module = (w.get(1).and_then(|x| x.literal()).as_deref() == Some("-m"))
                .then(|| w.get(2).and_then(|x| x.literal()))
                .flatten();
            if let Some(m) = module.as_deref() {
                if m == "torch.distributed.run" || m == "torch.distributed.launch" {
                    launch.program = "torchrun".into();
                    &w[3..]
                } else if m == "accelerate.commands.launch" {
                    launch.program = "accelerate".into();
                    &w[3..]
                } else {
                    launch.program = "python".into();
                    launch.script = Some((m.to_string(), w[2].span.clone()));
                    launch.args = &w[3..];
                    return Some(launch);
                }
            } else {
                launch.program = "python".into();
                let k = python_options(&w[1..]);
                let script = w.get(1 + k)?;
                launch.script = Some((script.literal()?, script.span.clone()));
                launch.args = &w[2 + k..];
                return Some(launch);
            }
        }
        _ => return None,
    };
    // A launcher: its flags, then the script (or `-m module`), then the script's arguments.
    let mut k = 0;
    while k < rest.len() {
        let word = &rest[k];
        let text = match word.pieces.first() {
            Some(Piece::Lit { text, quoted: None }) => text.clone(),
            _ => String::new(),
        };
        if !text.starts_with('-') {
            launch.script = Some((word.literal().unwrap_or(text), word.span.clone()));
            launch.args = &rest[k + 1..];
            return Some(launch);
        }
        let name = text.trim_start_matches('-');
        let inner = strip_lead(word, text.len() - name.len());
        let (key, value, used) = match split_at_equals(&inner) {
            Some((k, v)) => (k, Some(value_node(&v, vars)), 1),
            None => {
                let key = name.to_string();
                let norm = key.replace('-', "_");
                if norm == "module" || key == "m" {
                    let module = rest.get(k + 1)?;
                    launch.script = Some((module.literal()?, module.span.clone()));
                    launch.args = &rest[k + 2..];
                    return Some(launch);
                }
                match rest.get(k + 1) {
                    Some(next)
                        if !BARE_FLAGS.contains(&norm.as_str())
                            && !next
                                .literal()
                                .is_some_and(|t| t.starts_with('-') || t.ends_with(".py")) =>
                    {
                        (key, Some(value_node(next, vars)), 2)
                    }
                    _ => (key, None, 1),
                }
            }
        };
        let value = value.unwrap_or_else(|| bare(word));
        launch
            .launcher
            .push((key.replace('-', "_"), word.span.clone(), value));
        k += used;
    }
    None
}

/// `w` without its first `n` bytes (the dashes of `--key=value`, the `+` of `+key=value`),
/// which are plain text at its start.
fn strip_lead(w: &Word, n: usize) -> Word {
    let mut pieces = w.pieces.clone();
    if let Some(Piece::Lit { text, .. }) = pieces.first_mut() {
        *text = text.get(n..).unwrap_or("").to_string();
    }
    Word {
        pieces,
        span: (w.span.start + n).min(w.span.end)..w.span.end,
    }
}

/// Options of the `python` interpreter itself before the script (`-u`, `-X opt`).
fn python_options(words: &[Word]) -> usize {
    let mut k = 0;
    while let Some(t) = words.get(k).and_then(|w| w.literal()) {
        if !t.starts_with('-') {
            break;
        }
        k += if ["-X", "-W", "-c"].contains(&t.as_str()) {
            2
        } else {
            1
        };
    }
    k
}

/// A flag given without a value: `true`, at an empty span (nothing to edit in place).
fn bare(word: &Word) -> Node {
    scalar("true".into(), None, word.span.end..word.span.end)
}

impl Launch<'_> {
    fn into_node(self, cmd: &Command, env: HashMap<String, Node>) -> Node {
        let start = cmd.words.first().map_or(0, |w| w.span.start);
        let end = cmd.words.last().map_or(start, |w| w.span.end);
        let span = start..end;
        let at = |s: &Span| s.start..s.start;
        let mut entries = Vec::new();
        let mut env: Vec<(String, Node)> = env.into_iter().collect();
        env.sort_by_key(|(_, n)| n.span.start);
        entries.push(Entry {
            key: "env".into(),
            key_span: at(&span),
            value: Node::map(
                env.into_iter()
                    .map(|(k, v)| Entry {
                        key: k,
                        key_span: v.span.clone(),
                        value: v,
                    })
                    .collect(),
                MapStyle::Implicit,
                span.clone(),
            ),
        });
        let mut launcher = vec![Entry {
            key: "program".into(),
            key_span: self.program_word.span.clone(),
            value: scalar(self.program.clone(), None, self.program_word.span.clone()),
        }];
        launcher.extend(self.launcher.into_iter().map(|(k, ks, v)| Entry {
            key: k,
            key_span: ks,
            value: v,
        }));
        entries.push(Entry {
            key: "launcher".into(),
            key_span: at(&span),
            value: Node::map(launcher, MapStyle::Implicit, span.clone()),
        });
        if let Some((script, s)) = &self.script {
            entries.push(Entry {
                key: "script".into(),
                key_span: s.clone(),
                value: scalar(script.clone(), None, s.clone()),
            });
        }
        let (positional, args, hydra) = script_args(self.args, self.vars);
        entries.push(Entry {
            key: "positional".into(),
            key_span: at(&span),
            value: Node {
                span: span.clone(),
                kind: NodeKind::Seq(positional),
                tag: None,
                shared: false,
            },
        });
        entries.push(Entry {
            key: "args".into(),
            key_span: at(&span),
            value: Node {
                span: span.clone(),
                kind: NodeKind::Map(Map::new(nest(args), MapStyle::Command)),
                tag: hydra.then(|| "hydra".to_string()),
                shared: false,
            },
        });
        if cmd.background {
            entries.push(Entry {
                key: "background".into(),
                key_span: at(&span),
                value: scalar("true".into(), None, end..end),
            });
        }
        Node {
            span,
            kind: NodeKind::Map(Map::new(entries, MapStyle::Command)),
            tag: Some(format!("launch:{}", self.program)),
            shared: false,
        }
    }
}

/// The script's positional arguments, its flags as (dotted key, key span, value), and whether
/// the flags are all Hydra overrides.
fn script_args(words: &[Word], vars: &Variables) -> (Vec<Node>, Vec<(String, Span, Node)>, bool) {
    let mut positional = Vec::new();
    let mut flags = Vec::new();
    let mut dashed = false;
    let mut k = 0;
    while k < words.len() {
        let w = &words[k];
        // The word's leading literal text: `--lr=$LR` is a flag even though its value is not.
        let text = match w.pieces.first() {
            Some(Piece::Lit { text, quoted: None }) => text.clone(),
            _ => String::new(),
        };
        if let Some(name) = text
            .strip_prefix('-')
            .filter(|n| !n.is_empty() && !n.starts_with(|c: char| c.is_ascii_digit()))
        {
            dashed = true;
            let name = name.trim_start_matches('-');
            let lead = text.len() - name.len();
            let inner = strip_lead(w, lead);
            if let Some((key, value)) = split_at_equals(&inner) {
                flags.push((key, w.span.clone(), value_node(&value, vars)));
                k += 1;
                continue;
            }
            match words.get(k + 1) {
                Some(next)
                    if !next.literal().is_some_and(|t| {
                        t.starts_with("--")
                            || (t.starts_with('-')
                                && t.len() > 1
                                && !t[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.'))
                    }) =>
                {
                    flags.push((name.to_string(), w.span.clone(), value_node(next, vars)));
                    k += 2;
                }
                _ => {
                    flags.push((name.to_string(), w.span.clone(), bare(w)));
                    k += 1;
                }
            }
            continue;
        }
        // Hydra: `key=value`, `+key=value`, `++key=value` (`~key` deletes: nothing to read).
        let trimmed = text.trim_start_matches('+');
        let lead = text.len() - trimmed.len();
        let inner = strip_lead(w, lead);
        match split_at_equals(&inner) {
            Some((key, value))
                if !key.is_empty()
                    && key.split('.').all(|s| {
                        is_name(s)
                            || s.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    }) =>
            {
                flags.push((key, w.span.clone(), value_node(&value, vars)));
            }
            _ if text.starts_with('~') => {}
            _ => positional.push(value_node(w, vars)),
        }
        k += 1;
    }
    let hydra = !dashed && !flags.is_empty();
    (positional, flags, hydra)
}

/// Flat dotted flags as nested mappings (`policy.type` under `policy`), in order; a later flag
/// of the same key wins lookups. Built in one pass over mutable levels, each with an index of
/// its sub-mappings, then turned into the tree: rebuilding a mapping per flag was quadratic in
/// the flags of one line. A key of more than [`MAX_DEPTH`] parts stays one flat key (no
/// framework reads one; nesting it would pass the tree's depth bound).
fn nest(flags: Vec<(String, Span, Node)>) -> Vec<Entry> {
    let mut top = Level::default();
    for (key, key_span, value) in flags {
        let parts: Vec<&str> = key.split('.').collect();
        if parts.len() > MAX_DEPTH {
            top.entries.push((key, key_span, Slot::Leaf(value)));
            continue;
        }
        top.insert(&parts, key_span, value);
    }
    top.into_entries()
}

/// One level of [`nest`] being built.
#[derive(Default)]
struct Level {
    entries: Vec<(String, Span, Slot)>,
    /// Key -> the position of its last sub-mapping.
    maps: HashMap<String, usize>,
}

enum Slot {
    Leaf(Node),
    Map(Level),
}

impl Level {
    fn insert(&mut self, path: &[&str], key_span: Span, value: Node) {
        let mut level = self;
        for (k, part) in path.iter().enumerate() {
            if k + 1 == path.len() {
                level
                    .entries
                    .push((part.to_string(), key_span, Slot::Leaf(value)));
                return;
            }
            let i = match level.maps.get(*part) {
                Some(&i) => i,
                None => {
                    level.entries.push((
                        part.to_string(),
                        key_span.clone(),
                        Slot::Map(Level::default()),
                    ));
                    let i = level.entries.len() - 1;
                    level.maps.insert(part.to_string(), i);
                    i
                }
            };
            let Slot::Map(next) = &mut level.entries[i].2 else {
                return;
            };
            level = next;
        }
    }

    fn into_entries(self) -> Vec<Entry> {
        self.entries
            .into_iter()
            .map(|(key, key_span, slot)| {
                let value = match slot {
                    Slot::Leaf(v) => v,
                    Slot::Map(level) => Node {
                        span: key_span.start..key_span.start,
                        kind: NodeKind::Map(Map::new(level.into_entries(), MapStyle::Implicit)),
                        tag: None,
                        shared: false,
                    },
                };
                Entry {
                    key,
                    key_span,
                    value,
                }
            })
            .collect()
    }
}

/// Characters a shell word can hold unquoted and read back unchanged.
fn plain_safe(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:+=@%".contains(c))
}

fn render(value: &NewValue) -> String {
    let text = value.to_string();
    if plain_safe(&text) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Replaces a flag's value token, keeping its quotes.
pub fn replace_value(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    if node.shared || node.span.is_empty() {
        return None;
    }
    let s = node.as_scalar()?;
    let raw = text.get(node.span.clone())?;
    let new = value.to_string();
    let replacement = match s.kind {
        ScalarKind::Str(Quote::Single) if raw.starts_with('\'') && !new.contains('\'') => {
            format!("'{new}'")
        }
        ScalarKind::Str(Quote::Double) if raw.starts_with('"') => {
            format!(
                "\"{}\"",
                new.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('$', "\\$")
                    .replace('`', "\\`")
            )
        }
        ScalarKind::Plain if raw == s.text => render(value),
        _ => return None,
    };
    Some(Edit::replace(node.span.clone(), replacement))
}

/// Appends `--key=value` (or `key=value` for Hydra) to a command line.
pub fn insert_flag(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    if map.shared || path.is_empty() || m.style != MapStyle::Command || map.span.end > text.len() {
        return None;
    }
    let key = path.join(".");
    let flag = if map.tag.as_deref() == Some("hydra") {
        format!(" {key}={}", render(value))
    } else {
        format!(" --{key}={}", render(value))
    };
    // A line that ends inside an unterminated quote, backtick, `$(` or `${` would swallow the
    // flag: it must read back as a word of its own at the end of the command.
    let line = format!("{}{flag}", text.get(map.span.start..map.span.end)?);
    let cmds = words::commands(&line);
    let last = cmds.last()?.words.last()?;
    if last.literal().as_deref() != Some(flag.trim_start()) || last.span.end != line.len() {
        return None;
    }
    Some(Edit::insert(map.span.end, flag))
}

#[cfg(test)]
mod tests;
