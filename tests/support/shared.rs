//! The data in `../shared` (the corpus, the calibration rows) that some tests read. Outside CI
//! a missing folder skips those tests, saying so; with `HWLINT_REQUIRE_SHARED` set (as `.ci/run`
//! does) it fails them, so a CI run cannot pass by testing nothing.

#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/<sub>` when it exists; `None` (after saying so) when it does not and skipping is
/// allowed; a panic when `HWLINT_REQUIRE_SHARED` is set.
pub fn shared_path(sub: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(sub);
    if p.exists() {
        return Some(p);
    }
    let required = std::env::var("HWLINT_REQUIRE_SHARED").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !required,
        "../shared/{sub} is absent and HWLINT_REQUIRE_SHARED is set: this test needs it"
    );
    eprintln!(
        "SKIPPED: ../shared/{sub} is absent (set HWLINT_REQUIRE_SHARED=1 to make this a failure)"
    );
    None
}
