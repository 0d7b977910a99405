//! JSON front-end (jsonc-parser). Plain `.json` is strict; comments and trailing commas are
//! accepted in both because real configs (VS Code style, DeepSpeed examples) carry them and
//! their loaders (json5, commentjson) accept them; only loose property names are refused.

use std::collections::HashMap;

use jsonc_parser::{ast, common::Ranged, CollectOptions, CommentCollectionStrategy, ParseOptions};

use super::{
    Document, DuplicateKey, Entry, Format, Map, MapStyle, Node, NodeKind, ParseError, Quote,
    Scalar, ScalarKind, MAX_DEPTH,
};

pub fn parse(text: &str, jsonc: bool) -> Result<Document, ParseError> {
    // The first byte-order mark was stripped on reading; Python's json refuses one more.
    if text.starts_with('\u{feff}') {
        return Err(ParseError {
            message: "a second byte-order mark (U+FEFF) opens the file; JSON loaders refuse it"
                .into(),
            span: 0..3,
        });
    }
    // jsonc-parser descends recursively: refuse deep input before it can exhaust the stack.
    if let Some(at) = too_deep_at(text) {
        return Err(ParseError::too_deep(at));
    }
    let options = ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: jsonc,
        allow_hexadecimal_numbers: jsonc,
        allow_unary_plus_numbers: jsonc,
        ..ParseOptions::default()
    };
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    let result = jsonc_parser::parse_to_ast(text, &collect, &options).map_err(|e| {
        let r = e.range();
        ParseError {
            message: e.kind().to_string(),
            span: r.start..r.end,
        }
    })?;
    let mut duplicates = Vec::new();
    let roots = result
        .value
        .map(|v| vec![node(&v, &mut duplicates)])
        .unwrap_or_default();
    Ok(Document {
        format: if jsonc { Format::Jsonc } else { Format::Json },
        roots,
        duplicates,
    })
}

/// The offset of the first `[` or `{` that opens a level past [`MAX_DEPTH`], outside strings and
/// comments.
fn too_deep_at(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

fn node(v: &ast::Value<'_>, duplicates: &mut Vec<DuplicateKey>) -> Node {
    let r = v.range();
    let kind = match v {
        ast::Value::StringLit(s) => NodeKind::Scalar(Scalar {
            text: s.value.to_string(),
            kind: ScalarKind::Str(Quote::Double),
        }),
        ast::Value::NumberLit(n) => {
            let kind = if let Ok(i) = n.value.parse::<i64>() {
                ScalarKind::Int(i)
            } else if let Ok(f) = n.value.parse::<f64>() {
                ScalarKind::Float(f)
            } else {
                ScalarKind::Other
            };
            NodeKind::Scalar(Scalar {
                text: n.value.to_string(),
                kind,
            })
        }
        ast::Value::BooleanLit(b) => NodeKind::Scalar(Scalar {
            text: b.value.to_string(),
            kind: ScalarKind::Bool(b.value),
        }),
        ast::Value::NullKeyword(_) => NodeKind::Scalar(Scalar {
            text: "null".into(),
            kind: ScalarKind::Null,
        }),
        ast::Value::Array(a) => {
            NodeKind::Seq(a.elements.iter().map(|e| node(e, duplicates)).collect())
        }
        ast::Value::Object(o) => {
            let mut entries: Vec<Entry> = Vec::with_capacity(o.properties.len());
            let mut first: HashMap<&str, usize> = HashMap::with_capacity(o.properties.len());
            for p in &o.properties {
                let kr = p.name.range();
                let key = p.name.as_str().to_string();
                match first.get(p.name.as_str()) {
                    Some(&prev) => duplicates.push(DuplicateKey {
                        key: key.clone(),
                        first: entries[prev].key_span.clone(),
                        second: kr.start..kr.end,
                    }),
                    None => {
                        first.insert(p.name.as_str(), entries.len());
                    }
                }
                entries.push(Entry {
                    key,
                    key_span: kr.start..kr.end,
                    value: node(&p.value, duplicates),
                });
            }
            NodeKind::Map(Map::new(entries, MapStyle::Flow))
        }
    };
    Node {
        span: r.start..r.end,
        kind,
        tag: None,
        shared: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_trailing_commas_and_duplicates() {
        let t = "// c\n{\"a\": {\"b\": 1,}, \"a\": 2, \"s\": \"x\" /* k */}";
        let d = parse(t, true).unwrap();
        assert_eq!(d.duplicates.len(), 1);
        let s = d.roots[0].get_path(&["s"]).unwrap();
        assert_eq!(&t[s.span.clone()], "\"x\"");
    }

    #[test]
    fn deep_nesting_is_refused_before_the_parser_recurses() {
        for open in ["[", "{\"a\":"] {
            let t = open.repeat(100_000);
            let e = parse(&t, true).unwrap_err();
            assert!(e.message.contains("nested too deeply"), "{}", e.message);
        }
        // Brackets inside strings and comments do not count.
        let t = format!(
            "{{\"a\": \"{}\" /* {} */}}",
            "[".repeat(1000),
            "{".repeat(1000)
        );
        assert!(parse(&t, true).is_ok());
    }

    #[test]
    fn every_duplicate_among_100k_keys_is_found() {
        // Found through a hash map; the time is `benches/scaling.rs`'s to check.
        let body: Vec<String> = (0..100_000)
            .map(|i| format!("\"k{i}\": 1, \"k{i}\": 2"))
            .collect();
        let d = parse(&format!("{{{}}}", body.join(",")), false).unwrap();
        assert_eq!(d.duplicates.len(), 100_000);
    }

    #[test]
    fn a_second_bom_is_named() {
        let e = parse("\u{feff}{}", false).unwrap_err();
        assert!(e.message.contains("byte-order mark"), "{}", e.message);
    }

    #[test]
    fn bare_words_are_errors() {
        let e = parse("{\"a\": BATCH_SIZE}", false).unwrap_err();
        assert!(e.span.start > 0);
    }
}
