//! Finding the files a launch line names: a config path, the script it runs, the Python file
//! that defines a named setup.

use std::path::{Path, PathBuf};

use crate::syntax::{self, Format};

/// Files bigger than this are not searched for a named setup (no config module is).
const MAX_SEARCHED_BYTES: u64 = 4 << 20;
/// Python files read at most while looking for a named setup.
const MAX_SEARCHED_FILES: usize = 5000;

/// A file another one names, read and parsed.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub text: String,
    pub doc: syntax::Document,
}

/// The file `written` (as a launch line wrote it) names: absolute, or relative to the launch
/// file's folder or one above it (scripts are usually run from the repository root).
pub fn named_file(from: &Path, written: &str) -> Option<PathBuf> {
    if written.is_empty() || written.contains('$') {
        return None;
    }
    let p = Path::new(written);
    if p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    let start = std::path::absolute(from).ok()?;
    start
        .ancestors()
        .skip(1)
        .map(|dir| dir.join(p))
        .find(|c| c.is_file())
}

/// What a path names, for telling whether two paths name one file (a cycle of bases or
/// defaults): the file's real path, or where it cannot be resolved, the absolute path with `.`
/// and `..` worked out (`d1/../a.py` and `a.py` are one file however they are written).
pub fn identity(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    identity_lexical(path)
}

/// The absolute path with `.` and `..` worked out, without asking the filesystem more.
pub fn identity_lexical(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Reads and parses a file hwlint reads.
pub fn read(path: &Path) -> Option<Found> {
    let format = Format::from_path(path)?;
    let raw = crate::source::read_text(path, crate::source::MAX_FILE_BYTES).ok()?;
    let (text, _) = syntax::strip_bom(&raw);
    let doc = syntax::parse(text, format).ok()?;
    Some(Found {
        path: path.to_path_buf(),
        text: text.to_string(),
        doc,
    })
}

/// The folder a named setup is looked for under: the nearest one above the launch file that
/// holds `.git` or `pyproject.toml`, else the launch file's own folder.
fn project_root(from: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(from).ok()?;
    let dir = start.parent()?.to_path_buf();
    Some(
        dir.ancestors()
            .take(8)
            .find(|d| d.join(".git").exists() || d.join("pyproject.toml").is_file())
            .unwrap_or(&dir)
            .to_path_buf(),
    )
}

/// A setup looked for: the project's root, its name and the key that holds names.
type SetupKey = (PathBuf, String, String);

thread_local! {
    /// Where each named setup was found (the file and root index), or not, while one file is
    /// linted: a script of many lines naming setups searched the whole project once per line.
    static SETUPS: std::cell::RefCell<std::collections::HashMap<SetupKey, Option<(PathBuf, usize)>>> =
        Default::default();
}

/// Forgets the named setups found so far: called as each file's lint starts, so that what is
/// remembered never outlives the files as they were read.
pub fn new_file() {
    SETUPS.with(|s| s.borrow_mut().clear());
}

/// The Python file and the root in it that define the setup called `name` (openpi's
/// `TrainConfig(name="pi0_libero", ...)`), searched in the launch file's project once per name
/// while a file is linted.
pub fn named_setup(from: &Path, name: &str, name_key: &str) -> Option<(Found, usize)> {
    if name.is_empty() || name.contains('$') {
        return None;
    }
    let root = project_root(from)?;
    let key = (root.clone(), name.to_string(), name_key.to_string());
    if let Some(known) = SETUPS.with(|s| s.borrow().get(&key).cloned()) {
        let (path, index) = known?;
        return read(&path).map(|found| (found, index));
    }
    let found = search_setup(&root, name, name_key);
    let place = found.as_ref().map(|(f, i)| (f.path.clone(), *i));
    SETUPS.with(|s| s.borrow_mut().insert(key, place));
    found
}

/// The walk of the project [`named_setup`] does.
fn search_setup(root: &Path, name: &str, name_key: &str) -> Option<(Found, usize)> {
    let quoted = [format!("\"{name}\""), format!("'{name}'")];
    let walk = ignore::WalkBuilder::new(root).build();
    for entry in walk.flatten().take(MAX_SEARCHED_FILES * 4).filter(|e| {
        e.file_type().is_some_and(|t| t.is_file())
            && e.path().extension().is_some_and(|x| x == "py")
            && e.metadata().is_ok_and(|m| m.len() <= MAX_SEARCHED_BYTES)
    }) {
        let Ok(text) = crate::source::read_text(entry.path(), MAX_SEARCHED_BYTES) else {
            continue;
        };
        if !quoted.iter().any(|q| text.contains(q.as_str())) {
            continue;
        }
        let Some(found) = read(entry.path()) else {
            continue;
        };
        let index = found
            .doc
            .roots
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(i, r)| {
                let n = r.get_path(&[name_key])?.as_scalar()?;
                (n.text == name).then_some(i)
            });
        if let Some(i) = index {
            return Some((found, i));
        }
    }
    None
}
