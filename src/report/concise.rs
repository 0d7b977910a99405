//! `path:row:col: HW202 message [*]`, one line per diagnostic.

use super::location;
use crate::fix::Applicability;
use crate::lint::FileResult;

pub fn render_concise(results: &[FileResult], unsafe_enabled: bool) -> String {
    let mut out = String::new();
    for r in results {
        for d in &r.diagnostics {
            let ((row, col), _) = location(r, &d.span);
            let fixable = d.fix.as_ref().is_some_and(|f| {
                f.applicability == Applicability::Safe
                    || (unsafe_enabled && f.applicability == Applicability::Unsafe)
            });
            out.push_str(&format!(
                "{}:{row}:{col}: {} {}{}\n",
                r.path.display(),
                d.rule.code,
                d.message,
                if fixable { " [*]" } else { "" }
            ));
        }
    }
    out
}
