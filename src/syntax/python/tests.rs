use super::*;
use crate::syntax::edit::NewValue;
use crate::syntax::{Node, NodeKind, ScalarKind};

fn module(src: &str) -> Vec<Node> {
    parse(src).unwrap().roots
}

fn text_at<'a>(root: &'a Node, path: &[&str]) -> Option<&'a str> {
    root.get_path(path)
        .and_then(|n| n.as_scalar())
        .map(|s| s.text.as_str())
}

fn apply(src: &str, e: &crate::fix::Edit) -> String {
    format!(
        "{}{}{}",
        &src[..e.range.start],
        e.content,
        &src[e.range.end..]
    )
}

#[test]
fn calls_by_name_argparse_and_folding() {
    let src = r#"
import argparse, os
from torch.utils.data import DataLoader

BATCH = 4 * 16
os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = "0.9"

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--workers", "-j", type=int, default=0)
    p.add_argument("--amp", action="store_true")
    args = p.parse_args()
    val_loader = DataLoader(val_ds, batch_size=BATCH, num_workers=2)
    train_loader = DataLoader(train_ds, args.batch_size, num_workers=args.workers, pin_memory=True)
    loss.backward()
"#;
    let roots = module(src);
    assert_eq!(roots.len(), 1);
    let m = &roots[0];
    // The train-bound DataLoader is the one read.
    let bs = m.get_path(&["DataLoader", "1"]).unwrap();
    assert_eq!(bs.tag.as_deref(), Some("arg:batch_size"));
    assert_eq!(&src[bs.span.clone()], "64");
    let w = m.get_path(&["DataLoader", "num_workers"]).unwrap();
    assert_eq!(w.as_scalar().unwrap().kind, ScalarKind::Int(0));
    assert_eq!(text_at(m, &["args", "amp"]), Some("False"));
    assert!(m.get_path(&["backward"]).is_some());
    let b = m.get_path(&["BATCH"]).unwrap();
    assert_eq!(b.as_scalar().unwrap().kind, ScalarKind::Int(64));
    assert!(b.shared, "a folded expression is never edited");
    assert_eq!(
        text_at(m, &["env", "XLA_PYTHON_CLIENT_MEM_FRACTION"]),
        Some("0.9")
    );
}

#[test]
fn named_setups_in_a_config_list_are_roots() {
    let src = r#"
_CONFIGS = [
    TrainConfig(
        name="pi0_libero",
        model=pi0_config.Pi0Config(),
        batch_size=32,
        num_train_steps=30_000,
        lr_schedule=_optimizer.CosineDecaySchedule(warmup_steps=1_000, decay_steps=30_000),
    ),
    TrainConfig(name="pi0_fast", batch_size=2**5),
]
"#;
    let roots = module(src);
    assert_eq!(roots.len(), 3);
    assert_eq!(text_at(&roots[1], &["name"]), Some("pi0_libero"));
    assert_eq!(roots[1].tag.as_deref(), Some("call:TrainConfig"));
    assert_eq!(
        roots[1]
            .get_path(&["num_train_steps"])
            .unwrap()
            .as_scalar()
            .unwrap()
            .kind,
        ScalarKind::Int(30000)
    );
    assert_eq!(
        roots[1].get_path(&["lr_schedule"]).unwrap().tag.as_deref(),
        Some("call:_optimizer.CosineDecaySchedule")
    );
    assert_eq!(
        roots[2]
            .get_path(&["batch_size"])
            .unwrap()
            .as_scalar()
            .unwrap()
            .kind,
        ScalarKind::Int(32)
    );
    // Not collected again under the module's calls.
    assert!(roots[0].get_path(&["TrainConfig"]).is_none());
    assert!(roots[0].get_path(&["Pi0Config"]).is_none());
}

