//! `--fix` writes: symlinks, hard links, read-only files, two runs at once, and a run stopped
//! by a signal in the middle of its writes. Every file ends original or fully fixed, no
//! temporary file is left, and a write hwlint refuses is reported with exit 2.

use std::fs;
use std::path::Path;
use std::process::{Command as Proc, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use assert_cmd::Command;

const BAD: &str = "per_device_train_batch_size: 8\nmax_steps: 1000\nsave_steps: 100\ndataloader_num_workers: 0   # keep\n";

/// `--fix` with concise output on a host whose cores are stated (HW202's fix, the one these
/// files carry, is applied only where the host is not the default target's guess).
const FIX_ON_A_NAMED_HOST: [&str; 6] = [
    "--cpu-cores",
    "16",
    "--no-config",
    "--fix",
    "--output-format",
    "concise",
];

/// hwlint in `dir`, on a host whose cores are stated: HW202's fix (the one these files carry)
/// is applied only where the host is not the default target's guess.
fn hwlint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("hwlint").unwrap();
    c.args(["--cpu-cores", "16"]);
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .timeout(Duration::from_secs(120));
    c
}

/// What `--fix` makes of [`BAD`], from a copy fixed alone.
fn fixed_bad() -> String {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a.yaml"), BAD).unwrap();
    hwlint(d.path())
        .args(["--no-config", "--fix", "a.yaml"])
        .output()
        .unwrap();
    let out = fs::read_to_string(d.path().join("a.yaml")).unwrap();
    assert_ne!(out, BAD, "the fixture must have a safe fix");
    out
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hwlint-"))
        .collect()
}

fn assert_each_original_or_fixed(dir: &Path, n: usize, fixed: &str) -> usize {
    let mut done = 0;
    for i in 0..n {
        let text = fs::read_to_string(dir.join(format!("c{i:04}.yaml"))).unwrap();
        assert!(
            text == BAD || text == fixed,
            "c{i:04}.yaml is neither original nor fully fixed:\n{text}"
        );
        done += usize::from(text == fixed);
    }
    done
}

fn many(dir: &Path, n: usize) {
    for i in 0..n {
        fs::write(dir.join(format!("c{i:04}.yaml")), BAD).unwrap();
    }
}

