//! Unit tests of the Rust front-end: the tree for the Burn guide, edits, errors.

use super::*;
use crate::syntax::NodeKind;

const GUIDE: &str = r#"
use burn::{data::dataloader::DataLoaderBuilder, optim::AdamConfig, prelude::*};

type MyBackend = Wgpu<f32, i32>;
type MyAutodiffBackend = Autodiff<MyBackend>;

#[derive(Config, Debug)]
pub struct TrainingConfig {
    pub model: ModelConfig,
    pub optimizer: AdamConfig,
    #[config(default = 10)]
    pub num_epochs: usize,
    #[config(default = 64)]
    pub batch_size: usize,
    #[config(default = 0)]
    pub num_workers: usize,
    #[config(default = 1.0e-4)]
    pub learning_rate: f64,
}

pub fn train(artifact_dir: &str, config: TrainingConfig, device: B::Device) {
    let dataloader_train = DataLoaderBuilder::new(batcher.clone())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .build(MnistDataset::train());
    let learner = LearnerBuilder::new(artifact_dir)
        .devices(vec![device.clone()])
        .num_epochs(config.num_epochs)
        .build(model, optim, lr);
}

fn main() {
    train("x", TrainingConfig::new(ModelConfig::new(10, 512), AdamConfig::new()).with_batch_size(32usize), d);
}
"#;

fn text_at<'a>(root: &'a Node, path: &[&str]) -> Option<&'a str> {
    root.get_path(path)
        .and_then(|n| n.as_scalar())
        .map(|s| s.text.as_str())
}

#[test]
fn the_burn_guide_reads_as_its_tree() {
    let d = parse(GUIDE).unwrap();
    let r = &d.roots[0];
    assert_eq!(text_at(r, &["config", "num_epochs"]), Some("10"));
    // `.with_batch_size(32usize)` after the default wins.
    assert_eq!(
        text_at(r, &["TrainingConfig", "batch_size"]),
        Some("32usize")
    );
    let w = r.get_path(&["DataLoaderBuilder", "num_workers"]).unwrap();
    assert_eq!(&GUIDE[w.span.clone()], "0");
    let NodeKind::Seq(devices) = &r.get_path(&["LearnerBuilder", "devices"]).unwrap().kind else {
        panic!()
    };
    assert_eq!(devices.len(), 1);
    assert_eq!(text_at(r, &["backend", "name"]), Some("Wgpu"));
    assert_eq!(text_at(r, &["backend", "float"]), Some("f32"));
}

#[test]
fn edits_keep_suffixes_and_builder_layout() {
    let d = parse(GUIDE).unwrap();
    let r = &d.roots[0];
    let bs = r.get_path(&["TrainingConfig", "batch_size"]).unwrap();
    let e = replace_literal(GUIDE, bs, &NewValue::Int(16)).unwrap();
    assert_eq!(e.content, "16usize");
    let b = r.get_path(&["DataLoaderBuilder"]).unwrap();
    let NodeKind::Map(m) = &b.kind else { panic!() };
    let e = insert_argument(GUIDE, b, m, &["prefetch"], &NewValue::Int(2)).unwrap();
    let out = format!(
        "{}{}{}",
        &GUIDE[..e.range.start],
        e.content,
        &GUIDE[e.range.end..]
    );
    assert!(
        out.contains(
            "        .num_workers(config.num_workers)\n        .prefetch(2)\n        .build("
        ),
        "{out}"
    );
    assert!(syn::parse_file(&out).is_ok());
}

#[test]
fn errors_not_panics() {
    assert!(parse("fn main( {").is_err());
    let deep = format!(
        "fn f() {{ let x = {}1{}; }}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert!(parse(&deep)
        .unwrap_err()
        .message
        .contains("nested too deeply"));
    assert_eq!(parse("fn main() {}").unwrap().roots.len(), 1);
}

fn apply(text: &str, e: &Edit) -> String {
    format!(
        "{}{}{}",
        &text[..e.range.start],
        e.content,
        &text[e.range.end..]
    )
}

