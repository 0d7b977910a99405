//! Hostile inputs: binary and mis-encoded files, odd line endings, huge and deeply nested files,
//! alias bombs, floods of duplicate keys and suppressions, things that are not regular files,
//! odd paths. Every input is generated here, in a temporary folder.
//!
//! Each case runs hwlint twice, plainly and with `--fix --unsafe-fixes`, and checks the exit
//! code, the diagnostic reported (code and message), that hwlint did not panic, that no file
//! changed (unless a fix legitimately applies) and that no `.hwlint-*` temporary file is left.
//! The watchdog (120 s per run) only stops a hung run; no case asserts a duration.

use std::fs;
use std::io::Write;

#[path = "support/hostile.rs"]
mod support;
use support::*;

// ---------------------------------------------------------------------------------------------
// Empty, binary, encodings

#[test]
fn empty_file() {
    file_case("a.yaml", "", exit(&[0]).absent(&["HW902"]));
}

#[test]
fn only_comments() {
    file_case(
        "a.yaml",
        "# one\n# two\n\n   # three\n",
        exit(&[0]).absent(&["HW902"]),
    );
}

#[test]
fn png_named_yaml() {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    b.extend((0..=255u8).cycle().take(4096));
    file_case("a.yaml", b, hw902(&["binary"]));
}

#[test]
fn nul_bytes() {
    file_case("a.yaml", b"a: 1\n\0\0\0b: 2\n", hw902(&["binary"]));
}

#[test]
fn invalid_utf8() {
    file_case("a.yaml", b"a: \xff\xfe x\n", hw902(&["invalid UTF-8"]));
}

const HF_LINE: &str = "per_device_train_batch_size: 8\n";

#[test]
fn utf16_le_with_bom() {
    let mut b = vec![0xff, 0xfe];
    b.extend(HF_LINE.encode_utf16().flat_map(u16::to_le_bytes));
    file_case("a.yaml", b, hw902(&["UTF-16"]));
}

#[test]
fn utf16_be_with_bom() {
    let mut b = vec![0xfe, 0xff];
    b.extend(HF_LINE.encode_utf16().flat_map(u16::to_be_bytes));
    file_case("a.yaml", b, hw902(&["UTF-16"]));
}

#[test]
fn utf8_bom_parses() {
    // HW303 (save_steps > max_steps) proves the file parsed and was recognised.
    let text = "\u{feff}per_device_train_batch_size: 8\nmax_steps: 100\nsave_steps: 500\n";
    file_case(
        "a.yaml",
        text,
        exit(&[1])
            .reports("HW303", &[])
            .absent(&["HW902"])
            .fixable(),
    );
}

#[test]
fn doubled_utf8_bom() {
    let text = "\u{feff}\u{feff}per_device_train_batch_size: 8\nmax_steps: 1000\nsave_steps: 500\n";
    file_case("a.yaml", text, exit(&[0, 1]));
}

// ---------------------------------------------------------------------------------------------
// Line endings

const HF_LINES: [&str; 4] = [
    "per_device_train_batch_size: 8",
    "max_steps: 100",
    "save_steps: 500",
    "dataloader_num_workers: 0",
];

fn line_endings(eols: [&str; 4], check_fixed: impl Fn(&str)) {
    let text: String = HF_LINES
        .iter()
        .zip(eols)
        .map(|(l, e)| format!("{l}{e}"))
        .collect();
    let d = with_file("a.yaml", &text);
    let e = exit(&[1])
        .reports("HW303", &[])
        .absent(&["HW902"])
        .fixable();
    case(d.path(), &["a.yaml"], e);
    // The fix run above wrote the file; start again for the line number.
    fs::write(d.path().join("a.yaml"), &text).unwrap();
    let out = run(d.path(), &["a.yaml", "--output-format", "concise"], false);
    assert_eq!(concise_row(&out.stdout, "HW303"), Some(3), "{}", out.show());

    let out = run(
        d.path(),
        &[
            "a.yaml",
            "--output-format",
            "json",
            "--fix",
            "--unsafe-fixes",
        ],
        false,
    );
    assert_no_temp_files(d.path());
    let fixed = fs::read_to_string(d.path().join("a.yaml")).unwrap();
    assert_ne!(fixed, text, "nothing was fixed\n{}", out.show());
    let again = run(d.path(), &["a.yaml", "--output-format", "json"], false);
    assert!(
        !again.json().iter().any(|d| d["code"] == "HW902"),
        "the fixed file does not parse: {fixed:?}\n{}",
        again.show()
    );
    check_fixed(&fixed);
}

