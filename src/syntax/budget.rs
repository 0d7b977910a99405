//! The memory one file may take to read, checked before any parser runs.
//!
//! A parser's memory grows with the values it reads, not with the bytes: a one-line list of
//! `1, 1, 1, ..` holds a value every 3 bytes, and each costs the parser and the tree 180 to 620
//! bytes (measured per format on such a list, the densest input there is). Unchecked, a 64 MB
//! file under the size limit took up to 13 GB, or aborted the run on a failed allocation. So
//! the values are counted first, in one flat pass over the bytes (every run of characters
//! between separators is a value or part of one, every bracket a container), and a file whose
//! count at its format's cost passes [`BUDGET`] is refused, at the byte where it does.
//! No training config comes near it: a 10 MB tokenizer vocabulary is a fifth of it.

use super::{Format, ParseError};

/// The most memory reading one file may take.
pub const BUDGET: usize = 512 << 20;

/// Bytes of parser and tree memory per value: the peak measured on a one-line list of small
/// integers of 12 MB, divided by its 4 million values, rounded up.
fn cost(format: Format) -> usize {
    match format {
        Format::Yaml => 250,
        Format::Json | Format::Jsonc => 190,
        Format::Toml => 330,
        Format::Python => 230,
        Format::Rust => 620,
        Format::Shell => 410,
    }
}

/// How many values a file of `format` may hold.
pub fn max_values(format: Format) -> usize {
    BUDGET / cost(format)
}

fn separates(c: u8) -> bool {
    c.is_ascii_whitespace() || b",:[]{}()=;'\"".contains(&c)
}

/// Refuses `text` when reading it as `format` would take more than [`BUDGET`].
pub fn check(text: &str, format: Format) -> Result<(), ParseError> {
    let max = max_values(format);
    let b = text.as_bytes();
    // A quick bound: a value needs a byte and a separator.
    if b.len() / 2 < max {
        return Ok(());
    }
    let mut values = 0usize;
    let mut inside = false;
    for (i, &c) in b.iter().enumerate() {
        let sep = separates(c);
        if (!sep && !inside) || matches!(c, b'[' | b'{' | b'(') {
            values += 1;
            if values > max {
                return Err(ParseError {
                    message: format!(
                        "holds more values than hwlint reads in one file: {max} by here already, which as {} would take over {} MiB of memory to read (no training config holds this many)",
                        format.name(),
                        BUDGET >> 20
                    ),
                    span: i..i,
                });
            }
        }
        inside = !sep;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dense_list_is_refused_where_its_count_passes_the_budget() {
        let max = max_values(Format::Rust);
        let n = max + 10;
        let text = format!("const X: [u8; {n}] = [{}];", "1, ".repeat(n));
        let e = check(&text, Format::Rust).unwrap_err();
        assert!(e.message.contains("holds more values"), "{}", e.message);
        assert!(e.span.start < text.len() - 20);
        let fits = format!("x = [{}]", "1, ".repeat(max_values(Format::Python) - 10));
        assert!(check(&fits, Format::Python).is_ok());
    }

    #[test]
    fn long_text_in_few_values_is_read() {
        let text = format!("a: \"{}\"\n", "x".repeat(64 << 20));
        assert!(check(&text, Format::Yaml).is_ok());
    }
}
