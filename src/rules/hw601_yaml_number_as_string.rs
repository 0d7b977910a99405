//! ## What it does
//! Reports a YAML value that the framework's loader reads as a different type than the field
//! it fills needs: a number written so that PyYAML loads it as a string (`2e-5`, `1e5`,
//! `1.0e5`), where the framework hands the string on unconverted; and a YAML 1.1 boolean word
//! (`no`, `off`, `yes`, `on`) where the field wants that word as a string.
//!
//! ## Why is this bad?
//! PyYAML (YAML 1.1) reads a float only with a dot and, with an exponent, a signed one:
//! `2.0e-5` and `1.0e+5` are floats, `2e-5`, `1e5` and `1.0e5` are strings. Frameworks that
//! pass loaded values straight to the code (`HfArgumentParser.parse_yaml_file` builds
//! `TrainingArguments(**dict)`; YOLOv5 multiplies `hyp["weight_decay"]`; V-JEPA 2 passes `lr`
//! to its scheduler) then fail at the first arithmetic on it (`AdamW(lr="2e-5")` raises
//! `TypeError`), or compare a string. Frameworks that convert (argparse `type=float` on TRL's
//! config defaults, pydantic in axolotl, yacs in detectron2) or whose loader reads `2e-5` as a
//! float (OmegaConf, jsonargparse) are not affected, and this rule stays silent for them. Each
//! dialect says which keys of its files reach the code unconverted (`[load.yaml] converts`,
//! `numbers`), with the framework source cited.
//!
//! The same loaders read `no` as the boolean false: `save_strategy: no` gives the Trainer
//! `SaveStrategy(False)`, which raises `ValueError` (the enum's value is the string `"no"`).
//! A plain `false` there fails the same way; it is reported without a fix, since which
//! string was meant is the author's to say.
//!
//! ## Example
//! ```yaml
//! learning_rate: 2e-5
//! save_strategy: no
//! ```
//!
//! Use instead:
//! ```yaml
//! learning_rate: 2.0e-5
//! save_strategy: "no"
//! ```
//!
//! ## Fix safety
//! Safe: the number is rewritten in the form the loader reads as the same float (`2e-5` ->
//! `2.0e-5`, `1e5` -> `1.0e+5`), and the boolean word is quoted, which is the value the field
//! documents.

use super::{Context, Violation};
use crate::dialect::ValueType;
use crate::fix::{Applicability, Edit, Fix};
use crate::syntax::{resolve_plain, Format, Loader, Node, NodeKind, ScalarKind, Value};

pub(crate) fn check(ctx: &Context) -> Vec<Violation> {
    if ctx.doc.format != Format::Yaml {
        return Vec::new();
    }
    let Some(load) = ctx.dialect.load.get(&Format::Yaml) else {
        return Vec::new();
    };
    // Keys a number reaches the code through: every numeric setting's key when the framework
    // converts nothing, plus the dialect's own list (free-form dicts that are never converted).
    let mut numbers: Vec<String> = load.numbers.clone();
    // Keys of integer settings: an integral float written there is fixed to the integer.
    let mut ints: Vec<String> = Vec::new();
    if load.converts == Some(false) {
        for (concept, spec) in ctx.dialect.settings.iter() {
            let keys = spec.from.iter().map(|s| s.key.clone());
            match concept.value_type() {
                ValueType::Int => {
                    numbers.extend(keys.clone());
                    ints.extend(keys);
                }
                ValueType::Float => numbers.extend(keys),
                _ => {}
            }
        }
    }
    if numbers.is_empty() && load.strings.is_empty() {
        return Vec::new();
    }
    let split = |keys: &[String]| -> Vec<Vec<String>> {
        keys.iter()
            .map(|k| k.split('.').map(str::to_string).collect())
            .collect()
    };
    let (numbers, ints, strings) = (split(&numbers), split(&ints), split(&load.strings));
    let mut out = Vec::new();
    let mut path = Vec::new();
    walk(ctx.front, &mut path, &mut |path, node| {
        let Some(s) = node.as_scalar() else { return };
        if s.kind != ScalarKind::Plain || node.shared {
            return;
        }
        let (number, string) = (
            numbers.iter().any(|p| matches(p, path)),
            strings.iter().any(|p| matches(p, path)),
        );
        if !number && !string {
            return;
        }
        let key = path.join(".");
        let loaded = resolve_plain(&s.text, ctx.dialect.loader);
        if let Value::Str(_) = loaded {
            if !number {
                return;
            }
            let Some(mut fixed) = as_float(&s.text, ctx.dialect.loader) else {
                return;
            };
            // An integer setting takes the integer the text names; a text that names none (a
            // fraction, or past what an i64 holds) is still a string there, with no number
            // to write for it.
            let mut no_integer = None;
            if ints.iter().any(|p| matches(p, path)) {
                match exact_integer(&s.text) {
                    Ok(i) => fixed = i.to_string(),
                    Err(why) => no_integer = Some(why),
                }
            }
            out.push(Violation {
                message: format!(
                    "`{key}: {}` loads as the string \"{}\" with {} (a float needs a dot and a signed exponent), and {} uses it as a number without converting it: the run fails or compares text{}",
                    s.text,
                    s.text,
                    load.call,
                    ctx.dialect.title,
                    no_integer.unwrap_or_default()
                ),
                span: node.span.clone(),
                fix: no_integer.is_none().then(|| Fix {
                    edits: vec![Edit::replace(node.span.clone(), fixed.clone())],
                    applicability: Applicability::Safe,
                    message: format!("write `{fixed}`, which loads as that number"),
                    sets: Vec::new(),
                }),
            });
        } else if let Value::Bool(b) = loaded {
            if !string {
                return;
            }
            let word = s.text.trim();
            // `false` itself is a boolean by any YAML: the author wrote one, and which string
            // was meant (`"no"`?) is theirs to say; quoting it would give the string "false",
            // which the field refuses as well.
            let literal = word.eq_ignore_ascii_case("true") || word.eq_ignore_ascii_case("false");
            let (message, fix) = if literal {
                (
                    format!(
                        "`{key}: {word}` is the boolean {b}, but {} wants a string here and refuses a boolean: write the value it takes by name, quoted",
                        ctx.dialect.title
                    ),
                    None,
                )
            } else {
                (
                    format!(
                        "`{key}: {word}` loads as the boolean {b} with {} (a YAML 1.1 boolean word), but {} wants the string \"{word}\" here and refuses a boolean",
                        load.call, ctx.dialect.title
                    ),
                    Some(Fix {
                        edits: vec![Edit::replace(node.span.clone(), format!("\"{word}\""))],
                        applicability: Applicability::Safe,
                        message: format!("quote it: `\"{word}\"`"),
                        sets: Vec::new(),
                    }),
                )
            };
            out.push(Violation {
                message,
                span: node.span.clone(),
                fix,
            });
        }
    });
    out
}