#[test]
fn environment_lookups_and_class_fields() {
    let src = r#"
import os
@dataclasses.dataclass
class TrainConfig:
    batch_size: int = 32
    def loader(self):
        return DataLoader(ds, num_workers=int(os.environ.get("NUM_WORKERS", "4")))
"#;
    let m = &module(src)[0];
    assert!(
        m.get_path(&["batch_size"]).is_none(),
        "a dataclass default is no setting"
    );
    let w = m.get_path(&["DataLoader", "num_workers"]).unwrap();
    assert_eq!(w.tag.as_deref(), Some("env:NUM_WORKERS"));
    assert_eq!(w.as_scalar().unwrap().kind, ScalarKind::Int(4));
    assert!(w.shared);
}

#[test]
fn syntax_errors_and_deep_nesting_are_errors() {
    let e = parse("x = (1,\n").unwrap_err();
    assert!(e.span.start <= 8, "{e:?}");
    let deep = format!("x = {}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(parse(&deep)
        .unwrap_err()
        .message
        .contains("nested too deeply"));
}

#[test]
fn literals_are_replaced_in_their_own_form() {
    let src = "a = 64\nb = True\nc = 'bf16'\nd = \"x\"\ne = 4 * 16\nf = \"\"\"doc\"\"\"\n";
    let m = &module(src)[0];
    let r = |k: &str, v: NewValue| {
        replace_literal(src, m.get_path(&[k]).unwrap(), &v).map(|e| apply(src, &e))
    };
    assert_eq!(r("a", NewValue::Int(16)).unwrap(), src.replace("64", "16"));
    assert_eq!(
        r("b", NewValue::Bool(false)).unwrap(),
        src.replace("True", "False")
    );
    assert_eq!(
        r("c", NewValue::Str("fp16".into())).unwrap(),
        src.replace("'bf16'", "'fp16'")
    );
    assert_eq!(
        r("d", NewValue::Str("y\"z".into())).unwrap(),
        src.replace("\"x\"", "\"y\\\"z\"")
    );
    assert!(
        r("e", NewValue::Int(1)).is_none(),
        "a folded expression is not a literal"
    );
    assert!(r("f", NewValue::Str("x".into())).is_none());
}

#[test]
fn keyword_arguments_are_added_in_the_call_layout() {
    let cases = [
        (
            "x = f(ds, batch_size=8)\n",
            "x = f(ds, batch_size=8, num_workers=4)\n",
        ),
        ("x = f()\n", "x = f(num_workers=4)\n"),
        (
            "x = f(\n    ds,\n    batch_size=8,\n)\n",
            "x = f(\n    ds,\n    batch_size=8,\n    num_workers=4,\n)\n",
        ),
        (
            "x = f(\n    ds,\n    batch_size=8  # per GPU\n)\n",
            "x = f(\n    ds,\n    batch_size=8,  # per GPU\n    num_workers=4\n)\n",
        ),
        ("x = {'a': 1}\n", "x = {'a': 1, 'num_workers': 4}\n"),
    ];
    for (src, want) in cases {
        let m = &module(src)[0];
        let call = m.get_path(&["x"]).unwrap();
        let NodeKind::Map(map) = &call.kind else {
            panic!("{src}")
        };
        let e = insert_argument(src, call, map, &["num_workers"], &NewValue::Int(4)).unwrap();
        let out = apply(src, &e);
        assert_eq!(out, want, "{src}");
        let again = &module(&out)[0];
        assert!(again.get_path(&["x", "num_workers"]).is_some(), "{out}");
    }
    // After a `**kwargs` the place of a new argument is not ours to choose.
    let src = "x = f(ds, **extra)\n";
    let m = &module(src)[0];
    let call = m.get_path(&["x"]).unwrap();
    let NodeKind::Map(map) = &call.kind else {
        panic!()
    };
    assert!(insert_argument(src, call, map, &["num_workers"], &NewValue::Int(4)).is_none());
}

