//! Property tests for the syntax layer and its writers.
//!
//! Random YAML, TOML and JSON(C) documents are generated from a small model (nested mappings,
//! typed scalars, comments, CRLF, missing final newline) and rendered in each format's own
//! styles. The properties:
//!
//! 1. `parse` reads back exactly the model; replacing any scalar with `replace_scalar` yields
//!    text that parses to the same tree except for that one value, and only the bytes of the
//!    edit range change.
//! 2. `insert_key` into any mapping yields text that parses, holds the new key with its value at
//!    the right path and keeps every previous key and value.
//! 3. `parse` never panics, whatever the input.
//! 4. Documents with lists (YAML block and flow sequences, TOML arrays, arrays of inline tables
//!    and `[[arrays of tables]]`, JSON arrays; of scalars and of mappings) parse back exactly,
//!    and replacing a scalar inside a list changes only the edit's bytes and re-parses to the
//!    same tree with that one value changed.

use std::collections::BTreeMap;

use hwlint::fix::{apply_fixes, Applicability, Edit, Fix};
use hwlint::syntax::edit::{insert_key, replace_scalar, NewValue};
use hwlint::syntax::{parse, Format, Loader, MapStyle, Node, NodeKind, Value};
use proptest::prelude::*;
use proptest::sample::Index;

mod support {
    pub mod cases;
}
use support::cases::config;

// ------------------------------------------------------------------------------------------
// The model
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Scalar {
    Int(i64),
    /// Written exactly as the text (`0.5`, `2.0e-5`).
    Float(String),
    /// The value and whether YAML spells it `True`/`False`.
    Bool(bool, bool),
    /// A YAML plain scalar (a double-quoted string in TOML and JSON).
    Plain(String),
    Single(String),
    Double(String),
}

impl Scalar {
    fn value(&self) -> Value {
        match self {
            Scalar::Int(i) => Value::Int(*i),
            Scalar::Float(f) => Value::Float(f.parse().expect("generated float")),
            Scalar::Bool(b, _) => Value::Bool(*b),
            Scalar::Plain(s) | Scalar::Single(s) | Scalar::Double(s) => Value::Str(s.clone()),
        }
    }
}

#[derive(Debug, Clone)]
enum MValue {
    Scalar(Scalar),
    Map(MMap),
}

#[derive(Debug, Clone)]
struct MEntry {
    key: String,
    value: MValue,
    /// A comment at the end of the entry's (first) line.
    comment: Option<String>,
    /// A comment on its own line before the entry.
    line_comment: Option<String>,
}

#[derive(Debug, Clone)]
struct MMap {
    entries: Vec<MEntry>,
    /// Picks the rendering style (block/flow, table/inline/dotted, pretty/compact, ...).
    style: u8,
}

#[derive(Debug, Clone)]
struct Doc {
    root: MMap,
    crlf: bool,
    final_newline: bool,
    unit: usize,
    header: Option<String>,
}

// ------------------------------------------------------------------------------------------
// Strategies
// ------------------------------------------------------------------------------------------

const RESERVED: &[&str] = &["null", "true", "false", "yes", "no", "on", "off", "y", "n"];

fn key() -> impl Strategy<Value = String> {
    "[a-z_]{1,8}"
}

fn comment_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 #:'\",{}\\[\\]é/*-]{0,16}"
}

fn string_content() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _#:,'\"\\\\{}\\[\\]é./-]{0,12}"
}

fn plain_string() -> impl Strategy<Value = String> {
    "[a-zA-Z][a-z0-9_]{0,8}".prop_filter("YAML reserved word", |s| {
        !RESERVED.contains(&s.to_ascii_lowercase().as_str())
    })
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -1000i64..1000,
        2 => any::<i64>(),
        1 => Just(i64::MIN),
        1 => Just(i64::MAX),
    ]
}

fn float_text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        0u32..1000,
        prop_oneof![Just("0"), Just("5"), Just("25"), Just("125")],
        prop::option::of((
            prop_oneof![Just("e"), Just("E")],
            prop_oneof![Just(""), Just("-"), Just("+")],
            1u32..20,
        )),
    )
        .prop_map(|(neg, int, frac, exp)| {
            let exp = exp.map_or(String::new(), |(e, s, d)| format!("{e}{s}{d}"));
            format!("{}{int}.{frac}{exp}", if neg { "-" } else { "" })
        })
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        int().prop_map(Scalar::Int),
        float_text().prop_map(Scalar::Float),
        (any::<bool>(), any::<bool>()).prop_map(|(b, cap)| Scalar::Bool(b, cap)),
        plain_string().prop_map(Scalar::Plain),
        string_content().prop_map(Scalar::Single),
        string_content().prop_map(Scalar::Double),
    ]
}

/// A mapping with `min..=4` entries whose values nest at most `depth` more levels.
fn map_strategy(depth: u32, min: usize) -> BoxedStrategy<MMap> {
    let value = if depth == 0 {
        scalar().prop_map(MValue::Scalar).boxed()
    } else {
        prop_oneof![
            3 => scalar().prop_map(MValue::Scalar),
            1 => map_strategy(depth - 1, 0).prop_map(MValue::Map),
        ]
        .boxed()
    };
    let entry = (
        key(),
        value,
        prop::option::weighted(0.25, comment_text()),
        prop::option::weighted(0.15, comment_text()),
    )
        .prop_map(|(key, value, comment, line_comment)| MEntry {
            key,
            value,
            comment,
            line_comment,
        });
    (prop::collection::vec(entry, min..=4), any::<u8>())
        .prop_map(|(entries, style)| {
            let mut seen = Vec::new();
            let entries = entries
                .into_iter()
                .filter(|e| {
                    if seen.contains(&e.key) {
                        false
                    } else {
                        seen.push(e.key.clone());
                        true
                    }
                })
                .collect();
            MMap { entries, style }
        })
        .boxed()
}