#[test]
fn supervised_training_is_launched_so_calls_are_appended() {
    let text = "#[derive(Config)]\nstruct C { #[config(default = 4)] batch_size: usize }\n\
        fn t(config: C) {\n    let training = SupervisedTraining::new(dir, a, b)\n        \
        .num_epochs(config.num_epochs)\n        .summary();\n    \
        let inline = DataLoaderBuilder::new(b).batch_size(2);\n}\n";
    let d = parse(text).unwrap();
    let r = &d.roots[0];
    let l = r.get_path(&["LearnerBuilder"]).unwrap();
    assert_eq!(l.tag.as_deref(), Some("call:SupervisedTraining"));
    // `num_epochs` is no field of `C`: unknown, and no placeholder tag is left behind.
    let n = r.get_path(&["LearnerBuilder", "num_epochs"]).unwrap();
    assert_eq!(n.as_scalar().map(|s| s.kind), Some(ScalarKind::CustomTag));
    assert_eq!(n.tag, None);
    let NodeKind::Map(m) = &l.kind else { panic!() };
    let e = insert_argument(text, l, m, &["grads_accumulation"], &NewValue::Int(4)).unwrap();
    let out = apply(text, &e);
    assert!(
        out.contains("        .summary()\n        .grads_accumulation(4);"),
        "{out}"
    );
    let b = r.get_path(&["DataLoaderBuilder"]).unwrap();
    let NodeKind::Map(m) = &b.kind else { panic!() };
    let e = insert_argument(text, b, m, &["num_workers"], &NewValue::Int(4)).unwrap();
    assert!(apply(text, &e).contains("DataLoaderBuilder::new(b).batch_size(2).num_workers(4);"));
    // A config struct is no call: a required field cannot be added by a fix.
    let c = r.get_path(&["C"]).unwrap();
    let NodeKind::Map(m) = &c.kind else { panic!() };
    assert!(insert_argument(text, c, m, &["seed"], &NewValue::Int(1)).is_none());
    assert!(insert_argument(text, b, m, &["a", "b"], &NewValue::Int(1)).is_none());
}

#[test]
fn a_build_inside_an_argument_is_not_the_chain_s() {
    let text =
        "fn f() { let x = DataLoaderBuilder::new(b.build(\".build(\")).batch_size(2).build(d); }";
    let d = parse(text).unwrap();
    let b = d.roots[0].get_path(&["DataLoaderBuilder"]).unwrap();
    let NodeKind::Map(m) = &b.kind else { panic!() };
    // `build` ends the builder: it is no setting.
    assert!(m.get_entry("build").is_none());
    let e = insert_argument(text, b, m, &["num_workers"], &NewValue::Int(2)).unwrap();
    assert!(apply(text, &e).contains(".batch_size(2).num_workers(2).build(d)"));
}

#[test]
fn literals_of_every_form() {
    let text = "#[derive(Config)]\npub struct TrainingConfig {\n\
        #[config(default = 64usize)] pub batch_size: usize,\n\
        #[config(default = 1_000)] pub steps: usize,\n\
        #[config(default = 1e-4f64)] pub lr: f64,\n\
        #[config(default = -1)] pub max: i64,\n\
        #[config(default = 4 * 16)] pub warm: usize,\n\
        #[config(default = true)] pub shuffle: bool,\n\
        #[config(default = \"a\\tb\")] pub name: String,\n\
        #[config(default = r\"c:\\x\")] pub dir: String,\n\
        #[config(default = 0x1f32)] pub hex: u32,\n\
        #[config(default = 2.0)] pub f: f32,\n\
        #[config(default = \"x\".to_string())] pub other: String,\n}\n";
    let d = parse(text).unwrap();
    let c = d.roots[0].get_path(&["config"]).unwrap();
    let get = |k: &str| c.get_path(&[k]).unwrap();
    let kind = |k: &str| get(k).as_scalar().unwrap().kind;
    assert_eq!(kind("batch_size"), ScalarKind::Int(64));
    assert_eq!(kind("steps"), ScalarKind::Int(1000));
    assert_eq!(kind("lr"), ScalarKind::Float(1e-4));
    assert_eq!(kind("max"), ScalarKind::Int(-1));
    assert_eq!(&text[get("max").span.clone()], "-1");
    assert_eq!(kind("warm"), ScalarKind::Int(64));
    assert!(get("warm").shared);
    assert_eq!(kind("shuffle"), ScalarKind::Bool(true));
    assert_eq!(get("name").as_scalar().unwrap().text, "a\tb");
    assert_eq!(kind("name"), ScalarKind::Str(super::super::Quote::Double));
    assert_eq!(kind("dir"), ScalarKind::Str(super::super::Quote::Block));
    assert_eq!(kind("other"), ScalarKind::CustomTag);

    let edit = |k: &str, v: NewValue| replace_literal(text, get(k), &v).map(|e| e.content);
    assert_eq!(
        edit("batch_size", NewValue::Int(16)).as_deref(),
        Some("16usize")
    );
    assert_eq!(edit("steps", NewValue::Raw("1e3".into())), None);
    assert_eq!(
        edit("lr", NewValue::Raw("2e-5".into())).as_deref(),
        Some("2e-5f64")
    );
    assert_eq!(edit("f", NewValue::Raw("3".into())).as_deref(), Some("3.0"));
    assert_eq!(edit("max", NewValue::Int(5)).as_deref(), Some("5"));
    assert_eq!(edit("hex", NewValue::Int(5)).as_deref(), Some("5"));
    assert_eq!(edit("warm", NewValue::Int(5)), None);
    assert_eq!(
        edit("shuffle", NewValue::Bool(false)).as_deref(),
        Some("false")
    );
    assert_eq!(edit("shuffle", NewValue::Int(1)), None);
    assert_eq!(
        edit("name", NewValue::Str("q\"".into())).as_deref(),
        Some("\"q\\\"\"")
    );
    assert_eq!(edit("dir", NewValue::Str("q".into())), None);
    assert_eq!(edit("other", NewValue::Str("q".into())), None);
}

