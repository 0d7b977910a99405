//! Property tests of the code front-ends and their writers: a keyword argument or a flag added
//! to any layout reads back with its value and leaves every other value as it was; a literal
//! replaced twice is replaced once; no input makes a front-end panic.

use hwlint::syntax::edit::{insert_key, replace_scalar, NewValue};
use hwlint::syntax::{parse, Format, Node, ScalarKind};
use proptest::prelude::*;

#[path = "support/cases.rs"]
mod cases;
#[path = "support/tree.rs"]
mod tree;
use tree::apply;

fn int_at(root: &Node, path: &[&str]) -> Option<i64> {
    match root.get_path(path)?.as_scalar()?.kind {
        ScalarKind::Int(i) => Some(i),
        _ => None,
    }
}

/// Keyword arguments `k0=v0, k1=v1, ...` laid out inline or one per line, with or without a
/// trailing comma and comments, as the call `loader = DataLoader(ds, ...)`.
fn python_call() -> impl Strategy<Value = (String, Vec<i64>)> {
    (
        proptest::collection::vec(0i64..100_000, 0..6),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(values, multiline, trailing_comma, comments, indent)| {
            let pad = " ".repeat(4 * (indent + 1));
            let mut args: Vec<String> = vec!["ds".into()];
            args.extend(values.iter().enumerate().map(|(i, v)| format!("k{i}={v}")));
            let call = if multiline {
                let mut s = String::from("loader = DataLoader(\n");
                for (i, a) in args.iter().enumerate() {
                    let last = i + 1 == args.len();
                    let comma = if !last || trailing_comma { "," } else { "" };
                    let note = if comments { "  # note" } else { "" };
                    s.push_str(&format!("{pad}{a}{comma}{note}\n"));
                }
                s.push_str(")\n");
                s
            } else {
                format!("loader = DataLoader({})\n", args.join(", "))
            };
            (format!("import torch\n{call}x = 1\n"), values)
        })
}