/// Documents with 1-5 root keys and mappings nested up to 3 levels deep.
fn doc() -> impl Strategy<Value = Doc> {
    (
        map_strategy(2, 1),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(2usize), Just(4)],
        prop::option::weighted(0.3, comment_text()),
    )
        .prop_map(|(root, crlf, final_newline, unit, header)| Doc {
            root,
            crlf,
            final_newline,
            unit,
            header,
        })
}

fn new_string() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-zA-Z0-9 _#:,'\"\\\\{}\\[\\]é./-]{0,12}",
        2 => plain_string(),
        1 => "[a-z \t\n\\\\']{0,6}",
    ]
}

fn new_value() -> impl Strategy<Value = NewValue> {
    prop_oneof![
        int().prop_map(NewValue::Int),
        any::<bool>().prop_map(NewValue::Bool),
        new_string().prop_map(NewValue::Str),
    ]
}

fn expected(v: &NewValue) -> Value {
    match v {
        NewValue::Int(i) => Value::Int(*i),
        NewValue::Bool(b) => Value::Bool(*b),
        NewValue::Str(s) => Value::Str(s.clone()),
        NewValue::Raw(r) => panic!("not generated: {r}"),
    }
}

// ------------------------------------------------------------------------------------------
// Rendering
// ------------------------------------------------------------------------------------------

fn finish(lines: Vec<String>, doc: &Doc) -> String {
    let nl = if doc.crlf { "\r\n" } else { "\n" };
    let mut out = lines.join(nl);
    if doc.final_newline {
        out.push_str(nl);
    }
    out
}

fn double_quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

// --- YAML ---

fn yaml_scalar(s: &Scalar) -> String {
    match s {
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.clone(),
        Scalar::Bool(b, cap) => match (b, cap) {
            (true, true) => "True".into(),
            (false, true) => "False".into(),
            (b, false) => b.to_string(),
        },
        Scalar::Plain(s) => s.clone(),
        Scalar::Single(s) => format!("'{}'", s.replace('\'', "''")),
        Scalar::Double(s) => double_quoted(s),
    }
}

fn yaml_is_block(m: &MMap) -> bool {
    !m.entries.is_empty() && !m.style.is_multiple_of(4)
}

