//! Rust configs (Burn), read with syn: `#[derive(Config)]` structs, their builder chains, data
//! loader and training builders, and the backend type.
//!
//! The tree (the contract `rules/dialects/burn.toml` relies on): `roots[0]` is a mapping (style
//! `Implicit`, span the whole file; empty for a file with no Burn content) holding
//! * one entry per `#[derive(Config)]` struct, keyed by its name (`TrainingConfig`): a mapping
//!   (style `Implicit`, span the struct) of its fields' `#[config(default = ...)]` values, then
//!   the values given to `Name::new(...)` (positional, for the fields without a default, in
//!   declaration order) and to `.with_<field>(..)` calls on it (last wins);
//! * `config`: a synthetic alias, the same mapping as the config struct the training reads,
//!   placed just before that struct's own entry, so the dialect need not know the struct's
//!   name. It is, among the structs with a `batch_size` or `num_epochs` field, the first whose
//!   fields the builders' arguments read (`config.batch_size`), else the first such struct;
//!   absent when no struct has either field;
//! * `DataLoaderBuilder`: the calls of the `DataLoaderBuilder::new(..)` chain bound to a name
//!   containing `train` (else the first chain), each `.method(arg)` as `method: arg` up to the
//!   terminal `.build(..)` (not included): a mapping of style `Call`, span the whole chain
//!   expression, tag `call:DataLoaderBuilder`;
//! * `LearnerBuilder`: the same for `LearnerBuilder::new(..)` (Burn up to 0.18) or
//!   `SupervisedTraining::new(..)` (0.19 on; tag `call:SupervisedTraining`): `.devices(vec![..])`
//!   is a sequence, `.num_epochs(..)`, `.grads_accumulation(..)` scalars;
//! * `backend`: `{ name: "Wgpu", float: "f32" }` from the backend type in the file
//!   (`Autodiff<Wgpu<f32, i32>>`), the one inside `Autodiff` first, else the last seen. Both
//!   are `Str(Quote::Block)` scalars spanning the type tokens; `float` only when written.
//!
//! Keys come in that order: config structs (with `config` before the main one), then the
//! builders alphabetically, then `backend`.
//!
//! Expressions become nodes as in the Python front-end: integer, float, bool and string
//! literals are scalars (`Int`/`Float`/`Bool` with the source text, suffix included; `Str`
//! with the decoded value, `Quote::Double`, raw strings `Quote::Block`); a negative literal
//! spans its `-`; `x.field` (`config.batch_size`, `self.config.batch_size`) is a clone of what
//! the `config` struct gives `field`; constant expressions (`4 * 16`) are folded and `shared`
//! (a fix must not rewrite a computation); anything else is unknown (`CustomTag`, its source
//! text).
//!
//! Edits: [`replace_literal`] rewrites a literal keeping its suffix (`64usize` -> `16usize`);
//! [`insert_argument`] adds `.key(value)` to a builder chain before its `.build(` (or at its
//! end), in the chain's layout. A config struct's field cannot be added by a fix: a field
//! without a default is a required argument of `new`.

mod collect;
mod lex;
mod nesting;
#[cfg(test)]
mod tests;

use super::{Document, Format, Map, MapStyle, Node, ParseError, ScalarKind, Span, MAX_DEPTH};
use crate::fix::Edit;
use crate::syntax::edit::NewValue;

/// syn recurses; this thread stack holds what [`nesting::LIMIT`] lets through several times
/// over (it is reserved, not used, until syn goes deep).
const STACK_BYTES: usize = 64 << 20;

/// Parses Rust source into the tree described in the module documentation.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    // syn's `parse_file` drops a shebang line and counts spans from what follows; blanked
    // here instead, the spans stay offsets into `text`.
    let shebang = lex::shebang_len(text);
    let masked;
    let text = if shebang > 0 {
        masked = format!("{}{}", " ".repeat(shebang), &text[shebang..]);
        masked.as_str()
    } else {
        text
    };
    // syn recurses on nesting, and a stack overflow cannot be caught: refuse what would
    // overflow before it runs.
    nesting::check(text, MAX_DEPTH)?;
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("hwlint-syn".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || {
                let out = build(text);
                // span-locations keeps every parsed file's text in a per-thread table; the
                // thread ends here, but a pooled runtime could reuse it.
                proc_macro2::extra::invalidate_current_thread_spans();
                out
            })
            .map_err(|e| ParseError {
                message: format!("cannot start the Rust parser: {e}"),
                span: 0..0,
            })?;
        worker.join().unwrap_or_else(|_| {
            Err(ParseError {
                message: "the Rust parser failed on this file".into(),
                span: 0..0,
            })
        })
    })
}

