//! How deeply ruff's parser would nest on a file, measured from its tokens before it runs.
//!
//! The parser grows its own stack on the heap, so deep nesting does not crash it: it costs
//! memory, about 1-2 KiB a level, and a 2 MB file of `[[[[` or `- - - -` took 2 GB. The tree it
//! builds is checked for depth afterwards ([`super::tree_too_deep`]); this check refuses such a
//! file before the parser runs, so the memory is never spent.
//!
//! It follows Python's tokenizer where nesting hides: comments end at `\n` or a lone `\r`;
//! strings may be triple-quoted, raw, bytes, f- or t-strings; a replacement field of an f-string
//! is code (PEP 701: it may hold brackets, strings with the same quotes and f-strings of its
//! own), its format spec text that may hold fields again. Each bracket, f-string and field is
//! a level; so is each indented block; and within one bracket level each operator that nests
//! the tree without brackets (arithmetic, unary `-`/`not`/`await`, `lambda`, a conditional
//! expression's `if`/`else`, `.`, a call or subscript) adds one until a `,`, `;`, `=` or the
//! end of the logical line ends what the parser builds there. Chains that the tree keeps flat
//! (`a and b and ..`, `a < b < ..`, implicitly joined strings) add nothing.

use crate::syntax::{ParseError, MAX_DEPTH};

/// The most levels a file may reach: twice what the tree check lets through, so a file the
/// tree check would accept is not refused here for counting operators the tree keeps flat.
pub(super) const LIMIT: usize = 4 * MAX_DEPTH;

/// Keywords that nest the tree one level (`not x`, `lambda: x`, `a if b else c`).
const NESTING_KEYWORDS: &[&str] = &["not", "await", "lambda", "yield", "if", "else", "async"];

/// Keywords: a token after one of them is in prefix position.
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Operators of three and two bytes, longest first.
const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
];

/// Operators that nest the tree (a comparison chain or `and`/`or` is one flat node).
fn nests(op: &str) -> bool {
    matches!(
        op,
        "+" | "-" | "*" | "/" | "//" | "%" | "@" | "**" | "<<" | ">>" | "&" | "|" | "^" | "~" | "."
    )
}

/// Where the tokenizer is: code at the top, or inside an f-string.
#[derive(Debug, Clone, Copy)]
enum Ctx {
    /// The literal text of an f- or t-string; `named` inside a `\N{..}` escape.
    FString {
        quote: u8,
        triple: bool,
        raw: bool,
        named: bool,
    },
    /// A replacement field's code; `open` counts the brackets opened in it.
    Field { open: usize },
    /// A replacement field's format spec (after its top-level `:`).
    Spec,
}

/// One level: what is open below it, and what runs in it.
struct Level {
    base: usize,
    running: usize,
}

struct Scan<'t> {
    b: &'t [u8],
    i: usize,
    ctx: Vec<Ctx>,
    levels: Vec<Level>,
    /// Brackets open outside any f-string (a newline inside them joins lines).
    open: usize,
    /// Widths of the indented blocks open, the outermost (0) first.
    indents: Vec<usize>,
    /// A logical line begins at the next token.
    line_start: bool,
    /// Where the current physical line starts.
    physical_start: usize,
    /// The last token ended an operand: an operator after it is binary, a bracket a call.
    operand: bool,
    /// The most brackets, f-strings and fields open at once (for the tests).
    deepest: usize,
}

/// Why and where a file is refused.
#[derive(Debug, PartialEq)]
pub(super) enum Deep {
    Brackets(usize),
    Levels(usize),
}

/// Refuses a file whose brackets nest deeper than [`MAX_DEPTH`], or whose nesting passes
/// [`LIMIT`] levels, at the token where it does.
pub(super) fn check(text: &str) -> Result<(), ParseError> {
    match too_deep(text) {
        None => Ok(()),
        Some(Deep::Brackets(at)) => Err(ParseError {
            message: format!(
                "nested too deeply (brackets open more than {MAX_DEPTH} levels deep here)"
            ),
            span: at..at,
        }),
        Some(Deep::Levels(at)) => Err(ParseError {
            message: format!(
                "nested too deeply (more than {LIMIT} levels of brackets, operators and blocks)"
            ),
            span: at..at,
        }),
    }
}

