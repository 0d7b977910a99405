//! Writers: turn "set this key to that value" into byte-range edits in the file's own style.
//!
//! Nothing is re-serialised: a replaced scalar keeps its quoting and trailing comment, an
//! inserted key takes the indentation, quoting and line ending of its neighbours.

use super::{line_end_after, line_start_of as line_start};
use super::{Format, MapStyle, Node, NodeKind, Quote, ScalarKind};
use crate::fix::Edit;

/// A value a fix writes.
#[derive(Debug, Clone, PartialEq)]
pub enum NewValue {
    Int(i64),
    Bool(bool),
    Str(String),
    /// A number written exactly as given (e.g. `2.0e-5`).
    Raw(String),
}

impl std::fmt::Display for NewValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NewValue::Int(i) => write!(f, "{i}"),
            NewValue::Bool(b) => write!(f, "{b}"),
            NewValue::Str(s) => write!(f, "{s}"),
            NewValue::Raw(s) => write!(f, "{s}"),
        }
    }
}

/// Replaces a scalar's token, keeping its quote style. `None` when the node must not be
/// edited in place (an anchor's copy, a block scalar, a custom-tagged scalar, a container).
pub fn replace_scalar(text: &str, format: Format, node: &Node, value: &NewValue) -> Option<Edit> {
    // A node of another file (a merged source's, whose spans lie past this text) is not
    // edited here.
    if node.shared || node.span.is_empty() || node.span.end > text.len() {
        return None;
    }
    match format {
        Format::Python => return super::python::replace_literal(text, node, value),
        Format::Rust => return super::rust::replace_literal(text, node, value),
        Format::Shell => return super::shell::replace_value(text, node, value),
        _ => {}
    }
    let NodeKind::Scalar(s) = &node.kind else {
        return None;
    };
    let raw = text.get(node.span.clone())?;
    let replacement = match (value, s.kind) {
        (_, ScalarKind::Str(Quote::Block) | ScalarKind::CustomTag) => return None,
        // The tag goes with the old value (`!!int "0"` -> `8`); a tag not right before the
        // value (`!!int &a "0"`) would stay and retype the new one, so that is left alone.
        (_, ScalarKind::Tagged(_)) if !raw.starts_with('!') => return None,
        (_, ScalarKind::Tagged(_)) => render(format, value),
        (NewValue::Str(v), ScalarKind::Str(Quote::Single)) if single_quote_safe(format, v) => {
            format!("'{v}'")
        }
        (NewValue::Bool(b), _) if format == Format::Yaml && raw.starts_with(['T', 'F']) => {
            if *b { "True" } else { "False" }.to_string()
        }
        (NewValue::Str(v), ScalarKind::Plain) if is_plain_safe(v) => v.clone(),
        _ => render(format, value),
    };
    Some(Edit::replace(node.span.clone(), replacement))
}

/// A string that reads back unchanged between single quotes: YAML folds line breaks there,
/// TOML literal strings cannot hold them, and JSON5-style single quotes still take escapes.
fn single_quote_safe(format: Format, v: &str) -> bool {
    let escapes = matches!(format, Format::Json | Format::Jsonc);
    !(v.contains('\'') || v.contains(char::is_control) || (escapes && v.contains('\\')))
}

/// Inserts `path` (relative to `map`) with `value` into the mapping `map`, creating the
/// missing intermediate mappings. `None` when the mapping has no place to write into.
pub fn insert_key(
    text: &str,
    format: Format,
    map: &Node,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    if map.shared || path.is_empty() {
        return None;
    }
    let NodeKind::Map(m) = &map.kind else {
        return None;
    };
    // The layout is read from the mapping's entries: one of another file (a merged source's)
    // says nothing of this one.
    let outside = |s: &super::Span| s.end > text.len();
    if outside(&map.span)
        || m.entries
            .iter()
            .any(|e| outside(&e.key_span) || outside(&e.value.span))
    {
        return None;
    }
    match format {
        Format::Yaml => insert_yaml(text, map, m, path, value),
        Format::Toml => insert_toml(text, map, m, path, value),
        Format::Json | Format::Jsonc => insert_json(text, map, m, path, value),
        Format::Python => super::python::insert_argument(text, map, m, path, value),
        Format::Rust => super::rust::insert_argument(text, map, m, path, value),
        Format::Shell => super::shell::insert_flag(text, map, m, path, value),
    }
}

