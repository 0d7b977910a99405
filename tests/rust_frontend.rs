//! The Rust (Burn) front-end on whole files: the tree of a Burn guide training module, errors
//! for deep nesting and bad syntax, and edits that leave valid Rust with the new value in
//! place and every other byte as it was.

use hwlint::syntax::edit::NewValue;
use hwlint::syntax::rust::{insert_argument, parse, replace_literal};
use hwlint::syntax::{LineIndex, Node, NodeKind, ScalarKind, MAX_DEPTH};
use proptest::prelude::*;

#[path = "support/tree.rs"]
mod tree;
use tree::{apply, render};

const TRAINING: &str = include_str!("../fixtures/code/rust/training.rs");
const SYNTAX_ERROR: &str = include_str!("../fixtures/code/rust/syntax-error.rs");

fn rendered(text: &str) -> String {
    let d = parse(text).expect("the fixture parses");
    let mut out = Vec::new();
    render(text, &LineIndex::new(text), "", &d.roots[0], &mut out);
    out.join("\n")
}

#[test]
fn guide_training_module_tree() {
    insta::assert_snapshot!(rendered(TRAINING));
}

#[test]
fn guide_training_module_settings() {
    let d = parse(TRAINING).unwrap();
    let r = &d.roots[0];
    let src = |p: &[&str]| &TRAINING[r.get_path(p).unwrap().span.clone()];
    // `.with_batch_size(32usize)` in `main` overrides the default; the train loader reads it.
    assert_eq!(src(&["DataLoaderBuilder", "batch_size"]), "32usize");
    assert_eq!(src(&["config", "batch_size"]), "32usize");
    assert_eq!(src(&["DataLoaderBuilder", "num_workers"]), "4");
    assert_eq!(src(&["LearnerBuilder", "num_epochs"]), "10");
    assert_eq!(src(&["LearnerBuilder", "grads_accumulation"]), "2");
    let NodeKind::Seq(devices) = &r.get_path(&["LearnerBuilder", "devices"]).unwrap().kind else {
        panic!("devices is a sequence")
    };
    assert_eq!(devices.len(), 2);
    assert_eq!(src(&["backend", "name"]), "Wgpu");
    assert_eq!(src(&["backend", "float"]), "f32");
    assert_eq!(
        r.get_path(&["DataLoaderBuilder"]).unwrap().tag.as_deref(),
        Some("call:DataLoaderBuilder")
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    // Written to disk and read back, as hwlint reads a file.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("deep.rs");
    for open in ["(", "[", "{"] {
        let close = match open {
            "(" => ")",
            "[" => "]",
            _ => "}",
        };
        let text = format!(
            "fn main() {{\n    let x = {}1{};\n}}\n",
            open.repeat(100_000),
            close.repeat(100_000)
        );
        std::fs::write(&path, &text).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("nested too deeply"), "{}", e.message);
        // The bracket that goes one level past the limit (`fn main() {` is the first).
        assert_eq!(
            e.span.start,
            "fn main() {\n    let x = ".len() + MAX_DEPTH - 1
        );
    }
    // Just inside the limit is no error: syn gets its big stack.
    let ok = format!(
        "fn main() {{ let x = {}1{}; }}",
        "(".repeat(MAX_DEPTH - 1),
        ")".repeat(MAX_DEPTH - 1)
    );
    assert!(parse(&ok).is_ok());
}

#[test]
fn a_syntax_error_is_syn_s() {
    let e = parse(SYNTAX_ERROR).unwrap_err();
    assert!(!e.message.is_empty());
    let line = LineIndex::new(SYNTAX_ERROR)
        .position(SYNTAX_ERROR, e.span.start)
        .0;
    // The unclosed `.batch_size(` on line 9 swallows the next call; syn stops at line 9-10.
    assert!((9..=11).contains(&line), "line {line}: {}", e.message);
}

#[test]
fn a_file_without_burn_is_an_empty_map() {
    let d = parse("fn main() { println!(\"hello\"); }\n").unwrap();
    assert_eq!(d.roots.len(), 1);
    assert_eq!(d.roots[0].as_map().map(|m| m.entries.len()), Some(0));
}

/// The paths of every literal a fix may rewrite in a tree.
fn literal_paths(node: &Node, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, ScalarKind)>) {
    match &node.kind {
        NodeKind::Map(m) => {
            for e in &m.entries {
                path.push(e.key.clone());
                literal_paths(&e.value, path, out);
                path.pop();
            }
        }
        NodeKind::Seq(_) => {}
        NodeKind::Scalar(s) => {
            if !node.shared
                && matches!(
                    s.kind,
                    ScalarKind::Int(_) | ScalarKind::Float(_) | ScalarKind::Bool(_)
                )
            {
                out.push((path.clone(), s.kind));
            }
        }
    }
}