fn yaml_flow(m: &MMap) -> String {
    let items: Vec<String> = m
        .entries
        .iter()
        .map(|e| match &e.value {
            MValue::Scalar(s) => format!("{}: {}", e.key, yaml_scalar(s)),
            MValue::Map(c) => format!("{}: {}", e.key, yaml_flow(c)),
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn yaml_block(m: &MMap, indent: usize, unit: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    for e in &m.entries {
        if let Some(c) = &e.line_comment {
            out.push(format!("{pad}# {c}"));
        }
        let tc = e
            .comment
            .as_ref()
            .map_or(String::new(), |c| format!(" # {c}"));
        match &e.value {
            MValue::Scalar(s) => out.push(format!("{pad}{}: {}{tc}", e.key, yaml_scalar(s))),
            MValue::Map(c) if yaml_is_block(c) => {
                out.push(format!("{pad}{}:{tc}", e.key));
                yaml_block(c, indent + unit, unit, out);
            }
            MValue::Map(c) => out.push(format!("{pad}{}: {}{tc}", e.key, yaml_flow(c))),
        }
    }
}

fn render_yaml(doc: &Doc) -> String {
    let mut lines = Vec::new();
    if let Some(h) = &doc.header {
        lines.push(format!("# {h}"));
    }
    if doc.root.style & 1 == 1 {
        lines.push("---".into());
    }
    yaml_block(&doc.root, 0, doc.unit, &mut lines);
    finish(lines, doc)
}

// --- TOML ---

fn toml_scalar(s: &Scalar) -> String {
    match s {
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.clone(),
        Scalar::Bool(b, _) => b.to_string(),
        Scalar::Single(s) if !s.contains('\'') => format!("'{s}'"),
        Scalar::Plain(s) | Scalar::Single(s) | Scalar::Double(s) => double_quoted(s),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum TomlStyle {
    Table,
    Inline,
    Dotted,
}

/// How a child mapping is written; `ctx` is how its parent is written.
fn toml_style(m: &MMap, ctx: TomlStyle) -> TomlStyle {
    let style = match ctx {
        TomlStyle::Table => {
            [TomlStyle::Table, TomlStyle::Inline, TomlStyle::Dotted][m.style as usize % 3]
        }
        TomlStyle::Dotted => [TomlStyle::Dotted, TomlStyle::Inline][m.style as usize % 2],
        TomlStyle::Inline => TomlStyle::Inline,
    };
    if style == TomlStyle::Dotted && m.entries.is_empty() {
        TomlStyle::Inline
    } else {
        style
    }
}

fn toml_inline(m: &MMap) -> String {
    if m.entries.is_empty() {
        return "{}".into();
    }
    let items: Vec<String> = m
        .entries
        .iter()
        .map(|e| match &e.value {
            MValue::Scalar(s) => format!("{} = {}", e.key, toml_scalar(s)),
            MValue::Map(c) => format!("{} = {}", e.key, toml_inline(c)),
        })
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// The `key.sub = value` lines of a mapping written with dotted keys.
fn toml_dotted(prefix: &str, m: &MMap, out: &mut Vec<String>) {
    for e in &m.entries {
        if let Some(c) = &e.line_comment {
            out.push(format!("# {c}"));
        }
        let tc = e
            .comment
            .as_ref()
            .map_or(String::new(), |c| format!(" # {c}"));
        let k = format!("{prefix}.{}", e.key);
        match &e.value {
            MValue::Scalar(s) => out.push(format!("{k} = {}{tc}", toml_scalar(s))),
            MValue::Map(c) => match toml_style(c, TomlStyle::Dotted) {
                TomlStyle::Dotted => toml_dotted(&k, c, out),
                _ => out.push(format!("{k} = {}{tc}", toml_inline(c))),
            },
        }
    }
}

fn toml_table(m: &MMap, path: &[String], out: &mut Vec<String>) {
    let mut tables = Vec::new();
    for e in &m.entries {
        let tc = e
            .comment
            .as_ref()
            .map_or(String::new(), |c| format!(" # {c}"));
        match &e.value {
            MValue::Map(c) if toml_style(c, TomlStyle::Table) == TomlStyle::Table => {
                tables.push((e, c));
                continue;
            }
            _ => {}
        }
        if let Some(c) = &e.line_comment {
            out.push(format!("# {c}"));
        }
        match &e.value {
            MValue::Scalar(s) => out.push(format!("{} = {}{tc}", e.key, toml_scalar(s))),
            MValue::Map(c) => match toml_style(c, TomlStyle::Table) {
                TomlStyle::Dotted => toml_dotted(&e.key, c, out),
                _ => out.push(format!("{} = {}{tc}", e.key, toml_inline(c))),
            },
        }
    }
    for (e, c) in tables {
        let mut p = path.to_vec();
        p.push(e.key.clone());
        if m.style & 2 == 0 {
            out.push(String::new());
        }
        if let Some(c) = &e.line_comment {
            out.push(format!("# {c}"));
        }
        let tc = e
            .comment
            .as_ref()
            .map_or(String::new(), |c| format!(" # {c}"));
        out.push(format!("[{}]{tc}", p.join(".")));
        toml_table(c, &p, out);
    }
}

fn render_toml(doc: &Doc) -> String {
    let mut lines = Vec::new();
    if let Some(h) = &doc.header {
        lines.push(format!("# {h}"));
    }
    toml_table(&doc.root, &[], &mut lines);
    finish(lines, doc)
}

// --- JSON ---

fn json_scalar(s: &Scalar, jsonc: bool) -> String {
    match s {
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.clone(),
        Scalar::Bool(b, _) => b.to_string(),
        Scalar::Single(s) if jsonc => {
            format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
        }
        Scalar::Plain(s) | Scalar::Single(s) | Scalar::Double(s) => double_quoted(s),
    }
}

fn json_compact(m: &MMap, jsonc: bool) -> String {
    let items: Vec<String> = m
        .entries
        .iter()
        .map(|e| {
            let v = match &e.value {
                MValue::Scalar(s) => json_scalar(s, jsonc),
                MValue::Map(c) => json_compact(c, jsonc),
            };
            format!("{}: {v}", double_quoted(&e.key))
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// Appends a pretty-printed object whose first line (`{`) is already started in `out`.
fn json_pretty(m: &MMap, indent: usize, unit: usize, jsonc: bool, out: &mut Vec<String>) {
    let pad = " ".repeat(indent + unit);
    let last_line = out.last_mut().expect("started");
    if m.entries.is_empty() {
        last_line.push_str("{}");
        return;
    }
    last_line.push('{');
    let trailing_comma = m.style & 8 != 0;
    for (i, e) in m.entries.iter().enumerate() {
        if jsonc {
            if let Some(c) = &e.line_comment {
                out.push(format!("{pad}// {c}"));
            }
        }
        out.push(format!("{pad}{}: ", double_quoted(&e.key)));
        match &e.value {
            MValue::Scalar(s) => out.last_mut().unwrap().push_str(&json_scalar(s, jsonc)),
            MValue::Map(c) if !c.style.is_multiple_of(3) => {
                json_pretty(c, indent + unit, unit, jsonc, out)
            }
            MValue::Map(c) => out.last_mut().unwrap().push_str(&json_compact(c, jsonc)),
        }
        let line = out.last_mut().unwrap();
        if i + 1 < m.entries.len() || trailing_comma {
            line.push(',');
        }
        if jsonc {
            if let Some(c) = &e.comment {
                line.push_str(&format!(" // {c}"));
            }
        }
    }
    out.push(format!("{}}}", " ".repeat(indent)));
}

fn render_json(doc: &Doc, jsonc: bool) -> String {
    let mut lines = Vec::new();
    if jsonc {
        if let Some(h) = &doc.header {
            lines.push(format!("// {h}"));
        }
    }
    if doc.root.style.is_multiple_of(3) {
        lines.push(json_compact(&doc.root, jsonc));
    } else {
        lines.push(String::new());
        json_pretty(&doc.root, 0, doc.unit, jsonc, &mut lines);
    }
    finish(lines, doc)
}

fn render(doc: &Doc, format: Format) -> String {
    match format {
        Format::Yaml => render_yaml(doc),
        Format::Toml => render_toml(doc),
        Format::Json => render_json(doc, false),
        Format::Jsonc => render_json(doc, true),
        // Code front-ends have their own property tests (tests/*_frontend.rs).
        other => unreachable!("{other:?} is not a data format these trees are written in"),
    }
}

// ------------------------------------------------------------------------------------------
// Comparing trees
// ------------------------------------------------------------------------------------------

/// A leaf of a flattened tree: a typed scalar or an empty mapping.
#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    Val(Value),
    EmptyMap,
}

type Flat = BTreeMap<Vec<String>, Leaf>;

fn model_flat(m: &MMap, path: &mut Vec<String>, out: &mut Flat) {
    if m.entries.is_empty() {
        out.insert(path.clone(), Leaf::EmptyMap);
    }
    for e in &m.entries {
        path.push(e.key.clone());
        match &e.value {
            MValue::Scalar(s) => {
                out.insert(path.clone(), Leaf::Val(s.value()));
            }
            MValue::Map(c) => model_flat(c, path, out),
        }
        path.pop();
    }
}

fn node_flat(n: &Node, path: &mut Vec<String>, out: &mut Flat) {
    match &n.kind {
        NodeKind::Map(m) => {
            if m.entries.is_empty() {
                out.insert(path.clone(), Leaf::EmptyMap);
            }
            for e in &m.entries {
                path.push(e.key.clone());
                node_flat(&e.value, path, out);
                path.pop();
            }
        }
        NodeKind::Seq(_) => panic!("no sequences are generated, found one at {path:?}"),
        NodeKind::Scalar(s) => {
            out.insert(path.clone(), Leaf::Val(s.value(Loader::Yaml12)));
        }
    }
}

fn flat(n: &Node) -> Flat {
    let mut out = Flat::new();
    node_flat(n, &mut Vec::new(), &mut out);
    out
}

/// A node without spans, in source order.
#[derive(Debug, Clone, PartialEq)]
enum Tree {
    Map(MapStyle, Vec<(String, Tree)>),
    Seq(Vec<Tree>),
    Val(Value),
}

fn strip(n: &Node) -> Tree {
    match &n.kind {
        NodeKind::Map(m) => Tree::Map(
            m.style,
            m.entries
                .iter()
                .map(|e| (e.key.clone(), strip(&e.value)))
                .collect(),
        ),
        NodeKind::Seq(items) => Tree::Seq(items.iter().map(strip).collect()),
        NodeKind::Scalar(s) => Tree::Val(s.value(Loader::Yaml12)),
    }
}

fn set_at(t: &mut Tree, path: &[String], v: Value) {
    match path.split_first() {
        None => *t = Tree::Val(v),
        Some((k, rest)) => match t {
            Tree::Map(_, entries) => {
                let (_, child) = entries
                    .iter_mut()
                    .find(|(ek, _)| ek == k)
                    .expect("path exists");
                set_at(child, rest, v);
            }
            _ => panic!("path goes through a non-mapping"),
        },
    }
}

fn scalars<'a>(n: &'a Node, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Node)>) {
    match &n.kind {
        NodeKind::Map(m) => {
            for e in &m.entries {
                path.push(e.key.clone());
                scalars(&e.value, path, out);
                path.pop();
            }
        }
        NodeKind::Seq(_) => {}
        NodeKind::Scalar(_) => out.push((path.clone(), n)),
    }
}

fn maps<'a>(n: &'a Node, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, &'a Node)>) {
    if let NodeKind::Map(m) = &n.kind {
        out.push((path.clone(), n));
        for e in &m.entries {
            path.push(e.key.clone());
            maps(&e.value, path, out);
            path.pop();
        }
    }
}

fn apply(text: &str, edit: &Edit) -> String {
    let fix = Fix {
        edits: vec![edit.clone()],
        applicability: Applicability::Safe,
        message: String::new(),
        sets: Vec::new(),
    };
    let (out, applied) = apply_fixes(text, [&fix]);
    assert_eq!(applied, 1, "the edit {edit:?} was not applied");
    out
}

/// Asserts that only `edit.range` changed between `before` and `after`.
fn assert_only_edit_changed(before: &str, after: &str, edit: &Edit) -> Result<(), TestCaseError> {
    let r = &edit.range;
    let tail = before.len() - r.end;
    prop_assert_eq!(after.len(), before.len() - r.len() + edit.content.len());
    prop_assert_eq!(&after[..r.start], &before[..r.start], "prefix changed");
    prop_assert_eq!(
        &after[after.len() - tail..],
        &before[r.end..],
        "suffix changed"
    );
    prop_assert_eq!(
        &after[r.start..r.start + edit.content.len()],
        edit.content.as_str()
    );
    Ok(())
}

/// Parses the rendered document and checks it against the model.
fn parse_model(doc: &Doc, format: Format) -> Result<(String, Node), TestCaseError> {
    let text = render(doc, format);
    let parsed = match parse(&text, format) {
        Ok(d) => d,
        Err(e) => return Err(TestCaseError::fail(format!("{e:?} in\n{text}"))),
    };
    prop_assert_eq!(parsed.roots.len(), 1, "one root in\n{}", text);
    prop_assert!(parsed.duplicates.is_empty(), "no duplicates in\n{}", text);
    let root = parsed.roots.into_iter().next().unwrap();
    let mut want = Flat::new();
    model_flat(&doc.root, &mut Vec::new(), &mut want);
    prop_assert_eq!(
        flat(&root),
        want,
        "parsed tree differs from the model in\n{}",
        text
    );
    Ok((text, root))
}

// ------------------------------------------------------------------------------------------
// Properties
// ------------------------------------------------------------------------------------------

fn check_replace(
    doc: &Doc,
    format: Format,
    pick: Index,
    value: &NewValue,
) -> Result<(), TestCaseError> {
    let (text, root) = parse_model(doc, format)?;
    let mut all = Vec::new();
    scalars(&root, &mut Vec::new(), &mut all);
    prop_assume!(!all.is_empty(), "no scalar to replace");
    let (path, node) = &all[pick.index(all.len())];
    let edit = replace_scalar(&text, format, node, value);
    let edit = match edit {
        Some(e) => e,
        None => {
            return Err(TestCaseError::fail(format!(
                "replace_scalar refused {path:?} in\n{text}"
            )))
        }
    };
    prop_assert_eq!(&edit.range, &node.span, "the edit replaces the token");
    let out = apply(&text, &edit);
    assert_only_edit_changed(&text, &out, &edit)?;
    let reparsed = match parse(&out, format) {
        Ok(d) => d,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "{e:?} after setting {path:?} to {value:?} in\n{text}\n---- became ----\n{out}"
            )))
        }
    };
    prop_assert_eq!(reparsed.roots.len(), 1);
    let mut want = strip(&root);
    set_at(&mut want, path, expected(value));
    prop_assert_eq!(
        strip(&reparsed.roots[0]),
        want,
        "after setting {:?} to {:?} in\n{}\n---- became ----\n{}",
        path,
        value,
        text,
        out
    );
    Ok(())
}

fn check_insert(
    doc: &Doc,
    format: Format,
    pick: Index,
    new_path: &[String],
    value: &NewValue,
) -> Result<(), TestCaseError> {
    let (text, root) = parse_model(doc, format)?;
    let mut all = Vec::new();
    maps(&root, &mut Vec::new(), &mut all);
    let (map_path, node) = &all[pick.index(all.len())];
    let m = node.as_map().unwrap();
    // Make the first segment a key the mapping does not have yet.
    let mut new_path = new_path.to_vec();
    while m.contains(&new_path[0]) {
        new_path[0].push('q');
    }
    let segs: Vec<&str> = new_path.iter().map(String::as_str).collect();
    let edit = insert_key(&text, format, node, &segs, value);
    let must = match format {
        Format::Yaml => !m.entries.is_empty(),
        Format::Toml => m.style != MapStyle::Implicit,
        Format::Json | Format::Jsonc => true,
        Format::Python | Format::Rust | Format::Shell => false,
    };
    let edit = match edit {
        Some(e) => e,
        None if must => {
            return Err(TestCaseError::fail(format!(
                "insert_key refused {map_path:?} ({:?}) in\n{text}",
                m.style
            )))
        }
        None => return Ok(()),
    };
    prop_assert!(edit.range.is_empty(), "an insertion replaces nothing");
    let out = apply(&text, &edit);
    assert_only_edit_changed(&text, &out, &edit)?;
    let reparsed = match parse(&out, format) {
        Ok(d) => d,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "{e:?} after inserting {new_path:?} = {value:?} into {map_path:?} of\n{text}\n---- became ----\n{out}"
            )))
        }
    };
    prop_assert_eq!(reparsed.roots.len(), 1);
    prop_assert!(reparsed.duplicates.is_empty(), "duplicate key in\n{}", out);
    let mut want = flat(&root);
    if m.entries.is_empty() {
        want.remove(map_path);
    }
    let mut full = map_path.clone();
    full.extend(new_path.iter().cloned());
    want.insert(full, Leaf::Val(expected(value)));
    prop_assert_eq!(
        flat(&reparsed.roots[0]),
        want,
        "after inserting {:?} = {:?} into {:?} of\n{}\n---- became ----\n{}",
        new_path,
        value,
        map_path,
        text,
        out
    );
    Ok(())
}

