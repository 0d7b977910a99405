use super::*;
use crate::syntax::Loader;

fn doc(src: &str) -> Document {
    parse(src).unwrap()
}

fn text_at<'a>(root: &'a Node, path: &[&str]) -> Option<&'a str> {
    root.get_path(path)
        .and_then(|n| n.as_scalar())
        .map(|s| s.text.as_str())
}

#[test]
fn the_openpi_guide_line() {
    let src = "XLA_PYTHON_CLIENT_MEM_FRACTION=0.95 uv run scripts/train.py pi0_libero --exp-name=my_experiment --overwrite\n";
    let d = doc(src);
    assert_eq!(d.roots.len(), 1);
    let r = &d.roots[0];
    assert_eq!(r.tag.as_deref(), Some("launch:python"));
    assert_eq!(text_at(r, &["script"]), Some("scripts/train.py"));
    assert_eq!(
        text_at(r, &["env", "XLA_PYTHON_CLIENT_MEM_FRACTION"]),
        Some("0.95")
    );
    let f = r
        .get_path(&["env", "XLA_PYTHON_CLIENT_MEM_FRACTION"])
        .unwrap();
    assert_eq!(&src[f.span.clone()], "0.95");
    let NodeKind::Seq(pos) = &r.get_path(&["positional"]).unwrap().kind else {
        panic!()
    };
    assert_eq!(pos[0].as_scalar().unwrap().text, "pi0_libero");
    assert_eq!(text_at(r, &["args", "exp-name"]), Some("my_experiment"));
    assert_eq!(text_at(r, &["args", "overwrite"]), Some("true"));
    assert!(r.get_path(&["args", "overwrite"]).unwrap().span.is_empty());
    assert_eq!(r.span.start, 0);
    assert_eq!(r.span.end, src.trim_end().len());
}

#[test]
fn lerobot_lines_with_continuations_and_dotted_flags() {
    let src = "#!/bin/bash\nlerobot-train \\\n  --policy.type=act \\\n  --dataset.repo_id=lerobot/aloha_sim_insertion_human \\\n  --batch_size=8 --steps 50000 \\\n  --num_workers=0\n";
    let d = doc(src);
    let r = &d.roots[0];
    assert_eq!(r.tag.as_deref(), Some("launch:lerobot-train"));
    assert_eq!(text_at(r, &["args", "policy", "type"]), Some("act"));
    assert_eq!(text_at(r, &["args", "steps"]), Some("50000"));
    let w = r.get_path(&["args", "num_workers"]).unwrap();
    assert_eq!(&src[w.span.clone()], "0");
    let v = w.as_scalar().unwrap().value(Loader::Yaml12);
    assert_eq!(v, crate::syntax::Value::Int(0));
}

#[test]
fn launchers_and_their_flags() {
    let src = "torchrun --nproc_per_node=8 --nnodes 1 --standalone train.py --config configs/llama.yaml --lr 1e-4\naccelerate launch --config_file configs/accel.yaml --num-processes=4 --mixed_precision bf16 train.py --per_device_train_batch_size 8 --deepspeed ds.json\ndeepspeed --num_gpus 2 train.py --deepspeed_config ds.json\npython -m torch.distributed.run --nproc-per-node 2 -m my.train --x 1\n";
    let d = doc(src);
    assert_eq!(d.roots.len(), 4);
    let t = &d.roots[0];
    assert_eq!(text_at(t, &["launcher", "program"]), Some("torchrun"));
    assert_eq!(text_at(t, &["launcher", "nproc_per_node"]), Some("8"));
    assert_eq!(text_at(t, &["launcher", "nnodes"]), Some("1"));
    assert_eq!(text_at(t, &["launcher", "standalone"]), Some("true"));
    assert_eq!(text_at(t, &["script"]), Some("train.py"));
    assert_eq!(text_at(t, &["args", "config"]), Some("configs/llama.yaml"));
    assert_eq!(text_at(t, &["args", "lr"]), Some("1e-4"));
    let a = &d.roots[1];
    assert_eq!(a.tag.as_deref(), Some("launch:accelerate"));
    assert_eq!(text_at(a, &["launcher", "num_processes"]), Some("4"));
    assert_eq!(text_at(a, &["launcher", "mixed_precision"]), Some("bf16"));
    assert_eq!(text_at(a, &["args", "deepspeed"]), Some("ds.json"));
    assert_eq!(text_at(&d.roots[2], &["launcher", "num_gpus"]), Some("2"));
    let m = &d.roots[3];
    assert_eq!(m.tag.as_deref(), Some("launch:torchrun"));
    assert_eq!(text_at(m, &["launcher", "nproc_per_node"]), Some("2"));
    assert_eq!(text_at(m, &["script"]), Some("my.train"));
}

#[test]
fn hydra_overrides_and_exported_variables() {
    let src = "export NUM_WORKERS=0\nBS=64\nMODE=x\nMODE=y\npython train.py trainer.max_steps=1000 data.batch_size=$BS +experiment=$MODE\n";
    let d = doc(src);
    let r = &d.roots[0];
    let args = r.get_path(&["args"]).unwrap();
    assert_eq!(args.tag.as_deref(), Some("hydra"));
    assert_eq!(text_at(r, &["args", "trainer", "max_steps"]), Some("1000"));
    // `$BS` is set once: its value, spanning the assignment.
    let bs = r.get_path(&["args", "data", "batch_size"]).unwrap();
    assert_eq!(&src[bs.span.clone()], "64");
    // `$MODE` is set twice: unknown.
    let mode = r
        .get_path(&["args", "experiment"])
        .unwrap()
        .as_scalar()
        .unwrap();
    assert_eq!(mode.kind, ScalarKind::CustomTag);
    assert_eq!(text_at(r, &["env", "NUM_WORKERS"]), Some("0"));
    // A plain assignment is the shell's own: not in the launched process's environment.
    assert!(r.get_path(&["env", "BS"]).is_none());
}

