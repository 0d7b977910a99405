//! Lints and fixes a launch script over the config and script it names, written beside it (see
//! `check_launch` in `tests/support/invariants.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_launch(data));
