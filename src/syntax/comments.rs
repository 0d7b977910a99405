//! Suppression comments: `# hwlint: ignore[HW202]` (YAML, TOML, and later Python and shell),
//! `// hwlint: ignore[...]` (JSONC, later Rust), on the offending line or the line above, and
//! `hwlint: ignore-file[...]` anywhere for the whole file. A front-end takes part by saying how
//! its line comments start.

use super::{Format, LineIndex, Span};

/// How a format writes line comments (what suppressions need to know about a syntax).
pub trait LineComments {
    /// The markers that open a line comment (`#`, `//`); empty when the format has none.
    fn comment_markers(&self) -> &'static [&'static str];
}

impl LineComments for Format {
    fn comment_markers(&self) -> &'static [&'static str] {
        match self {
            Format::Yaml | Format::Toml | Format::Python | Format::Shell => &["#"],
            Format::Jsonc | Format::Rust => &["//"],
            // Plain JSON holds no comments: per-file-ignores only.
            Format::Json => &[],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// The comment's own line, and the next line when the comment stands alone on its line.
    /// In a shell script or Python file, a line continued with a trailing `\` is one line with
    /// the lines it continues on: a comment ending it covers them all, and one alone above it
    /// covers them all (a comment cannot sit inside it: it would end the continuation).
    Line {
        line: usize,
        alone: bool,
        /// The lines it covers, 0-based, first and last.
        covers: (usize, usize),
    },
    File,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Suppression {
    pub scope: Scope,
    /// `None` suppresses every rule.
    pub codes: Option<Vec<String>>,
    /// The comment itself (marker to end of line), for reporting and removal.
    pub span: Span,
    /// What to delete to remove it: the whole line when it stands alone, else the comment and
    /// the spaces before it.
    pub removal: Span,
}

impl Suppression {
    /// Whether it covers a diagnostic of `code` starting on 0-based `line`.
    pub fn covers(&self, code: &str, line: usize) -> bool {
        let on_line = match self.scope {
            Scope::File => true,
            Scope::Line {
                covers: (first, last),
                ..
            } => (first..=last).contains(&line),
        };
        on_line
            && self
                .codes
                .as_ref()
                .is_none_or(|c| c.iter().any(|x| x.eq_ignore_ascii_case(code)))
    }
}

/// Finds the suppression comments of a file.
pub fn suppressions(text: &str, format: Format) -> Vec<Suppression> {
    let markers = format.comment_markers();
    // Nearly every file has no suppression: one search instead of a scan of every line.
    if markers.is_empty() || !text.contains("hwlint:") {
        return vec![];
    }
    let mut out = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = super::lines_inclusive(text).collect();
    let continued = |n: usize| {
        matches!(format, Format::Shell | Format::Python)
            && lines.get(n).is_some_and(|l| ends_continued(l, markers))
    };
    for (line_no, line) in lines.iter().enumerate() {
        let start_of_line = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        for marker in markers {
            let Some(pos) = find_comment(content, marker) else {
                continue;
            };
            let body = content[pos + marker.len()..].trim_start();
            let Some(rest) = body.strip_prefix("hwlint:") else {
                continue;
            };
            let rest = rest.trim_start();
            let (file_scope, rest) = match rest.strip_prefix("ignore-file") {
                Some(r) => (true, r),
                None => match rest.strip_prefix("ignore") {
                    Some(r) => (false, r),
                    None => continue,
                },
            };
            let codes = rest.trim_start().strip_prefix('[').and_then(|r| {
                r.split_once(']').map(|(list, _)| {
                    list.split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty())
                        .collect::<Vec<_>>()
                })
            });
            let alone = content[..pos].trim().is_empty();
            let comment = start_of_line + pos..start_of_line + content.len();
            let removal = if alone {
                start_of_line..start_of_line + line.len()
            } else {
                let before = content[..pos].trim_end().len();
                start_of_line + before..start_of_line + content.len()
            };
            let covers = if alone {
                // This line, and the next with the lines it continues on.
                let mut last = line_no + 1;
                while continued(last) {
                    last += 1;
                }
                (line_no, last)
            } else {
                // This line with the lines it ends the continuation of.
                let mut first = line_no;
                while first > 0 && continued(first - 1) {
                    first -= 1;
                }
                (first, line_no)
            };
            out.push(Suppression {
                scope: if file_scope {
                    Scope::File
                } else {
                    Scope::Line {
                        line: line_no,
                        alone,
                        covers,
                    }
                },
                codes,
                span: comment,
                removal,
            });
            break;
        }
    }
    out
}

/// Whether a line goes on onto the next: it ends in an odd number of backslashes and holds no
/// comment (which would hold the backslash).
pub fn ends_continued(line: &str, markers: &[&str]) -> bool {
    let content = line.trim_end_matches(['\n', '\r']);
    let slashes = content.bytes().rev().take_while(|&b| b == b'\\').count();
    slashes % 2 == 1 && markers.iter().all(|m| find_comment(content, m).is_none())
}

/// Where a comment opens on a line: the marker at the start or after whitespace (YAML requires
/// the space; it keeps `#` inside URLs and `key#x` from counting), outside quotes.
fn find_comment(line: &str, marker: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == b'\\' && q == b'"' => i += 1,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            // Compared as bytes: `i` may sit inside a multi-byte character (`./résultats`).
            None if bytes[i..].starts_with(marker.as_bytes())
                && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') =>
            {
                return Some(i)
            }
            None => {}
        }
        i += 1;
    }
    None
}

