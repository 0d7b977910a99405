//! The Python front-end on whole files: the trees of an openpi config module, an mmengine
//! config, and plain PyTorch, Hugging Face and Lightning scripts (snapshots); errors for deep
//! nesting and bad syntax without a crash; a file that would write files if run is only read;
//! and edits that leave valid Python (checked with ruff itself) with the new value in place and
//! every other byte as it was.

use hwlint::syntax::edit::NewValue;
use hwlint::syntax::python::{insert_argument, parse, replace_literal};
use hwlint::syntax::{LineIndex, Node, NodeKind, Quote, ScalarKind, MAX_DEPTH};
use proptest::prelude::*;

#[path = "support/tree.rs"]
mod tree;
use tree::{apply, render};

const OPENPI: &str = include_str!("../fixtures/code/python/openpi_config.py");
const MMDET: &str = include_str!("../fixtures/code/python/mmdet_faster_rcnn.py");
const PYTORCH: &str = include_str!("../fixtures/code/python/plain_pytorch_train.py");
const HF: &str = include_str!("../fixtures/code/python/hf_train.py");
const LIGHTNING: &str = include_str!("../fixtures/code/python/lightning_train.py");
const FIXTURES: [&str; 5] = [OPENPI, MMDET, PYTORCH, HF, LIGHTNING];

/// Every root, the module first, then each named setup.
fn rendered(text: &str) -> String {
    let d = parse(text).expect("the fixture parses");
    assert!(d.duplicates.is_empty());
    let idx = LineIndex::new(text);
    let mut out = Vec::new();
    for (i, root) in d.roots.iter().enumerate() {
        render(text, &idx, &format!("#{i}"), root, &mut out);
    }
    out.join("\n")
}

#[test]
fn openpi_config_module_tree() {
    insta::assert_snapshot!(rendered(OPENPI));
}

#[test]
fn mmdet_faster_rcnn_config_tree() {
    insta::assert_snapshot!(rendered(MMDET));
}

#[test]
fn plain_pytorch_script_tree() {
    insta::assert_snapshot!(rendered(PYTORCH));
}

#[test]
fn hf_trainer_script_tree() {
    insta::assert_snapshot!(rendered(HF));
}

#[test]
fn lightning_script_tree() {
    insta::assert_snapshot!(rendered(LIGHTNING));
}

fn kind_at(root: &Node, path: &[&str]) -> Option<ScalarKind> {
    Some(root.get_path(path)?.as_scalar()?.kind)
}

#[test]
fn openpi_setups_are_roots_and_read_their_values() {
    let d = parse(OPENPI).unwrap();
    assert_eq!(d.roots.len(), 4, "the module and three TrainConfigs");
    let names: Vec<_> = d.roots[1..]
        .iter()
        .map(|r| {
            r.get_path(&["name"])
                .unwrap()
                .as_scalar()
                .unwrap()
                .text
                .clone()
        })
        .collect();
    assert_eq!(names, ["pi0_libero", "pi0_fast_libero", "pi05_libero"]);
    let libero = &d.roots[1];
    assert_eq!(libero.tag.as_deref(), Some("call:TrainConfig"));
    assert_eq!(
        kind_at(libero, &["num_train_steps"]),
        Some(ScalarKind::Int(30_000))
    );
    assert_eq!(
        kind_at(libero, &["lr_schedule", "peak_lr"]),
        Some(ScalarKind::Float(2.5e-5))
    );
    // `repo_id=LIBERO_REPO` reads the constant, shared by both setups that use it.
    let repo = libero.get_path(&["data", "repo_id"]).unwrap();
    assert_eq!(
        repo.as_scalar().unwrap().text,
        "physical-intelligence/libero"
    );
    assert!(repo.shared);
    // `FAST_STEPS = 3 * 10_000` folds, and is never a literal to rewrite.
    let steps = d.roots[2].get_path(&["num_train_steps"]).unwrap();
    assert_eq!(steps.as_scalar().unwrap().kind, ScalarKind::Int(30_000));
    assert!(steps.shared);
    assert!(replace_literal(OPENPI, steps, &NewValue::Int(1)).is_none());
    // Dataclass defaults are the framework's, and setups are not module calls.
    let m = &d.roots[0];
    assert!(m.get_path(&["batch_size"]).is_none());
    assert!(m.get_path(&["TrainConfig"]).is_none());
    assert!(m.get_path(&["CosineDecaySchedule"]).is_none());
    let NodeKind::Seq(configs) = &m.get_path(&["_CONFIGS"]).unwrap().kind else {
        panic!("_CONFIGS is a list")
    };
    assert_eq!(configs.len(), 3);
}