#[test]
fn crlf() {
    line_endings(["\r\n"; 4], |fixed| {
        assert!(
            !fixed.replace("\r\n", "").contains('\n'),
            "lone LF after fixing: {fixed:?}"
        );
    });
}

#[test]
fn bare_cr() {
    line_endings(["\r"; 4], |fixed| {
        assert!(!fixed.contains('\n'), "LF after fixing: {fixed:?}");
    });
}

#[test]
fn mixed_line_endings() {
    line_endings(["\r\n", "\n", "\r", "\r\n"], |_| {});
}

// ---------------------------------------------------------------------------------------------
// Size

#[test]
fn hundred_mb_single_line() {
    let d = tempfile::tempdir().unwrap();
    let mut f = std::io::BufWriter::new(fs::File::create(d.path().join("a.yaml")).unwrap());
    f.write_all(b"a: ").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut left = 100_000_000usize;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    f.write_all(b"\n").unwrap();
    drop(f);
    case(d.path(), &["a.yaml"], hw902(&["MiB", "limit"]));
}

fn million_keys() -> String {
    let mut s = String::with_capacity(16 << 20);
    for i in 0..1_000_000 {
        s.push_str(&format!("k{i}: {i}\n"));
    }
    s
}

#[test]
fn million_keys_under_the_limit() {
    // One plain run: the file is no training config, so `--fix` has nothing to add here, and a
    // second pass over 14 MB doubles the debug-build time.
    let d = with_file("a.yaml", million_keys());
    once(
        d.path(),
        &["a.yaml"],
        "json",
        exit(&[0, 1]).absent(&["HW902"]),
    );
}

#[test]
fn million_keys_over_a_lowered_limit() {
    let d = with_file("a.yaml", million_keys());
    fs::write(d.path().join("hwlint.toml"), "max_file_size_mb = 1\n").unwrap();
    case_with(d.path(), &["a.yaml"], "json", true, hw902(&["limit"]));
}

// ---------------------------------------------------------------------------------------------
// Nesting and aliases

const DEEP: usize = 10_000;

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{inner}{}\n", open.repeat(n), close.repeat(n))
}

const TOO_DEEP: Expect = hw902(&["nested too deeply"]);

#[test]
fn deep_brackets_json() {
    file_case("a.json", nested("[", "1", "]", DEEP), TOO_DEEP);
}

#[test]
fn deep_braces_json() {
    file_case("a.json", nested("{\"a\":", "1", "}", DEEP), TOO_DEEP);
}

#[test]
fn deep_brackets_yaml() {
    file_case("a.yaml", nested("[", "1", "]", DEEP), TOO_DEEP);
}

#[test]
fn deep_braces_yaml() {
    file_case("a.yaml", nested("{", "", "}", DEEP), TOO_DEEP);
}

#[test]
fn deep_block_sequence_yaml() {
    file_case("a.yaml", format!("{}1\n", "- ".repeat(DEEP)), TOO_DEEP);
}

#[test]
fn very_deep_block_sequence_yaml() {
    file_case("a.yaml", format!("{}1\n", "- ".repeat(100_000)), TOO_DEEP);
}

#[test]
fn deep_array_toml() {
    file_case(
        "a.toml",
        format!("a = {}", nested("[", "1", "]", DEEP)),
        TOO_DEEP,
    );
}

#[test]
fn deep_table_header_toml() {
    let header = vec!["a"; DEEP].join(".");
    file_case("a.toml", format!("[{header}]\nb = 1\n"), TOO_DEEP);
}

#[test]
fn billion_laughs() {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        s.push_str(&format!("{n}: &{n} [{refs}]\n", n = w[1]));
    }
    file_case("a.yaml", s, hw902(&["alias"]));
}

// ---------------------------------------------------------------------------------------------
// Floods

