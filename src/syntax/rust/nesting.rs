//! How deeply syn would recurse on a file, measured from its tokens before syn runs.
//!
//! syn's parser, its visitor and the drop of its tree recurse once or more per level of
//! nesting, and a stack overflow aborts the whole process (every other file's report with it):
//! it cannot be caught, so it must be made impossible. Brackets are not the only nesting.
//! Prefix operators (`!!!!x`, `&&&&T`, `*const *const T`), closures (`|| || x`), generic
//! arguments (`Vec<Vec<..>>`), `impl Fn() -> impl Fn() -> ..`, right-nested assignments and
//! `else if` chains nest without them, and every postfix or binary operator (`a.b(0).c(1)`,
//! `1 + 1 + ..`) makes the tree one level deeper for the visitor and the drop.
//!
//! Each such token costs what one level of it costs syn's stack, in units of about 1 KiB of a
//! debug build (measured per construct: a generic argument ~9.4 KiB, a brace ~6.5 KiB, a
//! closure ~5 KiB, a prefix `!` ~1.7 KiB, one level of a method chain ~0.7 KiB), summed along
//! the path of open brackets to the current token. Within one bracket level the cost runs until
//! a token that ends what syn is parsing there: a `;`, a `=>`, a `,` outside generic arguments
//! and closure parameters, or a statement or item that starts after a `}`. A file whose cost
//! passes [`LIMIT`] anywhere is refused before syn sees it; the thread syn runs on has a stack
//! several times what that cost can use.

use super::lex::{tokens, Tok};
use crate::syntax::ParseError;

/// The most cost a file may reach. syn's thread has [`super::STACK_BYTES`] of stack: at about
/// 1 KiB a unit this leaves a margin of four for the units whose cost was measured low.
pub(super) const LIMIT: u32 = 16 * 1024;

/// What one level of a generic argument list costs (`<`; `>` takes it back).
const ANGLE: u32 = 10;

/// One bracket level: what is open below it and what runs in it.
struct Level {
    /// The cost of everything below this level, its own bracket included.
    base: u32,
    /// Operators and keywords since the last token that ended what syn parses here.
    running: u32,
    /// Generic argument lists open at this level.
    angles: u32,
    /// Inside a closure's `|params|`, whose commas end nothing.
    closure_params: bool,
    /// The last token closed a `{}` block: a statement or item may start next.
    after_block: bool,
}

impl Level {
    fn new(base: u32) -> Level {
        Level {
            base,
            running: 0,
            angles: 0,
            closure_params: false,
            after_block: false,
        }
    }

    fn total(&self) -> u32 {
        self.base
            .saturating_add(self.running)
            .saturating_add(self.angles.saturating_mul(ANGLE))
    }

    fn reset(&mut self) {
        self.running = 0;
        self.angles = 0;
        self.closure_params = false;
    }
}

/// Keywords, which (but for the few that name a value) end no operand.
const KEYWORDS: &[&str] = &[
    "as", "async", "break", "const", "continue", "dyn", "else", "enum", "extern", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "static", "struct", "trait", "type", "unsafe", "use", "where", "while", "abstract", "become",
    "box", "do", "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual",
    "yield", "gen",
];

/// What a keyword costs where it appears.
fn keyword_cost(word: &str) -> u32 {
    match word {
        "return" | "break" | "yield" | "become" | "box" | "impl" | "dyn" => 5,
        "let" | "if" | "while" | "match" | "for" | "loop" | "unsafe" | "async" | "move"
        | "const" | "static" => 2,
        "else" | "as" => 1,
        _ => 0,
    }
}

/// What an operator costs: in prefix position (nothing before it ends an operand) it opens a
/// level of its own; after an operand it is a binary or postfix operator, one tree level.
fn punct_cost(p: &str, prefix: bool) -> u32 {
    match p {
        "->" => 7,
        "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "^=" | "&=" | "|=" | "<<=" | ">>=" => 3,
        "@" | "~" => 2,
        "::" | ":" | "#" | "$" => 0,
        "!" | "-" if prefix => 2,
        "*" | "&" if prefix => 5,
        "&&" if prefix => 10,
        "|" | "||" if prefix => 6,
        ".." | "..=" | "..." if prefix => 3,
        _ => 1,
    }
}

