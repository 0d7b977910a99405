//! Splitting a launch script into commands and words, the way a reader of the script would:
//! quotes, escapes, line continuations, comments, separators and here-documents are honoured;
//! expansions are kept as pieces to resolve later. Anything else is taken as plain text.

use crate::syntax::Span;

/// One part of a word: literal text, a variable, or an expansion only the shell knows.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Literal text (quotes removed, escapes resolved); `quoted` when it was inside quotes.
    Lit { text: String, quoted: Option<char> },
    /// `$NAME`, `${NAME}` or `${NAME:-default}`.
    Var {
        name: String,
        default: Option<String>,
    },
    /// `$(...)`, backticks, `$((...))`, `${#x}` and other expansions.
    Dynamic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub pieces: Vec<Piece>,
    pub span: Span,
}

impl Word {
    /// The word's text when it is all literal.
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Lit { text, .. } => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }

    /// The quote character when the whole word is one quoted string.
    pub fn quoted(&self) -> Option<char> {
        match self.pieces.as_slice() {
            [Piece::Lit { quoted, .. }] => *quoted,
            _ => None,
        }
    }
}

/// A simple command: its words, and whether it runs in the background (`&`).
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub words: Vec<Word>,
    pub background: bool,
}

/// The commands of a script, in order. Never fails.
pub fn commands(text: &str) -> Vec<Command> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        i: 0,
        out: Vec::new(),
        words: Vec::new(),
        heredocs: Vec::new(),
    };
    s.run();
    s.out
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    out: Vec<Command>,
    words: Vec<Word>,
    /// Here-document delimiters waiting for the end of the current line.
    heredocs: Vec<(String, bool)>,
}