fn span_of(s: proc_macro2::Span) -> Span {
    s.byte_range()
}

fn build(text: &str) -> Result<Document, ParseError> {
    let file = syn::parse_file(text).map_err(|e| ParseError {
        message: e.to_string(),
        span: span_of(e.span()),
    })?;
    Ok(Document {
        format: Format::Rust,
        roots: vec![collect::Collect::read(&file, text)],
        duplicates: Vec::new(),
    })
}

/// Integer and float type suffixes a literal may carry (`64usize`, `1e-4f64`).
const SUFFIXES: &[&str] = &[
    "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8", "f32",
    "f64",
];

/// Replaces a literal keeping its form (`64usize` -> `16usize`). `None` for anything that is
/// not a literal of the new value's kind, and for folded (`shared`) expressions.
pub fn replace_literal(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    if node.shared || node.span.is_empty() {
        return None;
    }
    let s = node.as_scalar()?;
    let raw = text.get(node.span.clone())?;
    // `0x1f32` is a hex integer, not `0x1` with an `f32` suffix.
    let hex = raw.trim_start_matches('-').starts_with("0x");
    let suffix = SUFFIXES
        .iter()
        .find(|x| raw.ends_with(**x) && !(hex && x.starts_with('f')))
        .copied()
        .unwrap_or("");
    let int_text = |t: &str| t.replace('_', "").parse::<i64>().is_ok();
    let body = match (s.kind, value) {
        (ScalarKind::Int(_), NewValue::Int(i)) => i.to_string(),
        // An integer field cannot take `1e-4`; Rust does not convert.
        (ScalarKind::Int(_), NewValue::Raw(r)) if int_text(r) => r.clone(),
        (ScalarKind::Float(_), NewValue::Int(i)) => format!("{i}.0"),
        // `2` for an `f64` does not compile without a suffix: write `2.0`.
        (ScalarKind::Float(_), NewValue::Raw(r)) if int_text(r) && suffix.is_empty() => {
            format!("{r}.0")
        }
        (ScalarKind::Float(_), NewValue::Raw(r)) if r.parse::<f64>().is_ok() => r.clone(),
        (ScalarKind::Bool(_), NewValue::Bool(b)) => b.to_string(),
        (ScalarKind::Str(super::Quote::Double), NewValue::Str(v)) => {
            // Rust's `Debug` for `str` writes a valid Rust string literal.
            return Some(Edit::replace(node.span.clone(), format!("{v:?}")));
        }
        _ => return None,
    };
    Some(Edit::replace(node.span.clone(), format!("{body}{suffix}")))
}

/// Rust's strict and reserved keywords (2021 edition, plus `gen` of 2024): `.match(1)` does
/// not parse, so no call of that name is written.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Adds `.key(value)` to a builder chain (a `Call` mapping), before its `.build(..)`, else at
/// its end: on a line of its own when the chain has one call per line, else inline. `None`
/// for any other mapping, nested paths, and keys that are not identifiers.
pub fn insert_argument(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let [key] = path else { return None };
    let ident = key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && key.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && *key != "_"
        && !KEYWORDS.contains(key);
    if map.shared || m.style != MapStyle::Call || !ident {
        return None;
    }
    let rendered = match value {
        NewValue::Int(i) => i.to_string(),
        NewValue::Bool(b) => b.to_string(),
        NewValue::Raw(r) => r.clone(),
        NewValue::Str(s) => format!("{s:?}"),
    };
    let chain = text.get(map.span.clone())?;
    let calls = lex::chain_calls(chain);
    let call = format!(".{key}({rendered})");
    let nl = super::newline_style(text);
    // Whitespace alone before a `.` on its line: the chain is written one call per line.
    let own_line = |dot: usize| {
        let start = super::line_start_of(text, dot);
        let before = &text[start..dot];
        before.trim().is_empty().then_some((start, before))
    };
    if let Some(&(dot, _)) = calls.iter().rev().find(|(_, name)| *name == "build") {
        let dot = map.span.start + dot;
        return Some(match own_line(dot) {
            Some((start, indent)) => Edit::insert(start, format!("{indent}{call}{nl}")),
            None => Edit::insert(dot, call),
        });
    }
    // No `.build(` in the chain (`SupervisedTraining` is launched, not built): append.
    let &(last, _) = calls.last()?;
    Some(match own_line(map.span.start + last) {
        Some((_, indent)) => Edit::insert(map.span.end, format!("{nl}{indent}{call}")),
        None => Edit::insert(map.span.end, call),
    })
}
