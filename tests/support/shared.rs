//! The data the project keeps beside the repository (`../shared`: the corpus, the calibration
//! measurements). A test that reads it asks `shared_path` and returns early on `None`; with
//! `HWLINT_REQUIRE_SHARED` set (CI sets it), an absent folder is a failure instead of a skip,
//! so a clone without `../shared` cannot pass those tests by not running them.

use std::path::PathBuf;

/// `CARGO_MANIFEST_DIR/../shared/<sub>` when it exists. When it does not: panics if
/// `HWLINT_REQUIRE_SHARED` is set (non-empty and not `0`); otherwise prints a `SKIPPED` line
/// naming the test to standard error and returns `None`.
pub fn shared_path(sub: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(sub);
    if path.exists() {
        return Some(path);
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>");
    let required = std::env::var("HWLINT_REQUIRE_SHARED")
        .map(|v| !v.is_empty() && v != "0")
        .unwrap_or(false);
    if required {
        panic!(
            "{test}: ../shared/{sub} is absent ({}) and HWLINT_REQUIRE_SHARED is set: \
             this test needs the shared data beside the repository",
            path.display()
        );
    }
    eprintln!(
        "SKIPPED {test}: ../shared/{sub} is absent (set HWLINT_REQUIRE_SHARED=1 to make this a failure)"
    );
    None
}