fn new_path() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(key(), 1..=2)
}

fn all_parsers_survive(text: &str) {
    for format in [Format::Yaml, Format::Toml, Format::Json, Format::Jsonc] {
        let _ = parse(text, format);
    }
}

/// Text made mostly of the characters the four grammars care about.
fn syntax_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("{"),
            Just("}"),
            Just("["),
            Just("]"),
            Just(":"),
            Just(","),
            Just("'"),
            Just("\""),
            Just("#"),
            Just("//"),
            Just("/*"),
            Just("*/"),
            Just("\n"),
            Just("\r\n"),
            Just(" "),
            Just("  "),
            Just("\t"),
            Just("-"),
            Just("- "),
            Just("? "),
            Just("&a"),
            Just("*a"),
            Just("!!str"),
            Just("|"),
            Just(">"),
            Just("---"),
            Just("..."),
            Just("="),
            Just("[[x]]"),
            Just("a"),
            Just("b.c"),
            Just("1"),
            Just("1e5"),
            Just("0x1f"),
            Just("true"),
            Just("null"),
            Just("\\"),
            Just("\\u00"),
            Just("é"),
            Just("\u{feff}"),
            Just("\"\"\""),
            Just("'''"),
            Just("<<"),
            Just("%YAML 1.2"),
            Just("\0"),
        ],
        0..64,
    )
    .prop_map(|parts| parts.concat())
}

