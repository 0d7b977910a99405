//! TOML front-end: toml_edit's span-keeping `Document` mapped onto the span tree.

use toml_edit::{Item, Table, Value as TValue};

use super::{
    Document, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError, Quote, Scalar, ScalarKind,
    Span, MAX_DEPTH,
};

pub fn parse(text: &str) -> Result<Document, ParseError> {
    // toml_edit builds (and drops) one nested table per dotted part recursively: a header with
    // 100k parts would exhaust the stack before any limit of its own applies.
    if let Some(at) = too_deep_at(text) {
        return Err(ParseError::too_deep(at));
    }
    let doc = toml_edit::Document::parse(text).map_err(|e| ParseError {
        message: e.message().trim().to_string(),
        span: e.span().unwrap_or(0..0),
    })?;
    let root = table_node(text, doc.as_table(), Some(0..text.len()));
    Ok(Document {
        format: Format::Toml,
        roots: vec![root],
        duplicates: Vec::new(),
    })
}

/// Where the nesting first passes [`MAX_DEPTH`]: the parts of the current table header, plus
/// the dotted parts of a key, plus the arrays and inline tables open around a value. Strings
/// (all four kinds) and comments are skipped, so brackets and dots inside them do not count.
fn too_deep_at(text: &str) -> Option<usize> {
    #[derive(PartialEq)]
    enum Mode {
        LineStart,
        Header,
        Key,
        Value,
    }
    let b = text.as_bytes();
    let mut mode = Mode::LineStart;
    let (mut table, mut key, mut open) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' | b'\'' => {
                let triple = b.get(i..i + 3).is_some_and(|t| t.iter().all(|&x| x == c));
                let close = if triple { &b[i..i + 3] } else { &b[i..=i] };
                i += close.len();
                while i < b.len() && !b[i..].starts_with(close) && (triple || b[i] != b'\n') {
                    i += if c == b'"' && b[i] == b'\\' { 2 } else { 1 };
                }
                i += close.len();
                if mode == Mode::LineStart {
                    (mode, key) = (Mode::Key, 1);
                }
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\n' if open == 0 => (mode, key) = (Mode::LineStart, 0),
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'[' if mode == Mode::LineStart => {
                // `[[a.b]]` adds the array level to the header's parts.
                let array = b.get(i + 1) == Some(&b'[');
                (mode, table) = (Mode::Header, 1 + usize::from(array));
                i += 1 + usize::from(array);
                continue;
            }
            _ if mode == Mode::LineStart => (mode, key) = (Mode::Key, 1),
            b'.' if mode == Mode::Header => table += 1,
            b'.' if mode == Mode::Key => key += 1,
            b']' if mode == Mode::Header => mode = Mode::Value,
            b'=' if mode == Mode::Key => mode = Mode::Value,
            b'[' | b'{' if mode == Mode::Value => open += 1,
            b']' | b'}' if mode == Mode::Value => open = open.saturating_sub(1),
            _ => {}
        }
        if table + key + open > MAX_DEPTH {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn table_node(text: &str, table: &Table, span: Option<Span>) -> Node {
    let mut entries = Vec::new();
    for (k, item) in table.iter() {
        let key_span = table.key(k).and_then(|key| key.span()).unwrap_or(0..0);
        let Some(value) = item_node(text, item) else {
            continue;
        };
        entries.push(Entry {
            key: k.to_string(),
            key_span,
            value,
        });
    }
    let style = if table.is_dotted() || (table.is_implicit() && table.span().is_none()) {
        MapStyle::Implicit
    } else {
        MapStyle::Block
    };
    let span = span.or_else(|| table.span()).unwrap_or_else(|| {
        // An implicit table has no header: it spans its children.
        let start = entries.iter().map(|e| e.key_span.start).min().unwrap_or(0);
        let end = entries
            .iter()
            .map(|e| e.value.span.end)
            .max()
            .unwrap_or(start);
        start..end
    });
    Node {
        span,
        kind: NodeKind::Map(Map::new(entries, style)),
        tag: None,
        shared: false,
    }
}

fn item_node(text: &str, item: &Item) -> Option<Node> {
    match item {
        Item::None => None,
        Item::Value(v) => Some(value_node(text, v)),
        Item::Table(t) => Some(table_node(text, t, None)),
        Item::ArrayOfTables(aot) => {
            let items: Vec<Node> = aot.iter().map(|t| table_node(text, t, None)).collect();
            let span = aot.span().unwrap_or_else(|| {
                items.first().map_or(0..0, |f| {
                    f.span.start..items.last().map_or(f.span.end, |l| l.span.end)
                })
            });
            Some(Node {
                span,
                kind: NodeKind::Seq(items),
                tag: None,
                shared: false,
            })
        }
    }
}

fn value_node(text: &str, v: &TValue) -> Node {
    let span = v.span().unwrap_or(0..0);
    let kind = match v {
        TValue::String(s) => {
            let raw = text.get(span.clone()).unwrap_or("");
            let quote = if raw.starts_with("\"\"\"") || raw.starts_with("'''") {
                Quote::Block
            } else if raw.starts_with('\'') {
                Quote::Single
            } else {
                Quote::Double
            };
            NodeKind::Scalar(Scalar {
                text: s.value().clone(),
                kind: ScalarKind::Str(quote),
            })
        }
        TValue::Integer(i) => NodeKind::Scalar(Scalar {
            text: i.value().to_string(),
            kind: ScalarKind::Int(*i.value()),
        }),
        TValue::Float(f) => NodeKind::Scalar(Scalar {
            text: text.get(span.clone()).unwrap_or("").to_string(),
            kind: ScalarKind::Float(*f.value()),
        }),
        TValue::Boolean(b) => NodeKind::Scalar(Scalar {
            text: b.value().to_string(),
            kind: ScalarKind::Bool(*b.value()),
        }),
        TValue::Datetime(d) => NodeKind::Scalar(Scalar {
            text: d.value().to_string(),
            kind: ScalarKind::Other,
        }),
        TValue::Array(a) => NodeKind::Seq(a.iter().map(|x| value_node(text, x)).collect()),
        TValue::InlineTable(t) => {
            let mut entries = Vec::new();
            for (k, val) in t.iter() {
                entries.push(Entry {
                    key: k.to_string(),
                    key_span: t.key(k).and_then(|key| key.span()).unwrap_or(0..0),
                    value: value_node(text, val),
                });
            }
            let style = if t.is_dotted() {
                MapStyle::Implicit
            } else {
                MapStyle::Flow
            };
            NodeKind::Map(Map::new(entries, style))
        }
    };
    Node {
        span,
        kind,
        tag: None,
        shared: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_dotted_keys_inline_tables_and_arrays_of_tables() {
        let t = "# é\n[training]\nsteps = 100 # c\nlr = 1e-4\ndl.num_workers = 2\n[model]\nx = { a = 'q' }\n[[runs]]\nn = 1\n[[runs]]\nn = 2\n";
        let d = parse(t).unwrap();
        let r = &d.roots[0];
        let steps = r.get_entry_path(&["training", "steps"]).unwrap();
        assert_eq!(&t[steps.key_span.clone()], "steps");
        assert_eq!(&t[steps.value.span.clone()], "100");
        let nw = r.get_path(&["training", "dl", "num_workers"]).unwrap();
        assert_eq!(&t[nw.span.clone()], "2");
        let a = r.get_path(&["model", "x", "a"]).unwrap();
        assert_eq!(&t[a.span.clone()], "'q'");
        assert_eq!(a.as_scalar().unwrap().kind, ScalarKind::Str(Quote::Single));
        match &r.get_path(&["runs"]).unwrap().kind {
            NodeKind::Seq(items) => assert_eq!(items.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_toml_edit_recurses() {
        let header = format!("[{}]\nx = 1\n", vec!["a"; 100_000].join("."));
        let dotted = format!("{} = 1\n", vec!["a"; 100_000].join("."));
        let arrays = format!("a = {}", "[".repeat(100_000));
        let inline = format!("a = {}", "{b = ".repeat(100_000));
        for t in [header, dotted, arrays, inline] {
            let e = parse(&t).unwrap_err();
            assert!(e.message.contains("nested too deeply"), "{}", e.message);
        }
        // Dots and brackets in strings, comments and numbers are not nesting.
        let t = format!(
            "[a.\"{d}\"]\nx = '{d}'\ny = \"\"\"\n[{b}\n\"\"\"\n# {b}\nz = 1.5\nw = [[1], [2]]\n",
            d = ".".repeat(1000),
            b = "[".repeat(1000)
        );
        assert!(parse(&t).is_ok(), "{:?}", parse(&t).err());
    }

    #[test]
    fn errors_have_spans() {
        let e = parse("a = \n").unwrap_err();
        assert!(!e.message.is_empty());
    }
}
