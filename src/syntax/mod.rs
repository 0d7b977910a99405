//! One span-carrying tree for every config format.
//!
//! Each front-end (YAML, TOML, JSON) parses text into [`Document`]: every key and scalar keeps
//! its byte range in the original text, so diagnostics point at the right place and fixes are
//! byte splices. Nothing here knows what a key means; that is the dialect layer's job.

pub mod budget;
pub mod comments;
pub mod edit;
pub mod json;
pub mod python;
pub mod rust;
pub mod shell;
pub mod toml;
pub mod yaml;

use std::ops::Range;

/// A byte range in the original text.
pub type Span = Range<usize>;

/// The formats hwlint reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Yaml,
    Toml,
    Json,
    Jsonc,
    /// Python source, read statically: module assignments, calls, argparse defaults.
    Python,
    /// Rust source (Burn `#[derive(Config)]` structs and builder chains), read with syn.
    Rust,
    /// Shell launch scripts: the command lines that start training.
    Shell,
}

impl Format {
    /// The format a file name implies, or `None` for files hwlint does not read.
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "yaml" | "yml" => Some(Format::Yaml),
            "toml" => Some(Format::Toml),
            "json" => Some(Format::Json),
            "jsonc" => Some(Format::Jsonc),
            "py" => Some(Format::Python),
            "rs" => Some(Format::Rust),
            "sh" | "bash" => Some(Format::Shell),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Yaml => "yaml",
            Format::Toml => "toml",
            Format::Json => "json",
            Format::Jsonc => "jsonc",
            Format::Python => "python",
            Format::Rust => "rust",
            Format::Shell => "shell",
        }
    }
}

/// A parsed file: one root per document (YAML files may hold several).
#[derive(Debug, Clone)]
pub struct Document {
    pub format: Format,
    pub roots: Vec<Node>,
    /// Keys that appear twice in one mapping, in source order of the second occurrence.
    pub duplicates: Vec<DuplicateKey>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateKey {
    pub key: String,
    pub first: Span,
    pub second: Span,
}

/// A parse failure at a byte offset, with the parser's own message.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub span: Span,
}

/// Deepest nesting of mappings and sequences any front-end accepts. Real configs stay under 20
/// levels; the bound keeps every recursive walk of the tree (rules, `Clone`, `Drop`) far inside
/// a worker thread's 2 MiB stack.
pub const MAX_DEPTH: usize = 256;

impl ParseError {
    /// The error for a file nested deeper than [`MAX_DEPTH`], at the byte where it happens.
    pub fn too_deep(at: usize) -> ParseError {
        ParseError {
            message: format!(
                "nested too deeply (more than {MAX_DEPTH} levels of mappings and sequences)"
            ),
            span: at..at,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The bytes of the value itself: for a scalar its token (quotes included), for a container
    /// from its first to its last byte.
    pub span: Span,
    pub kind: NodeKind,
    /// YAML tag such as `tag:yaml.org,2002:python/tuple`, kept as written (never an error).
    pub tag: Option<String>,
    /// True when the node was copied from a YAML anchor (alias or `<<` merge): editing it would
    /// edit the anchor and every other use of it, so fixes leave such nodes alone.
    pub shared: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Map(Map),
    Seq(Vec<Node>),
    Scalar(Scalar),
}

/// A mapping (YAML mapping, TOML table, JSON object) in source order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Map {
    /// In source order; build a `Map` with [`Map::new`] so that lookups stay indexed.
    pub entries: Vec<Entry>,
    pub style: MapStyle,
    /// Key -> position of its last entry, for large maps: dialects look up hundreds of keys
    /// per file, and a linear scan each time makes a 200k-key file cache-bound.
    index: Option<std::sync::Arc<std::collections::HashMap<String, usize>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapStyle {
    /// YAML block mapping, TOML `[table]`, or the TOML document root.
    #[default]
    Block,
    /// YAML `{...}`, TOML inline table, JSON object.
    Flow,
    /// A TOML table that exists only through dotted keys or as the parent of `[a.b]`:
    /// it has no place of its own to insert a key into. Also every mapping a code front-end
    /// builds that has no text of its own (a Python module's namespace, argparse defaults).
    Implicit,
    /// The arguments of a call in code (`dict(batch_size=8)`, `DataLoader(ds, num_workers=0)`,
    /// a Rust builder chain): a key is inserted as a keyword argument in the call's layout.
    Call,
    /// The flags of a command line in a launch script: a key is appended as a flag.
    Command,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_span: Span,
    pub value: Node,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// The decoded text (escapes resolved, quotes removed).
    pub text: String,
    pub kind: ScalarKind,
}

/// What the format itself says about a scalar's type. YAML plain scalars are typed later,
/// by the loader the framework uses (YAML 1.1 vs 1.2 read `1e-4` differently).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarKind {
    /// A YAML plain (unquoted) scalar: its type depends on the loader.
    Plain,
    /// A quoted string (any format) or a block scalar: always a string.
    Str(Quote),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    /// A TOML date/time, kept as text.
    Other,
    /// A YAML scalar with an explicit core-schema tag (`!!int "4"`, `!!str 5`): the loader
    /// constructs the tagged type from the text, whatever its quoting.
    Tagged(CoreTag),
    /// A YAML scalar with any other tag (`!ENV ${X}`, `!!python/name:...`): what it becomes is
    /// up to a constructor hwlint cannot see, so its value is unknown.
    CustomTag,
}

/// The YAML core-schema tags every loader constructs (`tag:yaml.org,2002:<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
}

