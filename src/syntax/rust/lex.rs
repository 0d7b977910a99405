//! A flat, non-recursive scan of Rust source: which bytes are code (not comments, strings or
//! character literals) and how deeply brackets nest there. syn recurses on nesting, so the
//! depth check must run before syn does and must not recurse itself; the builder-chain edits use
//! the same scan to find the chain's own `.method(` calls without being fooled by a `.build(`
//! inside a string or an argument.

/// Calls `f(offset, byte, depth)` for every byte of code, where `depth` counts the `(`, `[` and
/// `{` open before it (an opening bracket is reported at the depth it opens, a closing one at
/// the depth it closes). Stops early when `f` returns `false`.
pub(super) fn scan(text: &str, mut f: impl FnMut(usize, u8, usize) -> bool) {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0usize, 0usize);
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            i = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p);
            continue;
        }
        if c == b'/' && next == Some(b'*') {
            i = skip_block_comment(b, i);
            continue;
        }
        if c == b'"' {
            i = skip_string(b, i + 1);
            continue;
        }
        if let Some(end) = raw_string_end(b, i) {
            i = end;
            continue;
        }
        if c == b'\'' {
            if let Some(end) = char_literal_end(text, i) {
                i = end;
                continue;
            }
            // A lifetime or a loop label: code.
        }
        let at = match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                depth
            }
            b')' | b']' | b'}' => {
                let d = depth;
                depth = depth.saturating_sub(1);
                d
            }
            _ => depth,
        };
        if !f(i, c, at) {
            return;
        }
        i += 1;
    }
}

/// Past the end of `/* ... */` starting at `i` (block comments nest in Rust).
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut level = 0usize;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            level += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            level -= 1;
            i += 2;
            if level == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Past the closing quote of a `"..."` string whose body starts at `i`.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// If a raw string (`r"..."`, `r#"..."#`, `br"..."`, `cr"..."`) starts at `i`, past its end.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if b[i] != b'r' {
        return None;
    }
    // `r` must begin the token: nothing identifier-like before it but a `b`/`c` prefix.
    let starts_token = match i.checked_sub(1).map(|p| b[p]) {
        None => true,
        Some(b'b' | b'c') => i < 2 || !is_ident_byte(b[i - 2]),
        Some(p) => !is_ident_byte(p),
    };
    if !starts_token {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&x| x == b'#').count();
    let open = i + 1 + hashes;
    if b.get(open) != Some(&b'"') {
        return None; // `r#ident`, a raw identifier.
    }
    let mut j = open + 1;
    while j < b.len() {
        if b[j] == b'"'
            && b[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&x| x == b'#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(b.len())
}

/// If a character literal (`'a'`, `'\n'`, `'('`) starts at `i`, past its end; `None` for a
/// lifetime (`'a`).
fn char_literal_end(text: &str, i: usize) -> Option<usize> {
    let rest = text.get(i + 1..)?;
    if let Some(esc) = rest.strip_prefix('\\') {
        // `'\''`, `'\\'`, `'\u{..}'`: the escape's first character, then up to the quote.
        let first = esc.chars().next()?.len_utf8();
        let close = esc.get(first..)?.find('\'')?;
        return Some(i + 2 + first + close + 1);
    }
    let ch = rest.chars().next()?;
    let after = i + 1 + ch.len_utf8();
    (text.as_bytes().get(after) == Some(&b'\'')).then_some(after + 1)
}

/// Where brackets in code nest deeper than `max`: the offset of the bracket that does.
pub(super) fn too_deep(text: &str, max: usize) -> Option<usize> {
    let mut found = None;
    scan(text, |i, c, depth| {
        if matches!(c, b'(' | b'[' | b'{') && depth > max {
            found = Some(i);
            return false;
        }
        true
    });
    found
}

/// The method calls of a chain expression's own level (`Root::new(..).a(..).b(..)`): the offset
/// of each `.` and the method's name, in order. Calls inside arguments are not its own.
pub(super) fn chain_calls(chain: &str) -> Vec<(usize, &str)> {
    let mut dots = Vec::new();
    scan(chain, |i, c, depth| {
        if c == b'.' && depth == 0 {
            dots.push(i);
        }
        true
    });
    dots.into_iter()
        .filter_map(|dot| {
            let rest = chain.get(dot + 1..)?;
            let name_start = rest.len() - rest.trim_start().len();
            let name = &rest[name_start..];
            let len = name.bytes().take_while(|&c| is_ident_byte(c)).count();
            (len > 0 && !name.as_bytes()[0].is_ascii_digit()).then(|| (dot, &name[..len]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_in_strings_chars_and_comments_are_not_nesting() {
        let deep = "(".repeat(5);
        for text in [
            format!("let s = \"{deep}\";"),
            format!("let s = r#\"{deep}\"#;"),
            format!("let s = br\"{deep}\";"),
            format!("// {deep}\n"),
            format!("/* /* {deep} */ {deep} */"),
            "let c = ['(', '(', '(', '(', '(', '\\'', '{'];".to_string(),
        ] {
            assert_eq!(too_deep(&text, 3), None, "{text}");
        }
        assert_eq!(too_deep("fn f<'a>(x: &'a [[[[u8]]]]) {}", 3), Some(18));
        assert_eq!(too_deep("let r#type = ((((1))));", 3), Some(16));
    }

    #[test]
    fn a_chain_s_own_calls_skip_those_in_arguments() {
        let chain = "B::new(x.build(1))\n    .a(\".build(\")\n    // .b(2)\n    .build(ds)";
        let names: Vec<&str> = chain_calls(chain).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["a", "build"]);
    }

    #[test]
    fn unterminated_literals_end_the_scan() {
        for text in ["\"abc", "r#\"abc", "/* abc", "'", "'\\", "b'"] {
            assert_eq!(too_deep(text, 0), None);
            let _ = chain_calls(text);
        }
    }
}
