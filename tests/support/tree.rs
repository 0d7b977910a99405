//! Reading code front-ends' trees in tests: an edit applied to a text, and a tree rendered one
//! node per line for snapshots.

// Each test crate that includes this uses part of it.
#![allow(dead_code)]

use hwlint::fix::Edit;
use hwlint::syntax::{LineIndex, Node, NodeKind, ScalarKind};

/// `text` with `e` applied.
pub fn apply(text: &str, e: &Edit) -> String {
    format!(
        "{}{}{}",
        &text[..e.range.start],
        e.content,
        &text[e.range.end..]
    )
}

/// One line per node: `path = source text (kind) @ lines`, maps and sequences with their
/// style, tag and lines, so that a snapshot shows what each key reads and where it points.
pub fn render(text: &str, idx: &LineIndex, path: &str, node: &Node, out: &mut Vec<String>) {
    let line = |at: usize| idx.position(text, at).0;
    let lines = format!("{}-{}", line(node.span.start), line(node.span.end));
    let mut flags = String::new();
    if let Some(t) = &node.tag {
        flags.push_str(&format!(" [{t}]"));
    }
    if node.shared {
        flags.push_str(" shared");
    }
    match &node.kind {
        NodeKind::Map(m) => {
            out.push(format!("{path} = {{{:?}}}{flags} @ {lines}", m.style));
            for e in &m.entries {
                let p = if path.is_empty() {
                    e.key.clone()
                } else {
                    format!("{path}.{}", e.key)
                };
                render(text, idx, &p, &e.value, out);
            }
        }
        NodeKind::Seq(items) => {
            out.push(format!("{path} = [{}]{flags} @ {lines}", items.len()));
            for (i, item) in items.iter().enumerate() {
                render(text, idx, &format!("{path}[{i}]"), item, out);
            }
        }
        NodeKind::Scalar(s) => {
            let kind = match s.kind {
                ScalarKind::Int(i) => format!("int {i}"),
                ScalarKind::Float(f) => format!("float {f}"),
                ScalarKind::Bool(b) => format!("bool {b}"),
                ScalarKind::Null => "null".to_string(),
                ScalarKind::Str(q) => format!("str {q:?} {:?}", s.text),
                ScalarKind::CustomTag => "unknown".to_string(),
                k => format!("{k:?}"),
            };
            let mut src = text[node.span.clone()].replace('\n', "\\n");
            if src.len() > 60 {
                let cut = (0..=57)
                    .rev()
                    .find(|i| src.is_char_boundary(*i))
                    .unwrap_or(0);
                src = format!("{}...", &src[..cut]);
            }
            out.push(format!(
                "{path} -> {src} ({kind}){flags} @ {}",
                line(node.span.start)
            ));
        }
    }
}