/// `hwlint --fix .` in `dir`, sent `signal` after `delay_ms`; how it ended.
fn fix_interrupted(dir: &Path, delay_ms: u64, signal: &str) -> std::process::ExitStatus {
    let mut child = Proc::cargo_bin("hwlint")
        .unwrap()
        .current_dir(dir)
        .args(["--no-config", "--fix", "--output-format", "concise", "."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(delay_ms));
    let _ = Proc::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status();
    child.wait().unwrap()
}

#[test]
fn two_concurrent_fix_runs_leave_each_file_original_or_fixed() {
    let fixed = fixed_bad();
    let d = tempfile::tempdir().unwrap();
    let n = 300;
    many(d.path(), n);
    let spawn = || {
        Proc::cargo_bin("hwlint")
            .unwrap()
            .current_dir(d.path())
            .args(FIX_ON_A_NAMED_HOST)
            .arg(".")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for out in [&a, &b] {
        // 0: nothing left; 2: some file was changed by the other run first and is reported.
        let code = out.status.code();
        assert!(matches!(code, Some(0) | Some(2)), "{code:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        if code == Some(2) {
            assert!(
                err.contains("changed on disk")
                    || err.contains("being fixed by another hwlint run"),
                "{err}"
            );
        }
    }
    assert_eq!(assert_each_original_or_fixed(d.path(), n, &fixed), n);
    assert!(temp_files(d.path()).is_empty());
}

#[test]
fn a_signal_during_writes_leaves_no_temporary_file_and_no_half_file() {
    let fixed = fixed_bad();
    // Stop the run at several moments: before, during and after its writes.
    for delay_ms in [5, 150, 600, 1200, 2000] {
        let d = tempfile::tempdir().unwrap();
        let n = 1500;
        many(d.path(), n);
        let status = fix_interrupted(d.path(), delay_ms, "TERM");
        assert_ne!(status.code(), Some(101));
        assert!(
            temp_files(d.path()).is_empty(),
            "left after SIGTERM at {delay_ms} ms: {:?}",
            temp_files(d.path())
        );
        let done = assert_each_original_or_fixed(d.path(), n, &fixed);
        // Shows which moments hit the writes (`--nocapture`); timing varies, so not asserted.
        println!("SIGTERM at {delay_ms} ms: {done} of {n} files fixed");
    }
}

/// Sets a file's modification time an hour back, as for a file an earlier run left.
fn age(path: &Path) {
    let f = fs::File::options().append(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

#[test]
fn a_kill_during_writes_leaves_whole_files_and_the_next_run_sweeps_its_temporary_files() {
    // SIGKILL cannot be caught: a temporary file being written when it lands stays behind
    // (whether one does is a matter of timing). Every file is still original or fixed, and the
    // next run names what was left; a `--fix` run removes it and says so.
    let fixed = fixed_bad();
    let d = tempfile::tempdir().unwrap();
    let n = 1500;
    for delay_ms in [150, 600, 1200] {
        many(d.path(), n);
        fix_interrupted(d.path(), delay_ms, "KILL");
        let done = assert_each_original_or_fixed(d.path(), n, &fixed);
        println!(
            "SIGKILL at {delay_ms} ms: {done} of {n} files fixed, {} temporary files left",
            temp_files(d.path()).len()
        );
    }
    // One planted for certain, as a kill leaves one.
    fs::write(d.path().join(".hwlint-K1ll3d"), "half a file").unwrap();
    for t in temp_files(d.path()) {
        age(&d.path().join(t));
    }
    let left = temp_files(d.path());
    let out = hwlint(d.path())
        .args(["--no-config", "--output-format", "concise", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    for t in &left {
        assert!(
            err.contains(&format!(
                "{t} is a temporary file an interrupted `hwlint --fix` left"
            )),
            "{t}: {err}"
        );
    }
    assert_eq!(
        temp_files(d.path()).len(),
        left.len(),
        "a plain run removes nothing"
    );
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "--output-format", "concise", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    for t in &left {
        assert!(err.contains(&format!("hwlint: removed {t}")), "{t}: {err}");
    }
    assert!(
        temp_files(d.path()).is_empty(),
        "{:?}",
        temp_files(d.path())
    );
    assert_eq!(assert_each_original_or_fixed(d.path(), n, &fixed), n);
}

#[test]
fn a_temporary_file_in_use_or_not_hwlint_s_is_left_alone() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a.yaml"), BAD).unwrap();
    // Just made (a run may be about to lock it), or not of hwlint's naming.
    fs::write(d.path().join(".hwlint-N3wOne"), "x").unwrap();
    fs::write(d.path().join(".hwlint-notes.txt"), "x").unwrap();
    age(&d.path().join(".hwlint-notes.txt"));
    // Locked by a run in flight.
    let held = d.path().join(".hwlint-Fl1ght");
    fs::write(&held, "x").unwrap();
    age(&held);
    let lock = fs::File::open(&held).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "--output-format", "concise", "."])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(".hwlint-"), "{err}");
    let mut left = temp_files(d.path());
    left.sort();
    assert_eq!(
        left,
        [".hwlint-Fl1ght", ".hwlint-N3wOne", ".hwlint-notes.txt"]
    );
}

#[test]
fn symlinks_are_fixed_through_only_inside_the_linted_paths() {
    let fixed = fixed_bad();
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("repo")).unwrap();
    fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    fs::write(d.path().join("elsewhere/far.yaml"), BAD).unwrap();
    fs::write(d.path().join("repo/real.yaml"), BAD).unwrap();
    std::os::unix::fs::symlink("../elsewhere/far.yaml", d.path().join("repo/far.yaml")).unwrap();
    std::os::unix::fs::symlink("real.yaml", d.path().join("repo/near.yaml")).unwrap();

    // Named alone, a link to a file outside what is linted: refused, link and target kept.
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "repo/far.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a symlink to") && err.contains("not written"),
        "{err}"
    );
    assert!(fs::symlink_metadata(d.path().join("repo/far.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_to_string(d.path().join("elsewhere/far.yaml")).unwrap(),
        BAD
    );

    // A link and its target both named: fixed once, through the target; the link stays a link.
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "repo/near.yaml", "repo/real.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::symlink_metadata(d.path().join("repo/near.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_to_string(d.path().join("repo/real.yaml")).unwrap(),
        fixed
    );
}

