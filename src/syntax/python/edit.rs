//! Writing into Python source: a literal replaced in its own form, a keyword argument added
//! in the call's own layout, a top-level assignment appended. Nothing that is not a literal is
//! ever rewritten.

use crate::fix::Edit;
use crate::syntax::edit::NewValue;
use crate::syntax::{line_start_of, Map, MapStyle, Node, NodeKind, Quote, ScalarKind};

/// Python's hard keywords: `f(class=1)` is a syntax error (soft keywords such as `match` and
/// `type` are fine as argument names).
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// A Python string literal with the given quote.
fn quoted(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            // Python source may not hold a NUL byte, and other control characters would be
            // invisible in a reviewed diff.
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// A value as Python source; strings in `q` quotes.
fn render(value: &NewValue, q: char) -> String {
    match value {
        NewValue::Int(i) => i.to_string(),
        NewValue::Bool(true) => "True".into(),
        NewValue::Bool(false) => "False".into(),
        NewValue::Raw(r) => r.clone(),
        NewValue::Str(s) => quoted(s, q),
    }
}

/// Replaces a literal keeping its form (`64` -> `16`, `True` -> `False`, quotes kept). `None`
/// for anything that is not a literal.
pub fn replace_literal(text: &str, node: &Node, value: &NewValue) -> Option<Edit> {
    if node.shared || node.span.is_empty() {
        return None;
    }
    let s = node.as_scalar()?;
    text.get(node.span.clone())?;
    let replacement = match s.kind {
        ScalarKind::Str(Quote::Single) => quoted(&value.to_string(), '\''),
        ScalarKind::Str(Quote::Double) => quoted(&value.to_string(), '"'),
        ScalarKind::Int(_) | ScalarKind::Float(_) | ScalarKind::Bool(_) | ScalarKind::Null => {
            render(value, '"')
        }
        _ => return None,
    };
    Some(Edit::replace(node.span.clone(), replacement))
}

/// The quote the mapping's keys (in a dict display) or string arguments use (double when it
/// has none).
fn quote_of(text: &str, m: &Map) -> char {
    let key_quote = m.entries.iter().find_map(|e| {
        let c = text.get(e.key_span.clone())?.chars().next()?;
        matches!(c, '\'' | '"').then_some(c)
    });
    key_quote
        .or_else(|| {
            m.entries
                .iter()
                .find_map(|e| match e.value.as_scalar()?.kind {
                    ScalarKind::Str(Quote::Single) => Some('\''),
                    ScalarKind::Str(Quote::Double) => Some('"'),
                    _ => None,
                })
        })
        .unwrap_or('"')
}

/// Whether `between` (after the last argument, before the closing bracket) holds only blanks,
/// commas and comments: then nothing else (a `**kwargs`) follows the last argument we know.
fn only_trailing(between: &str) -> bool {
    let mut comment = false;
    between.chars().all(|c| {
        if comment {
            comment = c != '\n';
            true
        } else if c == '#' {
            comment = true;
            true
        } else {
            c.is_whitespace() || c == ','
        }
    })
}

/// Adds a keyword argument (`num_workers=4`) to a call, or an entry to a dict display, in the
/// call's own layout. `None` where there is no call to add to.
pub fn insert_argument(
    text: &str,
    map: &Node,
    m: &Map,
    path: &[&str],
    value: &NewValue,
) -> Option<Edit> {
    let [key] = path else { return None };
    if map.shared || !matches!(map.kind, NodeKind::Map(_)) {
        return None;
    }
    let close_char = match m.style {
        MapStyle::Call => ')',
        MapStyle::Flow => '}',
        _ => return None,
    };
    let body = text.get(map.span.clone())?;
    if !body.ends_with(close_char) {
        return None;
    }
    let close = map.span.end - 1;
    let q = quote_of(text, m);
    let item = match m.style {
        MapStyle::Call => {
            if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || key.starts_with(|c: char| c.is_ascii_digit())
                || KEYWORDS.contains(key)
            {
                return None;
            }
            format!("{key}={}", render(value, q))
        }
        _ => format!("{}: {}", quoted(key, q), render(value, q)),
    };
    let Some(last_end) = m.entries.iter().map(|e| e.value.span.end).max() else {
        // No argument we know of: an empty call or display, else one holding only `*a`/`**k`.
        let open = match m.style {
            MapStyle::Call => map.span.start + body.find('(')?,
            _ => map.span.start,
        };
        let inside = text.get(open + 1..close)?;
        if !inside.trim().is_empty() {
            return None;
        }
        return Some(Edit::insert(open + 1, item));
    };
    let between = text.get(last_end..close)?;
    if !only_trailing(between) {
        return None;
    }
    if !between.contains('\n') {
        // Inline: `f(a, b=1)` -> `f(a, b=1, key=v)`.
        return Some(Edit::insert(last_end, format!(", {item}")));
    }
    // One argument per line: a new line indented as the last argument, after its comment.
    let last_start = m
        .entries
        .iter()
        .max_by_key(|e| e.value.span.end)
        .map(|e| e.key_span.start.min(e.value.span.start))?;
    let line_start = line_start_of(text, last_start);
    let indent: String = text[line_start..last_start]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    if text[line_start..last_start].trim().is_empty() {
        // The last argument starts its line (the layout this writes into).
    } else {
        return None;
    }
    let nl = crate::syntax::newline_style(text);
    let line_end = last_end + between.find(['\n', '\r'])?;
    let after_last = &text[last_end..line_end];
    let trailing_comma = after_last.trim_start().starts_with(',');
    if trailing_comma {
        Some(Edit::insert(line_end, format!("{nl}{indent}{item},")))
    } else {
        // `x=1  # note` -> `x=1,  # note` + the new line: one edit over the rest of the line.
        Some(Edit::replace(
            last_end..line_end,
            format!(",{after_last}{nl}{indent}{item}"),
        ))
    }
}

/// A name usable as a keyword argument or an assignment target.
fn identifier(key: &str) -> bool {
    !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && !KEYWORDS.contains(&key)
}

/// Appends `first = dict(b=dict(c=value))` for the dotted `path` `first.b.c` to a module: a key
/// that a base sets and the module does not, for a framework that merges the module's dicts
/// into its bases' key by key (MMEngine's `_base_`). Strings in single quotes, OpenMMLab's
/// style. `None` where a name is no identifier.
pub fn append_assignment(text: &str, path: &[&str], value: &NewValue) -> Option<Edit> {
    let (first, rest) = path.split_first()?;
    if !path.iter().all(|k| identifier(k)) {
        return None;
    }
    let mut inner = render(value, '\'');
    for k in rest.iter().rev() {
        inner = format!("dict({k}={inner})");
    }
    let nl = crate::syntax::newline_style(text);
    let line = format!("{first} = {inner}{nl}");
    let content = if text.is_empty() || text.ends_with('\n') {
        line
    } else {
        format!("{nl}{line}")
    };
    Some(Edit::insert(text.len(), content))
}

#[cfg(test)]
mod append_tests {
    use super::*;

    fn applied(text: &str, path: &[&str], value: &NewValue) -> Option<String> {
        let e = append_assignment(text, path, value)?;
        Some(format!("{text}{}", e.content))
    }

    #[test]
    fn a_key_a_base_sets_is_appended_as_nested_dicts() {
        let v = NewValue::Int(8);
        assert_eq!(
            applied(
                "_base_ = './a.py'\n",
                &["train_dataloader", "batch_size"],
                &v
            )
            .unwrap(),
            "_base_ = './a.py'\ntrain_dataloader = dict(batch_size=8)\n"
        );
        // No final newline, a deeper key, a string in single quotes, CRLF kept.
        assert_eq!(
            applied(
                "_base_ = 'a.py'\r\nx = 1",
                &["optim_wrapper", "optimizer", "type"],
                &NewValue::Str("SGD".into())
            )
            .unwrap(),
            "_base_ = 'a.py'\r\nx = 1\r\noptim_wrapper = dict(optimizer=dict(type='SGD'))\r\n"
        );
        // Names Python cannot take as arguments or targets.
        assert!(applied("", &["model", "class"], &v).is_none());
        assert!(applied("", &["a-b"], &v).is_none());
        assert!(applied("", &[], &v).is_none());
    }
}