impl CoreTag {
    /// The tag a fully resolved tag name stands for (`tag:yaml.org,2002:int`), if a core one.
    pub fn from_tag(full: &str) -> Option<CoreTag> {
        Some(match full.strip_prefix("tag:yaml.org,2002:")? {
            "str" => CoreTag::Str,
            "int" => CoreTag::Int,
            "float" => CoreTag::Float,
            "bool" => CoreTag::Bool,
            "null" => CoreTag::Null,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    Single,
    Double,
    /// YAML `|`/`>` block scalars and TOML multi-line strings: never rewritten in place.
    Block,
}

/// How a framework's loader types YAML plain scalars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loader {
    /// PyYAML `safe_load` and friends: `1e-4` (no dot) is a string, `yes`/`on` are booleans.
    #[default]
    Yaml11,
    /// YAML 1.2 core schema (ruamel, saphyr): `1e-4` is a float, `yes` a string.
    Yaml12,
    /// PyYAML's SafeLoader with a YAML 1.2-style float pattern and no timestamps: `1e-4` and
    /// `1.0e5` are floats, `yes`/`on` still booleans, `1_000` still an int. OmegaConf's loader
    /// (omegaconf/_yaml.py:259-279 at omegaconf@63b63041: Hydra, torchtune, NeMo, verl,
    /// llm-foundry, OLMo, LLaMA-Factory) and jsonargparse's (jsonargparse/_loaders_dumpers.py:59-86
    /// at jsonargparse@5559c81d: LightningCLI, LitGPT).
    #[serde(rename = "omegaconf")]
    OmegaConf,
}

impl Loader {
    /// Whether `yes`/`no`/`on`/`off` and `1_000` are read as YAML 1.1 does (PyYAML's resolvers).
    fn yaml11_words(self) -> bool {
        matches!(self, Loader::Yaml11 | Loader::OmegaConf)
    }
}

/// A typed value as a framework's loader sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Known only when the framework runs: a custom tag's constructor, or an explicit tag on
    /// text the loader cannot construct that type from (`!!int "abc"` fails at load time).
    Unknown,
}

impl Value {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

impl Scalar {
    /// The value this scalar has under `loader` (only YAML plain scalars depend on it).
    pub fn value(&self, loader: Loader) -> Value {
        match self.kind {
            ScalarKind::Plain => resolve_plain(&self.text, loader),
            ScalarKind::Str(_) | ScalarKind::Other => Value::Str(self.text.clone()),
            ScalarKind::Int(i) => Value::Int(i),
            ScalarKind::Float(f) => Value::Float(f),
            ScalarKind::Bool(b) => Value::Bool(b),
            ScalarKind::Null => Value::Null,
            ScalarKind::Tagged(tag) => resolve_tagged(&self.text, tag, loader),
            ScalarKind::CustomTag => Value::Unknown,
        }
    }
}

/// Constructs an explicitly tagged scalar as the loader does. Every loader hwlint models
/// builds tagged values with PyYAML's constructors (`construct_yaml_int` and friends: OmegaConf,
/// jsonargparse and draccus subclass its loaders too), so that is what this follows; where a
/// YAML 1.2 core-schema loader would read the text differently (`!!int "010"` is 8 in PyYAML,
/// 10 in YAML 1.2; `1_000`, `0b1`, `1:30` are PyYAML-only), the value is unknown under
/// [`Loader::Yaml12`] rather than a guess.
pub fn resolve_tagged(text: &str, tag: CoreTag, loader: Loader) -> Value {
    match tag {
        CoreTag::Str => Value::Str(text.to_string()),
        // PyYAML's `construct_yaml_null` ignores the text.
        CoreTag::Null => Value::Null,
        CoreTag::Bool => match text.to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "yes" | "on" if loader.yaml11_words() => Value::Bool(true),
            "no" | "off" if loader.yaml11_words() => Value::Bool(false),
            _ => Value::Unknown,
        },
        CoreTag::Int => tagged_int(text, loader).map_or(Value::Unknown, Value::Int),
        CoreTag::Float => tagged_float(text, loader).map_or(Value::Unknown, Value::Float),
    }
}

/// PyYAML `construct_yaml_int`: `_` dropped, sign, `0b`/`0x`, a leading `0` is octal, `a:b`
/// is base 60, else decimal (Python's `int`, which allows surrounding spaces).
fn tagged_int(text: &str, loader: Loader) -> Option<i64> {
    let t = text.trim();
    let cleaned = t.replace('_', "");
    let (neg, body) = match cleaned.as_bytes().first()? {
        b'-' => (true, &cleaned[1..]),
        b'+' => (false, &cleaned[1..]),
        _ => (false, cleaned.as_str()),
    };
    let plain_decimal = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit())
        && (body == "0" || !body.starts_with('0'));
    let agreed = plain_decimal || body.starts_with("0x");
    if loader == Loader::Yaml12 && (!agreed || cleaned.len() != t.len()) {
        return None;
    }
    let v: i128 = if body == "0" {
        0
    } else if let Some(bin) = body.strip_prefix("0b") {
        i128::from_str_radix(bin, 2).ok()?
    } else if let Some(hex) = body.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = body.strip_prefix('0') {
        i128::from_str_radix(oct, 8).ok()?
    } else if body.contains(':') {
        let mut v: i128 = 0;
        for part in body.split(':') {
            v = v
                .checked_mul(60)?
                .checked_add(part.parse::<u32>().ok()?.into())?;
        }
        v
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse().ok()?
    } else {
        return None;
    };
    i64::try_from(if neg { -v } else { v }).ok()
}