#[test]
fn script_settings_resolve_through_argparse_and_names() {
    let d = parse(PYTORCH).unwrap();
    let m = &d.roots[0];
    let src = |p: &[&str]| &PYTORCH[m.get_path(p).unwrap().span.clone()];
    // The train-bound loader is read, and its arguments are the argparse defaults.
    assert_eq!(src(&["DataLoader", "batch_size"]), "64");
    assert_eq!(
        m.get_path(&["DataLoader", "batch_size"])
            .unwrap()
            .tag
            .as_deref(),
        Some("arg:batch_size")
    );
    assert_eq!(src(&["DataLoader", "num_workers"]), "0");
    assert_eq!(src(&["CosineAnnealingLR", "T_max"]), "90");
    assert_eq!(src(&["args", "lr"]), "0.1");
    let amp = m.get_path(&["args", "amp"]).unwrap();
    assert_eq!(amp.as_scalar().unwrap().kind, ScalarKind::Bool(false));
    assert!(amp.shared, "the action is not the value");
    assert!(m.get_path(&["args", "seed"]).is_none(), "no default: None");
    assert!(m.get_path(&["args", "data"]).is_none(), "a positional");
    let key = m.get_entry_path(&["args", "batch_size"]).unwrap();
    assert_eq!(&PYTORCH[key.key_span.clone()], "\"-b\"");
    assert_eq!(src(&["env", "OMP_NUM_THREADS"]), "\"4\"");
    // The argparse default is the literal a fix rewrites.
    let bs = m.get_path(&["DataLoader", "batch_size"]).unwrap();
    let out = apply(
        PYTORCH,
        &replace_literal(PYTORCH, bs, &NewValue::Int(32)).unwrap(),
    );
    assert!(out.contains("\"--batch-size\", default=32, type=int"));

    let d = parse(LIGHTNING).unwrap();
    let m = &d.roots[0];
    // `train_dataloader` (the method) wins over `val_dataloader`.
    assert_eq!(
        kind_at(m, &["DataLoader", "num_workers"]),
        Some(ScalarKind::Int(4))
    );
    assert_eq!(
        kind_at(m, &["Trainer", "precision"]),
        Some(ScalarKind::Str(Quote::Double))
    );
    assert!(m.get_path(&["batch_size"]).is_none());

    let d = parse(HF).unwrap();
    let m = &d.roots[0];
    assert_eq!(
        kind_at(m, &["TrainingArguments", "per_device_train_batch_size"]),
        Some(ScalarKind::Int(16))
    );
    assert_eq!(
        kind_at(m, &["training_args", "bf16"]),
        Some(ScalarKind::Bool(true))
    );

    let d = parse(MMDET).unwrap();
    let m = &d.roots[0];
    assert_eq!(
        kind_at(m, &["train_dataloader", "batch_size"]),
        Some(ScalarKind::Int(2))
    );
    assert_eq!(
        kind_at(m, &["optim_wrapper", "optimizer", "lr"]),
        Some(ScalarKind::Float(0.02))
    );
    assert!(
        m.get_path(&["dict"]).is_none(),
        "dict(...) is data, not a call"
    );
}

#[test]
fn parsing_never_runs_the_file() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-side-effect");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("side_effect.py");
    std::fs::copy("fixtures/code/python/side_effect.py", &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let d = parse(&text).unwrap();
    assert_eq!(
        kind_at(&d.roots[0], &["DataLoader", "num_workers"]),
        Some(ScalarKind::Int(0))
    );
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["side_effect.py"]);
    for marker in ["SIDE_EFFECT_RAN", "SIDE_EFFECT_RAN_2", "SIDE_EFFECT_SHELL"] {
        assert!(!std::path::Path::new(marker).exists());
        assert!(!std::path::Path::new("fixtures/code/python")
            .join(marker)
            .exists());
    }
}