#[test]
fn read_only_and_hard_linked_files_are_reported_not_written() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("ro.yaml"), BAD).unwrap();
    fs::set_permissions(d.path().join("ro.yaml"), fs::Permissions::from_mode(0o444)).unwrap();
    fs::write(d.path().join("h.yaml"), BAD).unwrap();
    fs::hard_link(d.path().join("h.yaml"), d.path().join("h2.yml.bak")).unwrap();
    fs::write(d.path().join("ok.yaml"), BAD).unwrap();
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "--output-format", "concise", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ro.yaml is read-only"), "{err}");
    assert!(err.contains("h.yaml has 2 hard links"), "{err}");
    assert_eq!(fs::read_to_string(d.path().join("ro.yaml")).unwrap(), BAD);
    assert_eq!(
        fs::read_to_string(d.path().join("h2.yml.bak")).unwrap(),
        BAD
    );
    // The run went on: the writable file was fixed, and the unwritten ones are still reported.
    assert_ne!(fs::read_to_string(d.path().join("ok.yaml")).unwrap(), BAD);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ro.yaml") && stdout.contains("HW202"),
        "{stdout}"
    );
}

/// A file whose folder hwlint cannot write in (no temporary file can be made beside it) is
/// reported under its own name with the reason; every other file is still fixed and reported,
/// and the run exits 2. Run as an unprivileged user, since root writes anywhere.
#[test]
fn an_unwritable_folder_fails_only_its_own_files() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    fs::set_permissions(root, fs::Permissions::from_mode(0o777)).unwrap();
    fs::create_dir(root.join("locked")).unwrap();
    for f in ["a.yaml", "locked/u.yaml", "z.yaml"] {
        fs::write(root.join(f), BAD).unwrap();
        fs::set_permissions(root.join(f), fs::Permissions::from_mode(0o666)).unwrap();
    }
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o555)).unwrap();
    // A copy the unprivileged user can run, whatever the permissions of the build folder.
    let bin = root.join("hwlint-bin");
    fs::copy(assert_cmd::cargo::cargo_bin("hwlint"), &bin).unwrap();
    let is_root = Proc::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let mut c = if is_root {
        let mut c = Proc::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        Proc::new(&bin)
    };
    let out = c
        .args(FIX_ON_A_NAMED_HOST)
        .args(["a.yaml", "locked/u.yaml", "z.yaml"])
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{err}{stdout}");
    assert!(
        err.contains("cannot write locked/u.yaml: Permission denied"),
        "{err}"
    );
    assert!(!err.contains(".hwlint-"), "{err}");
    let fixed = fixed_bad();
    assert_eq!(fs::read_to_string(root.join("a.yaml")).unwrap(), fixed);
    assert_eq!(fs::read_to_string(root.join("z.yaml")).unwrap(), fixed);
    assert_eq!(fs::read_to_string(root.join("locked/u.yaml")).unwrap(), BAD);
    // The diagnostics are printed, the unwritten file's among them.
    assert!(stdout.contains("locked/u.yaml:4:25: HW202"), "{stdout}");
    assert!(stdout.contains("Fixed 2 problems"), "{stdout}");
}

/// The same file named twice, or through a symlink, is linted, counted and fixed once.
#[test]
fn a_file_named_twice_is_fixed_once() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("t.yaml"), BAD).unwrap();
    std::os::unix::fs::symlink("t.yaml", d.path().join("link.yaml")).unwrap();
    let out = hwlint(d.path())
        .args(["--no-config", "--output-format", "concise"])
        .args(["link.yaml", "t.yaml", "./t.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("HW202").count(), 1, "{stdout}");
    assert!(
        stdout.contains("\nt.yaml:") || stdout.starts_with("t.yaml:"),
        "{stdout}"
    );
    let out = hwlint(d.path())
        .args(["--no-config", "--fix", "--output-format", "concise"])
        .args(["t.yaml", "./t.yaml", "link.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Fixed 1 problem."), "{stdout}");
    assert_eq!(
        fs::read_to_string(d.path().join("t.yaml")).unwrap(),
        fixed_bad()
    );
    assert!(fs::symlink_metadata(d.path().join("link.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
}