/// PyYAML `construct_yaml_float`: `_` dropped, lower-cased, `.inf`/`.nan`, base 60 with `:`,
/// else Python's `float` (`1e-4`, `200`, `inf` all read).
fn tagged_float(text: &str, loader: Loader) -> Option<f64> {
    let t = text.trim();
    if loader == Loader::Yaml12 && (t.contains('_') || t.contains(':')) {
        return None;
    }
    let cleaned = t.replace('_', "").to_ascii_lowercase();
    let (sign, body) = match cleaned.as_bytes().first()? {
        b'-' => (-1.0, &cleaned[1..]),
        b'+' => (1.0, &cleaned[1..]),
        _ => (1.0, cleaned.as_str()),
    };
    match body {
        ".inf" => return Some(sign * f64::INFINITY),
        ".nan" => return Some(f64::NAN),
        _ => {}
    }
    if body.contains(':') {
        let mut v = 0.0;
        for part in body.split(':') {
            v = v * 60.0 + part.parse::<f64>().ok()?;
        }
        return Some(sign * v);
    }
    // Python's `float` also takes `inf`, `nan` and `infinity`; Rust's parse agrees on those.
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'-' | b'+'))
        && !matches!(body, "inf" | "nan" | "infinity")
    {
        return None;
    }
    body.parse::<f64>().ok().map(|f| sign * f)
}