/// Refuses a file whose brackets nest deeper than `max_brackets`, or whose nesting costs more
/// than [`LIMIT`] anywhere, at the token where it does.
pub(super) fn check(text: &str, max_brackets: usize) -> Result<(), ParseError> {
    match too_deep(text, max_brackets) {
        None => Ok(()),
        Some((at, Deep::Brackets)) => Err(ParseError {
            message: format!(
                "nested too deeply: brackets open more than {max_brackets} levels deep here"
            ),
            span: at..at,
        }),
        Some((at, Deep::Cost)) => Err(ParseError {
            message: "nested too deeply for hwlint to read safely: operators, closures, generic \
                      arguments and brackets nest past its limit here (about 16 MiB of the Rust \
                      parser's stack)"
                .into(),
            span: at..at,
        }),
    }
}

#[derive(Debug, PartialEq)]
enum Deep {
    Brackets,
    Cost,
}

/// Where the file nests too deeply, and how.
fn too_deep(text: &str, max_brackets: usize) -> Option<(usize, Deep)> {
    measure(text, max_brackets, LIMIT).err()
}

/// The highest cost the file reaches, or where it passes `limit` (or `max_brackets`).
fn measure(text: &str, max_brackets: usize, limit: u32) -> Result<u32, (usize, Deep)> {
    let mut peak = 0;
    let mut levels = vec![Level::new(0)];
    // Whether the previous token ended an operand (an identifier, literal, closing bracket).
    let mut operand = false;
    // The last tokens were `.name`: a `(` now is a method call, one tree level with its `.`.
    let (mut dot, mut method) = (false, false);
    for (at, tok) in tokens(text, 0) {
        let Some(level) = levels.last_mut() else {
            break;
        };
        if std::mem::take(&mut level.after_block) {
            let starts = match tok {
                Tok::Ident(w) => w != "else" && w != "as",
                Tok::Lifetime | Tok::Punct("#") => true,
                _ => false,
            };
            if starts {
                level.reset();
            }
        }
        let mut ends_operand = false;
        match tok {
            Tok::Open(c) => {
                // A call or index after an operand is a postfix level of the tree too.
                if operand && c != b'{' && !(method && c == b'(') {
                    level.running = level.running.saturating_add(1);
                }
                let own = if c == b'{' { 8 } else { 4 };
                let base = level.total().saturating_add(own);
                levels.push(Level::new(base));
                if levels.len() > max_brackets + 1 {
                    return Err((at, Deep::Brackets));
                }
            }
            Tok::Close(c) => {
                if levels.len() > 1 {
                    levels.pop();
                }
                if c == b'}' {
                    if let Some(l) = levels.last_mut() {
                        l.after_block = true;
                    }
                }
                ends_operand = true;
            }
            Tok::Punct(";") | Tok::Punct("=>") => level.reset(),
            Tok::Punct(",") => {
                if level.angles == 0 && !level.closure_params {
                    level.reset();
                }
            }
            Tok::Punct(p) if p.starts_with('<') && p != "<=" => {
                let n = p.bytes().filter(|&b| b == b'<').count() as u32;
                level.angles = level.angles.saturating_add(n);
                if p.ends_with('=') {
                    level.running = level.running.saturating_add(3);
                }
            }
            Tok::Punct(p) if p.starts_with('>') && p != ">=" => {
                let n = p.bytes().filter(|&b| b == b'>').count() as u32;
                level.angles = level.angles.saturating_sub(n);
                if p.ends_with('=') {
                    level.running = level.running.saturating_add(3);
                }
            }
            Tok::Punct("|") if level.closure_params => level.closure_params = false,
            Tok::Punct(p) => {
                if p == "|" && !operand {
                    level.closure_params = true;
                }
                ends_operand = p == "?";
                level.running = level.running.saturating_add(punct_cost(p, !operand));
            }
            Tok::Ident(w) => {
                let keyword = KEYWORDS.contains(&w);
                ends_operand = !keyword;
                level.running = level.running.saturating_add(keyword_cost(w));
            }
            Tok::Literal => ends_operand = true,
            Tok::Lifetime => {}
        }
        operand = ends_operand;
        method = dot && matches!(tok, Tok::Ident(_));
        dot = tok == Tok::Punct(".");
        let total = levels.last().map_or(0, Level::total);
        if total > limit {
            return Err((at, Deep::Cost));
        }
        peak = peak.max(total);
    }
    Ok(peak)
}