#[test]
fn environment_updates_and_imported_environ() {
    let src = r#"
import os
from os import environ
os.environ.update({"NCCL_DEBUG": "INFO", "OMP_NUM_THREADS": "8"})
os.environ.update(TOKENIZERS_PARALLELISM="false")
environ["CUDA_VISIBLE_DEVICES"] = "0,1"
"#;
    let m = &module(src)[0];
    assert_eq!(text_at(m, &["env", "NCCL_DEBUG"]), Some("INFO"));
    assert_eq!(text_at(m, &["env", "OMP_NUM_THREADS"]), Some("8"));
    assert_eq!(
        text_at(m, &["env", "TOKENIZERS_PARALLELISM"]),
        Some("false")
    );
    assert_eq!(text_at(m, &["env", "CUDA_VISIBLE_DEVICES"]), Some("0,1"));
    let key = m.get_entry_path(&["env", "NCCL_DEBUG"]).unwrap();
    assert_eq!(&src[key.key_span.clone()], "\"NCCL_DEBUG\"");
    // `dict.update` on anything else is no environment.
    assert!(module("cfg.update({\"A\": 1})\n")[0]
        .get_path(&["env", "A"])
        .is_none());
}

#[test]
fn keywords_are_never_argument_names_and_control_characters_are_escaped() {
    let src = "x = f(a=1)\n";
    let m = &module(src)[0];
    let call = m.get_path(&["x"]).unwrap();
    let NodeKind::Map(map) = &call.kind else {
        panic!()
    };
    for kw in ["class", "None", "lambda"] {
        assert!(insert_argument(src, call, map, &[kw], &NewValue::Int(1)).is_none());
    }
    // Soft keywords are ordinary names in an argument list.
    assert!(insert_argument(src, call, map, &["match"], &NewValue::Int(1)).is_some());
    let e = insert_argument(src, call, map, &["s"], &NewValue::Str("a\0b\u{1b}".into())).unwrap();
    let out = apply(src, &e);
    assert_eq!(out, "x = f(a=1, s=\"a\\u0000b\\u001b\")\n");
    assert_eq!(text_at(&module(&out)[0], &["x", "s"]), Some("a\0b\u{1b}"));
}

#[test]
fn a_name_bound_more_than_once_anywhere_at_module_level_is_unknown() {
    let src = r#"
import os
A = 8
A += 8
B, C = 1, 2
C = 3
D = 4
for D in range(2):
    pass
E = 5
def bump():
    global E
    E = 6
F = 7
if __name__ == "__main__":
    F = 70
    G = 9
    loader = DataLoader(ds, a=A, c=C, d=D, e=E, f=F, g=G, os=os)
"#;
    let m = &module(src)[0];
    for k in ["a", "c", "d", "e", "f", "os"] {
        let n = m.get_path(&["DataLoader", k]).unwrap();
        assert_eq!(n.as_scalar().unwrap().kind, ScalarKind::CustomTag, "{k}");
    }
    // Bound once, in a block at module level: its value.
    assert_eq!(text_at(m, &["DataLoader", "g"]), Some("9"));
}

#[test]
fn a_function_s_own_names_hide_the_module_s() {
    let src = r#"
batch_size = 8
workers = 2
def train(batch_size):
    workers = 4
    pin = True
    for epoch in range(3):
        pass
    loader = DataLoader(ds, batch_size=batch_size, num_workers=workers, pin_memory=pin, e=epoch)
def evaluate():
    return DataLoader(ds, batch_size=batch_size)
"#;
    let m = &module(src)[0];
    // The train-bound loader: a parameter and a loop variable are unknown, locals resolve.
    let n = |k: &str| m.get_path(&["DataLoader", k]).unwrap();
    assert_eq!(
        n("batch_size").as_scalar().unwrap().kind,
        ScalarKind::CustomTag
    );
    assert_eq!(n("e").as_scalar().unwrap().kind, ScalarKind::CustomTag);
    assert_eq!(
        n("num_workers").as_scalar().unwrap().kind,
        ScalarKind::Int(4)
    );
    assert_eq!(&src[n("num_workers").span.clone()], "4");
    assert_eq!(
        n("pin_memory").as_scalar().unwrap().kind,
        ScalarKind::Bool(true)
    );
    // A function without its own `batch_size` reads the module's.
    let src2 =
        "batch_size = 8\ndef evaluate():\n    return DataLoader(ds, batch_size=batch_size)\n";
    assert_eq!(
        text_at(&module(src2)[0], &["DataLoader", "batch_size"]),
        Some("8")
    );
}