#[test]
fn background_runs_and_non_launch_commands() {
    let src = "cd /work && pip install -e .\nCUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6 python scripts/train.py a --exp-name=a &\nCUDA_VISIBLE_DEVICES=0 XLA_PYTHON_CLIENT_MEM_FRACTION=0.6 python scripts/train.py b --exp-name=b &\nwait\n";
    let d = doc(src);
    assert_eq!(d.roots.len(), 2);
    for r in &d.roots {
        assert_eq!(text_at(r, &["background"]), Some("true"));
        assert_eq!(text_at(r, &["env", "CUDA_VISIBLE_DEVICES"]), Some("0"));
    }
}

#[test]
fn edits_keep_quotes_and_append_flags() {
    let src = "lerobot-train --batch_size=\"8\" --policy.type='act' --steps=10 &\n";
    let d = doc(src);
    let r = &d.roots[0];
    let bs = r.get_path(&["args", "batch_size"]).unwrap();
    let e = replace_value(src, bs, &NewValue::Int(4)).unwrap();
    assert_eq!(&src[e.range.clone()], "\"8\"");
    assert_eq!(e.content, "\"4\"");
    let args = r.get_path(&["args"]).unwrap();
    let m = args.as_map().unwrap();
    let e = insert_flag(src, args, m, &["num_workers"], &NewValue::Int(4)).unwrap();
    let out = format!(
        "{}{}{}",
        &src[..e.range.start],
        e.content,
        &src[e.range.end..]
    );
    assert_eq!(
        out,
        "lerobot-train --batch_size=\"8\" --policy.type='act' --steps=10 --num_workers=4 &\n"
    );
    let again = doc(&out);
    assert_eq!(
        text_at(&again.roots[0], &["args", "num_workers"]),
        Some("4")
    );
}

#[test]
fn scanning_never_panics() {
    for src in [
        "\"unterminated python train.py",
        "python train.py --x=\"$(date",
        "cat <<EOF\npython a.py\n",
        "torchrun --nproc_per_node",
        "accelerate launch",
        "python -m",
        "uv run",
        "env",
        "python 'é' --ü=ö",
        "x=${",
    ] {
        let _ = parse(src);
    }
}

#[test]
fn dotted_flags_nest_in_one_pass_with_the_last_of_a_key_winning() {
    let src = "python t.py --a.b=1 --a=2 --a.c=3 --a.b=4 --x.y.z=5\n";
    let r = &doc(src).roots[0];
    assert_eq!(text_at(r, &["args", "x", "y", "z"]), Some("5"));
    // The mapping `a` and the flag `--a=2` are both kept, in order; a lookup of `a` finds the
    // flag (the later entry), and the mapping holds every dotted `a.` flag, the last `b` last.
    let args = r.get_path(&["args"]).unwrap().as_map().unwrap();
    let keys: Vec<&str> = args.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["a", "a", "x"]);
    assert_eq!(text_at(r, &["args", "a"]), Some("2"));
    let a = &args.entries[0].value;
    assert_eq!(text_at(a, &["b"]), Some("4"));
    assert_eq!(text_at(a, &["c"]), Some("3"));
    // A key of more parts than the tree may nest stays one flat key.
    let deep = format!("a{}", ".a".repeat(MAX_DEPTH + 1));
    let src = format!("python t.py --{deep}=1\n");
    let r = &doc(&src).roots[0];
    assert_eq!(text_at(r, &["args", deep.as_str()]), Some("1"));
}

#[test]
fn variables_exported_further_down_reach_the_lines_before() {
    let src = "A=1\nB=2\npython t.py\nexport A\npython t.py\nexport B\nC=3\n";
    let d = doc(src);
    assert_eq!(text_at(&d.roots[0], &["env", "A"]), Some("1"));
    assert_eq!(text_at(&d.roots[0], &["env", "B"]), Some("2"));
    assert_eq!(text_at(&d.roots[1], &["env", "B"]), Some("2"));
    assert_eq!(d.roots[1].get_path(&["env", "C"]), None);
}

#[test]
fn a_script_giving_its_lines_quadratic_environment_is_refused() {
    // Each line sees every export before it: 2,000 exports interleaved with 2,000 lines are
    // 2,000,000 entries (about 600 MB of tree) for a 64 KB script.
    let src: String = (0..2000)
        .map(|i| format!("export V{i}={i}\npython train.py --lr 1\n"))
        .collect();
    let e = parse(&src).unwrap_err();
    assert!(e.message.contains("environment variables"), "{}", e.message);
    assert!(src[e.span.clone()].starts_with("python train.py"));
    // A sweep: many lines under a few exports is read.
    let sweep: String = (0..30)
        .map(|i| format!("export V{i}={i}\n"))
        .collect::<String>()
        + &"python train.py --lr 1\n".repeat(3000);
    assert_eq!(parse(&sweep).unwrap().roots.len(), 3000);
}