macro_rules! format_properties {
    ($name:ident, $format:expr) => {
        mod $name {
            use super::*;

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn replace_any_scalar(doc in doc(), pick in any::<Index>(), value in new_value()) {
                    check_replace(&doc, $format, pick, &value)?;
                }

                #[test]
                fn insert_into_any_mapping(
                    doc in doc(),
                    pick in any::<Index>(),
                    path in new_path(),
                    value in new_value(),
                ) {
                    check_insert(&doc, $format, pick, &path, &value)?;
                }
            }
        }
    };
}

format_properties!(yaml, Format::Yaml);
format_properties!(toml, Format::Toml);
format_properties!(json, Format::Json);
format_properties!(jsonc, Format::Jsonc);

proptest! {
    #![proptest_config(config())]

    #[test]
    fn parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        all_parsers_survive(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn parse_never_panics_on_syntax_soup(text in syntax_soup()) {
        all_parsers_survive(&text);
    }

    #[test]
    fn parse_never_panics_on_mangled_documents(
        doc in doc(),
        format in prop_oneof![Just(Format::Yaml), Just(Format::Toml), Just(Format::Json), Just(Format::Jsonc)],
        cut in any::<Index>(),
        junk in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        // A valid document with a few random bytes spliced in somewhere.
        let mut bytes = render(&doc, format).into_bytes();
        let at = cut.index(bytes.len() + 1);
        bytes.splice(at..at, junk);
        all_parsers_survive(&String::from_utf8_lossy(&bytes));
    }
}

// ------------------------------------------------------------------------------------------
// Lists: documents whose values include sequences (of scalars and of mappings)
// ------------------------------------------------------------------------------------------

/// A value of a list document: a scalar, a list of scalars, a list of flat mappings, or a flat
/// mapping. Each list is non-empty; `flow` picks the inline spelling where the format has two
/// (YAML `[a, b]` / block `- a`, TOML `[{..}]` / `[[table]]`, JSON compact / pretty).
#[derive(Debug, Clone)]
enum LValue {
    Scalar(Scalar),
    Scalars {
        items: Vec<Scalar>,
        flow: bool,
    },
    Maps {
        items: Vec<Vec<(String, Scalar)>>,
        flow: bool,
    },
    Map(Vec<(String, Scalar)>),
}

#[derive(Debug, Clone)]
struct ListDoc {
    /// The first entry is always a list.
    entries: Vec<(String, LValue)>,
    crlf: bool,
}

fn unique_keys<T>(v: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut seen = Vec::new();
    v.into_iter()
        .filter(|(k, _)| {
            let new = !seen.contains(k);
            seen.push(k.clone());
            new
        })
        .collect()
}

fn flat_map() -> impl Strategy<Value = Vec<(String, Scalar)>> {
    prop::collection::vec((key(), scalar()), 1..=3).prop_map(unique_keys)
}

fn list_value() -> impl Strategy<Value = LValue> {
    prop_oneof![
        (prop::collection::vec(scalar(), 1..=4), any::<bool>())
            .prop_map(|(items, flow)| LValue::Scalars { items, flow }),
        (prop::collection::vec(flat_map(), 1..=3), any::<bool>())
            .prop_map(|(items, flow)| LValue::Maps { items, flow }),
    ]
}

fn list_doc() -> impl Strategy<Value = ListDoc> {
    let value = prop_oneof![
        2 => scalar().prop_map(LValue::Scalar),
        3 => list_value(),
        1 => flat_map().prop_map(LValue::Map),
    ];
    (
        key(),
        list_value(),
        prop::collection::vec((key(), value), 0..=4),
        any::<bool>(),
    )
        .prop_map(|(k, first, rest, crlf)| {
            let mut entries = vec![(k, first)];
            entries.extend(rest);
            ListDoc {
                entries: unique_keys(entries),
                crlf,
            }
        })
}

fn list_finish(lines: Vec<String>, doc: &ListDoc) -> String {
    let nl = if doc.crlf { "\r\n" } else { "\n" };
    let mut out = lines.join(nl);
    out.push_str(nl);
    out
}

fn render_list_yaml(doc: &ListDoc) -> String {
    let flow_map = |m: &[(String, Scalar)]| {
        let inner: Vec<String> = m
            .iter()
            .map(|(k, v)| format!("{k}: {}", yaml_scalar(v)))
            .collect();
        format!("{{{}}}", inner.join(", "))
    };
    let mut out = Vec::new();
    for (k, v) in &doc.entries {
        match v {
            LValue::Scalar(s) => out.push(format!("{k}: {}", yaml_scalar(s))),
            LValue::Map(m) => {
                out.push(format!("{k}:"));
                for (ck, cv) in m {
                    out.push(format!("  {ck}: {}", yaml_scalar(cv)));
                }
            }
            LValue::Scalars { items, flow: true } => {
                let inner: Vec<String> = items.iter().map(yaml_scalar).collect();
                out.push(format!("{k}: [{}]", inner.join(", ")));
            }
            LValue::Scalars { items, flow: false } => {
                out.push(format!("{k}:"));
                for s in items {
                    out.push(format!("  - {}", yaml_scalar(s)));
                }
            }
            LValue::Maps { items, flow: true } => {
                let inner: Vec<String> = items.iter().map(|m| flow_map(m)).collect();
                out.push(format!("{k}: [{}]", inner.join(", ")));
            }
            LValue::Maps { items, flow: false } => {
                out.push(format!("{k}:"));
                for m in items {
                    for (i, (ck, cv)) in m.iter().enumerate() {
                        let lead = if i == 0 { "  - " } else { "    " };
                        out.push(format!("{lead}{ck}: {}", yaml_scalar(cv)));
                    }
                }
            }
        }
    }
    list_finish(out, doc)
}

/// TOML: root scalars and inline arrays first, then `[table]`s and `[[array of tables]]`
/// (a key after a table header would belong to the table).
fn render_list_toml(doc: &ListDoc) -> String {
    let inline_table = |m: &[(String, Scalar)]| {
        let inner: Vec<String> = m
            .iter()
            .map(|(k, v)| format!("{k} = {}", toml_scalar(v)))
            .collect();
        format!("{{ {} }}", inner.join(", "))
    };
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    for (k, v) in &doc.entries {
        match v {
            LValue::Scalar(s) => head.push(format!("{k} = {}", toml_scalar(s))),
            LValue::Scalars { items, flow } => {
                let inner: Vec<String> = items.iter().map(toml_scalar).collect();
                if *flow {
                    head.push(format!("{k} = [{}]", inner.join(", ")));
                } else {
                    head.push(format!("{k} = ["));
                    for i in inner {
                        head.push(format!("  {i},"));
                    }
                    head.push("]".into());
                }
            }
            LValue::Maps { items, flow: true } => {
                let inner: Vec<String> = items.iter().map(|m| inline_table(m)).collect();
                head.push(format!("{k} = [{}]", inner.join(", ")));
            }
            LValue::Maps { items, flow: false } => {
                for m in items {
                    tail.push(String::new());
                    tail.push(format!("[[{k}]]"));
                    for (ck, cv) in m {
                        tail.push(format!("{ck} = {}", toml_scalar(cv)));
                    }
                }
            }
            LValue::Map(m) => {
                tail.push(String::new());
                tail.push(format!("[{k}]"));
                for (ck, cv) in m {
                    tail.push(format!("{ck} = {}", toml_scalar(cv)));
                }
            }
        }
    }
    head.extend(tail);
    list_finish(head, doc)
}

fn render_list_json(doc: &ListDoc, jsonc: bool) -> String {
    let obj = |m: &[(String, Scalar)]| {
        let inner: Vec<String> = m
            .iter()
            .map(|(k, v)| format!("\"{k}\": {}", json_scalar(v, jsonc)))
            .collect();
        format!("{{{}}}", inner.join(", "))
    };
    let mut out = vec!["{".to_string()];
    let n = doc.entries.len();
    for (i, (k, v)) in doc.entries.iter().enumerate() {
        let comma = if i + 1 < n { "," } else { "" };
        match v {
            LValue::Scalar(s) => out.push(format!("  \"{k}\": {}{comma}", json_scalar(s, jsonc))),
            LValue::Map(m) => out.push(format!("  \"{k}\": {}{comma}", obj(m))),
            LValue::Scalars { items, flow } => {
                let inner: Vec<String> = items.iter().map(|s| json_scalar(s, jsonc)).collect();
                if *flow {
                    out.push(format!("  \"{k}\": [{}]{comma}", inner.join(", ")));
                } else {
                    out.push(format!("  \"{k}\": ["));
                    out.push(format!("    {}", inner.join(",\n    ")));
                    out.push(format!("  ]{comma}"));
                }
            }
            LValue::Maps { items, flow } => {
                let inner: Vec<String> = items.iter().map(|m| obj(m)).collect();
                if *flow {
                    out.push(format!("  \"{k}\": [{}]{comma}", inner.join(", ")));
                } else {
                    out.push(format!("  \"{k}\": ["));
                    out.push(format!("    {}", inner.join(",\n    ")));
                    out.push(format!("  ]{comma}"));
                }
            }
        }
    }
    out.push("}".into());
    // The pretty arrays put items on lines of their own; keep one line ending throughout.
    let text = list_finish(out, doc);
    if doc.crlf {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text
    }
}

fn render_list(doc: &ListDoc, format: Format) -> String {
    match format {
        Format::Yaml => render_list_yaml(doc),
        Format::Toml => render_list_toml(doc),
        Format::Json => render_list_json(doc, false),
        Format::Jsonc => render_list_json(doc, true),
        other => unreachable!("{other:?} is not a data format these lists are written in"),
    }
}

/// A path segment for a list item.
fn idx(i: usize) -> String {
    format!("[{i}]")
}

fn list_model_flat(doc: &ListDoc) -> BTreeMap<Vec<String>, Value> {
    let mut out = BTreeMap::new();
    for (k, v) in &doc.entries {
        let p = |rest: &[String]| {
            let mut p = vec![k.clone()];
            p.extend_from_slice(rest);
            p
        };
        match v {
            LValue::Scalar(s) => {
                out.insert(p(&[]), s.value());
            }
            LValue::Map(m) => {
                for (ck, cv) in m {
                    out.insert(p(std::slice::from_ref(ck)), cv.value());
                }
            }
            LValue::Scalars { items, .. } => {
                for (i, s) in items.iter().enumerate() {
                    out.insert(p(&[idx(i)]), s.value());
                }
            }
            LValue::Maps { items, .. } => {
                for (i, m) in items.iter().enumerate() {
                    for (ck, cv) in m {
                        out.insert(p(&[idx(i), ck.clone()]), cv.value());
                    }
                }
            }
        }
    }
    out
}

/// Every scalar of a parsed tree with its path (`[i]` for a list item).
fn scalars_with_lists<'a>(
    n: &'a Node,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a Node)>,
) {
    match &n.kind {
        NodeKind::Map(m) => {
            for e in &m.entries {
                path.push(e.key.clone());
                scalars_with_lists(&e.value, path, out);
                path.pop();
            }
        }
        NodeKind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(idx(i));
                scalars_with_lists(item, path, out);
                path.pop();
            }
        }
        NodeKind::Scalar(_) => out.push((path.clone(), n)),
    }
}

