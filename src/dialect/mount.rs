//! The tree a dialect reads in code and launch scripts: its `[[mount]]` entries place parts of
//! the front-end's tree (a call's arguments, a command's flags) at paths of the dialect's key
//! space, so that one dialect file serves a YAML config, the same settings written as
//! `TrainingArguments(...)`, and the flags of the command that launches it.

use std::borrow::Cow;

use super::spec::{Dialect, Mount};
use crate::syntax::{Entry, Format, Map, MapStyle, Node, NodeKind, Quote, ScalarKind};

/// The root `dialect` reads in a document root of `format`: the root itself where the dialect
/// has no mounts for the format, the assembled tree where it has, and `None` when none of its
/// mounts finds its part (the file is not this dialect's).
pub fn view<'a>(dialect: &Dialect, root: &'a Node, format: Format) -> Option<Cow<'a, Node>> {
    let mounts: Vec<&Mount> = dialect
        .mount
        .iter()
        .filter(|m| m.format == format)
        .collect();
    if mounts.is_empty() {
        return Some(Cow::Borrowed(root));
    }
    if format == Format::Shell && !mounts.iter().any(|m| m.takes_line(root)) {
        return None;
    }
    // The parts the mounts find. One part placed at the root is the view itself: no copy (the
    // usual case, e.g. an llm-foundry YAML without MCLI's `parameters`).
    let found: Vec<(&Mount, &Node)> = mounts
        .iter()
        .filter(|m| format != Format::Shell || m.takes_line(root))
        .filter_map(|m| Some((*m, root.get_path(&path_of(&m.take))?)))
        .collect();
    if let [(m, part)] = found.as_slice() {
        if m.at.is_empty() && m.name_at.is_none() {
            return Some(Cow::Borrowed(*part));
        }
    }
    let mut base: Option<Node> = None;
    let mut placed = false;
    for m in mounts {
        if format == Format::Shell && !m.takes_line(root) {
            continue;
        }
        let Some(part) = root.get_path(&path_of(&m.take)) else {
            continue;
        };
        placed = true;
        let at = path_of(&m.at);
        let base = base.get_or_insert_with(|| {
            if at.is_empty() {
                part.clone()
            } else {
                Node::map(Vec::new(), MapStyle::Implicit, root.span.clone())
            }
        });
        if at.is_empty() {
            if !std::ptr::eq(part, root) && base.span != part.span {
                merge_entries(base, part);
            }
        } else {
            place(base, &at, part.clone());
        }
        if let Some(name_at) = &m.name_at {
            // Where the part starts, with no width: nothing in the file to edit.
            let name = m.take.rsplit('.').next().unwrap_or(&m.take);
            let start = part.span.start;
            let node = Node::scalar(name, ScalarKind::Str(Quote::Double), start..start);
            place(base, &path_of(name_at), node);
        }
    }
    placed.then_some(())?;
    base.map(Cow::Owned)
}

fn path_of(dotted: &str) -> Vec<&str> {
    if dotted.is_empty() {
        Vec::new()
    } else {
        dotted.split('.').collect()
    }
}

/// Adds `part`'s entries to the mapping `base` (later entries win lookups).
fn merge_entries(base: &mut Node, part: &Node) {
    let (Some(b), Some(p)) = (base.as_map(), part.as_map()) else {
        return;
    };
    let mut entries = b.entries.clone();
    entries.extend(p.entries.iter().cloned());
    let style = b.style;
    base.kind = NodeKind::Map(Map::new(entries, style));
}

/// Puts `node` at `path` under `base`, creating virtual mappings on the way.
fn place(base: &mut Node, path: &[&str], node: Node) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let NodeKind::Map(m) = &base.kind else {
        return;
    };
    let mut entries = m.entries.clone();
    let style = m.style;
    if rest.is_empty() {
        entries.push(Entry {
            key: first.to_string(),
            key_span: node.span.start..node.span.start,
            value: node,
        });
    } else {
        let at = node.span.start;
        let mut child = match entries.iter().rposition(|e| e.key == *first) {
            Some(i) if entries[i].value.as_map().is_some() => entries.remove(i).value,
            _ => Node::map(Vec::new(), MapStyle::Implicit, at..at),
        };
        place(&mut child, rest, node);
        entries.push(Entry {
            key: first.to_string(),
            key_span: at..at,
            value: child,
        });
    }
    base.kind = NodeKind::Map(Map::new(entries, style));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::parse_dialect;
    use crate::syntax::parse;

    const D: &str = r#"