#[test]
fn the_config_alias_follows_what_the_builders_read() {
    let text =
        "#[derive(Config)] struct ModelConfig { #[config(default = 8)] batch_size: usize }\n\
        #[derive(Config)] struct MnistTrainingConfig { #[config(default = 256)] batch_size: usize, \
        #[config(default = 8)] num_workers: usize, optimizer: AdamWConfig }\n\
        fn run() { let config = MnistTrainingConfig::new(AdamWConfig::new());\n\
        let loader = DataLoaderBuilder::new(b).num_workers(self.config.num_workers).build(d); }\n";
    let d = parse(text).unwrap();
    let r = &d.roots[0];
    let keys: Vec<&str> = r
        .as_map()
        .unwrap()
        .entries
        .iter()
        .map(|e| e.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "ModelConfig",
            "config",
            "MnistTrainingConfig",
            "DataLoaderBuilder"
        ]
    );
    let w = r.get_path(&["DataLoaderBuilder", "num_workers"]).unwrap();
    assert_eq!(&text[w.span.clone()], "8");
    assert_eq!(
        r.get_path(&["config", "optimizer"])
            .unwrap()
            .as_scalar()
            .unwrap()
            .text,
        "AdamWConfig::new()"
    );
}

#[test]
fn backends_with_and_without_a_visible_float() {
    for (text, name, float) in [
        (
            "type B = Autodiff<burn::backend::Cuda<bf16>>; type I = NdArray<f32>;",
            "Cuda",
            Some("bf16"),
        ),
        ("fn main() { run::<Autodiff<Wgpu>>(); }", "Wgpu", None),
        (
            "type B = LibTorch<burn::tensor::f16>;",
            "LibTorch",
            Some("f16"),
        ),
    ] {
        let d = parse(text).unwrap();
        let b = d.roots[0].get_path(&["backend"]).unwrap();
        let get = |k: &str| {
            b.get_path(&[k])
                .and_then(|n| n.as_scalar())
                .map(|s| s.text.as_str())
        };
        assert_eq!(get("name"), Some(name), "{text}");
        assert_eq!(get("float"), float, "{text}");
        let n = b.get_path(&["name"]).unwrap();
        assert_eq!(&text[n.span.clone()], name);
    }
}

#[test]
fn syntax_errors_carry_syn_s_span_and_message() {
    let text = "fn main() {\n    let x = ;\n}\n";
    let e = parse(text).unwrap_err();
    assert_eq!(&text[e.span.clone()], ";");
    assert!(
        e.message.contains("expected an expression"),
        "{}",
        e.message
    );
    // Deep nesting is refused at the bracket that goes too deep, before syn sees it.
    let deep = format!("fn f() {{ {} }}", "[".repeat(MAX_DEPTH + 5));
    let e = parse(&deep).unwrap_err();
    assert_eq!(e.span.start, "fn f() { ".len() + MAX_DEPTH - 1);
    assert!(
        e.message.contains("brackets open more than 256"),
        "{}",
        e.message
    );
}

