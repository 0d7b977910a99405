//! Where a file's project starts: the folder its paths are read from when a glob says where in
//! a project a file is (a dialect's `not_paths = ["**/tests/**"]`). Matched against the path as
//! given, such a glob would depend on where the checkout sits: a clone under `~/test/` or a CI
//! work folder named `tests` turned the PyTorch dialect off for every file in it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The folders already asked, and their project's root.
static ROOTS: Mutex<Option<HashMap<PathBuf, PathBuf>>> = Mutex::new(None);

/// The root of the project `dir` (absolute) lies in: the nearest folder above holding a
/// hwlint.toml (or .hwlint.toml), else the repository root (a `.git`), else the nearest holding
/// a pyproject.toml, else the working folder when `dir` is inside it, else `dir` itself.
fn root_of(dir: &Path) -> PathBuf {
    if let Some(r) = ROOTS
        .lock()
        .ok()
        .and_then(|m| m.as_ref().and_then(|m| m.get(dir).cloned()))
    {
        return r;
    }
    let first = |names: &[&str]| {
        dir.ancestors()
            .find(|d| names.iter().any(|n| d.join(n).exists()))
            .map(Path::to_path_buf)
    };
    let root = first(&["hwlint.toml", ".hwlint.toml"])
        .or_else(|| first(&[".git"]))
        .or_else(|| first(&["pyproject.toml"]))
        .or_else(|| {
            std::env::current_dir()
                .ok()
                .filter(|cwd| dir.starts_with(cwd))
        })
        .unwrap_or_else(|| dir.to_path_buf());
    if let Ok(mut m) = ROOTS.lock() {
        m.get_or_insert_with(HashMap::new)
            .insert(dir.to_path_buf(), root.clone());
    }
    root
}

/// `path` relative to its project's root (see [`root_of`]); `..` and `.` worked out.
pub fn relative(path: &Path) -> PathBuf {
    let abs = crate::launch::identity_lexical(path);
    let Some(dir) = abs.parent() else {
        return abs;
    };
    let root = root_of(dir);
    abs.strip_prefix(&root)
        .map(Path::to_path_buf)
        .unwrap_or(abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_under_a_tests_folder_is_its_own_root() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("tests/proj");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("tests/unit")).unwrap();
        assert_eq!(relative(&repo.join("train.py")), Path::new("train.py"));
        assert_eq!(
            relative(&repo.join("tests/unit/t.py")),
            Path::new("tests/unit/t.py")
        );
        // A hwlint.toml nearer than the repository root is the root.
        std::fs::create_dir_all(repo.join("sub/deeper")).unwrap();
        std::fs::write(repo.join("sub/hwlint.toml"), "").unwrap();
        assert_eq!(
            relative(&repo.join("sub/deeper/../deeper/a.py")),
            Path::new("deeper/a.py")
        );
    }
}