/// Types a YAML plain scalar the way PyYAML (1.1) or a YAML 1.2 core-schema loader would.
pub fn resolve_plain(text: &str, loader: Loader) -> Value {
    let t = text.trim();
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    // PyYAML's bool pattern (lib/yaml/resolver.py:170-175 at pyyaml@d51d8a13): no `y`/`n`.
    if loader.yaml11_words() {
        match t {
            "yes" | "Yes" | "YES" | "on" | "On" | "ON" => return Value::Bool(true),
            "no" | "No" | "NO" | "off" | "Off" | "OFF" => return Value::Bool(false),
            _ => {}
        }
    }
    if let Some(i) = parse_yaml_int(t, loader) {
        return Value::Int(i);
    }
    if let Some(f) = parse_yaml_float(t, loader) {
        return Value::Float(f);
    }
    Value::Str(text.to_string())
}

fn parse_yaml_int(t: &str, loader: Loader) -> Option<i64> {
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let cleaned;
    let digits = if loader.yaml11_words() && digits.contains('_') {
        cleaned = digits.replace('_', "");
        cleaned.as_str()
    } else {
        digits
    };
    // The magnitude is read wider than i64 so that `-9223372036854775808` (i64::MIN) fits.
    let v: i128 = if let Some(hex) = digits.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = digits.strip_prefix("0o") {
        i128::from_str_radix(oct, 8).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    i64::try_from(if neg { -v } else { v }).ok()
}

fn parse_yaml_float(t: &str, loader: Loader) -> Option<f64> {
    match t {
        ".inf" | ".Inf" | ".INF" | "+.inf" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    if body.is_empty() || !body.bytes().next()?.is_ascii_digit() && !body.starts_with('.') {
        return None;
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+' | b'_'))
    {
        return None;
    }
    let exponent = body.find(['e', 'E']);
    match loader {
        // PyYAML's float pattern (lib/yaml/resolver.py:177-184) needs a dot, and a sign on an
        // exponent: `1e-4` and `1.0e5` stay strings there.
        Loader::Yaml11 => {
            let mantissa = &body[..exponent.unwrap_or(body.len())];
            if !mantissa.contains('.') {
                return None;
            }
            if let Some(e) = exponent {
                if !matches!(body.as_bytes().get(e + 1), Some(b'-' | b'+')) {
                    return None;
                }
            }
        }
        // OmegaConf's and jsonargparse's pattern: a dot, or an exponent (its sign optional).
        Loader::OmegaConf => {
            if !body.contains('.') && exponent.is_none() {
                return None;
            }
        }
        Loader::Yaml12 => {}
    }
    let cleaned = if loader.yaml11_words() {
        t.replace('_', "")
    } else {
        t.to_string()
    };
    cleaned.parse::<f64>().ok()
}

impl Node {
    /// Whether two trees say the same thing, wherever in their texts they are written: the
    /// same keys in the same order, scalars, tags and sequences (spans are not compared).
    pub fn same_value(&self, other: &Node) -> bool {
        if self.tag != other.tag {
            return false;
        }
        match (&self.kind, &other.kind) {
            (NodeKind::Scalar(a), NodeKind::Scalar(b)) => a == b,
            (NodeKind::Seq(a), NodeKind::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_value(y))
            }
            (NodeKind::Map(a), NodeKind::Map(b)) => {
                a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(&b.entries)
                        .all(|(x, y)| x.key == y.key && x.value.same_value(&y.value))
            }
            _ => false,
        }
    }

    /// A scalar of the text (not an anchor's copy, no tag): what code front-ends build.
    pub fn scalar(text: impl Into<String>, kind: ScalarKind, span: Span) -> Node {
        Node {
            span,
            kind: NodeKind::Scalar(Scalar {
                text: text.into(),
                kind,
            }),
            tag: None,
            shared: false,
        }
    }

    /// A mapping of `entries` in `style` (no tag).
    pub fn map(entries: Vec<Entry>, style: MapStyle, span: Span) -> Node {
        Node {
            span,
            kind: NodeKind::Map(Map::new(entries, style)),
            tag: None,
            shared: false,
        }
    }

    pub fn as_map(&self) -> Option<&Map> {
        match &self.kind {
            NodeKind::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// A scalar the loader reads as null (`null`, `~`, `None`): the key is written but unset.
    pub fn is_null(&self, loader: Loader) -> bool {
        self.as_scalar()
            .is_some_and(|s| s.value(loader) == Value::Null)
    }

    /// The node at a dotted path of mapping keys (the last entry wins, as most loaders do).
    /// The node at `path`: mapping keys, or a list item's index (`containers`, `0`).
    pub fn get_path(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |node, seg| node.child(seg))
    }

    /// One step down: a mapping's value at `seg`, or a list's item at the index `seg`.
    fn child(&self, seg: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(m) => Some(&m.get_entry(seg)?.value),
            NodeKind::Seq(items) => items.get(seg.parse::<usize>().ok()?),
            NodeKind::Scalar(_) => None,
        }
    }

    /// The node at a dialect's dotted key (`trainer.devices`, `containers.0`); a key with a
    /// quoted segment (`limits."nvidia.com/gpu"`) goes through [`crate::dialect::key_path`].
    pub fn get_dotted(&self, dotted: &str) -> Option<&Node> {
        if dotted.contains('"') {
            return self.get_path(&crate::dialect::key_path(dotted));
        }
        dotted
            .split('.')
            .try_fold(self, |node, seg| node.child(seg))
    }

    /// The entry (key and value) at a path.
    pub fn get_entry_path(&self, path: &[&str]) -> Option<&Entry> {
        let (last, parents) = path.split_last()?;
        self.get_path(parents)?.as_map()?.get_entry(last)
    }
}

/// Maps with more entries than this get a hash index.
const INDEXED_FROM: usize = 32;

impl Map {
    pub fn new(entries: Vec<Entry>, style: MapStyle) -> Map {
        let index = (entries.len() > INDEXED_FROM).then(|| {
            let mut index = std::collections::HashMap::with_capacity(entries.len());
            for (i, e) in entries.iter().enumerate() {
                index.insert(e.key.clone(), i);
            }
            std::sync::Arc::new(index)
        });
        Map {
            entries,
            style,
            index,
        }
    }

    pub fn get_entry(&self, key: &str) -> Option<&Entry> {
        match &self.index {
            Some(index) => index.get(key).and_then(|&i| self.entries.get(i)),
            None => self.entries.iter().rev().find(|e| e.key == key),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.get_entry(key).map(|e| &e.value)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get_entry(key).is_some()
    }
}

/// Converts byte offsets to 1-based (line, column) positions, column counted in characters.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// Per line, whether it is all ASCII: then a column is a subtraction, not a count, and a
    /// minified file with thousands of findings on its one line stays linear.
    ascii: Vec<bool>,
}

/// Byte offsets where each line after the first starts. `\n`, `\r\n` and a lone `\r` all end a
/// line: YAML and every editor count the old Mac break too, so line numbers and the indentation
/// of inserted keys must as well.
pub fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let b = text.as_bytes();
    b.iter().enumerate().filter_map(move |(i, &c)| match c {
        b'\n' => Some(i + 1),
        b'\r' if b.get(i + 1) != Some(&b'\n') => Some(i + 1),
        _ => None,
    })
}

/// The lines of `text`, each with its line break.
pub fn lines_inclusive(text: &str) -> impl Iterator<Item = &str> + '_ {
    let mut start = 0;
    let mut breaks = line_starts(text).chain(std::iter::once(text.len()));
    std::iter::from_fn(move || {
        let end = breaks.next()?;
        if end <= start {
            return None;
        }
        let line = &text[start..end];
        start = end;
        Some(line)
    })
}

