//! Lints arbitrary YAML, TOML, JSON or JSONC with every fix on and checks that fixing is sound
//! (see `check_fix_invariants` in `tests/support/invariants.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| invariants::check_fix_invariants(data));
