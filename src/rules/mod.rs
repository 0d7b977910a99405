//! The rule registry. One file per rule; its `//!` doc comment is its documentation
//! (`hwlint rule HW202`), in ruff's form: What it does / Why is this bad? / Example / Fix safety.

mod context;
mod hw101_batch_exceeds_vram;
mod hw102_gpu_underused;
mod hw103_checkpointing_unneeded;
mod hw104_memory_fraction_invalid;
mod hw105_vram_headroom_low;
mod hw201_workers_exceed_cores;
mod hw202_single_process_loading;
mod hw203_workers_exceed_ram;
mod hw204_pin_memory_off;
mod hw205_persistent_workers_off;
mod hw206_storage_too_slow;
mod hw301_lr_decay_mismatch;
mod hw302_warmup_exceeds_steps;
mod hw303_save_freq_exceeds_steps;
mod hw304_eval_freq_exceeds_steps;
mod hw401_bf16_unsupported;
mod hw402_mixed_precision_off;
mod hw403_flash_attention_unsupported;
mod hw404_fp8_unsupported;
mod hw501_batch_arithmetic_mismatch;
mod hw502_gpus_exceed_target;
mod hw601_yaml_number_as_string;
mod hw602_duplicate_key;
mod hw901_unknown_model;
mod interval;
mod memory;
pub mod outcome;
mod precision;

pub use context::{Context, RuleOptions, Violation};
pub(crate) use hw901_unknown_model::names_unknown_model;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Whether a rule can offer a fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixAvailability {
    Always,
    Sometimes,
    None,
}

pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub fix: FixAvailability,
    /// The source of the rule's file; its `//!` lines are the documentation.
    source: &'static str,
    /// `None` for diagnostics the pipeline itself produces (HW902).
    pub check: Option<fn(&Context) -> Vec<Violation>>,
}