impl Scanner<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.bytes.get(self.i + k).copied()
    }

    fn end_command(&mut self, background: bool) {
        if !self.words.is_empty() {
            self.out.push(Command {
                words: std::mem::take(&mut self.words),
                background,
            });
        }
    }

    fn run(&mut self) {
        while self.i < self.bytes.len() {
            match self.bytes[self.i] {
                b' ' | b'\t' => self.i += 1,
                b'\\' if matches!(self.peek(1), Some(b'\n')) => self.i += 2,
                b'\\' if self.peek(1) == Some(b'\r') && self.peek(2) == Some(b'\n') => self.i += 3,
                b'\n' | b'\r' => {
                    self.i += 1;
                    self.end_command(false);
                    self.skip_heredocs();
                }
                b'#' => {
                    while self.i < self.bytes.len() && !matches!(self.bytes[self.i], b'\n' | b'\r')
                    {
                        self.i += 1;
                    }
                }
                b';' | b'(' | b')' => {
                    self.i += 1;
                    self.end_command(false);
                }
                b'|' => {
                    self.i += if self.peek(1) == Some(b'|') { 2 } else { 1 };
                    self.end_command(false);
                }
                b'&' if self.peek(1) == Some(b'&') => {
                    self.i += 2;
                    self.end_command(false);
                }
                b'&' if self.peek(1) == Some(b'>') => self.redirect(),
                b'&' => {
                    self.i += 1;
                    self.end_command(true);
                }
                b'<' | b'>' => self.redirect(),
                b'0'..=b'9' if self.is_fd_redirect() => self.redirect(),
                _ => {
                    let w = self.word();
                    if !w.pieces.is_empty() {
                        self.words.push(w);
                    }
                }
            }
        }
        self.end_command(false);
    }

    /// `2>&1`, `2>err.log`: a digit right before `>`/`<`.
    fn is_fd_redirect(&self) -> bool {
        let at_start = self.i == 0 || matches!(self.bytes[self.i - 1], b' ' | b'\t' | b'\n');
        let mut j = self.i;
        while j < self.bytes.len() && self.bytes[j].is_ascii_digit() {
            j += 1;
        }
        at_start && matches!(self.bytes.get(j), Some(b'>' | b'<'))
    }

    /// Skips a redirection and its target; a here-document's body is skipped at the line end.
    fn redirect(&mut self) {
        while self.i < self.bytes.len() && self.bytes[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let heredoc =
            self.text[self.i..].starts_with("<<") && !self.text[self.i..].starts_with("<<<");
        while self.i < self.bytes.len() && matches!(self.bytes[self.i], b'<' | b'>' | b'&' | b'|') {
            self.i += 1;
        }
        let strip_tabs = heredoc && self.peek(0) == Some(b'-');
        if strip_tabs {
            self.i += 1;
        }
        // `2>&1`: the target is a descriptor, already consumed with the digits below.
        while self.i < self.bytes.len() && matches!(self.bytes[self.i], b' ' | b'\t') {
            self.i += 1;
        }
        if self.i < self.bytes.len()
            && !matches!(self.bytes[self.i], b'\n' | b'\r' | b';' | b'&' | b'|')
        {
            let target = self.word();
            if heredoc {
                let delim: String = target
                    .pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Lit { text, .. } => text.clone(),
                        _ => String::new(),
                    })
                    .collect();
                self.heredocs.push((delim, strip_tabs));
            }
        }
    }

    /// After a line break: skips the bodies of the here-documents the line opened.
    fn skip_heredocs(&mut self) {
        for (delim, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.i >= self.bytes.len() {
                    return;
                }
                let end = self.text[self.i..]
                    .find('\n')
                    .map_or(self.bytes.len(), |k| self.i + k);
                let line = self.text[self.i..end].trim_end_matches('\r');
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                self.i = (end + 1).min(self.bytes.len());
                if line == delim {
                    break;
                }
            }
        }
    }

    /// One word, up to an unquoted blank or operator.
    fn word(&mut self) -> Word {
        let start = self.i;
        let mut pieces: Vec<Piece> = Vec::new();
        let mut lit = String::new();
        let flush = |lit: &mut String, pieces: &mut Vec<Piece>| {
            if !lit.is_empty() {
                pieces.push(Piece::Lit {
                    text: std::mem::take(lit),
                    quoted: None,
                });
            }
        };
        while self.i < self.bytes.len() {
            let c = self.bytes[self.i];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => {
                    break
                }
                b'\\' => {
                    if matches!(self.peek(1), Some(b'\n')) {
                        self.i += 2;
                        continue;
                    }
                    self.i += 1;
                    if let Some(ch) = self.text[self.i..].chars().next() {
                        lit.push(ch);
                        self.i += ch.len_utf8();
                    }
                }
                b'\'' => {
                    flush(&mut lit, &mut pieces);
                    self.i += 1;
                    let end = self.text[self.i..]
                        .find('\'')
                        .map_or(self.bytes.len(), |k| self.i + k);
                    pieces.push(Piece::Lit {
                        text: self.text[self.i..end].to_string(),
                        quoted: Some('\''),
                    });
                    self.i = (end + 1).min(self.bytes.len());
                }
                b'"' => {
                    flush(&mut lit, &mut pieces);
                    self.i += 1;
                    self.double_quoted(&mut pieces);
                }
                b'$' => {
                    flush(&mut lit, &mut pieces);
                    pieces.push(self.dollar());
                }
                b'`' => {
                    flush(&mut lit, &mut pieces);
                    pieces.push(self.backticks());
                }
                _ => self.literal_char(&mut lit),
            }
        }
        flush(&mut lit, &mut pieces);
        Word {
            pieces,
            span: start..self.i,
        }
    }

    /// The inside of `"..."`, after the opening quote.
    fn double_quoted(&mut self, pieces: &mut Vec<Piece>) {
        let mut lit = String::new();
        while self.i < self.bytes.len() {
            match self.bytes[self.i] {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' if matches!(self.peek(1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                    lit.push(self.bytes[self.i + 1] as char);
                    self.i += 2;
                }
                b'\\' if matches!(self.peek(1), Some(b'\n')) => self.i += 2,
                b'$' => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Lit {
                            text: std::mem::take(&mut lit),
                            quoted: Some('"'),
                        });
                    }
                    pieces.push(self.dollar());
                }
                b'`' => pieces.push(self.backticks()),
                _ => self.literal_char(&mut lit),
            }
        }
        // `""` is an empty string, still a quoted piece.
        if !lit.is_empty() || pieces.is_empty() {
            pieces.push(Piece::Lit {
                text: lit,
                quoted: Some('"'),
            });
        }
    }

    /// A `` `command` `` substitution starting here: only the shell knows its output.
    fn backticks(&mut self) -> Piece {
        self.i += 1;
        let end = self.text[self.i..]
            .find('`')
            .map_or(self.bytes.len(), |k| self.i + k);
        self.i = (end + 1).min(self.bytes.len());
        Piece::Dynamic
    }

    /// Takes the character here into `lit` (whole, however many bytes it has).
    fn literal_char(&mut self, lit: &mut String) {
        let ch = self.text[self.i..].chars().next().unwrap_or(' ');
        lit.push(ch);
        self.i += ch.len_utf8();
    }

    /// An expansion starting at `$`.
    fn dollar(&mut self) -> Piece {
        self.i += 1;
        match self.peek(0) {
            Some(b'(') => {
                self.skip_balanced(b'(', b')');
                Piece::Dynamic
            }
            Some(b'{') => {
                let start = self.i + 1;
                self.skip_balanced(b'{', b'}');
                let inner = self.text.get(start..self.i.saturating_sub(1)).unwrap_or("");
                braced(inner)
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.i += 1;
                }
                Piece::Var {
                    name: self.text[start..self.i].to_string(),
                    default: None,
                }
            }
            // `$1`, `$@`, `$$`, `$?`: the script's arguments and state.
            Some(_) => {
                self.i += self.text[self.i..].chars().next().map_or(1, char::len_utf8);
                Piece::Dynamic
            }
            None => Piece::Lit {
                text: "$".into(),
                quoted: None,
            },
        }
    }

    /// Moves past a bracketed group starting at `open` (nested, quotes not special).
    fn skip_balanced(&mut self, open: u8, close: u8) {
        let mut depth = 0usize;
        while self.i < self.bytes.len() {
            let c = self.bytes[self.i];
            self.i += 1;
            if c == open {
                depth += 1;
            } else if c == close {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return;
                }
            }
        }
    }
}

