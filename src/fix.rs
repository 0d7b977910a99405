//! Edits, fixes, applying them to a fixpoint, and writing files atomically.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

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
    /// The settings the fix means to change, checked by reading the fixed text again before
    /// the fix stands (src/lint/fixpoint.rs): empty for a fix that changes no setting (a
    /// suppression comment, a quoted number written bare).
    #[serde(skip)]
    pub sets: Vec<Intent>,
}

/// A setting a fix writes: after the fix, the run reads `concept` from `key` in this file,
/// with `value` when the fix writes that value itself (a dialect's map can stand between the
/// written text and the value read).
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub concept: crate::dialect::Concept,
    pub key: String,
    pub value: Option<crate::syntax::edit::NewValue>,
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
    // Chosen edit ranges by (start, end); they never overlap, so only the nearest ones below
    // a new range's end can conflict with it. Linear-logarithmic for 100k fixes in one file.
    // The third key part keeps a fix's own inserts at one point apart, in the fix's order.
    let mut chosen: std::collections::BTreeMap<(usize, usize, usize), &Edit> = Default::default();
    let mut applied = Vec::new();
    'fixes: for (index, fix) in fixes.into_iter().enumerate() {
        for e in &fix.edits {
            if e.range.end > text.len()
                || e.range.start > e.range.end
                || !text.is_char_boundary(e.range.start)
                || !text.is_char_boundary(e.range.end)
            {
                continue 'fixes;
            }
            let near = chosen.range(..=(e.range.end, usize::MAX, usize::MAX)).rev();
            for (&(start, end, _), _) in near {
                if start < e.range.start && end <= e.range.start {
                    break;
                }
                if overlaps(&(start..end), &e.range) {
                    continue 'fixes;
                }
            }
        }
        // A fix's own edits may share an insertion point (two keys inserted together).
        for e in &fix.edits {
            chosen.insert((e.range.start, e.range.end, chosen.len()), e);
        }
        applied.push(index);
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for e in chosen.values() {
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
    #[error("{path} is being fixed by another hwlint run; not written")]
    Busy { path: String },
    #[error("{path} is read-only; not written (make it writable to let hwlint fix it)")]
    ReadOnly { path: String },
    #[error("{path} has {links} hard links; not written, since replacing it would split them (fix one link by hand, or lint a copy)")]
    HardLinked { path: String, links: u64 },
    #[error("{path} is a symlink to {target}, outside the paths being linted; not written (lint the target itself to fix it)")]
    Symlink { path: String, target: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The canonical forms of the folders named on the command line, for [`write_destination`].
/// A file named needs no root: named beside a link to it, it is the name linted and written
/// (`discover` keeps one name per file, the file's own over a link's).
pub fn linted_roots(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter(|p| p.is_dir())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect()
}

/// Where a fix of `path` is written. A symlink is written through only when its target lies
/// inside the linted paths (`roots`, from [`linted_roots`]): replacing the link with a regular
/// file would silently detach it, and writing outside what the user named is not ours to do.
pub fn write_destination(path: &Path, roots: &[PathBuf]) -> Result<PathBuf, WriteError> {
    let is_link = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(path.to_path_buf());
    }
    let target = std::fs::canonicalize(path).map_err(|source| WriteError::Io {
        path: path.display().to_string(),
        source,
    })?;
    if roots.iter().any(|r| target.starts_with(r)) {
        Ok(target)
    } else {
        Err(WriteError::Symlink {
            path: path.display().to_string(),
            target: target.display().to_string(),
        })
    }
}

/// Writes `content` to `path` through a temporary file in the same folder (write, fsync,
/// swap), keeping the file's owner and whole mode (setuid, setgid and sticky bits included),
/// and only if the file still holds `expected`. Refuses read-only files and files with several
/// hard links; never replaces a symlink (resolve it with [`write_destination`] first). A
/// failure at any step leaves the original file as it was, and no temporary file behind.
///
/// Another writer is seen as far as the platform allows. The file is read through a handle
/// held to the end, under an advisory lock (another hwlint run waits for nothing: it is told
/// the file is busy); just before the swap the path must still name that file, unchanged
/// (inode, size, modification and change times). On Linux the swap is `renameat2` with
/// `RENAME_EXCHANGE`, which leaves the old file at the temporary name: if it was written or
/// replaced in between, the swap is undone and the file reported as changed. What remains: a
/// process that holds the file open across the swap and writes to it after it writes to the
/// old file, which no rename can keep (an editor's save by rename loses it the same way); and
/// where the filesystem cannot exchange (some network filesystems), the moment between the
/// last check and the rename.
pub fn write_atomic(path: &Path, expected: &[u8], content: &[u8]) -> Result<(), WriteError> {
    write_atomic_with(path, expected, content, |f, c| f.write_all(c), || {})
}

/// What identifies a file's state: a write changes the size or the times, a replacement the
/// inode.
#[derive(Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// Everything in `f` from its start.
fn read_from_start(f: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek};
    f.seek(std::io::SeekFrom::Start(0))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(out)
}

