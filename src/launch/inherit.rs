//! Configs that inherit from others (mmengine `_base_ = [...]`): the bases' settings lie under
//! the file's own, each keeping the span in its own file.

use std::borrow::Cow;
use std::collections::HashSet;
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
    // The bases' texts, lying (for spans) after the file's own.
    let mut texts = String::new();
    let mut merged = Vec::new();
    let top = sources::identity(path);
    // A set: a file may list hundreds of bases, and each is looked up here.
    let mut seen = HashSet::from([top.clone()]);
    let mut chain = Chain {
        stack: vec![top],
        cycles: Vec::new(),
    };
    let base = bases_of(
        dialect,
        &view,
        key,
        path,
        None,
        text.len(),
        &mut texts,
        &mut merged,
        &mut seen,
        &mut chain,
        0,
    );
    let cycles = chain.cycles;
    let Some(base) = base else {
        if cycles.is_empty() {
            return Err(view);
        }
        // Nothing could be merged, but the loop itself is what the framework trips on.
        return Ok(Run {
            dialect,
            setup: dialect::resolve(dialect, &view),
            root: view,
            own_len: text.len(),
            text: Cow::Borrowed(text),
            merged_text: texts,
            merged,
            composed: false,
            cycles,
        });
    };
    let root = merge::overlay_owned(&base, &view);
    Ok(Run {
        dialect,
        setup: dialect::resolve(dialect, &root),
        root: Cow::Owned(root),
        own_len: text.len(),
        text: Cow::Borrowed(text),
        merged_text: texts,
        merged,
        composed: false,
        cycles,
    })
}

/// The files on the current path of the chain, and the loops found in it (where the launch file
/// names the loop, and the chain as a message says it).
struct Chain {
    stack: Vec<PathBuf>,
    cycles: Vec<(Span, String)>,
}

impl Chain {
    /// The chain from `abs`'s first place on the stack back to it, as file names.
    fn looped(&self, abs: &Path) -> Option<String> {
        let at = self.stack.iter().position(|p| p == abs)?;
        let names: Vec<String> = self.stack[at..]
            .iter()
            .chain(std::iter::once(&abs.to_path_buf()))
            .map(|p| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            })
            .collect();
        Some(names.join(" -> "))
    }
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
    own_len: usize,
    texts: &mut String,
    merged: &mut Vec<Merged>,
    seen: &mut HashSet<PathBuf>,
    chain: &mut Chain,
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
        let abs = sources::identity(&file);
        let at = named_at.cloned().unwrap_or_else(|| item.span.clone());
        // A file that is its own base, directly or through others: the framework's loader
        // recurses into it until it fails; the chain is reported and not followed.
        if let Some(looped) = chain.looped(&abs) {
            chain
                .cycles
                .push((at, format!("`{key}` chain loops back on itself: {looped}")));
            continue;
        }
        // A base two bases share (a diamond) is merged once.
        if seen.contains(&abs) {
            continue;
        }
        let Some(found) = sources::read(&file) else {
            continue;
        };
        seen.insert(abs.clone());
        let Some(root) = found.doc.roots.first() else {
            continue;
        };
        let view = dialect::view(dialect, root, found.doc.format)
            .map_or_else(|| root.clone(), Cow::into_owned);
        let start = own_len + texts.len() + 1;
        texts.push('\n');
        texts.push_str(&found.text);
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
        chain.stack.push(abs);
        let deeper = bases_of(
            dialect,
            &view,
            key,
            &file,
            Some(&at),
            own_len,
            texts,
            merged,
            seen,
            chain,
            depth + 1,
        );
        chain.stack.pop();
        if let Some(deeper) = deeper {
            own = merge::overlay_owned(&deeper, &own);
        }
        acc = Some(match acc {
            Some(a) => merge::overlay_owned(&a, &own),
            None => own,
        });
    }
    acc
}
