//! A flat, non-recursive tokenizer of Rust source: the nesting guard must measure a file before
//! syn (which recurses) sees it, and the builder-chain edits use the same tokens to find a
//! chain's own `.method(` calls without being fooled by a `.build(` inside a string or an
//! argument. It follows proc-macro2's lexer where it matters for nesting: comments, strings,
//! raw strings, character literals and lifetimes hide or are no brackets; everything it does
//! not know is one punctuation token.

/// One token of Rust source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'t> {
    /// An identifier or keyword (`r#type` included, as written).
    Ident(&'t str),
    /// A lifetime or loop label (`'a`).
    Lifetime,
    /// A number, string, raw string, byte or character literal.
    Literal,
    /// `(`, `[` or `{`.
    Open(u8),
    /// `)`, `]` or `}`.
    Close(u8),
    /// An operator or other punctuation, longest match first (`..=`, `->`, `&&`, `<<=`).
    Punct(&'t str),
}

/// Punctuation of two or three bytes, longest first, as rustc joins it.
const PUNCT: &[&str] = &[
    "<<=", ">>=", "...", "..=", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>", "..",
];

/// The tokens of `text` from `start`, each with its byte offset.
pub(super) fn tokens(text: &str, start: usize) -> Tokens<'_> {
    Tokens { text, i: start }
}

pub(super) struct Tokens<'t> {
    text: &'t str,
    i: usize,
}

