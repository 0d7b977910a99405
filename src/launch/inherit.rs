//! Configs that inherit from others (mmengine `_base_ = [...]`): the bases' settings lie under
//! the file's own, each keeping the span in its own file.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{merge, sources, Merged, Run};
use crate::dialect::{self, Dialect};
use crate::syntax::{Node, NodeKind, Span};

/// Bases of bases are followed this deep (real configs use two or three levels).
const MAX_DEPTH: usize = 8;

/// The run of a config that names bases under `key`, or `None` when none can be read (the
/// file is then linted on its own).
pub fn run<'a>(
    dialect: &'a Dialect,
    view: Cow<'a, Node>,
    key: &str,
    path: &Path,
    text: &'a str,
) -> Result<Run<'a>, Cow<'a, Node>> {
    let mut texts = String::from(text);
    let mut merged = Vec::new();
    let mut seen = vec![std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())];
    let Some(base) = bases_of(
        dialect,
        &view,
        key,
        path,
        None,
        &mut texts,
        &mut merged,
        &mut seen,
        0,
    ) else {
        return Err(view);
    };
    let root = merge::overlay_owned(&base, &view);
    Ok(Run {
        dialect,
        setup: dialect::resolve(dialect, &root),
        root: Cow::Owned(root),
        own_len: text.len(),
        text: Cow::Owned(texts),
        merged,
        composed: false,
    })
}

/// The bases `node` names, read and merged in order (each with its own bases under it), their
/// spans shifted to where their texts are appended to `texts`. `named_at` is where the
/// launch file names the chain (the top file's `_base_` entry), for findings re-anchored there.
#[allow(clippy::too_many_arguments)]
fn bases_of(
    dialect: &Dialect,
    node: &Node,
    key: &str,
    from: &Path,
    named_at: Option<&Span>,
    texts: &mut String,
    merged: &mut Vec<Merged>,
    seen: &mut Vec<PathBuf>,
    depth: usize,
) -> Option<Node> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let listed = node.get_path(&[key])?;
    let items: Vec<&Node> = match &listed.kind {
        NodeKind::Seq(items) => items.iter().collect(),
        NodeKind::Scalar(_) => vec![listed],
        NodeKind::Map(_) => return None,
    };
    let dir = from.parent().unwrap_or(Path::new("."));
    let mut acc: Option<Node> = None;
    for item in items {
        let Some(written) = item.as_scalar().map(|s| s.text.clone()) else {
            continue;
        };
        let file = dir.join(&written);
        let Ok(abs) = std::path::absolute(&file) else {
            continue;
        };
        // A cycle of bases (a file that is its own base) stops here.
        if seen.contains(&abs) {
            continue;
        }
        let Some(found) = sources::read(&file) else {
            continue;
        };
        seen.push(abs);
        let Some(root) = found.doc.roots.first() else {
            continue;
        };
        let view = dialect::view(dialect, root, found.doc.format)
            .map_or_else(|| root.clone(), Cow::into_owned);
        let start = texts.len() + 1;
        texts.push('\n');
        texts.push_str(&found.text);
        let at = named_at.cloned().unwrap_or_else(|| item.span.clone());
        merged.push(Merged {
            path: found.path.clone(),
            format: found.doc.format,
            start,
            len: found.text.len(),
            root_index: 0,
            named_at: at.clone(),
            what: format!("base `{written}`"),
        });
        let mut own = merge::shifted(&view, start);
        if let Some(deeper) = bases_of(
            dialect,
            &view,
            key,
            &file,
            Some(&at),
            texts,
            merged,
            seen,
            depth + 1,
        ) {
            own = merge::overlay_owned(&deeper, &own);
        }
        acc = Some(match acc {
            Some(a) => merge::overlay_owned(&a, &own),
            None => own,
        });
    }
    acc
}