impl Rule {
    /// The rule's documentation: its file's `//!` doc comment as markdown.
    pub fn doc(&self) -> String {
        self.source
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.trim_start_matches("//!")
                    .strip_prefix(' ')
                    .unwrap_or(l.trim_start_matches("//!"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The first line of the documentation after "## What it does".
    pub fn summary(&self) -> String {
        let doc = self.doc();
        doc.split("## What it does")
            .nth(1)
            .and_then(|s| s.split("\n\n").map(str::trim).find(|p| !p.is_empty()))
            .map(|p| p.replace('\n', " "))
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.name)
    }
}

/// A rule about the training run: silent on a config its dialect marks as not training
/// (`[[not_training]]`: inference, evaluation). `rule!(file: ...)` is a rule about the file
/// itself (how its loader reads it), which holds whatever the file runs.
macro_rules! rule {
    ($module:ident, $code:literal, $name:literal, $sev:ident, $fix:ident) => {
        rule!(@ $module, $code, $name, $sev, $fix, {
            fn training_only(ctx: &Context) -> Vec<Violation> {
                if ctx.setup.not_training.is_some() {
                    return vec![];
                }
                $module::check(ctx)
            }
            training_only
        })
    };
    (file: $module:ident, $code:literal, $name:literal, $sev:ident, $fix:ident) => {
        rule!(@ $module, $code, $name, $sev, $fix, $module::check)
    };
    (@ $module:ident, $code:literal, $name:literal, $sev:ident, $fix:ident, $check:expr) => {
        Rule {
            code: $code,
            name: $name,
            severity: Severity::$sev,
            fix: FixAvailability::$fix,
            source: include_str!(concat!(stringify!($module), ".rs")),
            check: Some($check),
        }
    };
}

/// Every rule, in code order.
pub static RULES: &[Rule] = &[
    rule!(
        hw101_batch_exceeds_vram,
        "HW101",
        "batch-exceeds-vram",
        Error,
        Sometimes
    ),
    rule!(
        hw102_gpu_underused,
        "HW102",
        "gpu-underused",
        Warning,
        Sometimes
    ),
    rule!(
        hw103_checkpointing_unneeded,
        "HW103",
        "checkpointing-unneeded",
        Warning,
        Always
    ),
    rule!(
        hw104_memory_fraction_invalid,
        "HW104",
        "memory-fraction-invalid",
        Error,
        Sometimes
    ),
    rule!(
        hw105_vram_headroom_low,
        "HW105",
        "vram-headroom-low",
        Warning,
        Sometimes
    ),
    rule!(
        hw201_workers_exceed_cores,
        "HW201",
        "workers-exceed-cores",
        Error,
        Always
    ),
    rule!(
        hw202_single_process_loading,
        "HW202",
        "single-process-loading",
        Warning,
        Always
    ),
    rule!(
        hw203_workers_exceed_ram,
        "HW203",
        "workers-exceed-ram",
        Warning,
        Sometimes
    ),
    rule!(
        hw204_pin_memory_off,
        "HW204",
        "pin-memory-off",
        Warning,
        Always
    ),
    rule!(
        hw205_persistent_workers_off,
        "HW205",
        "persistent-workers-off",
        Info,
        Always
    ),
    rule!(
        hw206_storage_too_slow,
        "HW206",
        "storage-too-slow",
        Warning,
        None
    ),
    rule!(
        hw301_lr_decay_mismatch,
        "HW301",
        "lr-decay-mismatch",
        Warning,
        Always
    ),
    rule!(
        hw302_warmup_exceeds_steps,
        "HW302",
        "warmup-exceeds-steps",
        Error,
        Always
    ),
    rule!(
        hw303_save_freq_exceeds_steps,
        "HW303",
        "save-freq-exceeds-steps",
        Warning,
        Sometimes
    ),
    rule!(
        hw304_eval_freq_exceeds_steps,
        "HW304",
        "eval-freq-exceeds-steps",
        Warning,
        Sometimes
    ),
    rule!(
        hw401_bf16_unsupported,
        "HW401",
        "bf16-unsupported",
        Error,
        Sometimes
    ),
    rule!(
        hw402_mixed_precision_off,
        "HW402",
        "mixed-precision-off",
        Warning,
        Sometimes
    ),
    rule!(
        hw403_flash_attention_unsupported,
        "HW403",
        "flash-attention-unsupported",
        Error,
        Sometimes
    ),
    rule!(
        hw404_fp8_unsupported,
        "HW404",
        "fp8-unsupported",
        Error,
        Sometimes
    ),
    rule!(
        hw501_batch_arithmetic_mismatch,
        "HW501",
        "batch-arithmetic-mismatch",
        Error,
        Sometimes
    ),
    rule!(
        hw502_gpus_exceed_target,
        "HW502",
        "gpus-exceed-target",
        Error,
        None
    ),
    rule!(
        hw601_yaml_number_as_string,
        "HW601",
        "yaml-number-as-string",
        Error,
        Always
    ),
    rule!(file: hw602_duplicate_key, "HW602", "duplicate-key", Warning, None),
    rule!(hw901_unknown_model, "HW901", "unknown-model", Info, None),
    Rule {
        code: "HW902",
        name: "parse-error",
        severity: Severity::Error,
        fix: FixAvailability::None,
        source: include_str!("hw902_parse_error.md"),
        check: None,
    },
    Rule {
        code: "HW903",
        name: "unused-suppression",
        severity: Severity::Warning,
        fix: FixAvailability::Sometimes,
        source: include_str!("hw903_unused_suppression.md"),
        check: None,
    },
];

pub fn by_code(code: &str) -> Option<&'static Rule> {
    RULES
        .iter()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

/// Whether a `--select`/`ignore` entry names rules: `ALL`, a code, or a prefix of codes
/// (`HW2`). The error says what was probably meant.
pub fn check_selector(s: &str) -> Result<(), String> {
    if s == "ALL" || (s.len() >= 2 && RULES.iter().any(|r| r.code.starts_with(s))) {
        return Ok(());
    }
    let upper = s.trim().to_ascii_uppercase();
    let fixed = if upper == "ALL" || RULES.iter().any(|r| r.code.starts_with(upper.as_str())) {
        Some(upper.clone())
    } else {
        RULES
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(s.trim()))
            .map(|r| r.code.to_string())
            .or_else(|| {
                // The closest code by edit distance, when it is close.
                RULES
                    .iter()
                    .map(|r| (edit_distance(&upper, r.code), r.code))
                    .filter(|(d, _)| *d <= 2)
                    .min()
                    .map(|(_, c)| c.to_string())
            })
    };
    Err(match fixed {
        Some(f) => format!("`{s}` is not a rule code or prefix; did you mean `{f}`?"),
        None => format!("`{s}` is not a rule code or prefix"),
    })
}

pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `1 process`, `8 processes`.
pub(crate) fn processes(n: i64) -> String {
    format!("{n} process{}", if n == 1 { "" } else { "es" })
}

/// Whether `code` is chosen by `select` (prefixes; empty = all) and not by `ignore`.
pub fn is_enabled(code: &str, select: &[String], ignore: &[String]) -> bool {
    let matches = |p: &String| {
        code.starts_with(p.to_ascii_uppercase().as_str()) || p.eq_ignore_ascii_case("ALL")
    };
    (select.is_empty() || select.iter().any(matches)) && !ignore.iter().any(matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_documented_in_ruff_form() {
        for r in RULES {
            let doc = r.doc();
            for h in ["## What it does", "## Why is this bad?", "## Example"] {
                assert!(doc.contains(h), "{} lacks {h}", r.code);
            }
            if r.fix != FixAvailability::None {
                assert!(
                    doc.contains("## Fix safety"),
                    "{} lacks ## Fix safety",
                    r.code
                );
            }
            assert!(!r.summary().is_empty(), "{}", r.code);
        }
    }

    /// The summary (SARIF's short description, `hwlint rule --all`'s table) is the first
    /// paragraph under "## What it does", joined to one line.
    #[test]
    fn a_summary_is_the_first_paragraph_of_what_it_does() {
        let r = RULES
            .iter()
            .find(|r| r.code == "HW103")
            .expect("HW103 is a rule");
        assert_eq!(
            r.summary(),
            "Flags activation checkpointing that is turned on although the step fits comfortably without it (at most 85% of usable memory)."
        );
    }

    #[test]
    fn codes_are_unique_and_sorted() {
        let codes: Vec<_> = RULES.iter().map(|r| r.code).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(codes, sorted);
    }

    #[test]
    fn unknown_selectors_say_what_was_meant() {
        assert!(check_selector("HW101").is_ok());
        assert!(check_selector("HW2").is_ok());
        assert!(check_selector("ALL").is_ok());
        assert!(check_selector("hw101")
            .unwrap_err()
            .contains("did you mean `HW101`"));
        assert!(check_selector("HW999")
            .unwrap_err()
            .contains("not a rule code"));
        assert!(check_selector("HW1011")
            .unwrap_err()
            .contains("did you mean `HW101`"));
        assert!(check_selector("batch-exceeds-vram")
            .unwrap_err()
            .contains("`HW101`"));
        assert!(check_selector("XYZ").is_err());
        assert!(check_selector("H").is_err());
        // Written in lower case, `all` and a prefix are suggested as written, in upper case.
        assert!(check_selector("all")
            .unwrap_err()
            .contains("did you mean `ALL`"));
        assert!(check_selector("hw2")
            .unwrap_err()
            .contains("did you mean `HW2`"));
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("HW101", "HW101"), 0);
        assert_eq!(edit_distance("HW1011", "HW101"), 1);
        assert_eq!(edit_distance("HW110", "HW101"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "HW2"), 3);
        assert_eq!(edit_distance("HW2", ""), 3);
    }

    #[test]
    fn a_rule_debugs_as_its_code_and_name() {
        let r = by_code("HW101").expect("HW101 is a rule");
        assert_eq!(format!("{r:?}"), "HW101 batch-exceeds-vram");
    }

    #[test]
    fn select_and_ignore_by_prefix() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(is_enabled("HW202", &s(&["HW2"]), &[]));
        assert!(!is_enabled("HW301", &s(&["HW2"]), &[]));
        assert!(!is_enabled("HW202", &[], &s(&["hw202"])));
    }
}