/// [`write_atomic`] with the write of the temporary file and a step just before the swap
/// given (tests use them to fail a write, or to write to the file in the last moment).
fn write_atomic_with(
    path: &Path,
    expected: &[u8],
    content: &[u8],
    write: impl FnOnce(&mut std::fs::File, &[u8]) -> std::io::Result<()>,
    before_swap: impl FnOnce(),
) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let shown = || path.display().to_string();
    let io = |source| WriteError::Io {
        path: shown(),
        source: without_temporary_path(source),
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::other("not a regular file")));
    }
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly { path: shown() });
    }
    if meta.nlink() > 1 {
        return Err(WriteError::HardLinked {
            path: shown(),
            links: meta.nlink(),
        });
    }
    let dir = folder_of(path);
    // The file as it is, held open to the end: the one the swap must take out.
    let mut original = std::fs::File::open(path).map_err(io)?;
    // A lock held for a few milliseconds is not another run: a process forked (by this one or
    // another) between the last write's lock and its exec shares that lock until it execs.
    let mut tries = 0;
    loop {
        match rustix::fs::flock(
            &original,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        ) {
            Ok(()) => break,
            Err(rustix::io::Errno::WOULDBLOCK) if tries < 20 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Err(WriteError::Busy { path: shown() }),
            // A filesystem without locks: the checks below still hold.
            Err(_) => break,
        }
    }
    if read_from_start(&mut original).map_err(io)? != expected {
        return Err(WriteError::Changed { path: shown() });
    }
    let stamp = Stamp::of(&original.metadata().map_err(io)?);
    // Created and registered in one step, so an interruption never misses it; locked so that
    // a later run knows it from one in flight.
    let (mut tmp, _cleanup) = signals::create(|| {
        tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(dir)
    })
    .map_err(io)?;
    let _ = rustix::fs::flock(tmp.as_file(), rustix::fs::FlockOperation::LockExclusive);
    write(tmp.as_file_mut(), content).map_err(io)?;
    // The owner first: changing it clears the setuid and setgid bits, which the mode then
    // sets back. An ordinary user can only give a file to themself, and then the new file is
    // theirs, as an editor's save would make it.
    let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid()));
    tmp.as_file()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(
            meta.mode() & 0o7777,
        ))
        .map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    let now = std::fs::symlink_metadata(path).map_err(io)?;
    if Stamp::of(&now) != stamp {
        return Err(WriteError::Changed { path: shown() });
    }
    // The last moment another writer can slip into, short of the swap itself.
    before_swap();
    if !swap(tmp.path(), path, &stamp, &mut original, expected).map_err(io)? {
        return Err(WriteError::Changed { path: shown() });
    }
    // The old file now lies at the temporary name: dropping the handle removes it.
    drop(tmp);
    // The swap itself is durable once the folder is synced; a failure here loses nothing.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Puts the temporary file at `path` and the file that was there at the temporary name, then
