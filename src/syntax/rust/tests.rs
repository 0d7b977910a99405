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
}

#[test]
fn many_files_on_one_thread_do_not_grow() {
    // Each parse runs on its own thread and clears span-locations' table; a leak would show as
    // a slowdown, not a failure, so this only checks repeated parses stay correct.
    for i in 0..50 {
        let text =
            format!("#[derive(Config)] struct C {{ #[config(default = {i})] batch_size: usize }}");
        let d = parse(&text).unwrap();
        let n = d.roots[0].get_path(&["config", "batch_size"]).unwrap();
        assert_eq!(&text[n.span.clone()], i.to_string());
    }
}
