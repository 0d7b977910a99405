//! Hydra composition, statically: a config's `defaults:` list names the config-group files it
//! is built from, each merged at its package in list order with the file's own keys at
//! `_self_`; then `${a.b}` interpolations are resolved against the composed tree. Every value
//! keeps the span in the file that wrote it, so a finding says where it was set.
//!
//! The rules follow Hydra 1.3's defaults list (website/docs/advanced/defaults_list.md and
//! hydra/_internal/defaults_list.py at facebookresearch/hydra@2c03d1b9): a group path is
//! relative to the containing config's group unless it starts with `/`; `_self_` is implicitly
//! last; a file's package is its group unless its `# @package` header says otherwise
//! (`_global_`: the root); `optional` entries that do not exist are skipped, and so is every
//! entry whose file is not found (it may live in a plugin or on the command line). A command
//! line's overrides are not applied.

use std::path::{Path, PathBuf};

use super::{merge, sources, Merged};
use crate::syntax::{Entry, Format, MapStyle, Node, NodeKind, Span};

/// Files read for one composition at most (real trees compose 5 to 15).
const MAX_FILES: usize = 64;
/// Nested defaults lists followed at most.
const MAX_DEPTH: usize = 8;
/// Interpolations that point at interpolations are followed this far.
const MAX_HOPS: usize = 8;
/// Config-root candidates read while deciding whether a file is a group option.
const MAX_PRIMARIES: usize = 64;

/// A config composed from its defaults list: the tree, each composed file's text (after a
/// line break each, lying for spans right after the file's own text), and where each one's
/// text lies.
pub struct Composed {
    pub root: Node,
    pub text: String,
    pub merged: Vec<Merged>,
    /// Defaults lists that lead back to a file already being composed: where the file names
    /// the way in, and the chain.
    pub cycles: Vec<(Span, String)>,
}

/// Where a file sits in a Hydra config tree.
struct Place {
    /// The config root (the primary config's folder).
    root: PathBuf,
    /// The file's config group (`trainer`, `model/backbone`), empty for a primary config.
    group: String,
    /// For a group option: the primary config that lists its group.
    primary: Option<PathBuf>,
}

struct State<'n> {
    /// The length of the file's own text: the composed texts lie after it.
    own_len: usize,
    text: String,
    /// A group option composed inside its primary config: its group, its own (unshifted)
    /// root and its package, read where the primary's defaults list chooses that group.
    select: Option<(String, &'n Node, String)>,
    /// `override /group: option` entries of the selected option: they change the primary's
    /// choice for that group (Hydra applies them to the whole defaults list).
    overrides: Vec<(String, String)>,
    merged: Vec<Merged>,
    /// The files on the current path of the composition, to stop a cycle.
    stack: Vec<PathBuf>,
    files: usize,
    cycles: Vec<(Span, String)>,
}

/// The composition of a YAML config that is a Hydra primary config (it has a `defaults:`
/// list) or an option of a config group some primary config in a folder above lists; `None`
/// otherwise, or when nothing was composed and nothing interpolated.
pub fn compose(root: &Node, text: &str, path: &Path) -> Option<Composed> {
    root.as_map()?;
    let place = place_of(root, path)?;
    let package = match package_header(text) {
        Some(p) => p,
        None => dotted(&place.group),
    };
    let abs = sources::identity(path);
    let mut st = State {
        own_len: text.len(),
        text: String::new(),
        select: None,
        overrides: Vec::new(),
        merged: Vec::new(),
        stack: vec![abs],
        files: 0,
        cycles: Vec::new(),
    };
    let composed = match &place.primary {
        // A group option is what its primary config composes with this option chosen
        // (`python train.py trainer=gpu`).
        Some(primary) => {
            st.overrides = overrides_of(root, &place.group);
            st.select = Some((place.group.clone(), root, package.clone()));
            let top = Place {
                root: place.root.clone(),
                group: String::new(),
                primary: None,
            };
            let nowhere = 0..0;
            read_option(primary, &top, "", None, &nowhere, &mut st, 0)?
        }
        None => compose_file(root, &place, &place.group, &package, None, &mut st, 0),
    };
    let interpolated = interpolate(&composed);
    let changed = interpolated.is_some();
    let root = interpolated.unwrap_or(composed);
    if st.merged.is_empty() && !changed && package.is_empty() && st.cycles.is_empty() {
        return None;
    }
    Some(Composed {
        root,
        text: st.text,
        merged: st.merged,
        cycles: st.cycles,
    })
}

