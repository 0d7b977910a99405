//! The harness of the hostile-input tests: a case runs hwlint twice (plainly, then with
//! `--fix --unsafe-fixes`) in a folder it generates, and checks the exit code, the diagnostic
//! reported, that nothing panicked or was killed, that no file changed (unless a fix
//! legitimately applies) and that no `.hwlint-*` temporary file is left.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

pub const WATCHDOG: Duration = Duration::from_secs(120);

/// What a case must produce, on the plain run and on the `--fix --unsafe-fixes` run.
#[derive(Clone, Copy)]
pub struct Expect {
    /// Allowed exit codes.
    pub exit: &'static [i32],
    /// A diagnostic that must be reported, with substrings of its message.
    code: Option<&'static str>,
    msg: &'static [&'static str],
    /// Codes that must not be reported.
    absent: &'static [&'static str],
    /// A fix legitimately applies: the fix run is only checked for panics and temporary files.
    fixable: bool,
}

pub const fn exit(codes: &'static [i32]) -> Expect {
    Expect {
        exit: codes,
        code: None,
        msg: &[],
        absent: &[],
        fixable: false,
    }
}

/// Exit 1 with HW902 whose message holds every one of `msg`.
pub const fn hw902(msg: &'static [&'static str]) -> Expect {
    Expect {
        exit: &[1],
        code: Some("HW902"),
        msg,
        absent: &[],
        fixable: false,
    }
}

impl Expect {
    pub const fn absent(mut self, codes: &'static [&'static str]) -> Self {
        self.absent = codes;
        self
    }
    pub const fn reports(mut self, code: &'static str, msg: &'static [&'static str]) -> Self {
        self.code = Some(code);
        self.msg = msg;
        self
    }
    pub const fn fixable(mut self) -> Self {
        self.fixable = true;
        self
    }
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn show(&self) -> String {
        let head = |s: &str| s.lines().take(15).collect::<Vec<_>>().join("\n");
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            head(&self.stdout),
            head(&self.stderr)
        )
    }

    /// The diagnostics of a `--output-format json` run.
    pub fn json(&self) -> Vec<Value> {
        match serde_json::from_str::<Value>(&self.stdout) {
            Ok(Value::Array(v)) => v,
            _ => panic!("stdout is not a JSON array\n{}", self.show()),
        }
    }
}

/// Runs hwlint in `dir` with `args` (`--no-config` unless `config`), with the watchdog.
pub fn run(dir: &Path, args: &[&str], config: bool) -> Out {
    let mut c = Command::cargo_bin("hwlint").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("HWLINT_OUTPUT_FORMAT")
        .timeout(WATCHDOG)
        .args(args);
    if !config {
        c.arg("--no-config");
    }
    let start = Instant::now();
    let out = c.output().unwrap();
    let took = start.elapsed();
    if took > Duration::from_secs(5) {
        eprintln!("slow: hwlint {args:?} took {took:.1?}");
    }
    let out = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        out.code != -1,
        "hwlint {args:?} was killed (hung past the {WATCHDOG:?} watchdog?)\n{}",
        out.show()
    );
    assert!(
        out.code != 101 && !out.stderr.contains("panicked"),
        "hwlint {args:?} panicked\n{}",
        out.show()
    );
    out
}

/// What a folder holds, without following links or opening anything but readable regular
/// files (a FIFO would block).
#[derive(Debug, PartialEq)]
pub enum Entry {
    File(Vec<u8>),
    Unreadable { len: u64, mode: u32 },
    Dir,
    Link(PathBuf),
    Other,
}

pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    use std::os::unix::fs::PermissionsExt;
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let entry = if m.file_type().is_symlink() {
                Entry::Link(fs::read_link(&p).unwrap())
            } else if m.is_dir() {
                walk(root, &p, out);
                Entry::Dir
            } else if m.is_file() {
                match fs::read(&p) {
                    Ok(b) => Entry::File(b),
                    Err(_) => Entry::Unreadable {
                        len: m.len(),
                        mode: m.permissions().mode(),
                    },
                }
            } else {
                Entry::Other
            };
            out.insert(rel, entry);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

