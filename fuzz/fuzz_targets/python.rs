//! Lints and fixes arbitrary Python (a config module or training script; see `check_code` in
//! `tests/support/invariants.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_code(hwlint::syntax::Format::Python, data));