/// checks that what came out is the file read (`stamp`) and still holds `expected`: `false`,
/// with the swap undone, when it was written to or replaced in the meantime. Where the
/// filesystem cannot exchange two names, a plain rename (the checks before it are the last).
#[cfg(target_os = "linux")]
fn swap(
    tmp: &Path,
    path: &Path,
    stamp: &Stamp,
    original: &mut std::fs::File,
    expected: &[u8],
) -> std::io::Result<bool> {
    use rustix::fs::{renameat_with, RenameFlags, CWD};
    use rustix::io::Errno;
    match renameat_with(CWD, tmp, CWD, path, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
            std::fs::rename(tmp, path)?;
            return Ok(true);
        }
        Err(e) => return Err(e.into()),
    }
    // The rename itself moves the old file's change time: what came out is the file read if
    // it is the same inode, unwritten.
    let out = Stamp::of(&std::fs::symlink_metadata(tmp)?);
    let same =
        (out.dev, out.ino, out.len, out.mtime) == (stamp.dev, stamp.ino, stamp.len, stamp.mtime);
    if same && read_from_start(original)? == expected {
        return Ok(true);
    }
    renameat_with(CWD, tmp, CWD, path, RenameFlags::EXCHANGE)?;
    Ok(false)
}

#[cfg(not(target_os = "linux"))]
fn swap(
    tmp: &Path,
    path: &Path,
    _stamp: &Stamp,
    _original: &mut std::fs::File,
    _expected: &[u8],
) -> std::io::Result<bool> {
    std::fs::rename(tmp, path)?;
    Ok(true)
}

/// The folder a file lies in, where its temporary file must be made: a rename swaps only
/// within one file system, and a relative name with no folder is in the working one.
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// How hwlint names its temporary files: this, then six random letters and digits.
pub const TEMP_PREFIX: &str = ".hwlint-";

/// A file name hwlint gives its temporary files.
pub fn is_temporary_name(name: &str) -> bool {
    name.strip_prefix(TEMP_PREFIX)
        .is_some_and(|r| r.len() == 6 && r.bytes().all(|c| c.is_ascii_alphanumeric()))
}