/// Flags on a launch line: one line, or continued over several, perhaps in the background,
/// perhaps followed by a comment.
fn shell_line() -> impl Strategy<Value = (String, Vec<i64>)> {
    (
        proptest::collection::vec(0i64..100_000, 0..6),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(values, continued, background, comment)| {
            let sep = if continued { " \\\n  " } else { " " };
            let mut line = String::from("lerobot-train --policy.type=act");
            for (i, v) in values.iter().enumerate() {
                line.push_str(sep);
                line.push_str(&format!("--k{i}={v}"));
            }
            if background {
                line.push_str(" &");
            }
            if comment {
                line.push_str("  # run it");
            }
            (
                format!("#!/bin/bash\nexport A=1\n{line}\necho done\n"),
                values,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_keyword_argument_added_to_any_layout_reads_back(
        (text, values) in python_call(),
        new in 0i64..1000,
    ) {
        let doc = parse(&text, Format::Python).unwrap();
        let call = doc.roots[0].get_path(&["loader"]).unwrap();
        let e = insert_key(&text, Format::Python, call, &["num_workers"], &NewValue::Int(new))
            .expect("a call always takes a keyword argument");
        // What it replaces (the comment after the last argument) it writes back.
        prop_assert!(e.content.contains(&text[e.range.clone()]), "{:?}", e);
        let out = apply(&text, &e);
        let again = parse(&out, Format::Python).map_err(|err| TestCaseError::fail(format!("{err:?}\n{out}")))?;
        let root = &again.roots[0];
        prop_assert_eq!(int_at(root, &["loader", "num_workers"]), Some(new), "{}", out);
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}");
            prop_assert_eq!(int_at(root, &["loader", &key]), Some(*v), "{}", out);
        }
        prop_assert_eq!(int_at(root, &["x"]), Some(1));
    }

    #[test]
    fn a_literal_replaced_twice_is_replaced_once(
        (text, values) in python_call(),
        new in 0i64..1000,
    ) {
        if values.is_empty() {
            return Ok(());
        }
        let doc = parse(&text, Format::Python).unwrap();
        let node = doc.roots[0].get_path(&["loader", "k0"]).unwrap();
        let once = apply(&text, &replace_scalar(&text, Format::Python, node, &NewValue::Int(new)).unwrap());
        let doc2 = parse(&once, Format::Python).unwrap();
        let node2 = doc2.roots[0].get_path(&["loader", "k0"]).unwrap();
        let twice = apply(&once, &replace_scalar(&once, Format::Python, node2, &NewValue::Int(new)).unwrap());
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(int_at(&doc2.roots[0], &["loader", "k0"]), Some(new));
    }

    #[test]
    fn a_flag_added_to_any_launch_line_reads_back(
        (text, values) in shell_line(),
        new in 0i64..1000,
    ) {
        let doc = parse(&text, Format::Shell).unwrap();
        prop_assert_eq!(doc.roots.len(), 1);
        let args = doc.roots[0].get_path(&["args"]).unwrap();
        let e = insert_key(&text, Format::Shell, args, &["num_workers"], &NewValue::Int(new)).unwrap();
        let out = apply(&text, &e);
        let again = parse(&out, Format::Shell).unwrap();
        prop_assert_eq!(again.roots.len(), 1, "{}", out);
        let r = &again.roots[0];
        let text_of = |path: &[&str]| r.get_path(path).and_then(|n| n.as_scalar()).map(|s| s.text.clone());
        prop_assert_eq!(text_of(&["args", "num_workers"]), Some(new.to_string()), "{}", out);
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}");
            prop_assert_eq!(text_of(&["args", &key]), Some(v.to_string()), "{}", out);
        }
        prop_assert!(out.ends_with("echo done\n"));
    }

    #[test]
    fn no_input_makes_a_code_front_end_panic(text in "\\PC{0,200}") {
        for format in [Format::Python, Format::Shell, Format::Rust] {
            let _ = parse(&text, format);
        }
    }

    #[test]
    fn code_like_input_never_panics(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("("), Just(")"), Just("["), Just("]"), Just("{"), Just("}"), Just("'"), Just("\""),
                Just("\\"), Just("\n"), Just("#"), Just("//"), Just("$("), Just("${X:-1}"), Just("--a=1"),
                Just("x = dict(a=1)"), Just("DataLoader(ds, num_workers=0)"), Just("<<EOF"), Just(" & "),
                Just("#[derive(Config)]"), Just("struct S { a: u8 }"), Just(".with_a(1)"), Just("é"),
            ],
            0..40,
        )
    ) {
        let text: String = parts.concat();
        for format in [Format::Python, Format::Shell, Format::Rust] {
            let _ = parse(&text, format);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Through lint and fix: training files of each code format, their numbers and layout drawn at
// random, linted on random hardware and fixed with every fix on under the fix invariants
// (tests/support/invariants.rs: a fixed file parses, fixing again changes nothing, a fix
// changes only its own bytes).

#[path = "support/invariants.rs"]
mod invariants;

/// A count a config may hold, small and large.
fn count() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![0i64..10, 0i64..5000, Just(1 << 20), Just(i64::MAX)]
}

fn python_file() -> impl Strategy<Value = String> {
    let kwargs = (
        count(),
        count(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    prop_oneof![
        // A plain PyTorch script, its loader's numbers literal, from argparse or from the env.
        (kwargs, 0usize..3).prop_map(|((bs, w, pin, persist, multiline), source)| {
            let workers = match source {
                0 => w.to_string(),
                1 => "args.workers".to_string(),
                _ => format!("int(os.environ.get(\"WORKERS\", \"{w}\"))"),
            };
            let sep = if multiline { ",\n    " } else { ", " };
            format!(
                "import os\nimport argparse\nimport torch\nfrom torch.utils.data import DataLoader\n\
                 p = argparse.ArgumentParser()\np.add_argument(\"--workers\", type=int, default={w})\n\
                 args = p.parse_args()\nmodel = torch.nn.Linear(2, 2).cuda()\n\
                 loader = DataLoader(ds{sep}batch_size={bs}{sep}num_workers={workers}{sep}pin_memory={}{sep}persistent_workers={})\n\
                 for x in loader:\n    model(x.cuda()).sum().backward()\n",
                if pin { "True" } else { "False" },
                if persist { "True" } else { "False" },
            )
        }),
        // Hugging Face TrainingArguments in a script.
        (count(), count(), count(), count(), count(), any::<bool>()).prop_map(
            |(bs, accum, steps, save, warmup, bf16)| format!(
                "from transformers import Trainer, TrainingArguments\n\
                 args = TrainingArguments(\n    output_dir=\"out\",\n    per_device_train_batch_size={bs},\n    \
                 gradient_accumulation_steps={accum},\n    max_steps={steps},\n    save_steps={save},\n    \
                 warmup_steps={warmup},\n    bf16={},\n    dataloader_num_workers=0,\n)\n\
                 trainer = Trainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n",
                if bf16 { "True" } else { "False" }
            )
        ),
        // openpi's list of named setups.
        (count(), count(), count()).prop_map(|(bs, steps, workers)| format!(
            "_CONFIGS = [\n    TrainConfig(\n        name=\"pi0_libero\",\n        model=pi0.Pi0Config(),\n        \
             batch_size={bs},\n        num_train_steps={steps},\n        num_workers={workers},\n    ),\n]\n"
        )),
        // An mmengine config module.
        (count(), count(), count()).prop_map(|(bs, workers, epochs)| format!(
            "train_dataloader = dict(batch_size={bs}, num_workers={workers}, persistent_workers=False)\n\
             train_cfg = dict(type='EpochBasedTrainLoop', max_epochs={epochs})\n\
             optim_wrapper = dict(type='AmpOptimWrapper', optimizer=dict(type='SGD', lr=0.02))\n"
        )),
    ]
}

fn rust_file() -> impl Strategy<Value = String> {
    (count(), count(), count(), count(), any::<bool>(), any::<bool>()).prop_map(
        |(epochs, bs, workers, accum, chain_per_line, autodiff)| {
            let sep = if chain_per_line { "\n        " } else { "" };
            let backend = if autodiff {
                "Autodiff<Wgpu<f32, i32>>"
            } else {
                "Wgpu<bf16, i32>"
            };
            format!(
                "use burn::{{data::dataloader::DataLoaderBuilder, optim::AdamConfig, prelude::*}};\n\
                 type B = {backend};\n\
                 #[derive(Config)]\npub struct TrainingConfig {{\n    pub optimizer: AdamConfig,\n    \
                 #[config(default = {epochs})]\n    pub num_epochs: usize,\n    \
                 #[config(default = {bs})]\n    pub batch_size: usize,\n    \
                 #[config(default = {workers})]\n    pub num_workers: usize,\n}}\n\
                 pub fn train(config: TrainingConfig) {{\n    \
                 let dataloader_train = DataLoaderBuilder::new(batcher){sep}.batch_size(config.batch_size){sep}.num_workers(config.num_workers){sep}.build(ds);\n    \
                 let learner = LearnerBuilder::new(\"out\"){sep}.num_epochs(config.num_epochs){sep}.grads_accumulation({accum}){sep}.build(model, optim, lr);\n}}\n"
            )
        },
    )
}

fn shell_file() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        count().prop_map(|c| c.to_string()),
        count().prop_map(|c| format!("\"{c}\"")),
        count().prop_map(|c| format!("'{c}'")),
        Just("$WORKERS".to_string()),
    ];
    (
        value,
        count(),
        count(),
        any::<bool>(),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(|(workers, bs, nproc, continued, exported, program)| {
            let sep = if continued { " \\\n  " } else { " " };
            let export = if exported {
                "export WORKERS=0\nexport XLA_PYTHON_CLIENT_MEM_FRACTION=0.9\n"
            } else {
                ""
            };
            let line = match program {
                0 => format!("lerobot-train{sep}--policy.type=act{sep}--dataset.repo_id=lerobot/pusht{sep}--batch_size={bs}{sep}--num_workers={workers}"),
                1 => format!("torchrun --nproc_per_node={nproc}{sep}train.py{sep}--per_device_train_batch_size {bs}{sep}--dataloader_num_workers {workers}"),
                _ => format!("accelerate launch --num_processes {nproc}{sep}train.py{sep}--batch_size={bs}"),
            };
            format!("#!/bin/bash\nset -e\n{export}{line}\necho done\n")
        })
}

proptest! {
    #![proptest_config(cases::config())]

    #[test]
    fn python_files_lint_and_fix_soundly(text in python_file(), selector in any::<u8>()) {
        invariants::check_code(Format::Python, &[&[selector], text.as_bytes()].concat());
    }

    #[test]
    fn rust_files_lint_and_fix_soundly(text in rust_file(), selector in any::<u8>()) {
        invariants::check_code(Format::Rust, &[&[selector], text.as_bytes()].concat());
    }

    #[test]
    fn shell_files_lint_and_fix_soundly(text in shell_file(), selector in any::<u8>()) {
        invariants::check_code(Format::Shell, &[&[selector], text.as_bytes()].concat());
    }
}
