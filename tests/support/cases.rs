//! The proptest settings every property test uses: 1000 cases unless `PROPTEST_CASES` says
//! otherwise (`PROPTEST_CASES=5000 cargo test --test fix_properties` for a longer run), and no
//! regression files next to the tests (a failure prints its minimal input).

use proptest::test_runner::Config as ProptestConfig;

/// Cases per property when `PROPTEST_CASES` is not set.
pub const CASES: u32 = 1000;

pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(CASES),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