fn newline(text: &str) -> &'static str {
    super::newline_style(text)
}

/// Renders a value in the format's canonical spelling.
pub fn render(format: Format, value: &NewValue) -> String {
    match value {
        NewValue::Int(i) => i.to_string(),
        NewValue::Bool(b) => b.to_string(),
        NewValue::Raw(r) => r.clone(),
        NewValue::Str(s) => match format {
            Format::Yaml if is_plain_safe(s) => s.clone(),
            _ => serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\"")),
        },
    }
}

/// A string that every YAML loader reads back as the same string when written unquoted.
fn is_plain_safe(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !matches!(
            crate::syntax::resolve_plain(s, crate::syntax::Loader::Yaml11),
            crate::syntax::Value::Bool(_) | crate::syntax::Value::Null
        )
        // YAML 1.1 loaders other than PyYAML (go-yaml, kubectl's) read these as booleans.
        && !matches!(s, "y" | "Y" | "n" | "N")
}

/// End of the last leaf under `node`, and whether that leaf is a block scalar (whose span
/// saphyr does not give exactly).
fn last_leaf(node: &Node) -> (usize, bool) {
    match &node.kind {
        NodeKind::Map(m) if m.style == MapStyle::Block => m
            .entries
            .iter()
            .rfind(|e| !e.value.shared)
            .map_or((node.span.end, false), |e| last_leaf(&e.value)),
        NodeKind::Seq(items) if !text_is_flow(node) => {
            items.last().map_or((node.span.end, false), last_leaf)
        }
        NodeKind::Scalar(s) => (node.span.end, s.kind == ScalarKind::Str(Quote::Block)),
        _ => (node.span.end, false),
    }
}

fn text_is_flow(node: &Node) -> bool {
    matches!(&node.kind, NodeKind::Map(m) if m.style == MapStyle::Flow)
}

fn yaml_nested(path: &[&str], value: &str, indent: &str, unit: &str, nl: &str) -> String {
    let mut out = String::new();
    let mut ind = indent.to_string();
    for (i, k) in path.iter().enumerate() {
        if i > 0 {
            out.push_str(nl);
            out.push_str(&ind);
        }
        if i + 1 == path.len() {
            out.push_str(&format!("{k}: {value}"));
        } else {
            out.push_str(&format!("{k}:"));
            ind.push_str(unit);
        }
    }
    out
}

fn insert_yaml(
    text: &str,
    map: &Node,
    m: &super::Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let rendered = render(Format::Yaml, value);
    let own: Vec<_> = m.entries.iter().filter(|e| !e.value.shared).collect();
    let first = own.first()?;
    if m.style == MapStyle::Flow {
        let flow = path
            .iter()
            .rev()
            .skip(1)
            .fold(format!("{}: {rendered}", path[path.len() - 1]), |acc, k| {
                format!("{k}: {{{acc}}}")
            });
        let last = own.last()?;
        return Some(Edit::insert(last.value.span.end, format!(", {flow}")));
    }
    let nl = newline(text);
    let ls = line_start(text, first.key_span.start);
    let prefix = &text[ls..first.key_span.start];
    let indent: String = prefix
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let unit = detect_unit(text, m).unwrap_or_else(|| "  ".to_string());
    let body = yaml_nested(path, &rendered, &indent, &unit, nl);
    let (end, block) = last_leaf(map);
    if !block {
        if let Some(mut at) = line_end_after(text, end) {
            // Comment lines indented under the last entry belong to its value: the new key
            // goes after them, so they stay where they were written.
            loop {
                let rest = &text[at..];
                let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
                let body_of_line = line.trim_start();
                let deeper = line.len() - body_of_line.len() > indent.len();
                if !(deeper && body_of_line.starts_with('#')) {
                    break;
                }
                match line_end_after(text, at) {
                    Some(next) => at = next,
                    None => return Some(Edit::insert(text.len(), format!("{nl}{indent}{body}"))),
                }
            }
            return Some(Edit::insert(at, format!("{indent}{body}{nl}")));
        }
        if text[end..].trim().is_empty() || !text[end..].contains(['\n', '\r']) {
            return Some(Edit::insert(text.len(), format!("{nl}{indent}{body}")));
        }
    }
    // Before the first key: always a well-defined spot, even after a block scalar.
    Some(Edit::insert(
        first.key_span.start,
        format!("{body}{nl}{indent}"),
    ))
}