/// The `override` entries of a group option's defaults list, as (absolute group, option).
fn overrides_of(root: &Node, group: &str) -> Vec<(String, String)> {
    let Some(NodeKind::Seq(items)) = root.get_path(&["defaults"]).map(|d| &d.kind) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| item.as_map()?.entries.first())
        .filter(|e| e.key.trim_start().starts_with("override "))
        .filter_map(|e| {
            let key = entry_key(&e.key);
            let g = match key.group.strip_prefix('/') {
                Some(abs) => abs.to_string(),
                None => join(group.rsplit_once('/').map_or("", |(p, _)| p), &key.group),
            };
            Some((g, e.value.as_scalar()?.text.clone()))
        })
        .collect()
}

/// Whether `path` is a primary config or a group option, and of which config root.
fn place_of(root: &Node, path: &Path) -> Option<Place> {
    let dir = std::path::absolute(path).ok()?.parent()?.to_path_buf();
    // A group option: a folder above holds a config whose defaults list names this group.
    for up in dir.ancestors().skip(1).take(3) {
        let Ok(rel) = dir.strip_prefix(up) else {
            continue;
        };
        let group = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if let Some((primary, _)) = primaries_in(up)
            .iter()
            .find(|(_, d)| names_group(d, &group))
        {
            return Some(Place {
                root: up.to_path_buf(),
                group,
                primary: Some(primary.clone()),
            });
        }
    }
    root.get_path(&["defaults"])
        .is_some_and(|d| matches!(d.kind, NodeKind::Seq(_)))
        .then(|| Place {
            root: dir,
            group: String::new(),
            primary: None,
        })
}

/// The YAML configs directly in `dir` that have a defaults list, with it: training primaries
/// first (`train.yaml` over `eval.yaml`), then by name. Read once per folder and run: every
/// YAML file below a folder asks for the same list.
fn primaries_in(dir: &Path) -> std::sync::Arc<Vec<(PathBuf, Node)>> {
    type Cache = std::collections::HashMap<PathBuf, std::sync::Arc<Vec<(PathBuf, Node)>>>;
    static CACHE: std::sync::OnceLock<std::sync::Mutex<Cache>> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(dir).cloned()) {
        return hit;
    }
    let found = std::sync::Arc::new(read_primaries(dir));
    if let Ok(mut c) = cache.lock() {
        c.insert(dir.to_path_buf(), found.clone());
    }
    found
}

fn read_primaries(dir: &Path) -> Vec<(PathBuf, Node)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    paths.sort_by_key(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().to_string());
        (!name.as_deref().is_some_and(|n| n.contains("train")), name)
    });
    let mut out = Vec::new();
    for p in paths.into_iter().take(MAX_PRIMARIES) {
        let Some(found) = sources::read(&p) else {
            continue;
        };
        if let Some(d) = found
            .doc
            .roots
            .first()
            .and_then(|r| r.get_path(&["defaults"]))
            .filter(|d| matches!(d.kind, NodeKind::Seq(_)))
        {
            out.push((p, d.clone()));
        }
    }
    out
}

fn names_group(defaults: &Node, group: &str) -> bool {
    let NodeKind::Seq(items) = &defaults.kind else {
        return false;
    };
    items.iter().any(|item| {
        item.as_map()
            .and_then(|m| m.entries.first())
            .is_some_and(|e| entry_key(&e.key).group.trim_start_matches('/') == group)
    })
}

/// A defaults-list key: `override /trainer@pl: ...` is group `/trainer`, package `pl`. An
/// `optional` entry needs nothing of its own: every entry whose file is missing is skipped.
struct Key {
    group: String,
    package: Option<String>,
}

fn entry_key(written: &str) -> Key {
    let mut k = written.trim();
    while let Some(rest) = k
        .strip_prefix("override ")
        .or_else(|| k.strip_prefix("optional "))
    {
        k = rest.trim_start();
    }
    let (group, package) = match k.split_once('@') {
        Some((g, p)) => (g.to_string(), Some(p.to_string())),
        None => (k.to_string(), None),
    };
    Key { group, package }
}

