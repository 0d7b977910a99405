//! Edits, fixes, applying them to a fixpoint, and writing files atomically.

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use serde::Serialize;

/// Replace `range` of the original text with `content` (an empty range inserts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub range: Range<usize>,
    pub content: String,
}

impl Edit {
    pub fn replace(range: Range<usize>, content: impl Into<String>) -> Edit {
        Edit {
            range,
            content: content.into(),
        }
    }

    pub fn insert(at: usize, content: impl Into<String>) -> Edit {
        Edit {
            range: at..at,
            content: content.into(),
        }
    }
}

/// How far a fix may be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown, never applied (the reader must decide).
    DisplayOnly,
    /// Changes what the run does; applied with `--unsafe-fixes`.
    Unsafe,
    /// Keeps the run's intent; applied with `--fix`.
    Safe,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
    /// What the fix does, shown as the help line ("set num_workers to 7").
    pub message: String,
}

/// Applies non-overlapping edits, skipping any fix that overlaps an earlier one. Returns the new
/// text and how many fixes were applied.
pub fn apply_fixes<'a>(text: &str, fixes: impl IntoIterator<Item = &'a Fix>) -> (String, usize) {
    let (out, applied) = apply_fixes_indexed(text, fixes);
    (out, applied.len())
}

/// Like [`apply_fixes`], returning the positions (in `fixes`) of the fixes applied.
pub fn apply_fixes_indexed<'a>(
    text: &str,
    fixes: impl IntoIterator<Item = &'a Fix>,
) -> (String, Vec<usize>) {
    let mut chosen: Vec<&Edit> = Vec::new();
    let mut applied = Vec::new();
    'fixes: for (index, fix) in fixes.into_iter().enumerate() {
        for e in &fix.edits {
            if e.range.end > text.len()
                || !text.is_char_boundary(e.range.start)
                || !text.is_char_boundary(e.range.end)
            {
                continue 'fixes;
            }
            if chosen.iter().any(|c| overlaps(&c.range, &e.range)) {
                continue 'fixes;
            }
        }
        chosen.extend(fix.edits.iter());
        applied.push(index);
    }
    chosen.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for e in chosen {
        out.push_str(&text[pos..e.range.start]);
        out.push_str(&e.content);
        pos = e.range.end;
    }
    out.push_str(&text[pos..]);
    (out, applied)
}

/// Two ranges conflict when they share a byte, or when both insert at the same point.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    if a.is_empty() && b.is_empty() {
        return a.start == b.start;
    }
    a.start < b.end && b.start < a.end
        || (a.is_empty() && b.contains(&a.start))
        || (b.is_empty() && a.contains(&b.start))
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum WriteError {
    #[error("{path} changed on disk while hwlint was fixing it; not written")]
    Changed { path: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `content` to `path` through a temporary file in the same folder (fsync, then rename),
/// keeping the file's permissions, and only if the file still holds `expected`.
pub fn write_atomic(path: &Path, expected: &[u8], content: &[u8]) -> Result<(), WriteError> {
    let io = |source| WriteError::Io {
        path: path.display().to_string(),
        source,
    };
    let current = std::fs::read(path).map_err(io)?;
    if current != expected {
        return Err(WriteError::Changed {
            path: path.display().to_string(),
        });
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let perms = std::fs::metadata(path).map_err(io)?.permissions();
    let mut tmp = tempfile::Builder::new()
        .prefix(".hwlint-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(content).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    std::fs::set_permissions(tmp.path(), perms).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(edits: Vec<Edit>) -> Fix {
        Fix {
            edits,
            applicability: Applicability::Safe,
            message: String::new(),
        }
    }

    #[test]
    fn overlapping_fixes_are_skipped() {
        let t = "abcdef";
        let a = fix(vec![Edit::replace(1..3, "X")]);
        let b = fix(vec![Edit::replace(2..4, "Y")]);
        let c = fix(vec![Edit::insert(5, "Z")]);
        let (out, n) = apply_fixes(t, [&a, &b, &c]);
        assert_eq!(out, "aXdeZf");
        assert_eq!(n, 2);
    }

    #[test]
    fn atomic_write_keeps_permissions_and_refuses_changed_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"a: 1\n", b"a: 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: 2\n");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert!(matches!(
            write_atomic(&p, b"a: 1\n", b"a: 3\n"),
            Err(WriteError::Changed { .. })
        ));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
