//! Lints and fixes a config over the `_base_` / `_BASE_` files it names, written beside it (see
//! `check_inherit` in `tests/support/invariants.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_inherit(data));