/// Runs `f` on a thread with a worker's 2 MiB stack, as the linter does.
fn on_worker_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("no panic, no overflow")
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    let hostile = [
        format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n)),
        format!("x = {}1{}\n", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1\n", "1 + ".repeat(n)),
        format!("x = {}1\n", "-".repeat(n)),
        format!("x = {}1\n", "not ".repeat(n)),
        format!("x = a{}\n", ".b".repeat(n)),
        format!("x = a{}\n", "()".repeat(n)),
        format!("x = {}1\n", "lambda: ".repeat(n)),
        format!("x = {}1\n", "1 if a else ".repeat(n)),
        format!("x = f'{{{}1}}'\n", "1 + ".repeat(n)),
        format!("C = [T(name='a', x={}1)]\n", "1 + ".repeat(n)),
        // Deep and broken: the depth is found before the syntax error's tree is dropped.
        format!("x = {}1 +\n", "1 + ".repeat(n)),
        (0..3000)
            .map(|i| format!("{}if a:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(3000)
            + "pass\n",
    ];
    for text in hostile {
        let head: String = text.chars().take(30).collect();
        let e = on_worker_stack(move || parse(&text).map(|_| ())).expect_err("too deep to read");
        assert!(e.message.contains("nested too deeply"), "{head}: {e:?}");
    }
    // Long but flat: chains of `and`, comparisons and implicitly joined strings are one level.
    let flat = [
        format!("x = a{}\n", " and a".repeat(n)),
        format!("x = a{}\n", " < a".repeat(n)),
        format!("x = {}\n", "'a' ".repeat(n)),
        format!("x = [{}]\n", "1 + 1, ".repeat(n)),
    ];
    for text in flat {
        assert!(on_worker_stack(move || parse(&text).is_ok()));
    }
    // Just inside the bracket limit is no error.
    let ok = format!(
        "x = {}1{}\n",
        "[".repeat(MAX_DEPTH - 1),
        "]".repeat(MAX_DEPTH - 1)
    );
    assert!(on_worker_stack(move || parse(&ok).is_ok()));
}

#[test]
fn a_syntax_error_is_ruff_s() {
    let text = "import torch\n\nloader = DataLoader(ds,\n    batch_size=8\n    num_workers=2)\n";
    let e = parse(text).unwrap_err();
    assert!(!e.message.is_empty());
    let line = LineIndex::new(text).position(text, e.span.start).0;
    assert!((4..=5).contains(&line), "line {line}: {}", e.message);
    assert!(e.span.end <= text.len());
    for text in [
        "def f(:\n",
        "x = 'unterminated\n",
        "\u{feff}x = (",
        "x = 1\n  y = 2\n",
    ] {
        let e = parse(text).unwrap_err();
        assert!(
            e.span.start <= e.span.end && e.span.end <= text.len(),
            "{e:?}"
        );
    }
}

/// An argument of a generated call: positional source or a keyword and its value source.
#[derive(Debug, Clone)]
enum Arg {
    Positional(String),
    Keyword(String, String),
}

/// A value as source: an int, a float, a bool, None, or a string in either quote.
fn value_source() -> impl Strategy<Value = String> {
    prop_oneof![
        (-1000i64..100_000).prop_map(|i| i.to_string()),
        (1u32..1000, -9i32..3).prop_map(|(m, e)| format!("{m}e{e}")),
        any::<bool>().prop_map(|b| if b { "True" } else { "False" }.to_string()),
        Just("None".to_string()),
        "[a-z0-9 _/-]{0,12}".prop_map(|s| format!("'{s}'")),
        "[a-z0-9 _/-]{0,12}".prop_map(|s| format!("\"{s}\"")),
    ]
}

/// A call (or a dict display) `cfg = <callee>(...)` laid out inline or one argument per line,
/// with or without a trailing comma and comments, at some indentation inside a function or at
/// module level, possibly empty.
fn layout() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("DataLoader"),
            Just("torch.utils.data.DataLoader"),
            Just("dict"),
            Just("{}")
        ],
        proptest::collection::vec(value_source(), 0..3),
        proptest::collection::vec(value_source(), 0..5),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        0usize..3,
    )
        .prop_map(
            |(callee, positional, keywords, (multiline, trailing, comments, in_fn), indent)| {
                let display = callee == "{}";
                let mut args: Vec<Arg> = Vec::new();
                if !display {
                    args.extend(positional.into_iter().map(Arg::Positional));
                }
                args.extend(
                    keywords
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| Arg::Keyword(format!("k{i}"), v)),
                );
                let item = |a: &Arg| match a {
                    Arg::Positional(v) => v.clone(),
                    Arg::Keyword(k, v) if display => format!("\"{k}\": {v}"),
                    Arg::Keyword(k, v) => format!("{k}={v}"),
                };
                let (open, close) = if display {
                    ("{".to_string(), "}")
                } else {
                    (format!("{callee}("), ")")
                };
                // Inside a function only a call is collected (by its callee's name).
                let in_fn = in_fn && !display && callee != "dict";
                let base = if in_fn { "    " } else { "" };
                let pad = format!("{base}{}", " ".repeat(4 * (indent + 1)));
                let body = if multiline && !args.is_empty() {
                    let mut s = format!("{open}\n");
                    for (i, a) in args.iter().enumerate() {
                        let last = i + 1 == args.len();
                        let comma = if !last || trailing { "," } else { "" };
                        let note = if comments {
                            "  # note, with (brackets"
                        } else {
                            ""
                        };
                        s.push_str(&format!("{pad}{}{comma}{note}\n", item(a)));
                    }
                    s.push_str(&format!("{base}{close}"));
                    s
                } else {
                    let items: Vec<String> = args.iter().map(item).collect();
                    let comma = if trailing && !args.is_empty() {
                        ","
                    } else {
                        ""
                    };
                    format!("{open}{}{comma}{close}", items.join(", "))
                };
                let stmt = format!("{base}cfg = {body}\n");
                if in_fn {
                    format!("import torch\n\n\ndef train():\n{stmt}    return cfg\n\n\nx = 1\n")
                } else {
                    format!("import torch\n\n{stmt}x = 1\n")
                }
            },
        )
}