fn parsed_flat(root: &Node) -> BTreeMap<Vec<String>, Value> {
    let mut all = Vec::new();
    scalars_with_lists(root, &mut Vec::new(), &mut all);
    all.into_iter()
        .map(|(p, n)| match &n.kind {
            NodeKind::Scalar(s) => (p, s.value(Loader::Yaml12)),
            _ => unreachable!(),
        })
        .collect()
}

/// `parse` reads the list document back exactly; replacing a scalar inside a list (picked
/// among the list items' scalars) changes only the edit's bytes and re-parses to the model
/// with that one value changed, lists and all.
fn check_list_replace(
    doc: &ListDoc,
    format: Format,
    pick: Index,
    value: &NewValue,
) -> Result<(), TestCaseError> {
    let text = render_list(doc, format);
    let parsed =
        parse(&text, format).map_err(|e| TestCaseError::fail(format!("{e:?} in\n{text}")))?;
    prop_assert_eq!(parsed.roots.len(), 1, "one root in\n{}", text);
    let root = &parsed.roots[0];
    let want = list_model_flat(doc);
    prop_assert_eq!(
        &parsed_flat(root),
        &want,
        "parsed tree differs from the model in\n{}",
        text
    );
    let mut all = Vec::new();
    scalars_with_lists(root, &mut Vec::new(), &mut all);
    let in_lists: Vec<_> = all
        .iter()
        .filter(|(p, _)| p.iter().any(|s| s.starts_with('[')))
        .collect();
    // The first entry is a non-empty list: there is always one.
    prop_assert!(!in_lists.is_empty(), "no scalar inside a list in\n{}", text);
    let (path, node) = in_lists[pick.index(in_lists.len())];
    let Some(edit) = replace_scalar(&text, format, node, value) else {
        return Err(TestCaseError::fail(format!(
            "replace_scalar refused {path:?} in\n{text}"
        )));
    };
    prop_assert_eq!(&edit.range, &node.span, "the edit replaces the token");
    let out = apply(&text, &edit);
    assert_only_edit_changed(&text, &out, &edit)?;
    let reparsed = parse(&out, format).map_err(|e| {
        TestCaseError::fail(format!(
            "{e:?} after setting {path:?} to {value:?} in\n{text}\n---- became ----\n{out}"
        ))
    })?;
    let mut want = want;
    want.insert(path.clone(), expected(value));
    prop_assert_eq!(
        parsed_flat(&reparsed.roots[0]),
        want,
        "after setting {:?} to {:?} in\n{}\n---- became ----\n{}",
        path,
        value,
        text,
        out
    );
    // The list keeps its length and every other item: the flattened comparison above covers
    // values; the shape (same number of items under the same keys) is what `strip` compares.
    let mut shape_before = strip(root);
    let mut shape_after = strip(&reparsed.roots[0]);
    blank_values(&mut shape_before);
    blank_values(&mut shape_after);
    prop_assert_eq!(
        shape_before,
        shape_after,
        "the tree's shape changed in\n{}",
        out
    );
    Ok(())
}

/// The tree with every scalar replaced by the same value: its shape.
fn blank_values(t: &mut Tree) {
    match t {
        Tree::Map(_, entries) => entries.iter_mut().for_each(|(_, c)| blank_values(c)),
        Tree::Seq(items) => items.iter_mut().for_each(blank_values),
        Tree::Val(v) => *v = Value::Int(0),
    }
}

macro_rules! list_properties {
    ($name:ident, $format:expr) => {
        mod $name {
            use super::*;

            proptest! {
                #![proptest_config(config())]

                #[test]
                fn replace_a_scalar_inside_a_list(
                    doc in list_doc(),
                    pick in any::<Index>(),
                    value in new_value(),
                ) {
                    check_list_replace(&doc, $format, pick, &value)?;
                }
            }
        }
    };
}

list_properties!(yaml_lists, Format::Yaml);
list_properties!(toml_lists, Format::Toml);
list_properties!(json_lists, Format::Json);
list_properties!(jsonc_lists, Format::Jsonc);