/// The highest cost `text` reaches, however high (for tests that aim at the limit).
#[cfg(test)]
pub(super) fn peak(text: &str) -> u32 {
    measure(text, usize::MAX - 1, u32::MAX).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost_at_end(text: &str) -> bool {
        too_deep(text, usize::MAX - 1).is_none()
    }

    #[test]
    fn ordinary_code_is_far_from_the_limit() {
        let text = r#"
            #[derive(Config)]
            pub struct TrainingConfig {
                #[config(default = 64)]
                pub batch_size: usize,
                pub optimizer: AdamConfig,
            }
            fn train<B: AutodiffBackend>(config: &TrainingConfig, device: B::Device) -> Result<(), Box<dyn Error>> {
                let loader = DataLoaderBuilder::new(batcher.clone())
                    .batch_size(config.batch_size)
                    .shuffle(config.seed)
                    .num_workers(config.num_workers)
                    .build(MnistDataset::train());
                if let Some(x) = y { a = -b * &c; } else if z < 3 && !w { return Err(e.into()); }
                let f = |a: &&u8, b| move || a + b;
                Ok(())
            }
        "#;
        assert!(cost_at_end(text));
        // A thousand statements at one level: each `;` or block ends what runs before it.
        let many = "fn f() { ".to_string()
            + &"let x: &Vec<u8> = &*a.b()?.c[0]; if a { } else { } ".repeat(1000)
            + "}";
        assert!(cost_at_end(&many));
        let items = "fn a(x: &u8) -> impl Fn() -> u8 { } ".repeat(2000);
        assert!(cost_at_end(&items));
    }

    #[test]
    fn nesting_without_brackets_is_counted() {
        let cases = [
            format!("type T = {}u8{};", "Vec<".repeat(2000), ">".repeat(2000)),
            format!("fn f() {{ let x = {}x; }}", "!".repeat(10_000)),
            format!("fn f() {{ let x = {}1; }}", "|| ".repeat(3000)),
            format!("fn f() {{ let x = {}1; }}", "|a, b| ".repeat(3000)),
            format!("type T = {}u8;", "&".repeat(4000)),
            format!("type T = {}u8;", "*const ".repeat(4000)),
            format!("fn f() -> {}u8 {{ }}", "impl Fn() -> ".repeat(2000)),
            format!("fn f() {{ {}1; }}", "a = ".repeat(6000)),
            format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(6000)),
            format!(
                "fn f() {{ let x = Foo::new(b){}; }}",
                ".bar(0)".repeat(20_000)
            ),
            format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(20_000)),
            format!("fn f() {{ let x = a = {{x}} {}; }}", "= {y} ".repeat(6000)),
            format!("type T = {}u8{};", "A<x, ".repeat(2000), ">".repeat(2000)),
        ];
        for text in &cases {
            assert_eq!(
                too_deep(text, usize::MAX - 1).map(|(_, d)| d),
                Some(Deep::Cost),
                "{}",
                &text[..60.min(text.len())]
            );
        }
    }

    #[test]
    fn closing_brackets_and_ends_take_the_cost_back() {
        // The same shapes, closed and ended each time, stay far under the limit.
        let text = "fn f() { ".to_string()
            + &"let x = !!!!!!!!(|| -a) as Vec<Vec<u8>>; ".repeat(5000)
            + "}";
        assert!(cost_at_end(&text));
    }
}