/// Shapes that nest syn's parser, visitor or drop without brackets (each repeated `n` times),
/// and some with them. Before the nesting guard counted these, each aborted the process with a
/// stack overflow at a size well under the file limit.
fn nested_shapes(n: usize) -> Vec<(&'static str, String)> {
    let r = |s: &str| s.repeat(n);
    vec![
        ("generics", format!("type T = {}u8{};", r("Vec<"), r(">"))),
        (
            "generics with commas",
            format!("type T = {}u8{};", r("A<x, "), r(">")),
        ),
        ("turbofish", format!("type T = {}u8{};", r("a::<"), r(">"))),
        (
            "qualified self",
            format!("type T = {}u8{};", r("<"), r(" as X>::Y")),
        ),
        ("not", format!("fn f() {{ let x = {}x; }}", r("!"))),
        ("negation", format!("fn f() {{ let x = {}x; }}", r("-"))),
        ("deref", format!("fn f() {{ let x = {}x; }}", r("*"))),
        ("borrow", format!("fn f() {{ let x = {}x; }}", r("&"))),
        ("closures", format!("fn f() {{ let x = {}1; }}", r("|| "))),
        (
            "closures with params",
            format!("fn f() {{ let x = {}1; }}", r("|a, b| ")),
        ),
        (
            "move closures",
            format!("fn f() {{ let x = {}1; }}", r("move || ")),
        ),
        ("return", format!("fn f() {{ {}1; }}", r("return "))),
        (
            "break",
            format!("fn f() {{ loop {{ {}1; }} }}", r("break ")),
        ),
        ("reference types", format!("type T = {}u8;", r("&"))),
        ("pointer types", format!("type T = {}u8;", r("*const "))),
        (
            "impl Fn",
            format!("fn f() -> {}u8 {{ }}", r("impl Fn() -> ")),
        ),
        ("fn pointers", format!("type T = {}u8;", r("fn() -> "))),
        (
            "dyn Fn",
            format!("type T = {}u8{};", r("Box<dyn Fn() -> "), r(">")),
        ),
        ("assignment", format!("fn f() {{ {}1; }}", r("a = "))),
        (
            "compound assignment",
            format!("fn f() {{ {}1; }}", r("a += ")),
        ),
        (
            "assignment through blocks",
            format!("fn f() {{ a {}; }}", r("= {x} ")),
        ),
        (
            "else if",
            format!("fn f() {{ if a {{}} {} }}", r("else if a {} ")),
        ),
        (
            "let chains",
            format!("fn f() {{ if {}1 {{}} }}", r("let a = ")),
        ),
        ("sum", format!("fn f() {{ let x = 1{}; }}", r(" + 1"))),
        (
            "method chain",
            format!("fn f() {{ let x = Foo::new(b){}; }}", r(".bar(0)")),
        ),
        ("fields", format!("fn f() {{ let x = a{}; }}", r(".b"))),
        (
            "tuple fields",
            format!("fn f() {{ let x = a{}; }}", r(".0")),
        ),
        ("try", format!("fn f() {{ let x = a{}; }}", r("?"))),
        ("casts", format!("fn f() {{ let x = a{}; }}", r(" as u8"))),
        ("indexing", format!("fn f() {{ let x = a{}; }}", r("[0]"))),
        ("calls", format!("fn f() {{ let x = a{}; }}", r("()"))),
        ("await", format!("fn f() {{ let x = a{}; }}", r(".await"))),
        (
            "reference patterns",
            format!("fn f() {{ let {}x = 1; }}", r("&")),
        ),
        ("bindings", format!("fn f() {{ let {}x = 1; }}", r("a @ "))),
        (
            "box patterns",
            format!("fn f() {{ let {}x = 1; }}", r("box ")),
        ),
        (
            "parentheses",
            format!("fn f() {{ let x = {}1{}; }}", r("("), r(")")),
        ),
        (
            "blocks",
            format!("fn f() {{ let x = {}1{}; }}", r("{ "), r(" }")),
        ),
        (
            "if blocks",
            format!("fn f() {{ {}1 {} }}", r("if a { "), r("}")),
        ),
        (
            "unsafe blocks",
            format!("fn f() {{ {}1{} }}", r("unsafe { "), r(" }")),
        ),
        ("modules", format!("{}{}", r("mod a { "), r("}"))),
        (
            "array types",
            format!("type T = {}u8{};", r("["), r("; 1]")),
        ),
        (
            "mixed",
            format!("fn f() {{ let x = {}x; }}", r("!&-*|| Vec::<")),
        ),
    ]
}