/// `# @package X` in a file's header comment block.
fn package_header(text: &str) -> Option<String> {
    for line in text.lines().take(20) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Some(comment) = t.strip_prefix('#') else {
            break;
        };
        if let Some(p) = comment.trim().strip_prefix("@package") {
            let p = p.trim();
            return Some(match p {
                "_global_" => String::new(),
                _ => p.strip_prefix("_global_.").unwrap_or(p).to_string(),
            });
        }
    }
    None
}

fn dotted(group: &str) -> String {
    group.trim_matches('/').replace('/', ".")
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// One file's composition, as an absolute tree: its defaults in order, its own keys (less
/// `defaults`) placed at `package` where `_self_` is (last when unlisted).
fn compose_file(
    node: &Node,
    place: &Place,
    group: &str,
    package: &str,
    named_at: Option<&Span>,
    st: &mut State,
    depth: usize,
) -> Node {
    let own = at_package(&without_defaults(node), package);
    let items: Vec<&Node> = match node.get_path(&["defaults"]).map(|d| &d.kind) {
        Some(NodeKind::Seq(items)) if depth < MAX_DEPTH => items.iter().collect(),
        _ => return own,
    };
    let mut acc: Option<Node> = None;
    let mut self_done = false;
    let add = |acc: Option<Node>, next: Node| match acc {
        Some(a) => merge::overlay_owned(&a, &next),
        None => next,
    };
    for item in items {
        if item.as_scalar().is_some_and(|s| s.text == "_self_") {
            acc = Some(add(acc, own.clone()));
            self_done = true;
            continue;
        }
        // An override changes the choice of a group listed elsewhere: it is applied there.
        if item
            .as_map()
            .and_then(|m| m.entries.first())
            .is_some_and(|e| e.key.trim_start().starts_with("override "))
        {
            continue;
        }
        let at = named_at.cloned().unwrap_or_else(|| item.span.clone());
        if let Some(chosen) = selected(item, place, group, st, depth) {
            acc = Some(add(acc, chosen));
            continue;
        }
        for (file, child_group, child_package) in options(item, place, group, package, st) {
            if let Some(child) =
                read_option(&file, place, &child_group, child_package, &at, st, depth)
            {
                acc = Some(add(acc, child));
            }
        }
    }
    if !self_done {
        acc = Some(add(acc, own));
    }
    acc.unwrap_or_else(|| Node::map(Vec::new(), MapStyle::Implicit, node.span.clone()))
}

/// The files a defaults-list item names, each with its group and the package the entry gives
/// it (`None`: the file's header or its group decides).
fn options(
    item: &Node,
    place: &Place,
    group: &str,
    package: &str,
    st: &State,
) -> Vec<(PathBuf, String, Option<String>)> {
    // `- base_config` or `- db/mysql`: a config of the containing group.
    if let Some(s) = item.as_scalar() {
        let name = s.text.trim();
        if name.is_empty() || name.contains("${") {
            return Vec::new();
        }
        let full = join(group, name.trim_start_matches('/'));
        let full = if name.starts_with('/') {
            name.trim_start_matches('/').to_string()
        } else {
            full
        };
        let child_group = full.rsplit_once('/').map_or("", |(g, _)| g).to_string();
        return vec![(config_file(place, &full), child_group, None)];
    }
    let Some(entry) = item.as_map().and_then(|m| m.entries.first()) else {
        return Vec::new();
    };
    let key = entry_key(&entry.key);
    let child_group = if let Some(abs) = key.group.strip_prefix('/') {
        abs.to_string()
    } else {
        join(group, &key.group)
    };
    let child_package = key.package.map(|p| match p.as_str() {
        "_global_" => String::new(),
        "_group_" => dotted(&child_group),
        _ => match p.strip_prefix("_global_.") {
            Some(abs) => abs.to_string(),
            None => [package, p.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("."),
        },
    });
    let overridden = st
        .overrides
        .iter()
        .find(|(g, _)| *g == child_group)
        .map(|(_, o)| vec![o.clone()]);
    let chosen: Vec<String> = overridden.unwrap_or_else(|| match &entry.value.kind {
        NodeKind::Scalar(s) => vec![s.text.clone()],
        NodeKind::Seq(items) => items
            .iter()
            .filter_map(|i| i.as_scalar().map(|s| s.text.clone()))
            .collect(),
        NodeKind::Map(_) => Vec::new(),
    });
    // `null` (nothing chosen), `???` (chosen on the command line) and interpolated choices
    // name no file here.
    chosen
        .into_iter()
        .filter(|c| !c.is_empty() && c != "null" && c != "~" && c != "???" && !c.contains("${"))
        .map(|c| {
            (
                config_file(place, &join(&child_group, &c)),
                child_group.clone(),
                child_package.clone(),
            )
        })
        .collect()
}

/// The selected group option, composed where the primary's defaults list chooses its group
/// (once: it is taken out of the state). Its own defaults are in its own text, so their
/// entries name them there.
fn selected(item: &Node, place: &Place, group: &str, st: &mut State, depth: usize) -> Option<Node> {
    let entry = item.as_map()?.entries.first()?;
    let key = entry_key(&entry.key);
    let child_group = match key.group.strip_prefix('/') {
        Some(abs) => abs.to_string(),
        None => join(group, &key.group),
    };
    if st.select.as_ref()?.0 != child_group {
        return None;
    }
    let (g, root, package) = st.select.take()?;
    Some(compose_file(root, place, &g, &package, None, st, depth + 1))
}

fn config_file(place: &Place, name: &str) -> PathBuf {
    // Hydra looks configs up in its search path only: a `..` never leaves the config root.
    if name
        .split('/')
        .any(|part| part == ".." || part.contains('\\'))
    {
        return PathBuf::new();
    }
    let base = place.root.join(name);
    if base.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        return base;
    }
    let yml = base.with_extension("yml");
    if !base.with_extension("yaml").is_file() && yml.is_file() {
        return yml;
    }
    base.with_extension("yaml")
}

/// Reads one option file and composes it (with its own defaults) into an absolute tree, its
/// spans moved to where its text is appended. `None` when it is missing, unreadable, or
/// already on the path (a cycle; Hydra refuses one, the file is then read without it).
fn read_option(
    file: &Path,
    place: &Place,
    group: &str,
    package: Option<String>,
    named_at: &Span,
    st: &mut State,
    depth: usize,
) -> Option<Node> {
    if st.files >= MAX_FILES {
        return None;
    }
    let abs = sources::identity(file);
    if let Some(at) = st.stack.iter().position(|p| *p == abs) {
        let name = |p: &PathBuf| {
            p.strip_prefix(&place.root)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        let chain: Vec<String> = st.stack[at..]
            .iter()
            .chain(std::iter::once(&abs))
            .map(name)
            .collect();
        st.cycles.push((
            named_at.clone(),
            format!(
                "the Hydra defaults lists loop back on themselves: {}",
                chain.join(" -> ")
            ),
        ));
        return None;
    }
    let found = sources::read(file)?;
    if found.doc.format != Format::Yaml {
        return None;
    }
    let root = found.doc.roots.first()?;
    st.files += 1;
    let start = st.own_len + st.text.len() + 1;
    st.text.push('\n');
    st.text.push_str(&found.text);
    let name = file
        .strip_prefix(&place.root)
        .unwrap_or(file)
        .with_extension("");
    st.merged.push(Merged {
        path: found.path.clone(),
        format: Format::Yaml,
        start,
        len: found.text.len(),
        root_index: 0,
        named_at: named_at.clone(),
        what: format!("Hydra default `{}`", name.display()),
    });
    let package = package
        .or_else(|| package_header(&found.text))
        .unwrap_or_else(|| dotted(group));
    let shifted = merge::shifted(root, start);
    st.stack.push(abs);
    let out = compose_file(
        &shifted,
        place,
        group,
        &package,
        Some(named_at),
        st,
        depth + 1,
    );
    st.stack.pop();
    Some(out)
}

fn without_defaults(node: &Node) -> Node {
    let Some(m) = node.as_map() else {
        return node.clone();
    };
    if !m.contains("defaults") {
        return node.clone();
    }
    let entries = m
        .entries
        .iter()
        .filter(|e| e.key != "defaults")
        .cloned()
        .collect();
    Node {
        kind: NodeKind::Map(crate::syntax::Map::new(entries, m.style)),
        ..node.clone()
    }
}

/// `node` placed at the dotted `package` under virtual mappings (the file's own mapping keeps
/// its span and style, so a fix adds a key to the file).
fn at_package(node: &Node, package: &str) -> Node {
    let mut out = node.clone();
    for part in package.split('.').filter(|p| !p.is_empty()).rev() {
        let at = out.span.start;
        out = Node::map(
            vec![Entry {
                key: part.to_string(),
                key_span: at..at,
                value: out,
            }],
            MapStyle::Implicit,
            at..at,
        );
    }
    out
}

/// The tree with each `${a.b}` (a whole-value interpolation of an absolute or relative key,
/// no resolver) replaced by the value it names, which keeps its own span: the setting's origin
/// is where the value is written. `None` when nothing was replaced. Interpolations of unknown
/// keys, resolvers (`${oc.env:VAR}`) and text around an interpolation stay as written: their
/// value is known only at run time.
fn interpolate(root: &Node) -> Option<Node> {
    let mut changed = false;
    let out = replace(root, root, &mut Vec::new(), &mut changed);
    changed.then_some(out)
}

fn replace(root: &Node, node: &Node, at: &mut Vec<String>, changed: &mut bool) -> Node {
    match &node.kind {
        NodeKind::Map(m) => {
            let entries = m
                .entries
                .iter()
                .map(|e| {
                    at.push(e.key.clone());
                    let value = replace(root, &e.value, at, changed);
                    at.pop();
                    Entry {
                        key: e.key.clone(),
                        key_span: e.key_span.clone(),
                        value,
                    }
                })
                .collect();
            Node {
                kind: NodeKind::Map(crate::syntax::Map::new(entries, m.style)),
                ..node.clone()
            }
        }
        // OmegaConf resolves a list's items too (`["${env.state_dim}"]`, LeRobot's Hydra-era
        // `input_shapes`); an item's key is its index.
        NodeKind::Seq(items) => Node {
            kind: NodeKind::Seq(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        at.push(i.to_string());
                        let value = replace(root, item, at, changed);
                        at.pop();
                        value
                    })
                    .collect(),
            ),
            ..node.clone()
        },
        NodeKind::Scalar(s) => match target(root, &s.text, at, 0) {
            Some(t) => {
                *changed = true;
                t.clone()
            }
            None => node.clone(),
        },
    }
}

