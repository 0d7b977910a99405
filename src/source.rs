//! The one way hwlint reads a file: bounded, and only a regular file where one is expected.
//!
//! Every file it reads goes through here: the linted files, the configs and bases they name,
//! hwlint.toml and pyproject.toml, user dialects, target files, model `config.json` files,
//! and standard input. A device (`/dev/zero`), a FIFO or a folder named where a file is
//! expected is refused without waiting on it (it is opened without blocking and checked on the
//! open handle, so one swapped in after a look at the path is refused too); a file is read to
//! at most its limit and one byte more, so a file that grows while it is read is refused
//! rather than read without end.

use std::io::Read;
use std::path::Path;

/// Files larger than this are reported, not parsed: no training config is this big
/// (`max_file_size_mb` in hwlint.toml changes it for the linted files).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// `12.3 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Why a read was refused, as a message ends (`cannot read file: ...`, `not a regular file`).
pub type Refusal = String;

fn too_big(len: u64, max_bytes: u64) -> Refusal {
    format!(
        "file is {}, over the {} limit for a config file (`max_file_size_mb` in hwlint.toml raises it)",
        mib(len),
        mib(max_bytes)
    )
}

/// A regular file's bytes, at most `max_bytes` of them.
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>, Refusal> {
    use std::os::unix::fs::OpenOptionsExt;
    // Without blocking: opening a FIFO for reading would wait for a writer.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| format!("cannot read file: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read file: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > max_bytes {
        return Err(too_big(meta.len(), max_bytes));
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize)
        .map_err(|e| format!("cannot read file: {e}"))?;
    (&mut file)
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

/// A regular file as UTF-8 text, or why it cannot be read as one.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String, Refusal> {
    decode(read_bytes(path, max_bytes)?)
}

/// Standard input, at most `max_bytes` of it: `Err` holds what was read (the limit and one byte
/// more) when there is more, so that a caller passing the text through can pass it all.
pub fn read_stdin(max_bytes: u64) -> std::io::Result<Result<Vec<u8>, Vec<u8>>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Ok(Err(bytes));
    }
    Ok(Ok(bytes))
}

/// Why standard input of more than `max_bytes` is not linted.
pub fn stdin_too_big(max_bytes: u64) -> Refusal {
    format!(
        "standard input is over the {} limit for a config file (`max_file_size_mb` in hwlint.toml raises it)",
        mib(max_bytes)
    )
}

/// UTF-8 text, or why not: a UTF-16/32 byte-order mark, NUL bytes (binary), invalid UTF-8.
pub fn decode(bytes: Vec<u8>) -> Result<String, Refusal> {
    let encoding = match bytes.as_slice() {
        [0xFF, 0xFE, 0, 0, ..] => Some("UTF-32 (little-endian)"),
        [0, 0, 0xFE, 0xFF, ..] => Some("UTF-32 (big-endian)"),
        [0xFF, 0xFE, ..] => Some("UTF-16 (little-endian)"),
        [0xFE, 0xFF, ..] => Some("UTF-16 (big-endian)"),
        _ => None,
    };
    if let Some(e) = encoding {
        return Err(format!(
            "not UTF-8 text: the byte-order mark says {e}; save the file as UTF-8"
        ));
    }
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err("not a text file (binary content)".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not a text file: invalid UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_folders_are_refused_without_waiting() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f.toml");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        for p in [Path::new("/dev/zero"), fifo.as_path(), d.path()] {
            let e = read_text(p, MAX_FILE_BYTES).unwrap_err();
            assert!(e.contains("not a regular file"), "{}: {e}", p.display());
        }
    }

    #[test]
    fn read_text_says_why_a_file_is_not_text() {
        let d = tempfile::tempdir().unwrap();
        let cases: [(&str, &[u8], &str); 5] = [
            ("le.yaml", b"\xff\xfea\x00:\x00", "UTF-16 (little-endian)"),
            ("be.yaml", b"\xfe\xff\x00a\x00:", "UTF-16 (big-endian)"),
            ("u32.yaml", b"\xff\xfe\x00\x00a\x00\x00\x00", "UTF-32"),
            ("bin.yaml", b"a: 1\x00\x01", "binary"),
            ("bad.yaml", b"a: \xc3(", "invalid UTF-8 at byte 3"),
        ];
        for (name, bytes, want) in cases {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = read_text(&p, MAX_FILE_BYTES).unwrap_err();
            assert!(e.contains(want), "{name}: {e}");
        }
    }

    #[test]
    fn a_file_is_read_to_its_limit_and_no_further() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.yaml");
        std::fs::write(&p, vec![b'a'; 3 << 20]).unwrap();
        let e = read_text(&p, 1 << 20).unwrap_err();
        assert!(e.contains("3.0 MiB, over the 1.0 MiB limit"), "{e}");
        assert_eq!(read_text(&p, 4 << 20).unwrap().len(), 3 << 20);
    }
}
