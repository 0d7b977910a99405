//! Lints and fixes arbitrary Rust (a Burn config or training module; see `check_code` in
//! `tests/support/invariants.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_code(hwlint::syntax::Format::Rust, data));
