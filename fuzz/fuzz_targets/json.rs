//! Lints arbitrary JSON or JSONC (see `tests/support/invariants.rs` for the input layout) and
//! renders the result in every output format.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_json(data));
