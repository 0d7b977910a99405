//! GitHub Actions workflow commands (`::error file=...::message`): each diagnostic becomes an
//! annotation on the pull request.

use super::location;
use crate::lint::FileResult;
use crate::rules::Severity;

/// Escapes the message part as GitHub's toolkit does (`%`, `\r`, `\n`).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: the data escapes plus `:` and `,`, which separate properties.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn render_github(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results {
        let file = escape_property(&r.path.display().to_string().replace('\\', "/"));
        for d in &r.diagnostics {
            let ((line, col), (end_line, end_col)) = location(r, &d.span);
            let level = match d.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            out.push_str(&format!(
                "::{level} file={file},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}\n",
                escape_property(&format!("{} {}", d.rule.code, d.rule.name)),
                escape_data(&d.message),
            ));
        }
    }
    out
}

/// The memory check's outcomes over the whole run as one notice, so a job with no annotation
/// is not read as "everything checked"; nothing when every run was checked.
pub fn github_memory_notice(memory: &super::MemoryCounts) -> String {
    memory.line().map_or_else(String::new, |line| {
        format!(
            "::notice title=hwlint memory check::{}\n",
            escape_data(&line)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_actions_toolkit() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c d"), "a%3Ab%2Cc d");
    }
}