fn flood(line: &str, n: usize) -> String {
    // save_steps is set: the Trainer default (500) past max_steps would fire HW303, with a fix.
    let mut s = String::from("per_device_train_batch_size: 8\nmax_steps: 100\nsave_steps: 50\n");
    s.reserve(line.len() * n);
    for _ in 0..n {
        s.push_str(line);
    }
    s
}

#[test]
fn hundred_thousand_duplicate_keys() {
    let d = with_file("a.yaml", flood("max_steps: 100\n", 100_000));
    let e = exit(&[1]).reports("HW602", &[]).absent(&["HW902"]);
    once(d.path(), &["a.yaml"], "full", e);
    case(d.path(), &["a.yaml"], e);
}

#[test]
fn hundred_thousand_suppressions() {
    let d = with_file("a.yaml", flood("# hwlint: ignore[HW202]\n", 100_000));
    let e = exit(&[1])
        .reports("HW903", &[])
        .absent(&["HW902"])
        .fixable();
    // Full output first: the fix run removes the comments.
    once(d.path(), &["a.yaml"], "full", e);
    case(d.path(), &["a.yaml"], e);
}

// ---------------------------------------------------------------------------------------------
// Things that are not regular files, odd paths

#[test]
fn directory_named_yaml() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir(d.path().join("x.yaml")).unwrap();
    let out = case(d.path(), &["x.yaml"], exit(&[0]));
    assert!(out.json().is_empty(), "{}", out.show());
}

#[test]
fn fifo() {
    let d = tempfile::tempdir().unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(d.path().join("f.yaml"))
        .status()
        .unwrap();
    assert!(ok.success());
    case(d.path(), &["f.yaml"], hw902(&["not a regular file"]));
}

#[test]
fn symlink_loop() {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("b.yaml", d.path().join("a.yaml")).unwrap();
    std::os::unix::fs::symlink("a.yaml", d.path().join("b.yaml")).unwrap();
    case(d.path(), &["a.yaml"], hw902(&[]));
}

#[test]
fn dangling_symlink() {
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("nowhere.yaml", d.path().join("a.yaml")).unwrap();
    case(d.path(), &["a.yaml"], hw902(&[]));
}

#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() == "0" {
        eprintln!("skipped: root reads every file");
        return;
    }
    let d = with_file("a.yaml", "per_device_train_batch_size: 8\n");
    let p = d.path().join("a.yaml");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    case(d.path(), &["a.yaml"], hw902(&["ermission"]));
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn nonexistent_path() {
    let d = tempfile::tempdir().unwrap();
    let out = case(d.path(), &["no/such-file.yaml"], exit(&[2]));
    assert!(out.stderr.contains("no/such-file.yaml"), "{}", out.show());
}

#[test]
fn spaces_and_non_ascii_in_paths() {
    let rel = "dir with space/résumé é.yaml";
    let text = "per_device_train_batch_size: 8\ndataloader_num_workers: 0\noutput_dir: ./résultats  # note\n";
    let d = with_file(rel, text);
    // A named host: HW202's fix is applied only where the cores are not the default's guess.
    fs::write(
        d.path().join("hwlint.toml"),
        "[target]\ngpu = \"rtx-4090\"\ncpu_cores = 16\nram_gb = 64\n",
    )
    .unwrap();
    let e = exit(&[1])
        .reports("HW202", &[])
        .absent(&["HW902"])
        .fixable();
    for paths in [&[rel][..], &["."], &["dir with space"]] {
        fs::write(d.path().join(rel), text).unwrap();
        let out = case_with(d.path(), paths, "json", true, e);
        let on_file = out.json().iter().any(|d| {
            d["code"] == "HW202" && d["filename"].as_str().is_some_and(|f| f.ends_with(rel))
        });
        assert!(
            on_file,
            "HW202 not reported on {rel:?} ({paths:?})\n{}",
            out.show()
        );
        let fixed = fs::read_to_string(d.path().join(rel)).unwrap();
        assert!(fixed.contains("./résultats  # note"), "{fixed:?}");
        let again = run(d.path(), &[rel, "--output-format", "json"], false);
        assert!(
            !again
                .json()
                .iter()
                .any(|d| d["code"] == "HW202" || d["code"] == "HW902"),
            "after --fix: {fixed:?}\n{}",
            again.show()
        );
    }
}