impl<'t> Iterator for Tokens<'t> {
    type Item = (usize, Tok<'t>);

    fn next(&mut self) -> Option<(usize, Tok<'t>)> {
        let text = self.text;
        let b = text.as_bytes();
        loop {
            let i = self.i;
            let c = *b.get(i)?;
            let next = b.get(i + 1).copied();
            if c == b' ' || (0x09..=0x0d).contains(&c) {
                self.i += 1;
                continue;
            }
            if c >= 0x80 {
                let ch = text[i..].chars().next()?;
                if ch.is_whitespace() || ch == '\u{200e}' || ch == '\u{200f}' {
                    self.i += ch.len_utf8();
                    continue;
                }
            }
            if c == b'/' && next == Some(b'/') {
                self.i = b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p);
                continue;
            }
            if c == b'/' && next == Some(b'*') {
                self.i = skip_block_comment(b, i);
                continue;
            }
            let (end, tok) = if c == b'"' {
                (skip_string(b, i + 1), Tok::Literal)
            } else if let Some(end) = raw_string_end(b, i) {
                (end, Tok::Literal)
            } else if matches!(c, b'b' | b'c') && next == Some(b'"') {
                (skip_string(b, i + 2), Tok::Literal)
            } else if c == b'b' && next == Some(b'\'') {
                (char_literal_end(text, i + 1).unwrap_or(i + 2), Tok::Literal)
            } else if c == b'\'' {
                match char_literal_end(text, i) {
                    Some(end) => (end, Tok::Literal),
                    None => (ident_end(text, i + 1).max(i + 1), Tok::Lifetime),
                }
            } else if c.is_ascii_digit() {
                (number_end(b, i), Tok::Literal)
            } else if c == b'r'
                && next == Some(b'#')
                && b.get(i + 2).is_some_and(|&x| starts_ident(x))
            {
                let end = ident_end(text, i + 2);
                (end, Tok::Ident(&text[i..end]))
            } else if starts_ident(c) {
                let end = ident_end(text, i);
                (end, Tok::Ident(&text[i..end]))
            } else if matches!(c, b'(' | b'[' | b'{') {
                (i + 1, Tok::Open(c))
            } else if matches!(c, b')' | b']' | b'}') {
                (i + 1, Tok::Close(c))
            } else {
                let rest = &text[i..];
                match PUNCT.iter().find(|p| rest.starts_with(**p)) {
                    Some(p) => (i + p.len(), Tok::Punct(p)),
                    None => {
                        let len = rest.chars().next().map_or(1, char::len_utf8);
                        (i + len, Tok::Punct(&text[i..i + len]))
                    }
                }
            };
            self.i = end.max(i + 1);
            return Some((i, tok));
        }
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
            b'"' => return (i + 1).min(b.len()),
            _ => i += 1,
        }
    }
    b.len()
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn starts_ident(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

/// Past the identifier starting at `i` (its non-ASCII characters included, unless they are
/// whitespace, which ends it as it ends any token).
fn ident_end(text: &str, i: usize) -> usize {
    let mut end = i;
    for (off, ch) in text[i..].char_indices() {
        let ok = if ch.is_ascii() {
            is_ident_byte(ch as u8)
        } else {
            !(ch.is_whitespace() || ch == '\u{200e}' || ch == '\u{200f}')
        };
        if !ok {
            break;
        }
        end = i + off + ch.len_utf8();
    }
    end
}

/// Past a number literal starting at `i`: digits, letters and `_` (suffixes, hex), a fraction
/// when a digit follows the `.` (`1..2` is a range, `1.max(2)` a call), and a signed exponent.
/// Right after a `.` it is a tuple index, and the `.` that may follow is another field access
/// (`x.0.1` is two, though rustc lexes `0.1` as one float and syn splits it).
fn number_end(b: &[u8], mut i: usize) -> usize {
    let hex = b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
    let index = i > 0 && b[i - 1] == b'.';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            i += 1;
            if !hex
                && matches!(c, b'e' | b'E')
                && matches!(b.get(i), Some(b'+' | b'-'))
                && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                i += 1;
            }
        } else if c == b'.' && !index && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// If a raw string (`r"..."`, `r#"..."#`, `br"..."`, `cr"..."`) starts at `i`, past its end.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let r = match b[i] {
        b'r' => i,
        b'b' | b'c' if b.get(i + 1) == Some(&b'r') => i + 1,
        _ => return None,
    };
    let hashes = b[r + 1..].iter().take_while(|&&x| x == b'#').count();
    let open = r + 1 + hashes;
    if b.get(open) != Some(&b'"') {
        return None; // `r#ident`, a raw identifier, or a plain identifier.
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

/// Where the code of a whole file starts: past a shebang line, which syn's `parse_file` drops
/// (`#!` not followed, after whitespace and comments, by the `[` of an inner attribute).
pub(super) fn shebang_len(text: &str) -> usize {
    let Some(rest) = text.strip_prefix("#!") else {
        return 0;
    };
    let attribute = tokens(rest, 0)
        .next()
        .is_some_and(|(_, t)| t == Tok::Open(b'['));
    if attribute {
        return 0;
    }
    text.find('\n').unwrap_or(text.len())
}

/// The method calls of a chain expression's own level (`Root::new(..).a(..).b(..)`): the offset
/// of each `.` and the method's name, in order. Calls inside arguments are not its own.
pub(super) fn chain_calls(chain: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut dot = None;
    for (i, t) in tokens(chain, 0) {
        match t {
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => depth = depth.saturating_sub(1),
            Tok::Punct(".") if depth == 0 => {
                dot = Some(i);
                continue;
            }
            Tok::Ident(name) if depth == 0 => {
                if let Some(d) = dot {
                    out.push((d, name));
                }
            }
            _ => {}
        }
        dot = None;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok<'_>> {
        tokens(text, 0).map(|(_, t)| t).collect()
    }

    #[test]
    fn brackets_in_strings_chars_and_comments_are_not_tokens() {
        let deep = "(".repeat(5);
        for text in [
            format!("\"{deep}\""),
            format!("r#\"{deep}\"#"),
            format!("br\"{deep}\""),
            format!("c\"{deep}\""),
            format!("// {deep}\n"),
            format!("/* /* {deep} */ {deep} */"),
            "'(' '\\'' '{' b'('".to_string(),
        ] {
            assert!(
                kinds(&text).iter().all(|t| *t == Tok::Literal),
                "{text}: {:?}",
                kinds(&text)
            );
        }
        assert_eq!(
            kinds("fn f<'a>(x: &'a [u8]) {}"),
            [
                Tok::Ident("fn"),
                Tok::Ident("f"),
                Tok::Punct("<"),
                Tok::Lifetime,
                Tok::Punct(">"),
                Tok::Open(b'('),
                Tok::Ident("x"),
                Tok::Punct(":"),
                Tok::Punct("&"),
                Tok::Lifetime,
                Tok::Open(b'['),
                Tok::Ident("u8"),
                Tok::Close(b']'),
                Tok::Close(b')'),
                Tok::Open(b'{'),
                Tok::Close(b'}'),
            ]
        );
        assert_eq!(
            kinds("r#type 1e-4 1..2 x.0.1 a..=b <<= ->"),
            [
                Tok::Ident("r#type"),
                Tok::Literal,
                Tok::Literal,
                Tok::Punct(".."),
                Tok::Literal,
                Tok::Ident("x"),
                Tok::Punct("."),
                Tok::Literal,
                Tok::Punct("."),
                Tok::Literal,
                Tok::Ident("a"),
                Tok::Punct("..="),
                Tok::Ident("b"),
                Tok::Punct("<<="),
                Tok::Punct("->"),
            ]
        );
    }

    #[test]
    fn a_shebang_is_skipped_as_syn_skips_it() {
        assert_eq!(shebang_len("#!/usr/bin/env run \"\nfn f() {}"), 20);
        assert_eq!(shebang_len("#![allow(x)]\nfn f() {}"), 0);
        assert_eq!(shebang_len("#! /* c */ [allow(x)]"), 0);
        assert_eq!(shebang_len("#!"), 2);
        assert_eq!(shebang_len("fn f() {}"), 0);
    }

    #[test]
    fn a_chain_s_own_calls_skip_those_in_arguments() {
        let chain = "B::new(x.build(1))\n    .a(\".build(\")\n    // .b(2)\n    .build(ds)";
        let names: Vec<&str> = chain_calls(chain).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["a", "build"]);
    }

    #[test]
    fn unterminated_literals_end_the_scan() {
        for text in [
            "\"abc", "r#\"abc", "/* abc", "'", "'\\", "b'", "br#", "0x", "'\u{e9}",
        ] {
            assert!(tokens(text, 0).count() <= text.len());
            let _ = chain_calls(text);
        }
    }
}