pub(super) fn too_deep(text: &str) -> Option<Deep> {
    scan(text).run().err()
}

fn scan(text: &str) -> Scan<'_> {
    Scan {
        b: text.as_bytes(),
        i: 0,
        ctx: Vec::new(),
        levels: vec![Level {
            base: 0,
            running: 0,
        }],
        open: 0,
        indents: vec![0],
        line_start: true,
        physical_start: 0,
        operand: false,
        deepest: 0,
    }
}

impl Scan<'_> {
    fn total(&self) -> usize {
        self.levels.last().map_or(0, |l| l.base + l.running)
    }

    fn add(&mut self, n: usize) -> Result<(), Deep> {
        if let Some(l) = self.levels.last_mut() {
            l.running += n;
        }
        self.limit()
    }

    fn limit(&self) -> Result<(), Deep> {
        if self.total() > LIMIT {
            Err(Deep::Levels(self.i))
        } else {
            Ok(())
        }
    }

    fn reset(&mut self) {
        if let Some(l) = self.levels.last_mut() {
            l.running = 0;
        }
    }

    /// A bracket, f-string or field opens a level.
    fn push(&mut self, bracket: bool) -> Result<(), Deep> {
        let base = self.total() + 1;
        self.levels.push(Level { base, running: 0 });
        self.deepest = self.deepest.max(self.levels.len() - 1);
        if bracket && self.levels.len() > MAX_DEPTH + 1 {
            return Err(Deep::Brackets(self.i));
        }
        self.limit()
    }

    fn pop(&mut self) {
        if self.levels.len() > 1 {
            self.levels.pop();
        }
    }

    fn newline_len(&self) -> usize {
        match self.b[self.i] {
            b'\r' if self.b.get(self.i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => 0,
        }
    }

    fn run(&mut self) -> Result<(), Deep> {
        while self.i < self.b.len() {
            match self.ctx.last().copied() {
                None | Some(Ctx::Field { .. }) => self.code()?,
                Some(Ctx::FString { .. }) => self.text_part(false)?,
                Some(Ctx::Spec) => self.text_part(true)?,
            }
        }
        Ok(())
    }

    /// One token (or blank) of code.
    fn code(&mut self) -> Result<(), Deep> {
        let b = self.b;
        let c = b[self.i];
        let nl = self.newline_len();
        if nl > 0 {
            self.i += nl;
            self.physical_start = self.i;
            if self.ctx.is_empty() && self.open == 0 && !self.line_start {
                // The end of a logical line: what the parser built on it is complete.
                self.line_start = true;
                self.reset();
                self.operand = false;
            }
            return Ok(());
        }
        if matches!(c, b' ' | b'\t' | b'\x0c') {
            self.i += 1;
            return Ok(());
        }
        if c == b'#' {
            while self.i < b.len() && !matches!(b[self.i], b'\n' | b'\r') {
                self.i += 1;
            }
            return Ok(());
        }
        if c == b'\\' {
            // A line continuation (or a stray backslash, an error the parser reports).
            self.i += 1;
            if self.i < b.len() {
                let nl = self.newline_len();
                self.i += nl;
                if nl > 0 {
                    self.physical_start = self.i;
                }
            }
            return Ok(());
        }
        if self.line_start && self.ctx.is_empty() && self.open == 0 {
            self.line_start = false;
            self.indent()?;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = self.i;
            while self.i < b.len()
                && (b[self.i].is_ascii_alphanumeric() || b[self.i] == b'_' || b[self.i] >= 0x80)
            {
                self.i += 1;
            }
            let word = std::str::from_utf8(&b[start..self.i]).unwrap_or("");
            if let Some(&q) = b.get(self.i).filter(|q| matches!(q, b'\'' | b'"')) {
                if let Some(kind) = string_prefix(word) {
                    return self.string(q, kind);
                }
            }
            let keyword = KEYWORDS.contains(&word);
            if NESTING_KEYWORDS.contains(&word) {
                self.add(1)?;
            }
            self.operand = !keyword;
            return Ok(());
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(self.i + 1).is_some_and(u8::is_ascii_digit)) {
            self.i = number_end(b, self.i);
            self.operand = true;
            return Ok(());
        }
        if c == b'\'' || c == b'"' {
            return self.string(c, Prefix::Plain);
        }
        match c {
            b'(' | b'[' | b'{' => {
                if self.operand {
                    self.add(1)?; // a call or subscript
                }
                match self.ctx.last_mut() {
                    Some(Ctx::Field { open }) => *open += 1,
                    _ => self.open += 1,
                }
                self.i += 1;
                self.operand = false;
                self.push(true)
            }
            b')' | b']' | b'}' => {
                self.i += 1;
                self.operand = true;
                match self.ctx.last_mut() {
                    Some(Ctx::Field { open: 0 }) => {
                        // The end of a replacement field: back to the f-string's text (a stray
                        // `)` or `]` ends it too, as it does for ruff's lexer).
                        self.ctx.pop();
                        self.pop();
                    }
                    Some(Ctx::Field { open }) if *open > 0 => {
                        *open -= 1;
                        self.pop();
                    }
                    None if self.open > 0 => {
                        self.open -= 1;
                        self.pop();
                    }
                    // A stray closing bracket closes nothing (the parser reports it).
                    _ => {}
                }
                Ok(())
            }
            b':' if matches!(self.ctx.last(), Some(Ctx::Field { open: 0 })) => {
                self.i += 1;
                self.ctx.push(Ctx::Spec);
                Ok(())
            }
            b',' | b';' => {
                self.i += 1;
                self.reset();
                self.operand = false;
                Ok(())
            }
            _ => {
                let rest = &b[self.i..];
                // Non-ASCII bytes are identifiers: what is left is one ASCII character.
                let op = OPERATORS
                    .iter()
                    .find(|o| rest.starts_with(o.as_bytes()))
                    .copied()
                    .unwrap_or_else(|| std::str::from_utf8(&rest[..1]).unwrap_or("?"));
                self.i += op.len().max(1);
                self.operand = false;
                if op == "=" {
                    self.reset();
                    return Ok(());
                }
                if nests(op) {
                    self.add(1)?;
                }
                Ok(())
            }
        }
    }

    /// A logical line's first token: the indented blocks it closes or opens.
    fn indent(&mut self) -> Result<(), Deep> {
        let mut col = 0usize;
        for &c in &self.b[self.physical_start..self.i] {
            col = match c {
                b'\t' => (col / 8 + 1) * 8,
                b'\x0c' => 0,
                _ => col + 1,
            };
        }
        while self.indents.len() > 1 && self.indents.last().is_some_and(|&w| w > col) {
            self.indents.pop();
        }
        if self.indents.last().is_some_and(|&w| col > w) {
            self.indents.push(col);
        }
        if let Some(root) = self.levels.first_mut() {
            root.base = self.indents.len() - 1;
        }
        self.limit()
    }

    /// A string starting at its quote (`q`, at `self.i`).
    fn string(&mut self, q: u8, prefix: Prefix) -> Result<(), Deep> {
        let b = self.b;
        let triple = b.get(self.i + 1) == Some(&q) && b.get(self.i + 2) == Some(&q);
        let raw = matches!(prefix, Prefix::Raw | Prefix::RawFormat);
        if let Prefix::Format | Prefix::RawFormat = prefix {
            self.i += if triple { 3 } else { 1 };
            self.ctx.push(Ctx::FString {
                quote: q,
                triple,
                raw,
                named: false,
            });
            self.operand = false;
            return self.push(false);
        }
        self.i += if triple { 3 } else { 1 };
        while self.i < b.len() {
            let c = b[self.i];
            if c == b'\\' {
                self.i += 2;
                continue;
            }
            if c == q
                && (!triple || (b.get(self.i + 1) == Some(&q) && b.get(self.i + 2) == Some(&q)))
            {
                self.i += if triple { 3 } else { 1 };
                break;
            }
            if !triple && matches!(c, b'\n' | b'\r') {
                break; // Unterminated: the line ends it.
            }
            self.i += 1;
        }
        self.i = self.i.min(b.len());
        self.operand = true;
        Ok(())
    }

    /// One step through the text of an f-string (`spec`: a replacement field's format spec),
    /// as ruff's lexer takes it: up to a field, the end of the field or of the f-string.
    fn text_part(&mut self, spec: bool) -> Result<(), Deep> {
        let b = self.b;
        let Some((at, q, triple, raw, named)) =
            self.ctx
                .iter()
                .enumerate()
                .rev()
                .find_map(|(at, c)| match *c {
                    Ctx::FString {
                        quote,
                        triple,
                        raw,
                        named,
                    } => Some((at, quote, triple, raw, named)),
                    _ => None,
                })
        else {
            self.ctx.pop();
            return Ok(());
        };
        let c = b[self.i];
        let closes =
            c == q && (!triple || (b.get(self.i + 1) == Some(&q) && b.get(self.i + 2) == Some(&q)));
        if closes || (!triple && matches!(c, b'\n' | b'\r')) {
            // The f-string ends here, its fields and spec with it. A line that ends it
            // unterminated leaves its levels open: ruff's lexer gives no end token, and the
            // parser may nest what follows in it.
            for _ in at..self.ctx.len() {
                if let Some(top) = self.ctx.pop() {
                    if closes && !matches!(top, Ctx::Spec) {
                        self.pop();
                    }
                }
            }
            if closes {
                self.i += if triple { 3 } else { 1 };
            }
            self.operand = true;
            return Ok(());
        }
        let set_named = |ctx: &mut Vec<Ctx>, value: bool| {
            if let Some(Ctx::FString { named, .. }) = ctx.get_mut(at) {
                *named = value;
            }
        };
        match c {
            b'\\' => {
                let next = b.get(self.i + 1).copied();
                self.i += 1;
                match next {
                    // `\{` and `\}` are braces as any other.
                    Some(b'{' | b'}') => {}
                    Some(b'N') if !raw && b.get(self.i + 1) == Some(&b'{') => {
                        // `\N{NAME}` names a character; its closing brace is no field's.
                        self.i += 2;
                        set_named(&mut self.ctx, true);
                    }
                    Some(b'\r') if b.get(self.i + 1) == Some(&b'\n') => self.i += 2,
                    Some(_) => {
                        let len = std::str::from_utf8(&b[self.i..])
                            .ok()
                            .and_then(|s| s.chars().next())
                            .map_or(1, char::len_utf8);
                        self.i += len;
                    }
                    None => {}
                }
            }
            b'{' if !spec && b.get(self.i + 1) == Some(&b'{') => self.i += 2,
            b'{' => {
                self.i += 1;
                self.ctx.push(Ctx::Field { open: 0 });
                self.operand = false;
                return self.push(false);
            }
            b'}' if named => {
                self.i += 1;
                set_named(&mut self.ctx, false);
            }
            b'}' if !spec && b.get(self.i + 1) == Some(&b'}') => self.i += 2,
            b'}' if spec => {
                // Ends the spec and the field it belongs to.
                self.i += 1;
                self.ctx.pop();
                if matches!(self.ctx.last(), Some(Ctx::Field { .. })) {
                    self.ctx.pop();
                    self.pop();
                }
            }
            // A stray `}` in the text closes nothing here (the parser reports it).
            _ => self.i += 1,
        }
        self.i = self.i.min(b.len());
        Ok(())
    }
}