/// The indentation step one level down, read from the first nested block mapping.
fn detect_unit(text: &str, m: &super::Map) -> Option<String> {
    for e in &m.entries {
        if let NodeKind::Map(child) = &e.value.kind {
            if child.style != MapStyle::Block || e.value.shared {
                continue;
            }
            let ck = child.entries.first()?;
            let outer = e.key_span.start - line_start(text, e.key_span.start);
            let inner = ck.key_span.start - line_start(text, ck.key_span.start);
            if inner > outer {
                return Some(" ".repeat(inner - outer));
            }
        }
    }
    None
}

fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_else(|_| format!("\"{k}\""))
    }
}

fn insert_toml(
    text: &str,
    map: &Node,
    m: &super::Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let rendered = render(Format::Toml, value);
    let nl = newline(text);
    let dotted = path
        .iter()
        .map(|k| toml_key(k))
        .collect::<Vec<_>>()
        .join(".");
    match m.style {
        MapStyle::Implicit | MapStyle::Call | MapStyle::Command => None,
        MapStyle::Flow => {
            let close = text[..map.span.end].rfind('}')?;
            let sep = if m.entries.is_empty() { " " } else { ", " };
            let at = m.entries.last().map_or(close, |e| e.value.span.end);
            Some(Edit::insert(at, format!("{sep}{dotted} = {rendered}")))
        }
        MapStyle::Block => {
            // The root spans the whole text; so does a `[table]` header that is the whole
            // file, but that table is empty, and the root of a file starting with `[` is not.
            let is_root = map.span.start == 0
                && map.span.end == text.len()
                && !(m.entries.is_empty() && text.starts_with('['));
            let values: Vec<_> = m
                .entries
                .iter()
                .filter(|e| !matches!(&e.value.kind, NodeKind::Map(c) if c.style != MapStyle::Flow))
                .filter(|e| !matches!(&e.value.kind, NodeKind::Seq(items) if items.iter().any(|i| matches!(&i.kind, NodeKind::Map(c) if c.style == MapStyle::Block))))
                .collect();
            if is_root && path.len() > 1 {
                // A new table at the end of the file.
                let (tail, last) = path.split_at(path.len() - 1);
                let header = tail
                    .iter()
                    .map(|k| toml_key(k))
                    .collect::<Vec<_>>()
                    .join(".");
                let lead = if text.ends_with('\n') || text.is_empty() {
                    nl.to_string()
                } else {
                    format!("{nl}{nl}")
                };
                return Some(Edit::insert(
                    text.len(),
                    format!("{lead}[{header}]{nl}{} = {rendered}{nl}", toml_key(last[0])),
                ));
            }
            let anchor_end = match values.iter().map(|e| e.value.span.end).max() {
                Some(end) => end,
                None if is_root => {
                    return Some(Edit::insert(0, format!("{dotted} = {rendered}{nl}")))
                }
                None => map.span.end,
            };
            match line_end_after(text, anchor_end) {
                Some(at) => Some(Edit::insert(at, format!("{dotted} = {rendered}{nl}"))),
                None => Some(Edit::insert(
                    text.len(),
                    format!("{nl}{dotted} = {rendered}"),
                )),
            }
        }
    }
}

fn insert_json(
    text: &str,
    map: &Node,
    m: &super::Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let rendered = render(Format::Json, value);
    let nested = path.iter().rev().skip(1).fold(
        format!("{}: {rendered}", render_key(path[path.len() - 1])),
        |acc, k| format!("{}: {{{acc}}}", render_key(k)),
    );
    let Some(last) = m.entries.last() else {
        return Some(Edit::insert(map.span.start + 1, nested));
    };
    let ls = line_start(text, last.key_span.start);
    let prefix = &text[ls..last.key_span.start];
    if prefix.chars().all(|c| c == ' ' || c == '\t') {
        let nl = newline(text);
        Some(Edit::insert(
            last.value.span.end,
            format!(",{nl}{prefix}{nested}"),
        ))
    } else {
        Some(Edit::insert(last.value.span.end, format!(", {nested}")))
    }
}