/// The scalar `${...}` names, following interpolations that name interpolations.
fn target<'r>(root: &'r Node, text: &str, at: &[String], hops: usize) -> Option<&'r Node> {
    if hops >= MAX_HOPS {
        return None;
    }
    let inner = text.trim().strip_prefix("${")?.strip_suffix('}')?;
    if inner.contains(['$', ':', '{', '}', '[', ' ']) || inner.is_empty() {
        return None;
    }
    // `${..x}`: relative to the key's parent mapping, one dot more per level up.
    let path: Vec<String> = if let Some(rel) = inner.strip_prefix('.') {
        let ups = rel.chars().take_while(|c| *c == '.').count();
        let parent_len = at.len().checked_sub(1 + ups)?;
        let mut p: Vec<String> = at[..parent_len].to_vec();
        p.extend(rel[ups..].split('.').map(str::to_string));
        p
    } else {
        inner.split('.').map(str::to_string).collect()
    };
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    let found = root.get_path(&refs)?;
    match &found.kind {
        NodeKind::Scalar(s) if s.text.contains("${") => target(root, &s.text, &path, hops + 1),
        NodeKind::Scalar(_) => Some(found),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The composition, its text preceded by the file's own so that every span slices it.
    fn composed(path: &Path) -> Composed {
        let text = std::fs::read_to_string(path).unwrap();
        let doc = parse(&text, Format::Yaml).unwrap();
        let mut c = compose(&doc.roots[0], &text, path).expect("composes");
        c.text = format!("{text}{}", c.text);
        c
    }

    fn value<'a>(c: &'a Composed, path: &[&str]) -> &'a str {
        let n = c.root.get_path(path).unwrap_or_else(|| panic!("{path:?}"));
        &c.text[n.span.clone()]
    }

    #[test]
    fn defaults_compose_in_order_with_self_last_and_packages() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let train = write(
            d,
            "configs/train.yaml",
            "defaults:\n  - data: mnist\n  - trainer: gpu\n  - optional local: default\n  - logger: null\n\ntrainer:\n  max_epochs: 3\nlr: ${model.lr}\nmodel:\n  lr: 0.1\n",
        );
        write(
            d,
            "configs/data/mnist.yaml",
            "batch_size: 64\nnum_workers: 0\n",
        );
        write(
            d,
            "configs/trainer/default.yaml",
            "max_epochs: 10\ndevices: 1\naccelerator: cpu\n",
        );
        write(
            d,
            "configs/trainer/gpu.yaml",
            "defaults:\n  - default\n\naccelerator: gpu\n",
        );
        let c = composed(&train);
        assert_eq!(value(&c, &["data", "batch_size"]), "64");
        assert_eq!(value(&c, &["trainer", "devices"]), "1");
        // gpu.yaml's own key over its default, the primary's own key over both.
        assert_eq!(value(&c, &["trainer", "accelerator"]), "gpu");
        assert_eq!(value(&c, &["trainer", "max_epochs"]), "3");
        // The interpolation reads as the value it names, at the place it is written.
        assert_eq!(value(&c, &["lr"]), "0.1");
        assert!(c.root.get_path(&["defaults"]).is_none());
        assert_eq!(c.merged.len(), 3);
        assert!(c.merged[0].path.ends_with("data/mnist.yaml"));
    }

    #[test]
    fn self_first_lets_the_defaults_win() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let p = write(
            d,
            "c/config.yaml",
            "defaults:\n  - _self_\n  - db: mysql\n\ndb:\n  port: 1\n",
        );
        write(d, "c/db/mysql.yaml", "port: 3306\n");
        let c = composed(&p);
        assert_eq!(value(&c, &["db", "port"]), "3306");
    }

    #[test]
    fn a_group_option_is_read_at_its_package_and_global_headers_at_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "configs/train.yaml",
            "defaults:\n  - trainer: default\n  - experiment: null\n",
        );
        let trainer = write(d, "configs/trainer/default.yaml", "devices: 2\n");
        let c = composed(&trainer);
        assert_eq!(value(&c, &["trainer", "devices"]), "2");
        let exp = write(
            d,
            "configs/experiment/big.yaml",
            "# @package _global_\ndefaults:\n  - override /trainer: default\n\ntrainer:\n  max_steps: 5\n",
        );
        let c = composed(&exp);
        assert_eq!(value(&c, &["trainer", "devices"]), "2");
        assert_eq!(value(&c, &["trainer", "max_steps"]), "5");
    }

    #[test]
    fn cycles_missing_files_and_resolvers_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let p = write(
            d,
            "c/config.yaml",
            "defaults:\n  - a: x\n  - b: missing\n\nv: ${oc.env:HOME,1}\nw: ${nowhere}\nx: ${y}\ny: ${x}\n",
        );
        write(d, "c/a/x.yaml", "defaults:\n  - x\nk: 1\n");
        let c = composed(&p);
        assert_eq!(value(&c, &["a", "k"]), "1");
        assert_eq!(value(&c, &["v"]), "${oc.env:HOME,1}");
        assert_eq!(value(&c, &["w"]), "${nowhere}");
        assert_eq!(value(&c, &["x"]), "${y}");
        assert_eq!(c.cycles.len(), 1);
        assert!(
            c.cycles[0].1.ends_with("a/x.yaml -> a/x.yaml"),
            "{}",
            c.cycles[0].1
        );
    }

    #[test]
    fn a_defaults_entry_never_leaves_the_config_root() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "secret.yaml", "k: 1\n");
        let p = write(
            d,
            "c/config.yaml",
            "defaults:\n  - ../secret\n  - db: ../../secret\n  - 5\n  - [1, 2]\n\nown: 1\n",
        );
        let text = std::fs::read_to_string(&p).unwrap();
        let doc = parse(&text, Format::Yaml).unwrap();
        let c = compose(&doc.roots[0], &text, &p);
        assert!(c.is_none_or(|c| c.merged.is_empty() && c.root.get_path(&["k"]).is_none()));
    }

    #[test]
    fn a_plain_yaml_file_is_not_composed() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "x/config.yaml", "batch_size: 8\n");
        let text = std::fs::read_to_string(&p).unwrap();
        let doc = parse(&text, Format::Yaml).unwrap();
        assert!(compose(&doc.roots[0], &text, &p).is_none());
    }
}