name = "t"
title = "Test"
formats = ["yaml"]
[[detect]]
keys = { "trainer.devices" = 1 }
min_score = 1
[[mount]]
format = "yaml"
take = "Args"
[[mount]]
format = "yaml"
take = "Trainer"
at = "trainer"
"#;

    #[test]
    fn mounts_assemble_the_dialect_view() {
        let d = parse_dialect("t", D).unwrap();
        let doc = parse(
            "Args: {lr: 1}\nTrainer: {devices: 2}\nother: 3\n",
            Format::Yaml,
        )
        .unwrap();
        let v = view(&d, &doc.roots[0], Format::Yaml).unwrap();
        assert!(v.get_path(&["lr"]).is_some());
        assert!(v.get_path(&["trainer", "devices"]).is_some());
        assert!(v.get_path(&["other"]).is_none());
        // The root keeps the call's own style, so a fix can add an argument to it.
        assert_eq!(v.as_map().unwrap().style, MapStyle::Flow);
        let none = parse("other: 3\n", Format::Yaml).unwrap();
        assert!(view(&d, &none.roots[0], Format::Yaml).is_none());
        // A format the dialect does not mount reads the root as it is.
        let json = parse("{\"a\": 1}", Format::Json).unwrap();
        assert!(matches!(
            view(&d, &json.roots[0], Format::Json),
            Some(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn a_mount_can_name_the_call_it_takes() {
        let d = parse_dialect(
            "t",
            r#"
name = "t"
title = "Test"
formats = ["python"]
[[detect]]
keys = { lr = 1 }
min_score = 1
[[mount]]
format = "python"
take = "GRPOConfig"
name_at = "config_class"
"#,
        )
        .unwrap();
        let doc = parse("args = GRPOConfig(lr=1e-6)\n", Format::Python).unwrap();
        let v = view(&d, &doc.roots[0], Format::Python).unwrap();
        let class = v.get_path(&["config_class"]).and_then(|n| n.as_scalar());
        assert_eq!(class.map(|s| s.text.as_str()), Some("GRPOConfig"));
        // No width: nothing in the file to edit.
        let node = v.get_path(&["config_class"]).unwrap();
        assert!(node.span.is_empty());
        assert!(v.get_path(&["lr"]).is_some());
    }

    #[test]
    fn scripts_match_by_name_or_path_ending() {
        let m = Mount {
            format: Format::Shell,
            take: "args".into(),
            at: String::new(),
            script: vec!["scripts/train.py".into(), "lerobot-train".into()],
            config_flag: None,
            named_config: false,
            subcommand: vec![],
            name_at: None,
        };
        assert!(m.takes_script("scripts/train.py"));
        assert!(m.takes_script("./scripts/train.py"));
        assert!(m.takes_script("/opt/openpi/scripts/train.py"));
        assert!(!m.takes_script("myscripts/train.py"));
        assert!(m.takes_script("lerobot-train"));
        assert!(!m.takes_script("train.py"));
    }

    #[test]
    fn a_subcommand_mount_takes_lines_of_any_script_that_name_a_config() {
        let m = Mount {
            format: Format::Shell,
            take: "args".into(),
            at: String::new(),
            script: vec![],
            config_flag: Some("config".into()),
            named_config: false,
            subcommand: vec!["fit".into()],
            name_at: None,
        };
        let line = |src: &str| {
            let doc = crate::syntax::parse(src, Format::Shell).unwrap();
            doc.roots[0].clone()
        };
        assert!(m.takes_line(&line("python main.py fit --config c.yaml\n")));
        assert!(m.takes_line(&line(
            "python cli.py fit --config=c.yaml --trainer.devices 2\n"
        )));
        assert!(!m.takes_line(&line("python main.py test --config c.yaml\n")));
        assert!(!m.takes_line(&line("python main.py fit --trainer.devices 2\n")));
        assert!(!m.takes_line(&line("python train.py --config c.yaml\n")));
    }
}