/// Calls `f` on every value under `node` with its key path (a list item's index is its key).
fn walk(node: &Node, path: &mut Vec<String>, f: &mut impl FnMut(&[String], &Node)) {
    match &node.kind {
        NodeKind::Map(m) => {
            for e in &m.entries {
                path.push(e.key.clone());
                f(path, &e.value);
                walk(&e.value, path, f);
                path.pop();
            }
        }
        NodeKind::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                f(path, item);
                walk(item, path, f);
                path.pop();
            }
        }
        NodeKind::Scalar(_) => {}
    }
}

/// Whether a dotted pattern, split at its dots (`*` matches one key), names `path`.
fn matches(pattern: &[String], path: &[String]) -> bool {
    pattern.len() == path.len() && pattern.iter().zip(path).all(|(p, k)| p == "*" || p == k)
}

/// The integer a decimal number's text names (`1e4`, `1.5e1`, `-3e2`), worked out from its
/// digits, not through a float: past 2^53 a float rounds to a neighbouring integer, and an
/// integer written there must be the one the author wrote. The error ends the message.
fn exact_integer(text: &str) -> Result<i64, &'static str> {
    const FRACTION: &str = "; the setting takes an integer, and this number has a fraction";
    const PAST: &str =
        "; the setting takes an integer, and this number is past the largest one (2^63 - 1)";
    const NOT_DECIMAL: &str = "; the setting takes an integer, and this text is no decimal number";
    let t: String = text.trim().chars().filter(|c| *c != '_').collect();
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NOT_DECIMAL);
    }
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    // An exponent too long for an i64 is no integer an i64 holds, or has a fraction.
    let exponent: i64 = match exponent.parse() {
        Ok(e) => e,
        Err(_) if exponent.starts_with('-') => return Err(FRACTION),
        Err(_) => return Err(PAST),
    };
    let trailing = digits.len() - digits.trim_end_matches('0').len();
    let significant = digits.trim_end_matches('0');
    // value = significant x 10^scale
    let scale = exponent
        .saturating_sub(fraction.len() as i64)
        .saturating_add(trailing as i64);
    if scale < 0 {
        return Err(FRACTION);
    }
    // Past i128 (39 digits or more, or a power of ten past it) is past an i64 as well.
    let magnitude = significant
        .parse::<i128>()
        .ok()
        .and_then(|m| m.checked_mul(10i128.checked_pow(u32::try_from(scale).ok()?)?))
        .ok_or(PAST)?;
    i64::try_from(if negative { -magnitude } else { magnitude }).map_err(|_| PAST)
}

