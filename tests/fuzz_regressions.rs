//! Replays every committed fuzz input under `fuzz/regressions/<target>/` through the checks its
//! fuzz target runs (`tests/support/invariants.rs`), so a crash found once stays fixed without
//! a nightly toolchain or cargo-fuzz. Every file is run; the failures are reported together.

mod support {
    pub mod invariants;
}

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use support::invariants::{check_target, TARGETS};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "README.md" && n != ".gitkeep")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn fuzz_regressions_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    // The default hook still prints each panic as it happens; this one also keeps where it was
    // raised, for the summary.
    let location = Arc::new(Mutex::new(String::new()));
    let default_hook = Arc::new(std::panic::take_hook());
    {
        let (location, default_hook) = (location.clone(), default_hook.clone());
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                *location.lock().unwrap_or_else(|e| e.into_inner()) = l.to_string();
            }
            default_hook(info);
        }));
    }
    let mut failures = Vec::new();
    for target in TARGETS {
        let files = inputs(&root.join(target));
        assert!(
            !files.is_empty(),
            "no regression inputs in fuzz/regressions/{target}/"
        );
        for file in files {
            let bytes = std::fs::read(&file).expect("readable regression input");
            let shown = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string();
            eprintln!("{shown}");
            if let Err(e) = catch_unwind(AssertUnwindSafe(|| check_target(target, &bytes))) {
                let message = e
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| e.downcast_ref::<&str>().copied())
                    .unwrap_or("(non-string panic)");
                let first_line = message.lines().next().unwrap_or("");
                let at = location.lock().unwrap_or_else(|e| e.into_inner()).clone();
                failures.push(format!("{shown}: {first_line} (at {at})"));
            }
        }
    }
    let _ = std::panic::take_hook();
    assert!(
        failures.is_empty(),
        "{} fuzz regression(s) fail:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