/// The 0-based line of a byte offset.
pub fn line_of(index: &LineIndex, text: &str, offset: usize) -> usize {
    index.position(text, offset).0 - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_file_and_all_forms() {
        let t = "a: 0  # hwlint: ignore[HW202, hw204]\n# hwlint: ignore\nb: 1\nc: '# hwlint: ignore'\n# hwlint: ignore-file[HW901]\n";
        let s = suppressions(t, Format::Yaml);
        assert_eq!(s.len(), 3);
        assert!(s[0].covers("HW204", 0) && !s[0].covers("HW201", 0) && !s[0].covers("HW202", 1));
        assert!(
            s[1].covers("HW999", 2),
            "a comment alone covers the next line"
        );
        assert!(s[2].covers("HW901", 40));
        assert_eq!(&t[s[0].removal.clone()], "  # hwlint: ignore[HW202, hw204]");
        assert_eq!(&t[s[1].removal.clone()], "# hwlint: ignore\n");
    }

    #[test]
    fn a_continued_line_is_covered_whole() {
        let t = "torchrun train.py \\\n  --num_workers=0 \\\n  --lr=1  # hwlint: ignore[HW202]\n# hwlint: ignore[HW201]\npython a.py \\\n  --b=1\nx\n";
        let s = suppressions(t, Format::Shell);
        assert_eq!(s.len(), 2);
        for line in 0..=2 {
            assert!(s[0].covers("HW202", line), "{line}");
        }
        assert!(!s[0].covers("HW202", 3));
        assert!(s[1].covers("HW201", 4) && s[1].covers("HW201", 5));
        assert!(!s[1].covers("HW201", 6));
        // YAML has no continuation: the same text covers its own line only.
        let y = "a: 1 \\\nb: 2  # hwlint: ignore[HW202]\n";
        let s = suppressions(y, Format::Yaml);
        assert!(!s[0].covers("HW202", 0) && s[0].covers("HW202", 1));
    }

    #[test]
    fn non_ascii_before_a_comment() {
        // Slicing the line at every byte used to panic inside `é`.
        let t = "output_dir: ./résultats  # hwlint: ignore[HW202]\nnom: \"日本\" # c\n";
        let s = suppressions(t, Format::Yaml);
        assert_eq!(s.len(), 1);
        assert_eq!(&t[s[0].span.clone()], "# hwlint: ignore[HW202]");
    }

    #[test]
    fn lone_cr_ends_a_line() {
        let t = "a: 0\r# hwlint: ignore[HW202]\rb: 1\r";
        let s = suppressions(t, Format::Yaml);
        assert_eq!(s.len(), 1);
        assert!(
            s[0].covers("HW202", 2),
            "the comment alone on line 1 covers line 2"
        );
        assert_eq!(&t[s[0].removal.clone()], "# hwlint: ignore[HW202]\r");
    }

    #[test]
    fn jsonc_uses_slashes_and_json_has_none() {
        let t = "{\n  \"a\": 0 // hwlint: ignore[HW202]\n}\n";
        assert_eq!(suppressions(t, Format::Jsonc).len(), 1);
        assert!(suppressions(t, Format::Json).is_empty());
        assert!(suppressions("url: http://x#hwlint: ignore\n", Format::Yaml).is_empty());
    }
}