pub fn assert_no_temp_files(dir: &Path) {
    let left: Vec<_> = snapshot(dir)
        .into_keys()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".hwlint-"))
        })
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

pub fn assert_same(
    before: &BTreeMap<PathBuf, Entry>,
    after: &BTreeMap<PathBuf, Entry>,
    what: &str,
) {
    if before == after {
        return;
    }
    let keys: std::collections::BTreeSet<_> = before.keys().chain(after.keys()).collect();
    let changed: Vec<_> = keys
        .into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    panic!("{what} changed the folder: {changed:?}");
}

pub fn check_out(out: &Out, format: &str, e: Expect, what: &str) {
    assert!(
        e.exit.contains(&out.code),
        "{what}: exit {} not in {:?}\n{}",
        out.code,
        e.exit,
        out.show()
    );
    if format != "json" || out.code == 2 {
        return;
    }
    let diags = out.json();
    let codes: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
    if let Some(code) = e.code {
        let found = diags.iter().any(|d| {
            d["code"] == code
                && e.msg
                    .iter()
                    .all(|m| d["message"].as_str().unwrap_or("").contains(m))
        });
        assert!(
            found,
            "{what}: no {code} with a message containing {:?}\n{}",
            e.msg,
            out.show()
        );
    }
    for a in e.absent {
        assert!(!codes.contains(a), "{what}: {a} reported\n{}", out.show());
    }
}

/// Runs the case twice (plain, then `--fix --unsafe-fixes`) on `paths` in `dir` and returns
/// the plain run's output.
pub fn case_with(dir: &Path, paths: &[&str], format: &str, config: bool, e: Expect) -> Out {
    let before = snapshot(dir);
    let mut args = paths.to_vec();
    args.extend(["--output-format", format]);
    let plain = run(dir, &args, config);
    check_out(&plain, format, e, "plain run");
    assert_no_temp_files(dir);
    assert_same(&before, &snapshot(dir), "the plain run");

    args.extend(["--fix", "--unsafe-fixes"]);
    let fixed = run(dir, &args, config);
    assert_no_temp_files(dir);
    if !e.fixable {
        check_out(&fixed, format, e, "--fix run");
        assert_same(&before, &snapshot(dir), "the --fix run");
    }
    plain
}

/// One plain run in another output format (`full`, `concise`): exit code, no panic, nothing
/// written.
pub fn once(dir: &Path, paths: &[&str], format: &str, e: Expect) {
    let before = snapshot(dir);
    let mut args = paths.to_vec();
    args.extend(["--output-format", format]);
    let out = run(dir, &args, false);
    check_out(&out, format, e, format);
    assert_no_temp_files(dir);
    assert_same(&before, &snapshot(dir), format);
}

pub fn case(dir: &Path, paths: &[&str], e: Expect) -> Out {
    case_with(dir, paths, "json", false, e)
}

/// A temporary folder holding `name` with `bytes`.
pub fn with_file(name: &str, bytes: impl AsRef<[u8]>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join(name);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
    d
}

/// A one-file case: `name` holding `bytes`, named on the command line.
pub fn file_case(name: &str, bytes: impl AsRef<[u8]>, e: Expect) -> Out {
    let d = with_file(name, bytes);
    case(d.path(), &[name], e)
}

/// `row` of the first `code` in concise output.
pub fn concise_row(out: &str, code: &str) -> Option<usize> {
    out.lines()
        .find(|l| l.contains(&format!(": {code} ")))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|r| r.parse().ok())
}

/// Runs hwlint in `dir` with `args` (`--no-config`), its address space limited to `mb` MiB
/// (`ulimit -v`): a run that needs more fails to allocate and dies, which the caller sees.
pub fn run_within(dir: &Path, args: &[&str], mb: u64) -> Out {
    let bin = assert_cmd::cargo::cargo_bin("hwlint");
    let mut c = Command::new("bash");
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("HWLINT_OUTPUT_FORMAT")
        .timeout(WATCHDOG)
        .args(["-c", "ulimit -v \"$1\" && shift && exec \"$@\"", "bash"])
        .arg((mb << 10).to_string())
        .arg(bin)
        .args(args)
        .arg("--no-config");
    let out = c.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