/// Whether `path`, a file of hwlint's temporary naming, was left by a run that is over (killed
/// before it could remove it): no run holds its lock, and it is older than a run takes to
/// create and lock one.
pub fn leftover(path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let old = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age >= std::time::Duration::from_secs(2));
    if !meta.is_file() || !old {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

/// The reason alone: tempfile's errors end "at path .../.hwlint-XXXX", a name the user never
/// sees on disk, and the message already names the file being written.
fn without_temporary_path(e: std::io::Error) -> std::io::Error {
    // tempfile's wrapper hides the OS error from `source()`; its text is all there is.
    let text = e.to_string();
    match text.find(" at path \"") {
        Some(end) => std::io::Error::new(e.kind(), &text[..end]),
        None => e,
    }
}

/// Removes the temporary files of writes in progress when the run is interrupted (Ctrl-C,
/// SIGTERM, SIGHUP): the original files are untouched until their rename, so deleting the
/// temporaries leaves every file original or fully fixed.
pub mod signals {
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, Once};

    static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    static INSTALL: Once = Once::new();

    /// Installs the handler (once per process). Called before the first write.
    pub fn install() {
        INSTALL.call_once(|| {
            // Fails only if another handler is already installed; then that one decides.
            let _ = ctrlc::set_handler(|| {
                // The list stays locked until the process exits: no write can create and
                // register another temporary file after these are removed.
                let guard = IN_FLIGHT.lock();
                if let Ok(paths) = &guard {
                    for p in paths.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                }
                std::process::exit(130);
            });
        });
    }

    /// A temporary file being written; unregistered when dropped.
    pub struct InFlight(PathBuf);

    /// Creates a temporary file and registers it while holding the list, so that an
    /// interruption sees either no file or a registered one.
    pub fn create(
        make: impl FnOnce() -> std::io::Result<tempfile::NamedTempFile>,
    ) -> std::io::Result<(tempfile::NamedTempFile, InFlight)> {
        let mut guard = IN_FLIGHT.lock().ok();
        let tmp = make()?;
        let path: &Path = tmp.path();
        if let Some(g) = guard.as_mut() {
            g.push(path.to_path_buf());
        }
        let flight = InFlight(path.to_path_buf());
        Ok((tmp, flight))
    }

    impl Drop for InFlight {
        fn drop(&mut self) {
            if let Ok(mut g) = IN_FLIGHT.lock() {
                g.retain(|p| p != &self.0);
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn registered(p: &Path) -> bool {
            IN_FLIGHT.lock().unwrap().iter().any(|q| q == p)
        }

        #[test]
        fn a_temporary_file_is_registered_while_it_is_written_and_no_longer() {
            let dir = tempfile::tempdir().unwrap();
            let make = || {
                tempfile::Builder::new()
                    .prefix(".hwlint-")
                    .tempfile_in(dir.path())
            };
            let (a, a_flight) = create(make).unwrap();
            let (b, b_flight) = create(make).unwrap();
            assert!(registered(a.path()) && registered(b.path()));
            // Done with one: an interruption now removes only the other.
            drop(a_flight);
            assert!(!registered(a.path()));
            assert!(registered(b.path()));
            drop(b_flight);
            assert!(!registered(b.path()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_file_is_made_beside_its_file() {
        assert_eq!(folder_of(Path::new("configs/a.yaml")), Path::new("configs"));
        assert_eq!(folder_of(Path::new("/tmp/x/a.yaml")), Path::new("/tmp/x"));
        assert_eq!(folder_of(Path::new("a.yaml")), Path::new("."));
    }

    fn fix(edits: Vec<Edit>) -> Fix {
        Fix {
            edits,
            applicability: Applicability::Safe,
            message: String::new(),
            sets: Vec::new(),
        }
    }

    #[test]
    fn an_edit_outside_the_text_or_between_a_characters_bytes_skips_its_fix() {
        // Each bad edit alone: any one of them must be enough to skip the fix (the file is
        // never sliced where it cannot be), and the good fix beside it still applies.
        let text = "a: é\nb: 1\n";
        let bad = [
            Edit::replace(9..12, "x"),                      // ends past the text
            Edit::replace(Range { start: 9, end: 6 }, "x"), // starts after it ends
            Edit::replace(4..5, "x"),                       // starts inside `é`
            Edit::replace(3..4, "x"),                       // ends inside `é`
        ];
        for e in bad {
            let fixes = [fix(vec![e.clone()]), fix(vec![Edit::replace(9..10, "2")])];
            let (out, applied) = apply_fixes_indexed(text, &fixes);
            assert_eq!(applied, [1], "{e:?}");
            assert_eq!(out, "a: é\nb: 2\n", "{e:?}");
        }
    }

    #[test]
    fn a_failed_temporary_file_is_reported_by_its_reason_only() {
        let e = tempfile::Builder::new()
            .prefix(".hwlint-")
            .tempfile_in("/nonexistent-hwlint-folder")
            .unwrap_err();
        assert!(e.to_string().contains(".hwlint-"), "{e}");
        let shown = WriteError::Io {
            path: "cfg/a.yaml".into(),
            source: without_temporary_path(e),
        }
        .to_string();
        assert!(
            shown.starts_with("cannot write cfg/a.yaml: No such file"),
            "{shown}"
        );
        assert!(!shown.contains(".hwlint-"), "{shown}");
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
    fn ranges_conflict_when_they_share_a_byte_or_an_insertion_point() {
        let cases = [
            (2..4, 4..6, false), // adjacent
            (0..1, 1..2, false),
            (2..4, 3..5, true),
            (0..6, 2..3, true),
            (2..4, 4..4, false), // an insert at the end
            (2..4, 2..2, true),  // at the start
            (2..4, 3..3, true),  // inside
            (4..4, 4..4, true),  // two inserts at one point
            (4..4, 5..5, false),
        ];
        for (a, b, conflict) in cases {
            assert_eq!(overlaps(&a, &b), conflict, "{a:?} {b:?}");
            assert_eq!(overlaps(&b, &a), conflict, "{b:?} {a:?}");
        }
    }

    #[test]
    fn fixes_that_do_not_conflict_apply_in_any_order() {
        let t = "abcdef";
        let fixes = [
            fix(vec![Edit::replace(0..1, "A")]),
            fix(vec![Edit::replace(1..2, "B")]),
            fix(vec![Edit::replace(2..4, "X")]),
            fix(vec![Edit::insert(4, "end")]),
            fix(vec![Edit::replace(5..6, "F")]),
            fix(vec![Edit::insert(6, "Z")]),
        ];
        // Every order of the six (Heap's algorithm): each checks against those before it.
        let mut order: Vec<usize> = (0..fixes.len()).collect();
        let mut c = vec![0; order.len()];
        let check = |order: &[usize]| {
            let (out, applied) = apply_fixes_indexed(t, order.iter().map(|&i| &fixes[i]));
            assert_eq!(out, "ABXendeFZ", "{order:?}");
            assert_eq!(applied.len(), fixes.len(), "{order:?}");
        };
        check(&order);
        let mut i = 0;
        while i < order.len() {
            if c[i] < i {
                order.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                check(&order);
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
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

    #[test]
    fn inserts_and_replacements_conflict_as_before() {
        let t = "abcdef";
        let fixes = [
            fix(vec![Edit::replace(2..4, "X")]),
            fix(vec![Edit::insert(3, "in")]), // inside the replacement
            fix(vec![Edit::insert(2, "at")]), // at its start: conflicts
            fix(vec![Edit::insert(4, "end")]), // at its end: fine
            fix(vec![Edit::insert(4, "again")]), // same point as an insert
            fix(vec![Edit::replace(0..1, "A"), Edit::replace(5..6, "F")]),
            fix(vec![Edit::replace(1..2, "B"), Edit::replace(3..5, "Y")]), // second half overlaps
            fix(vec![Edit::insert(6, "1"), Edit::insert(6, "2")]), // its own inserts, in order
        ];
        let (out, applied) = apply_fixes_indexed(t, fixes.iter());
        assert_eq!(applied, [0, 3, 5, 7]);
        assert_eq!(out, "AbXendeF12");
    }

    #[test]
    fn many_fixes_apply_in_one_pass() {
        let t = "x\n".repeat(100_000);
        let fixes: Vec<Fix> = (0..100_000)
            .map(|i| fix(vec![Edit::replace(2 * i..2 * i + 1, "y")]))
            .collect();
        let (out, n) = apply_fixes(&t, &fixes);
        assert_eq!(n, 100_000);
        assert_eq!(out, "y\n".repeat(100_000));
    }

    #[test]
    fn a_failing_write_leaves_the_original_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        // As a full disk would: part of the content written, then an error.
        let full = |f: &mut std::fs::File, c: &[u8]| {
            f.write_all(&c[..2])?;
            Err(std::io::Error::other("No space left on device"))
        };
        let e = write_atomic_with(&p, b"a: 1\n", b"a: 2\n", full, || {}).unwrap_err();
        assert!(e.to_string().contains("No space left"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: 1\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_write_in_the_last_moment_before_the_swap_is_kept() {
        // An append (or a replacement) after the last check and before the swap: the swap is
        // undone and the file keeps what the other writer wrote.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        let append = || {
            let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
            f.write_all(b"b: 2\n").unwrap();
        };
        let e = write_atomic_with(&p, b"a: 1\n", b"a: 9\n", |f, c| f.write_all(c), append);
        assert!(matches!(e, Err(WriteError::Changed { .. })), "{e:?}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: 1\nb: 2\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        std::fs::write(&p, "a: 1\n").unwrap();
        let replace = || {
            let q = dir.path().join("editor.tmp");
            std::fs::write(&q, "c: 3\n").unwrap();
            std::fs::rename(&q, &p).unwrap();
        };
        let e = write_atomic_with(&p, b"a: 1\n", b"a: 9\n", |f, c| f.write_all(c), replace);
        assert!(matches!(e, Err(WriteError::Changed { .. })), "{e:?}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "c: 3\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        // Another file holding the very bytes linted: what came out of the swap is not the
        // file read, so the swap is undone all the same, and the other file stays.
        use std::os::unix::fs::MetadataExt;
        std::fs::write(&p, "a: 1\n").unwrap();
        let ino = std::cell::Cell::new(0);
        let same_bytes = || {
            let q = dir.path().join("editor.tmp");
            std::fs::write(&q, "a: 1\n").unwrap();
            ino.set(std::fs::metadata(&q).unwrap().ino());
            std::fs::rename(&q, &p).unwrap();
        };
        let e = write_atomic_with(&p, b"a: 1\n", b"a: 9\n", |f, c| f.write_all(c), same_bytes);
        assert!(matches!(e, Err(WriteError::Changed { .. })), "{e:?}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: 1\n");
        assert_eq!(std::fs::metadata(&p).unwrap().ino(), ino.get());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn temporary_names_are_the_prefix_and_six_letters_or_digits() {
        assert!(is_temporary_name(".hwlint-a1B2c3"));
        for name in [
            ".hwlint-abc",
            ".hwlint-abcdefg",
            ".hwlint-ab-de!",
            ".hwlint-",
            "x.hwlint-abcdef",
            "hwlint-abcdef",
            ".hwlint-abcdé",
        ] {
            assert!(!is_temporary_name(name), "{name}");
        }
    }

    #[test]
    fn a_leftover_is_an_old_unlocked_file() {
        let dir = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        let p = dir.path().join(".hwlint-abc123");
        std::fs::write(&p, "a").unwrap();
        // Just made: it may be a run's that has not locked it yet.
        assert!(!leftover(&p));
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(old).unwrap();
        assert!(leftover(&p));
        // Locked: a run is writing it.
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive).unwrap();
        assert!(!leftover(&p));
        drop(f);
        assert!(leftover(&p));
        // Not a file, or not there.
        let d = dir.path().join(".hwlint-dir123");
        std::fs::create_dir(&d).unwrap();
        std::fs::File::open(&d).unwrap().set_modified(old).unwrap();
        assert!(!leftover(&d));
        assert!(!leftover(&dir.path().join(".hwlint-gone12")));
    }

    #[test]
    fn setuid_setgid_and_sticky_bits_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o2755, 0o4755, 0o1644, 0o6750] {
            let p = dir.path().join(format!("launch-{mode:o}.sh"));
            std::fs::write(&p, "a\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            let set = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
            write_atomic(&p, b"a\n", b"b\n").unwrap();
            let after = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
            // What the file had (an unprivileged user may not be able to set every bit).
            assert_eq!(after, set, "{mode:o}");
        }
    }

    #[test]
    fn a_file_another_run_holds_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        let other = std::fs::File::open(&p).unwrap();
        rustix::fs::flock(&other, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let e = write_atomic(&p, b"a: 1\n", b"a: 2\n");
        assert!(matches!(e, Err(WriteError::Busy { .. })), "{e:?}");
        drop(other);
        write_atomic(&p, b"a: 1\n", b"a: 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: 2\n");
    }

    #[test]
    fn read_only_and_hard_linked_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ro.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert!(matches!(
            write_atomic(&p, b"a: 1\n", b"a: 2\n"),
            Err(WriteError::ReadOnly { .. })
        ));
        let h = dir.path().join("h.yaml");
        std::fs::write(&h, "a: 1\n").unwrap();
        std::fs::hard_link(&h, dir.path().join("h2.yaml")).unwrap();
        assert!(matches!(
            write_atomic(&h, b"a: 1\n", b"a: 2\n"),
            Err(WriteError::HardLinked { links: 2, .. })
        ));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("h2.yaml")).unwrap(),
            "a: 1\n"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn symlinks_are_written_through_only_inside_the_linted_paths() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in");
        let outside = dir.path().join("out");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(inside.join("real.yaml"), "a: 1\n").unwrap();
        std::fs::write(outside.join("far.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("real.yaml", inside.join("near.yaml")).unwrap();
        std::os::unix::fs::symlink("../out/far.yaml", inside.join("far.yaml")).unwrap();
        let roots = linted_roots(std::slice::from_ref(&inside));
        let near = write_destination(&inside.join("near.yaml"), &roots).unwrap();
        assert_eq!(
            near,
            std::fs::canonicalize(inside.join("real.yaml")).unwrap()
        );
        assert!(matches!(
            write_destination(&inside.join("far.yaml"), &roots),
            Err(WriteError::Symlink { .. })
        ));
        // A link named alone: its target is not among the linted paths.
        let roots = linted_roots(&[inside.join("near.yaml")]);
        assert!(write_destination(&inside.join("near.yaml"), &roots).is_err());
        let plain = inside.join("real.yaml");
        assert_eq!(write_destination(&plain, &roots).unwrap(), plain);
    }

    #[test]
    fn owner_and_mode_are_kept() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let before = std::fs::metadata(&p).unwrap();
        // As root, give the file to another owner first: the rewrite must keep it.
        let other = if before.uid() == 0 { Some(65534) } else { None };
        if let Some(uid) = other {
            std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
        }
        let before = std::fs::metadata(&p).unwrap();
        write_atomic(&p, b"a: 1\n", b"a: 2\n").unwrap();
        let after = std::fs::metadata(&p).unwrap();
        assert_eq!(after.permissions().mode() & 0o777, 0o600);
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }
}