/// The line break the file uses (its first one), `\n` when it has none.
pub fn newline_style(text: &str) -> &'static str {
    match text.find(['\n', '\r']) {
        Some(i) if text.as_bytes()[i] == b'\n' => "\n",
        Some(i) if text.as_bytes().get(i + 1) == Some(&b'\n') => "\r\n",
        Some(_) => "\r",
        None => "\n",
    }
}

/// Where the line holding `offset` ends, after its line break; `None` on the last line when it
/// has no break.
pub fn line_end_after(text: &str, offset: usize) -> Option<usize> {
    let i = offset + text.get(offset..)?.find(['\n', '\r'])?;
    Some(if text[i..].starts_with("\r\n") {
        i + 2
    } else {
        i + 1
    })
}

/// Where the line holding `offset` starts.
pub fn line_start_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .and_then(|t| t.rfind(['\n', '\r']))
        .map_or(0, |i| i + 1)
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut line_starts = Vec::with_capacity(b.len() / 32 + 1);
        line_starts.push(0);
        for (i, &c) in b.iter().enumerate() {
            if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                line_starts.push(i + 1);
            }
        }
        // Most configs are ASCII throughout: one check for the whole text.
        if text.is_ascii() {
            let ascii = vec![true; line_starts.len()];
            return LineIndex { line_starts, ascii };
        }
        let ascii = line_starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                let end = line_starts.get(i + 1).copied().unwrap_or(text.len());
                text.as_bytes()[start..end].is_ascii()
            })
            .collect();
        LineIndex { line_starts, ascii }
    }

    /// 1-based line and column of a byte offset.
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = if self.ascii.get(line) == Some(&true) {
            offset - start
        } else {
            text.get(start..offset)
                .map_or(offset - start, |s| s.chars().count())
        };
        (line + 1, col + 1)
    }

    /// Byte offset where the 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.line_starts.get(line).copied()
    }
}