/// A builder chain, inline or one call per line at some indentation, with or without `.build`.
fn chain() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(0i64..10_000, 0..5),
        any::<bool>(),
        any::<bool>(),
        0usize..12,
        prop_oneof![
            Just("DataLoaderBuilder"),
            Just("LearnerBuilder"),
            Just("SupervisedTraining")
        ],
    )
        .prop_map(|(values, multiline, build, indent, root)| {
            let pad = " ".repeat(indent);
            let sep = if multiline {
                format!("\n{pad}    ")
            } else {
                String::new()
            };
            let mut s = format!("fn f() {{\n{pad}let train = {root}::new(x)");
            for (i, v) in values.iter().enumerate() {
                s.push_str(&format!("{sep}.call_{i}({v})"));
            }
            s.push_str(&format!("{sep}.summary()"));
            if build {
                s.push_str(&format!("{sep}.build(ds.build(\".build(\"))"));
            }
            s.push_str(";\n}\n");
            s
        })
}

fn builder_key(root: &Node) -> &'static str {
    if root.get_path(&["DataLoaderBuilder"]).is_some() {
        "DataLoaderBuilder"
    } else {
        "LearnerBuilder"
    }
}

proptest! {
    #[test]
    fn inserted_calls_read_back_and_keep_other_bytes(
        text in chain(),
        key in "[a-z][a-z_]{0,8}",
        value in 0i64..1_000_000,
    ) {
        let d = parse(&text).unwrap();
        let b = d.roots[0].get_path(&[builder_key(&d.roots[0])]).unwrap();
        let NodeKind::Map(m) = &b.kind else { panic!("a builder is a map") };
        prop_assume!(m.get_entry(&key).is_none() && key != "build");
        // Keywords (`.match(1)`) are refused; syn's `Ident` says which words those are.
        let keyword = syn::parse_str::<syn::Ident>(&key).is_err() || key == "gen";
        let e = insert_argument(&text, b, m, &[&key], &NewValue::Int(value));
        prop_assert_eq!(e.is_none(), keyword, "{}", key);
        let Some(e) = e else { return Ok(()) };
        let out = apply(&text, &e);
        prop_assert!(syn::parse_file(&out).is_ok(), "{}", out);
        prop_assert_eq!(&out[..e.range.start], &text[..e.range.start]);
        prop_assert_eq!(&out[e.range.start + e.content.len()..], &text[e.range.end..]);
        let d2 = parse(&out).unwrap();
        let n = d2.roots[0].get_path(&[builder_key(&d2.roots[0]), &key]).unwrap();
        prop_assert_eq!(n.as_scalar().map(|s| s.kind), Some(ScalarKind::Int(value)));
        // Every call already there reads as before.
        for entry in &m.entries {
            let before = &text[entry.value.span.clone()];
            let after = d2.roots[0].get_path(&[builder_key(&d2.roots[0]), &entry.key]).unwrap();
            prop_assert_eq!(before, &out[after.span.clone()]);
        }
    }

    #[test]
    fn replaced_literals_read_back_and_keep_other_bytes(
        pick in any::<prop::sample::Index>(),
        int in -1000i64..1_000_000,
        mantissa in 1u32..1000,
        exp in -9i32..3,
        flag in any::<bool>(),
    ) {
        let d = parse(TRAINING).unwrap();
        let mut paths = Vec::new();
        literal_paths(&d.roots[0], &mut Vec::new(), &mut paths);
        let (path, kind) = &paths[pick.index(paths.len())];
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let node = d.roots[0].get_path(&path).unwrap();
        let (value, want) = match kind {
            // Unsigned fields in the fixture: a negative value would not be a Burn config.
            ScalarKind::Int(_) => (NewValue::Int(int.abs()), ScalarKind::Int(int.abs())),
            ScalarKind::Float(_) => {
                let raw = format!("{mantissa}e{exp}");
                let f: f64 = raw.parse().unwrap();
                (NewValue::Raw(raw), ScalarKind::Float(f))
            }
            _ => (NewValue::Bool(flag), ScalarKind::Bool(flag)),
        };
        let e = replace_literal(TRAINING, node, &value).unwrap();
        let out = apply(TRAINING, &e);
        prop_assert!(syn::parse_file(&out).is_ok(), "{}", out);
        prop_assert_eq!(&out[..e.range.start], &TRAINING[..e.range.start]);
        prop_assert_eq!(&out[e.range.start + e.content.len()..], &TRAINING[e.range.end..]);
        let d2 = parse(&out).unwrap();
        let n = d2.roots[0].get_path(&path).unwrap();
        prop_assert_eq!(n.as_scalar().map(|s| s.kind), Some(want));
        // The suffix stays: `32usize` becomes `<n>usize`.
        let old = &TRAINING[node.span.clone()];
        if let Some(suffix) = ["usize", "u64", "f64", "f32"].iter().find(|s| old.ends_with(*s)) {
            prop_assert!(e.content.ends_with(suffix), "{} -> {}", old, e.content);
        }
    }
}
