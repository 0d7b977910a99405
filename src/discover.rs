//! Which files to lint: walk folders like ruff does (.gitignore, hidden files), keep the
//! formats hwlint reads, drop what `exclude` covers.

use std::path::{Path, PathBuf};

use crate::settings::{ConfigError, ConfigResolver};
use crate::syntax::Format;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DiscoverError {
    #[error("{path}: no such file or directory")]
    #[diagnostic(code(hwlint::path), help("{}", did_you_mean.as_deref().unwrap_or("")))]
    Missing {
        path: String,
        /// For a path that is a command's name misspelt (`hwlint chek`).
        did_you_mean: Option<String>,
    },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] ConfigError),
}

/// The commands; a missing path close to one of them was probably meant as it.
const COMMANDS: [&str; 9] = [
    "check",
    "estimate",
    "targets",
    "detect",
    "rule",
    "rules",
    "init",
    "completions",
    "man",
];

/// `did you mean the command ...?` for a missing path that is a misspelt command.
fn command_meant(path: &Path) -> Option<String> {
    let p = path.to_str()?;
    if p.contains(['/', '.']) {
        return None;
    }
    COMMANDS
        .iter()
        .map(|c| (crate::rules::edit_distance(p, c), *c))
        .filter(|(d, c)| *d <= 2 && *d < c.len())
        .min()
        .map(|(_, c)| format!("did you mean the command `hwlint {c}`?"))
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The files to lint, sorted.
    pub files: Vec<PathBuf>,
    /// Files named as hwlint names its temporary files, beside the files to lint: an
    /// interrupted `--fix` may have left them (see [`crate::fix::leftover`]).
    pub temporaries: Vec<PathBuf>,
}

/// The files to lint under `paths`, sorted. Files named explicitly are kept even when
/// `exclude` covers them unless `force_exclude` (as ruff does), and only if hwlint reads their
/// format: pre-commit passes every staged file.
pub fn discover(
    paths: &[PathBuf],
    configs: &ConfigResolver,
    force_exclude: bool,
) -> Result<Discovered, DiscoverError> {
    let mut out = Vec::new();
    let mut temporaries = Vec::new();
    let mut named_dirs = std::collections::BTreeSet::new();
    for p in paths {
        // The link itself counts: a dangling or looping symlink named here is linted, and
        // reported as unreadable (HW902), like any file that cannot be read.
        if p.symlink_metadata().is_err() {
            return Err(DiscoverError::Missing {
                path: p.display().to_string(),
                did_you_mean: command_meant(p),
            });
        }
        if !p.is_dir() {
            if Format::from_path(p).is_some() && !(force_exclude && configs.is_excluded(p)?) {
                out.push(strip_dot(p));
                named_dirs.insert(p.parent().map(Path::to_path_buf).unwrap_or_default());
            }
            continue;
        }
        let (files, temps) = walk(p, configs)?;
        out.extend(files);
        temporaries.extend(temps);
    }
    // Files named one by one (pre-commit): their folders are listed for temporaries once each.
    for dir in named_dirs {
        let listed = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir.as_path()
        };
        let Ok(entries) = std::fs::read_dir(listed) else {
            continue;
        };
        for e in entries.flatten() {
            if crate::fix::is_temporary_name(&e.file_name().to_string_lossy()) {
                temporaries.push(strip_dot(&dir.join(e.file_name())));
            }
        }
    }
    temporaries.sort();
    temporaries.dedup();
    out.sort();
    out.dedup();
    // One folder's walk names each file once (links are not followed): only several paths
    // can name one file twice, and only then is every path resolved.
    let files = if paths.len() == 1 && paths[0].is_dir() {
        out
    } else {
        once_per_file(out)
    };
    Ok(Discovered { files, temporaries })
}

/// The files hwlint reads under `dir`, walked on every core (unsorted: the caller sorts), and
/// hwlint's temporary files met on the way. A config error is the one of the first path in
/// order, whichever thread met it first.
fn walk(dir: &Path, configs: &ConfigResolver) -> Result<(Vec<PathBuf>, Vec<PathBuf>), ConfigError> {
    let found = std::sync::Mutex::new(Vec::new());
    let temporaries = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::Mutex::new(Vec::new());
    ignore::WalkBuilder::new(dir)
        .require_git(false)
        // Hidden files and folders are skipped as before, but for hwlint's own temporary files,
        // seen here at no cost since each folder is read anyway.
        .hidden(false)
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !name.starts_with('.')
                || (e.file_type().is_some_and(|t| t.is_file())
                    && crate::fix::is_temporary_name(&name))
        })
        .build_parallel()
        .run(|| {
            let (found, temporaries, errors) = (&found, &temporaries, &errors);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                let path = entry.path();
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if is_file
                    && entry.depth() > 0
                    && entry.file_name().to_string_lossy().starts_with('.')
                {
                    lock(temporaries).push(strip_dot(path));
                    return ignore::WalkState::Continue;
                }
                if !is_file || Format::from_path(path).is_none() {
                    return ignore::WalkState::Continue;
                }
                match configs.is_excluded(path) {
                    Ok(true) => {}
                    Ok(false) => lock(found).push(strip_dot(path)),
                    Err(e) => lock(errors).push((path.to_path_buf(), e)),
                }
                ignore::WalkState::Continue
            })
        });
    let mut errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    errors.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some((_, e)) = errors.into_iter().next() {
        return Err(e);
    }
    Ok((
        found.into_inner().unwrap_or_else(|p| p.into_inner()),
        temporaries.into_inner().unwrap_or_else(|p| p.into_inner()),
    ))
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One name per file: `t.yaml ./t.yaml`, or a file and a symlink to it, would otherwise be
/// linted, counted and fixed twice. The file's own name wins over a link's.
fn once_per_file(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut chosen: std::collections::HashMap<PathBuf, usize> = Default::default();
    let mut keep: Vec<Option<PathBuf>> = Vec::with_capacity(paths.len());
    for p in paths {
        let Ok(key) = std::fs::canonicalize(&p) else {
            // Dangling or unreadable: linted under its own name and reported there.
            keep.push(Some(p));
            continue;
        };
        let is_link = p
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        match chosen.get(&key) {
            Some(&i) => {
                let first_is_link = keep[i].as_ref().is_some_and(|f| {
                    f.symlink_metadata()
                        .is_ok_and(|m| m.file_type().is_symlink())
                });
                if first_is_link && !is_link {
                    keep[i] = Some(p);
                }
                keep.push(None);
            }
            None => {
                chosen.insert(key, keep.len());
                keep.push(Some(p));
            }
        }
    }
    keep.into_iter().flatten().collect()
}

fn strip_dot(p: &Path) -> PathBuf {
    p.strip_prefix("./")
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| p.to_path_buf())
}