/// Parses `text` in `format`. Never panics; a failure is a [`ParseError`] with a span.
pub fn parse(text: &str, format: Format) -> Result<Document, ParseError> {
    budget::check(text, format)?;
    match format {
        Format::Yaml => yaml::parse(text),
        Format::Toml => toml::parse(text),
        Format::Json => json::parse(text, false),
        Format::Jsonc => json::parse(text, true),
        Format::Python => python::parse(text),
        Format::Rust => rust::parse(text),
        Format::Shell => shell::parse(text),
    }
}

/// Strips a UTF-8 byte-order mark; returns the text and how many bytes were skipped.
pub fn strip_bom(text: &str) -> (&str, usize) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, 3),
        None => (text, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml11_and_12_disagree_on_exponent_without_dot() {
        assert_eq!(
            resolve_plain("1e-4", Loader::Yaml11),
            Value::Str("1e-4".into())
        );
        assert_eq!(resolve_plain("1e-4", Loader::Yaml12), Value::Float(1e-4));
        assert_eq!(resolve_plain("1.0e-4", Loader::Yaml11), Value::Float(1e-4));
        assert_eq!(resolve_plain("yes", Loader::Yaml11), Value::Bool(true));
        assert_eq!(
            resolve_plain("yes", Loader::Yaml12),
            Value::Str("yes".into())
        );
        assert_eq!(resolve_plain("-12", Loader::Yaml12), Value::Int(-12));
        assert_eq!(resolve_plain("~", Loader::Yaml12), Value::Null);
        assert_eq!(resolve_plain("8x", Loader::Yaml12), Value::Str("8x".into()));
    }

    /// PyYAML 6.0.3 `safe_load("a: 2e-5\nb: 1e5\nc: 1.0e5\nd: 2.0e-5\ne: 1.0e+5")` gives
    /// `{'a': '2e-5', 'b': '1e5', 'c': '1.0e5', 'd': 2e-05, 'e': 100000.0}`; OmegaConf and
    /// jsonargparse read all five as floats and keep PyYAML's booleans and ints.
    #[test]
    fn pyyaml_and_omegaconf_floats() {
        let s = |t: &str| Value::Str(t.into());
        for (text, y11, omega) in [
            ("2e-5", s("2e-5"), Value::Float(2e-5)),
            ("1e5", s("1e5"), Value::Float(1e5)),
            ("1.0e5", s("1.0e5"), Value::Float(1e5)),
            ("2.0e-5", Value::Float(2e-5), Value::Float(2e-5)),
            ("1.0e+5", Value::Float(1e5), Value::Float(1e5)),
            ("1_000", Value::Int(1000), Value::Int(1000)),
            ("yes", Value::Bool(true), Value::Bool(true)),
            ("y", s("y"), s("y")),
            ("n", s("n"), s("n")),
            ("12", Value::Int(12), Value::Int(12)),
        ] {
            assert_eq!(resolve_plain(text, Loader::Yaml11), y11, "{text}");
            assert_eq!(resolve_plain(text, Loader::OmegaConf), omega, "{text}");
        }
    }

    #[test]
    fn yaml_int_range_ends_are_ints() {
        for loader in [Loader::Yaml11, Loader::Yaml12] {
            assert_eq!(
                resolve_plain("-9223372036854775808", loader),
                Value::Int(i64::MIN)
            );
            assert_eq!(
                resolve_plain("9223372036854775807", loader),
                Value::Int(i64::MAX)
            );
            // Used to overflow (a panic in debug builds) when negating i64::MIN.
            assert_eq!(
                resolve_plain("-0x-8000000000000000", loader),
                Value::Str("-0x-8000000000000000".into())
            );
        }
    }

    #[test]
    fn tagged_scalars_are_constructed_as_pyyaml_does() {
        use CoreTag::*;
        let y11 = |text, tag| resolve_tagged(text, tag, Loader::Yaml11);
        let y12 = |text, tag| resolve_tagged(text, tag, Loader::Yaml12);
        // Checked against PyYAML 6.0.3 `yaml.safe_load("v: !!int \"4\"")` and friends.
        assert_eq!(y11("4", Int), Value::Int(4));
        assert_eq!(y11("+12", Int), Value::Int(12));
        assert_eq!(y11("1_000", Int), Value::Int(1000));
        assert_eq!(y11("010", Int), Value::Int(8));
        assert_eq!(y11("0x1f", Int), Value::Int(31));
        assert_eq!(y11("0b101", Int), Value::Int(5));
        assert_eq!(y11("1:30", Int), Value::Int(90));
        assert_eq!(y11("4.5", Int), Value::Unknown);
        assert_eq!(y11("abc", Int), Value::Unknown);
        assert_eq!(y11("200", Float), Value::Float(200.0));
        assert_eq!(y11("1e-4", Float), Value::Float(1e-4));
        assert_eq!(y11("-.inf", Float), Value::Float(f64::NEG_INFINITY));
        assert_eq!(y11("abc", Float), Value::Unknown);
        assert_eq!(y11("5", Str), Value::Str("5".into()));
        assert_eq!(y11("yes", Bool), Value::Bool(true));
        assert_eq!(y11("False", Bool), Value::Bool(false));
        assert_eq!(y11("maybe", Bool), Value::Unknown);
        assert_eq!(y11("x", Null), Value::Null);
        // Where a YAML 1.2 loader would read the text otherwise, the value is not guessed.
        assert_eq!(y12("4", Int), Value::Int(4));
        assert_eq!(y12("0x1f", Int), Value::Int(31));
        assert_eq!(y12("010", Int), Value::Unknown);
        assert_eq!(y12("1_000", Int), Value::Unknown);
        assert_eq!(y12("200", Float), Value::Float(200.0));
        assert_eq!(y12("yes", Bool), Value::Unknown);
        assert_eq!(y12("true", Bool), Value::Bool(true));
    }

    #[test]
    fn bare_cr_crlf_and_lf_all_break_lines() {
        let t = "a: 1\rb: 2\r\nc: 3\nd: 4";
        let li = LineIndex::new(t);
        assert_eq!(li.position(t, t.find('b').unwrap()), (2, 1));
        assert_eq!(li.position(t, t.find('c').unwrap()), (3, 1));
        assert_eq!(li.position(t, t.find('d').unwrap()), (4, 1));
        let lines: Vec<&str> = lines_inclusive(t).collect();
        assert_eq!(lines, ["a: 1\r", "b: 2\r\n", "c: 3\n", "d: 4"]);
        assert_eq!(newline_style(t), "\r");
        assert_eq!(newline_style("a\r\nb"), "\r\n");
        assert_eq!(line_end_after(t, 6), Some(11));
        assert_eq!(line_start_of(t, 7), 5);
        assert_eq!(line_end_after(t, t.len() - 1), None);
    }

    #[test]
    fn line_index_counts_characters() {
        let t = "é: 1\nab: 2\n";
        let li = LineIndex::new(t);
        assert_eq!(li.position(t, 0), (1, 1));
        assert_eq!(li.position(t, 4), (1, 4));
        assert_eq!(li.position(t, 6), (2, 1));
    }
}