/// The largest repetition of `shape` the guard lets through: aimed at from the cost of two
/// sizes, then bisected where brackets (or an uneven cost) stop it first.
fn largest_accepted(shape: impl Fn(usize) -> String) -> usize {
    let ok = |n: usize| nesting::check(&shape(n), MAX_DEPTH).is_ok();
    let (p1, p2) = (nesting::peak(&shape(100)), nesting::peak(&shape(200)));
    let slope = (p2.saturating_sub(p1) / 100).max(1) as usize;
    let aim = 100 + (nesting::LIMIT.saturating_sub(p1) as usize) / slope;
    let (mut lo, mut hi) = (0usize, aim + 2);
    if ok(hi) {
        lo = hi;
        hi *= 2;
        assert!(!ok(hi), "never refused: {}", &shape(1));
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[test]
fn every_nesting_the_guard_lets_through_parses_without_overflowing() {
    // What the guard accepts, syn gets: at the largest accepted size of each shape the parse,
    // the walk of its tree and its drop must all return (an overflow aborts this test binary).
    // One past it, the file is refused with a message at the token that goes too deep.
    for (name, _) in nested_shapes(1) {
        let shape = |n: usize| {
            nested_shapes(n)
                .into_iter()
                .find(|(k, _)| *k == name)
                .map(|(_, t)| t)
                .unwrap()
        };
        let n = largest_accepted(shape);
        assert!(n >= 200, "{name}: refused at {n}, too early for real code");
        let _ = parse(&shape(n));
        let e = parse(&shape(n + 1)).unwrap_err();
        assert!(
            e.message.starts_with("nested too deeply"),
            "{name}: {}",
            e.message
        );
        assert!(e.span.start > 0, "{name}");
    }
}

#[test]
fn a_shebang_line_keeps_spans_in_place() {
    // syn drops a shebang line and counts spans from after it; the tree's spans are offsets
    // into the whole file. A `"` in the line must not hide brackets from the guard either.
    let text = "#!/usr/bin/env rust-script \"\n#[derive(Config)]\nstruct C {\n    #[config(default = 64)]\n    batch_size: usize,\n}\n";
    let d = parse(text).unwrap();
    let n = d.roots[0].get_path(&["config", "batch_size"]).unwrap();
    assert_eq!(&text[n.span.clone()], "64");
    let deep = format!("#!/bin/x \"\nfn f() {{ {} }}", "(".repeat(MAX_DEPTH + 1));
    assert!(parse(&deep).unwrap_err().message.contains("brackets"));
    // `#![...]` is an inner attribute, not a shebang.
    let inner = "#![allow(unused)]\n#[derive(Config)]\nstruct C { #[config(default = 8)] batch_size: usize }\n";
    let n = parse(inner).unwrap().roots[0]
        .get_path(&["config", "batch_size"])
        .unwrap()
        .span
        .clone();
    assert_eq!(&inner[n], "8");
}

#[test]
fn a_long_builder_chain_is_read_in_one_pass() {
    // Each link used to be offered as a chain of its own and read back to its root: 10,000
    // links took 42 s. Now the chain is read once from its top and its links walked once more
    // for their arguments; its last call wins.
    let n = 4000;
    let text = format!(
        "fn train() {{ let loader_train = DataLoaderBuilder::new(b){}.build(ds); }}",
        ".num_workers(0)".repeat(n - 1) + ".num_workers(3)"
    );
    let (root, walked) = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || {
                let file = syn::parse_file(&text).unwrap();
                collect::Collect::read_counting(&file, &text)
            })
            .unwrap()
            .join()
            .unwrap()
    });
    assert!(
        walked <= 3 * (n + 2),
        "{walked} links walked for a chain of {n}"
    );
    let m = root.get_path(&["DataLoaderBuilder"]).unwrap();
    assert_eq!(m.as_map().unwrap().entries.len(), n);
    let last = root
        .get_path(&["DataLoaderBuilder", "num_workers"])
        .unwrap();
    assert_eq!(&text[last.span.clone()], "3");
}