/// `${NAME}`, `${NAME:-default}`, `${NAME-default}`; anything else (`${#x}`, `${x/a/b}`) is
/// dynamic.
fn braced(inner: &str) -> Piece {
    let name_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    let name = &inner[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Piece::Dynamic;
    }
    let rest = &inner[name_end..];
    let default = if rest.is_empty() {
        None
    } else if let Some(d) = rest.strip_prefix(":-").or_else(|| rest.strip_prefix('-')) {
        if d.contains(['$', '`']) {
            return Piece::Dynamic;
        }
        Some(d.trim_matches(['"', '\'']).to_string())
    } else {
        return Piece::Dynamic;
    };
    Piece::Var {
        name: name.to_string(),
        default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<Vec<String>> {
        commands(src)
            .iter()
            .map(|c| {
                c.words
                    .iter()
                    .map(|w| w.literal().unwrap_or_else(|| "<dyn>".into()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn quotes_continuations_separators_and_comments() {
        let src = "export A=1 # note\ncd x && python 'a b.py' --k=\"v w\" \\\n  --n 2 > log.txt 2>&1 &\necho done; ls\n";
        assert_eq!(
            texts(src),
            [
                vec!["export", "A=1"],
                vec!["cd", "x"],
                vec!["python", "a b.py", "--k=v w", "--n", "2"],
                vec!["echo", "done"],
                vec!["ls"],
            ]
        );
        assert!(commands(src)[2].background);
    }

    #[test]
    fn heredocs_are_skipped_and_expansions_kept_apart() {
        let src =
            "cat <<EOF > f\npython train.py\nEOF\npython b.py --x=$X --y=${Y:-3} --z=$(date)\n";
        let cmds = commands(src);
        assert_eq!(cmds.len(), 2);
        let w = &cmds[1].words;
        assert_eq!(
            w[2].pieces[1],
            Piece::Var {
                name: "X".into(),
                default: None
            }
        );
        assert_eq!(
            w[3].pieces[1],
            Piece::Var {
                name: "Y".into(),
                default: Some("3".into())
            }
        );
        assert_eq!(w[4].pieces[1], Piece::Dynamic);
    }

    #[test]
    fn never_panics_on_broken_input() {
        for src in [
            "\"unterminated",
            "'x",
            "$(",
            "${",
            "a\\",
            "<<",
            "2>",
            "`",
            "é'ü\"$",
            "\r\r\\\r",
        ] {
            let _ = commands(src);
        }
    }
}
