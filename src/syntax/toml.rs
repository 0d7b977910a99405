//! TOML front-end: toml_edit's span-keeping `Document` mapped onto the span tree.

use toml_edit::{Item, Table, Value as TValue};

use super::{
    Document, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError, Quote, Scalar, ScalarKind,
    Span,
};

pub fn parse(text: &str) -> Result<Document, ParseError> {
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
        kind: NodeKind::Map(Map { entries, style }),
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
            NodeKind::Map(Map { entries, style })
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
    fn errors_have_spans() {
        let e = parse("a = \n").unwrap_err();
        assert!(!e.message.is_empty());
    }
}