/// A new value and the scalar kind and text it reads back as.
fn new_value() -> impl Strategy<Value = (NewValue, ScalarKind, Option<String>)> {
    prop_oneof![
        (-1_000_000i64..1_000_000).prop_map(|i| (NewValue::Int(i), ScalarKind::Int(i), None)),
        any::<bool>().prop_map(|b| (NewValue::Bool(b), ScalarKind::Bool(b), None)),
        (1u32..1000, -9i32..3).prop_map(|(m, e)| {
            let raw = format!("{m}e{e}");
            let f: f64 = raw.parse().unwrap();
            (NewValue::Raw(raw), ScalarKind::Float(f), None)
        }),
        "(?s).{0,12}".prop_map(|s| {
            let kind = ScalarKind::Str(Quote::Double);
            (NewValue::Str(s.clone()), kind, Some(s))
        }),
    ]
}

/// The call or display the generated source binds to `cfg`, wherever the module keeps it.
fn target(root: &Node) -> &Node {
    let m = root.as_map().unwrap();
    m.get("cfg")
        .or_else(|| m.get("DataLoader"))
        .expect("cfg is read")
}

fn same_kind(a: ScalarKind, b: ScalarKind) -> bool {
    match (a, b) {
        // The quote follows the call's other strings; the text is what matters.
        (ScalarKind::Str(_), ScalarKind::Str(_)) => true,
        (ScalarKind::Float(x), ScalarKind::Float(y)) => x == y,
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_inserted_argument_parses_reads_back_and_keeps_other_bytes(
        text in layout(),
        key in "[a-z_][a-z0-9_]{0,8}",
        (value, kind, str_text) in new_value(),
    ) {
        let d = parse(&text).map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let node = target(&d.roots[0]);
        let NodeKind::Map(m) = &node.kind else { panic!("a call or display is a map") };
        prop_assume!(m.get_entry(&key).is_none());
        let keyword = ruff_python_parser::parse_expression(&format!("f({key}=1)")).is_err();
        let e = insert_argument(&text, node, m, &[&key], &value);
        prop_assert_eq!(e.is_none(), keyword && m.style == hwlint::syntax::MapStyle::Call, "{}", key);
        let Some(e) = e else { return Ok(()) };
        let out = apply(&text, &e);
        prop_assert!(ruff_python_parser::parse_module(&out).is_ok(), "{}", out);
        // Outside the edit every byte is as it was; what it replaces it writes back.
        prop_assert_eq!(&out[..e.range.start], &text[..e.range.start]);
        prop_assert_eq!(&out[e.range.start + e.content.len()..], &text[e.range.end..]);
        prop_assert!(e.content.contains(&text[e.range.clone()]), "{:?}", e);
        let d2 = parse(&out).unwrap();
        let again = target(&d2.roots[0]);
        let n = again.get_path(&[&key]).ok_or_else(|| TestCaseError::fail(out.clone()))?;
        let s = n.as_scalar().unwrap();
        prop_assert!(same_kind(s.kind, kind), "{:?} vs {:?}\n{}", s.kind, kind, out);
        if let Some(t) = str_text {
            prop_assert_eq!(&s.text, &t);
        }
        // Every argument already there reads as before, in the same place relative to it.
        let NodeKind::Map(m2) = &again.kind else { panic!() };
        for entry in &m.entries {
            let after = m2.get(&entry.key).unwrap();
            prop_assert_eq!(&text[entry.value.span.clone()], &out[after.span.clone()]);
        }
        prop_assert_eq!(m2.entries.len(), m.entries.len() + 1);
        prop_assert_eq!(kind_at(&d2.roots[0], &["x"]), Some(ScalarKind::Int(1)));
    }

    #[test]
    fn a_replaced_literal_reads_back_and_replacing_again_changes_nothing(
        text in layout(),
        pick in any::<prop::sample::Index>(),
        (value, kind, str_text) in new_value(),
    ) {
        let d = parse(&text).unwrap();
        let node = target(&d.roots[0]);
        let NodeKind::Map(m) = &node.kind else { panic!() };
        prop_assume!(!m.entries.is_empty());
        let entry = &m.entries[pick.index(m.entries.len())];
        let old = entry.value.as_scalar().unwrap();
        let e = replace_literal(&text, &entry.value, &value);
        // Every generated value is a literal; None is one too.
        let Some(e) = e else {
            return Err(TestCaseError::fail(format!("{:?} not replaced in\n{}", old, text)));
        };
        let once = apply(&text, &e);
        prop_assert!(ruff_python_parser::parse_module(&once).is_ok(), "{}", once);
        prop_assert_eq!(&once[..e.range.start], &text[..e.range.start]);
        prop_assert_eq!(&once[e.range.start + e.content.len()..], &text[e.range.end..]);
        let d2 = parse(&once).unwrap();
        let n2 = target(&d2.roots[0]).get_path(&[&entry.key]).unwrap();
        let s2 = n2.as_scalar().unwrap();
        // A string literal stays a string (in its own quote) whatever the value.
        let (kind, str_text) = match old.kind {
            ScalarKind::Str(q) => (ScalarKind::Str(q), Some(value.to_string())),
            _ => (kind, str_text),
        };
        prop_assert!(same_kind(s2.kind, kind), "{:?} vs {:?}\n{}", s2.kind, kind, once);
        if let Some(t) = &str_text {
            prop_assert_eq!(&s2.text, t);
        }
        // A string keeps its own quote.
        if let (ScalarKind::Str(q), ScalarKind::Str(q2)) = (old.kind, s2.kind) {
            prop_assert_eq!(q, q2);
        }
        let twice = apply(&once, &replace_literal(&once, n2, &value).unwrap());
        prop_assert_eq!(&once, &twice);
    }
}

#[test]
fn fixture_literals_are_replaced_in_place() {
    // Every editable literal in every fixture takes a new value of its own kind, and the file
    // still parses with that value in place.
    for text in FIXTURES {
        let d = parse(text).unwrap();
        let mut stack: Vec<(&Node, Vec<String>, usize)> = d
            .roots
            .iter()
            .enumerate()
            .map(|(i, r)| (r, Vec::new(), i))
            .collect();
        let mut edited = 0;
        while let Some((node, path, root)) = stack.pop() {
            match &node.kind {
                NodeKind::Map(m) => {
                    for e in &m.entries {
                        let mut p = path.clone();
                        p.push(e.key.clone());
                        stack.push((&e.value, p, root));
                    }
                }
                NodeKind::Seq(_) => {}
                NodeKind::Scalar(s) => {
                    let value = match s.kind {
                        ScalarKind::Int(_) => NewValue::Int(7),
                        ScalarKind::Float(_) => NewValue::Raw("1e-3".into()),
                        ScalarKind::Bool(b) => NewValue::Bool(!b),
                        ScalarKind::Str(_) => NewValue::Str("it's \"new\"".into()),
                        _ => NewValue::Int(7),
                    };
                    let Some(e) = replace_literal(text, node, &value) else {
                        let literal = matches!(
                            s.kind,
                            ScalarKind::Int(_)
                                | ScalarKind::Float(_)
                                | ScalarKind::Bool(_)
                                | ScalarKind::Null
                                | ScalarKind::Str(Quote::Single | Quote::Double)
                        );
                        assert!(!literal || node.shared, "{path:?} in\n{text}");
                        continue;
                    };
                    assert!(!node.shared);
                    let out = apply(text, &e);
                    let d2 = parse(&out).unwrap_or_else(|err| panic!("{err:?}\n{out}"));
                    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
                    let n2 = d2.roots[root].get_path(&keys).unwrap();
                    assert_eq!(n2.span.start, node.span.start);
                    edited += 1;
                }
            }
        }
        assert!(edited > 3, "{edited} literals edited");
    }
}
