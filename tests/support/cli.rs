//! Running the hwlint binary in a folder of files a test writes.

use std::fs;
use std::path::Path;

use assert_cmd::Command;

/// The hwlint binary, run in `dir`, without colour, outside GitHub Actions, and at the
/// default width (a `COLUMNS` exported by the caller's shell would change the wrapping).
pub fn hwlint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("hwlint").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("COLUMNS");
    c
}

/// Writes `text` to `dir/rel`, creating its folders.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}