/// Past a number starting at `i`, as Python's tokenizer reads one (`0x1f`, `1_000`, `1.5e-3j`):
/// a letter that no number takes (`1f'..'`) starts the next token.
fn number_end(b: &[u8], mut i: usize) -> usize {
    let digits = |i: &mut usize, ok: fn(u8) -> bool| {
        while *i < b.len() && (ok(b[*i]) || b[*i] == b'_') {
            *i += 1;
        }
    };
    if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')) {
        i += 2;
        digits(&mut i, |c| c.is_ascii_hexdigit());
        return i;
    }
    digits(&mut i, |c| c.is_ascii_digit());
    if b.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i, |c| c.is_ascii_digit());
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        if b.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            i += 1 + sign;
            digits(&mut i, |c| c.is_ascii_digit());
        }
    }
    if matches!(b.get(i), Some(b'j' | b'J')) {
        i += 1;
    }
    i
}

/// What a string's prefix makes of it.
#[derive(Debug, Clone, Copy)]
enum Prefix {
    Plain,
    Raw,
    /// An f- or t-string.
    Format,
    RawFormat,
}

/// The kind of string a word right before a quote prefixes, if it is a string prefix.
fn string_prefix(word: &str) -> Option<Prefix> {
    let w = word.to_ascii_lowercase();
    match w.as_str() {
        "u" | "b" => Some(Prefix::Plain),
        "r" | "br" | "rb" => Some(Prefix::Raw),
        "f" | "t" => Some(Prefix::Format),
        "fr" | "rf" | "tr" | "rt" => Some(Prefix::RawFormat),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use ruff_python_ast::token::TokenKind;

    /// The most brackets, f-/t-strings and replacement fields ruff's own lexer has open at once,
    /// as the parser nests them: the end of an f-string ends what was opened inside it, closed
    /// or not (an unterminated one, which gets no end token, stays open).
    fn ruff_deepest(text: &str) -> usize {
        let mut lexer = ruff_python_parser::lexer::lex(text, ruff_python_parser::Mode::Module);
        let (mut depth, mut deepest) = (0usize, 0usize);
        let mut fstrings = Vec::new();
        loop {
            match lexer.next_token() {
                TokenKind::EndOfFile => return deepest,
                TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                TokenKind::FStringStart | TokenKind::TStringStart => {
                    fstrings.push(depth);
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                    depth = depth.saturating_sub(1);
                }
                TokenKind::FStringEnd | TokenKind::TStringEnd => {
                    depth = fstrings.pop().unwrap_or(0);
                }
                _ => {}
            }
        }
    }

    fn our_deepest(text: &str) -> usize {
        let mut s = scan(text);
        let _ = s.run();
        s.deepest
    }

    /// Pieces that open, close or hide nesting in Python's tokenizer.
    const PIECES: &[&str] = &[
        "(", ")", "[", "]", "{", "}", "{{", "}}", "'", "\"", "'''", "\"\"\"", "f'", "f\"", "rf'",
        "F\"\"\"", "t'", "b'", "r'", "u\"", "#", "\n", "\r", "\r\n", "\\", ":", "!", "!r", "=",
        ":=", "x", " ", "1", ".", ",", "\\N{", "lambda", "-", "\t",
    ];

    /// Python expressions built to be valid, full of what hides nesting from a naive scan:
    /// strings holding brackets and quotes, f-strings (PEP 701 quotes reused inside fields),
    /// format specs with fields, `\N{..}` escapes, comments and line continuations.
    fn expression() -> impl Strategy<Value = String> {
        let text = prop::sample::select(vec![
            "",
            "(",
            "[[",
            "{{",
            "}}",
            ")]",
            "\\\"",
            "\\'",
            "#",
            "\\\\",
            "\\N{DIGIT ONE}",
            "a b",
        ]);
        let leaf = prop_oneof![
            Just("x".to_string()),
            Just("1".to_string()),
            Just("1.5e-3".to_string()),
            text.clone().prop_map(|t| format!("'{t}'")),
            text.clone().prop_map(|t| format!("\"{t}\"")),
            text.clone().prop_map(|t| format!("'''{t}\n{t}'''")),
            text.clone()
                .prop_map(|t| format!("r'{}'", t.replace(['\\', '\''], ""))),
            text.prop_map(|t| format!("b\"{}\"", t.replace("\\N{DIGIT ONE}", ""))),
        ];
        leaf.prop_recursive(6, 64, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| format!("({e})")),
                inner.clone().prop_map(|e| format!("[{e}, {e}]")),
                inner.clone().prop_map(|e| format!("{{ {e}: {e} }}")),
                inner
                    .clone()
                    .prop_map(|e| format!("f(\n  {e},  # ({{[\n  {e})")),
                inner.clone().prop_map(|e| format!("x[{e}]")),
                inner.clone().prop_map(|e| format!("-{e} + {e}")),
                inner.clone().prop_map(|e| format!("(lambda: {e})")),
                inner.clone().prop_map(|e| format!("f\"{{ {e} }}\"")),
                inner
                    .clone()
                    .prop_map(|e| format!("f'{{ {e} !r}} {{{{ }}}}'")),
                inner
                    .clone()
                    .prop_map(|e| format!("f'''{{ {e}:>{{ {e} }}}}\n'''")),
                inner.clone().prop_map(|e| format!("rf\"\\{{ {e} }}\"")),
                inner
                    .clone()
                    .prop_map(|e| format!("f'\\N{{DIGIT ONE}}{{ {e} }}'")),
                inner.clone().prop_map(|e| format!("t\"{{ {e}=}}\"")),
                inner.prop_map(|e| format!("(1 +\\\n {e})")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 1000,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// On valid Python the check sees exactly the nesting of brackets, f-strings and
        /// fields that ruff's own lexer gives the parser.
        #[test]
        fn the_same_nesting_as_ruff_s_lexer(
            lines in proptest::collection::vec(expression(), 1..4),
            eol in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        ) {
            let text: String = lines.iter().map(|e| format!("y = {e}{eol}")).collect();
            let parsed = ruff_python_parser::parse_unchecked_source(
                &text,
                ruff_python_ast::PySourceType::Python,
            );
            prop_assert!(parsed.errors().is_empty(), "{text:?}: {:?}", parsed.errors());
            prop_assert_eq!(our_deepest(&text), ruff_deepest(&text), "{:?}", text);
        }

        /// Whatever the input, the check never panics and returns; where ruff parses the
        /// input without error, it sees no less nesting than ruff's lexer.
        #[test]
        fn any_pieces_are_scanned_and_never_undercounted_when_valid(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..48)
        ) {
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            let ours = our_deepest(&text);
            let parsed = ruff_python_parser::parse_unchecked_source(
                &text,
                ruff_python_ast::PySourceType::Python,
            );
            if parsed.errors().is_empty() {
                let ruff = ruff_deepest(&text);
                prop_assert!(ours >= ruff, "{text:?}: ours {ours} < ruff {ruff}");
            }
        }
    }

    #[test]
    fn the_same_nesting_as_ruff_s_lexer_on_the_python_fixtures() {
        // `HWLINT_PYTHON_SAMPLES` adds a folder of other Python files (a framework's checkout).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut stack = vec![dir];
        stack.extend(std::env::var_os("HWLINT_PYTHON_SAMPLES").map(std::path::PathBuf::from));
        let mut seen = 0;
        while let Some(p) = stack.pop() {
            if p.is_dir() {
                stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            } else if p.extension().is_some_and(|e| e == "py") {
                let text = std::fs::read_to_string(&p).unwrap();
                assert_eq!(our_deepest(&text), ruff_deepest(&text), "{}", p.display());
                assert!(too_deep(&text).is_none(), "{}", p.display());
                seen += 1;
            }
        }
        assert!(seen >= 10, "{seen} Python fixtures");
    }

    #[test]
    fn broken_f_strings_read_as_ruff_s_lexer_reads_them() {
        // Inputs where an earlier scan saw less than ruff's lexer: a number's letters, a line
        // ending an f-string (its level stays open: no end token), `\N{` before a field or a
        // line end, a stray bracket ending a field, a quote ending a spec.
        for text in [
            "1f'{(",
            "f'\n{{((",
            "f'\\N{\n(",
            "f'\\N{{(",
            "rf'\\N{\"\")\n:f'{",
            "f\"{:\"\"\"[\\N{",
        ] {
            assert!(our_deepest(text) >= ruff_deepest(text), "{text:?}");
        }
    }

    #[test]
    fn the_same_nesting_as_ruff_s_lexer_on_real_code() {
        let code = [
            "x = f\"{a['b']:>{width}.{prec}f} {c!r} {d=}\"\n",
            "y = f'''{\n  [1, 2]  # a comment\n}''' + rf\"\\{x}\" + b'(('\n",
            "def f(a, *, b=[{}]):\n    return {k: (v,) for k, v in a.items()}\n",
            "z = f\"{f'{x:{y}}'}\" '\\N{DIGIT ONE}' \"\"\" \" \"\"\"\n",
        ];
        for text in code {
            assert_eq!(our_deepest(text), ruff_deepest(text), "{text:?}");
        }
    }

    fn refused(text: &str) -> bool {
        too_deep(text).is_some()
    }

    #[test]
    fn what_hid_nesting_from_the_old_check_is_seen() {
        let n = 10_000;
        let deep = format!("{}1{}", "[".repeat(n), "]".repeat(n));
        for text in [
            // A comment ended by a lone CR (Python ends it there).
            format!("#\rx = {deep}\n"),
            // Brackets inside an f-string's replacement field.
            format!("x = f\"{{{deep}}}\"\n"),
            format!("x = f'''{{{deep}}}'''\n"),
            format!("x = rf\"{{{deep}}}\"\n"),
            // A triple-quoted string holding a lone quote.
            format!("\"\"\" \" \"\"\"\nx = {deep}\n"),
            format!("x = \"\"\" \" \"\"\" + {deep}\n"),
            // Nested f-strings with the same quotes (PEP 701).
            format!("x = {}1{}\n", "f\"{".repeat(n), "}\"".repeat(n)),
            // A format spec's own fields.
            format!("x = f\"{{a:{{{deep}}}}}\"\n"),
            // Nesting without brackets.
            format!("x = {}1\n", "-".repeat(n)),
            format!("x = {}1\n", "not ".repeat(n)),
            format!("x = {}1\n", "lambda: ".repeat(n)),
            format!("x = a{}\n", ".b".repeat(n)),
            format!("x = 1{}\n", " + 1".repeat(n)),
            format!("x = {}1\n", "1 if a else ".repeat(n)),
            (0..2000)
                .map(|i| format!("{}if a:\n", " ".repeat(i)))
                .collect::<String>(),
        ] {
            assert!(refused(&text), "{}", &text[..40.min(text.len())]);
        }
    }

    #[test]
    fn strings_comments_and_flat_chains_are_not_nesting() {
        let n = 10_000;
        let brackets = "[".repeat(n);
        for text in [
            format!("x = '{brackets}'\n"),
            format!("x = \"\"\"{brackets}\n{brackets}\"\"\"\n"),
            format!("x = r'\\'{brackets}'\n"),
            format!("# {brackets}\nx = 1\n"),
            format!("x = f'{{{{{brackets}'\n"),
            format!("x = f'\\N{{LEFT SQUARE BRACKET}}{brackets}'\n"),
            format!("x = a{}\n", " and a".repeat(n)),
            format!("x = a{}\n", " < a".repeat(n)),
            format!("x = {}\n", "'a' ".repeat(n)),
            format!("x = [{}]\n", "-1 + 1, ".repeat(n)),
            "x = -1\n".repeat(n),
            format!("def f():\n{}", "    x = a.b.c(d)[0] + -e\n".repeat(n)),
        ] {
            assert!(!refused(&text), "{}", &text[..40.min(text.len())]);
        }
    }

    #[test]
    fn unterminated_strings_end_at_the_line_or_the_file() {
        for text in [
            "x = 'abc\ny = [1]\n",
            "x = f'{a\n",
            "x = '''abc",
            "x = f'{a:",
            "\\",
            "f'{",
            "'\\",
        ] {
            let _ = too_deep(text);
        }
        // An unterminated single-quoted string does not hide the next line's nesting.
        let text = format!("x = 'abc\ny = {}1\n", "-".repeat(5000));
        assert!(refused(&text));
    }
}