fn render_key(k: &str) -> String {
    serde_json::to_string(k).unwrap_or_else(|_| format!("\"{k}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn apply(text: &str, e: &Edit) -> String {
        let mut out = text.to_string();
        out.replace_range(e.range.clone(), &e.content);
        out
    }

    fn insert(text: &str, format: Format, parent: &[&str], path: &[&str], v: NewValue) -> String {
        let d = parse(text, format).unwrap();
        let map = d.roots[0].get_path(parent).unwrap();
        let e = insert_key(text, format, map, path, &v).unwrap();
        let out = apply(text, &e);
        parse(&out, format).expect("still parses");
        out
    }

    /// A comment indented under the last entry belongs to its value: a new key goes after it,
    /// at the end of a file without a final newline as before a following key (a property
    /// test found the key inserted between a list and its trailing comment).
    #[test]
    fn yaml_insert_goes_after_comments_indented_under_the_last_entry() {
        let t = "a: 1\nl:\n  - x: 1\n    y:\n      - 0\n      # - tuned for 8 GPUs";
        assert_eq!(
            insert(t, Format::Yaml, &[], &["n"], NewValue::Int(2)),
            "a: 1\nl:\n  - x: 1\n    y:\n      - 0\n      # - tuned for 8 GPUs\nn: 2"
        );
        let t = "l:\n  - 0\n  # under l\n# about b\nb: 1\n";
        assert_eq!(
            insert(t, Format::Yaml, &[], &["n"], NewValue::Int(2)),
            "l:\n  - 0\n  # under l\n# about b\nb: 1\nn: 2\n"
        );
        let t = "l:\n  - 0\n  # under l\n";
        assert_eq!(
            insert(t, Format::Yaml, &[], &["n"], NewValue::Int(2)),
            "l:\n  - 0\n  # under l\nn: 2\n"
        );
    }

    #[test]
    fn yaml_replace_keeps_quotes_and_comment() {
        let t = "a: 'x'  # c\nb: 0 # workers\n";
        let d = parse(t, Format::Yaml).unwrap();
        let e = replace_scalar(
            t,
            Format::Yaml,
            d.roots[0].get_path(&["b"]).unwrap(),
            &NewValue::Int(8),
        )
        .unwrap();
        assert_eq!(apply(t, &e), "a: 'x'  # c\nb: 8 # workers\n");
        let e = replace_scalar(
            t,
            Format::Yaml,
            d.roots[0].get_path(&["a"]).unwrap(),
            &NewValue::Str("y".into()),
        )
        .unwrap();
        assert_eq!(apply(t, &e), "a: 'y'  # c\nb: 0 # workers\n");
    }

    #[test]
    fn tagged_and_anchored_scalars_are_replaced_without_breaking_the_file() {
        let cases = [
            // The tag goes with the old value: `!!int 8` would do, `!!str 8` would not.
            (
                "a: !!int \"0\"  # c\n",
                NewValue::Int(8),
                Some("a: 8  # c\n"),
            ),
            (
                "a: !!str fp32\n",
                NewValue::Str("bf16".into()),
                Some("a: bf16\n"),
            ),
            (
                "a: !!bool 'true'\n",
                NewValue::Bool(false),
                Some("a: false\n"),
            ),
            // The anchor stays, so its aliases still resolve.
            (
                "a: &w 0\nb: *w\n",
                NewValue::Int(8),
                Some("a: &w 8\nb: *w\n"),
            ),
            (
                "a: &w !!int \"0\"\nb: *w\n",
                NewValue::Int(8),
                Some("a: &w 8\nb: *w\n"),
            ),
            // A tag behind the anchor would stay and retype the new value: no edit.
            ("a: !!str &w x\nb: *w\n", NewValue::Int(8), None),
            // What a custom tag's constructor makes of a value is not known.
            ("a: !ENV 0\n", NewValue::Int(8), None),
        ];
        for (t, v, want) in cases {
            let d = parse(t, Format::Yaml).unwrap();
            let node = d.roots[0].get_path(&["a"]).unwrap();
            let out = replace_scalar(t, Format::Yaml, node, &v).map(|e| apply(t, &e));
            assert_eq!(out.as_deref(), want, "{t:?}");
            if let Some(out) = out {
                parse(&out, Format::Yaml).expect("still parses");
            }
        }
    }

    #[test]
    fn single_quoted_strings_take_line_breaks_and_backslashes_safely() {
        let cases = [
            (Format::Yaml, "a: 'x'\n", "a\nb", "a: \"a\\nb\"\n"),
            (Format::Toml, "a = 'x'\n", "a\nb", "a = \"a\\nb\"\n"),
            (Format::Jsonc, "{\"a\": 'x'}", "a\\b", "{\"a\": \"a\\\\b\"}"),
            (Format::Yaml, "a: 'x'\n", "a\\b", "a: 'a\\b'\n"),
        ];
        for (format, t, v, want) in cases {
            let d = parse(t, format).unwrap();
            let node = d.roots[0].get_path(&["a"]).unwrap();
            let e = replace_scalar(t, format, node, &NewValue::Str(v.into())).unwrap();
            let out = apply(t, &e);
            assert_eq!(out, want);
            let back = parse(&out, format).unwrap();
            let s = back.roots[0].get_path(&["a"]).unwrap().as_scalar().unwrap();
            assert_eq!(s.text, v);
        }
    }

    #[test]
    fn yaml_insert_uses_neighbour_indentation() {
        let t = "top: 1\ndata:\n    batch_size: 8   # c\n    shuffle: true\nafter: 2\n";
        let out = insert(
            t,
            Format::Yaml,
            &["data"],
            &["num_workers"],
            NewValue::Int(4),
        );
        assert_eq!(out, "top: 1\ndata:\n    batch_size: 8   # c\n    shuffle: true\n    num_workers: 4\nafter: 2\n");
        let out = insert(t, Format::Yaml, &[], &["x", "y"], NewValue::Bool(true));
        assert_eq!(out, "top: 1\ndata:\n    batch_size: 8   # c\n    shuffle: true\nafter: 2\nx:\n    y: true\n");
    }

    #[test]
    fn yaml_insert_without_final_newline_and_crlf() {
        let out = insert("a: 1\r\nb: 2", Format::Yaml, &[], &["c"], NewValue::Int(3));
        assert_eq!(out, "a: 1\r\nb: 2\r\nc: 3");
        // Lone CR (old Mac) breaks: the key goes on its own line with the file's own break.
        let out = insert("a: 1\rb: 2\r", Format::Yaml, &[], &["c"], NewValue::Int(3));
        assert_eq!(out, "a: 1\rb: 2\rc: 3\r");
        let out = insert(
            "m:\r  a: 1\rz: 2\r",
            Format::Yaml,
            &["m"],
            &["c"],
            NewValue::Int(3),
        );
        assert_eq!(out, "m:\r  a: 1\r  c: 3\rz: 2\r");
    }

    #[test]
    fn yaml_insert_after_block_scalar_goes_before_first_key() {
        let t = "a: 1\nb: |\n  text\n";
        let out = insert(t, Format::Yaml, &[], &["c"], NewValue::Int(3));
        assert_eq!(out, "c: 3\na: 1\nb: |\n  text\n");
    }

    #[test]
    fn toml_insert_into_table_and_new_table() {
        let t = "[training]\nsteps = 10 # c\n\n[model]\nname = \"x\"\n";
        let out = insert(
            t,
            Format::Toml,
            &["training"],
            &["seq_len"],
            NewValue::Int(2048),
        );
        assert_eq!(
            out,
            "[training]\nsteps = 10 # c\nseq_len = 2048\n\n[model]\nname = \"x\"\n"
        );
        let out = insert(
            t,
            Format::Toml,
            &[],
            &["training", "dataloader", "num_workers"],
            NewValue::Int(4),
        );
        assert!(
            out.ends_with("[training.dataloader]\nnum_workers = 4\n"),
            "{out}"
        );
    }

    #[test]
    fn toml_insert_into_a_table_header_that_is_the_whole_file() {
        let out = insert("[a]", Format::Toml, &["a"], &["b"], NewValue::Int(0));
        assert_eq!(out, "[a]\nb = 0");
        let out = insert("[a]", Format::Toml, &[], &["b"], NewValue::Int(0));
        assert_eq!(out, "b = 0\n[a]");
    }

    #[test]
    fn json_insert_keeps_indent_and_trailing_comma() {
        let t = "{\n  \"a\": 1,\n  \"b\": {\"c\": 2}\n}\n";
        let out = insert(t, Format::Json, &[], &["d"], NewValue::Str("x".into()));
        assert_eq!(
            out,
            "{\n  \"a\": 1,\n  \"b\": {\"c\": 2},\n  \"d\": \"x\"\n}\n"
        );
        let out = insert("{}", Format::Json, &[], &["a", "b"], NewValue::Int(1));
        assert_eq!(out, "{\"a\": {\"b\": 1}}");
    }
}