/// `text` written so that `loader` reads it as the float every YAML 1.2 loader reads it as:
/// a dot in the mantissa and a sign on the exponent. `None` when the text is no such number.
fn as_float(text: &str, loader: Loader) -> Option<String> {
    let t = text.trim();
    let Value::Float(f) = resolve_plain(t, Loader::OmegaConf) else {
        return None;
    };
    let (sign, body) = match t.as_bytes().first()? {
        b'-' | b'+' => t.split_at(1),
        _ => ("", t),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some((&body[i..i + 1], &body[i + 1..]))),
        None => (body, None),
    };
    if !mantissa.bytes().next()?.is_ascii_digit() {
        return None;
    }
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    let out = match exponent {
        Some((e, digits)) => {
            let digits = if digits.starts_with(['-', '+']) {
                digits.to_string()
            } else {
                format!("+{digits}")
            };
            format!("{sign}{mantissa}{e}{digits}")
        }
        None => format!("{sign}{mantissa}"),
    };
    // Only a rewrite the loader reads back as the same number is offered.
    match resolve_plain(&out, loader) {
        Value::Float(g) if g == f => Some(out),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_read_back_as_the_same_float() {
        for (text, fixed) in [
            ("2e-5", "2.0e-5"),
            ("1e5", "1.0e+5"),
            ("1.0e5", "1.0e+5"),
            ("5E-4", "5.0E-4"),
            ("-3e2", "-3.0e+2"),
        ] {
            assert_eq!(
                as_float(text, Loader::Yaml11).as_deref(),
                Some(fixed),
                "{text}"
            );
        }
        assert_eq!(as_float("abc", Loader::Yaml11), None);
        assert_eq!(as_float("e5", Loader::Yaml11), None);
    }

    proptest::proptest! {
        /// Every number PyYAML reads as text but OmegaConf as a float gets a rewrite that
        /// PyYAML reads as that same float.
        #[test]
        fn every_string_number_gets_a_float_rewrite(
            sign in proptest::sample::select(vec!["", "-", "+"]),
            int in "[0-9]{1,4}",
            frac in proptest::option::of("[0-9]{0,3}"),
            e in proptest::sample::select(vec!["e", "E"]),
            exp_sign in proptest::sample::select(vec!["", "-", "+"]),
            exp in "[0-9]{1,2}",
        ) {
            let mantissa = match &frac {
                Some(f) => format!("{int}.{f}"),
                None => int.clone(),
            };
            let text = format!("{sign}{mantissa}{e}{exp_sign}{exp}");
            if let (Value::Str(_), Value::Float(f)) = (
                resolve_plain(&text, Loader::Yaml11),
                resolve_plain(&text, Loader::OmegaConf),
            ) {
                let fixed = as_float(&text, Loader::Yaml11);
                proptest::prop_assert!(fixed.is_some(), "{text}");
                let fixed = fixed.unwrap();
                proptest::prop_assert_eq!(resolve_plain(&fixed, Loader::Yaml11), Value::Float(f), "{} -> {}", text, fixed);
            }
        }
    }

    #[test]
    fn integers_are_read_from_the_digits() {
        for (text, int) in [
            ("1e4", 10_000),
            ("1E4", 10_000),
            ("1.5e1", 15),
            ("12.50e1", 125),
            ("-3e2", -300),
            ("+2e0", 2),
            ("0.0e5", 0),
            ("1_000e3", 1_000_000),
            // Past 2^53, where a float would give 9007199254740992.
            ("9007199254740993e0", 9_007_199_254_740_993),
            ("9.223372036854775807e18", i64::MAX),
            ("-9.223372036854775808e18", i64::MIN),
        ] {
            assert_eq!(exact_integer(text), Ok(int), "{text}");
        }
        for text in ["2.5e0", "1e-2", "1.25e1", "1e-99999999999999999999"] {
            let e = exact_integer(text).expect_err(text);
            assert!(e.contains("fraction"), "{text}: {e}");
        }
        for text in [
            "1e20",
            "9.223372036854775808e18",
            "1e99999999999999999999",
            "123456789012345678901e0",
            "1234567890123456789012345678901234567890e0",
            "1e38",
            "1e39",
        ] {
            let e = exact_integer(text).expect_err(text);
            assert!(e.contains("past"), "{text}: {e}");
        }
        assert!(exact_integer("e5").is_err());
        assert!(exact_integer("1.2.3e4").is_err());
    }

    #[test]
    fn patterns_match_one_key_per_star() {
        let p = |s: &str| s.split('.').map(String::from).collect::<Vec<_>>();
        assert!(matches(
            &p("lr_scheduler_kwargs.*"),
            &p("lr_scheduler_kwargs.min_lr")
        ));
        assert!(!matches(
            &p("lr_scheduler_kwargs.*"),
            &p("lr_scheduler_kwargs")
        ));
        assert!(matches(&p("*"), &p("lr0")));
        assert!(!matches(&p("*"), &p("a.b")));
    }
}
