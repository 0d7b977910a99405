//! `--statistics`: how many times each rule fired, most frequent first.

use std::collections::BTreeMap;

use crate::fix::Applicability;
use crate::lint::FileResult;

pub fn render_statistics(results: &[FileResult]) -> String {
    let mut s = Statistics::default();
    s.add(results);
    s.render()
}

/// The counts behind `--statistics`, taken file by file: rule code -> (findings, rule name,
/// whether any has a safe fix).
#[derive(Debug, Default)]
pub struct Statistics {
    counts: BTreeMap<&'static str, (usize, &'static str, bool)>,
}

impl Statistics {
    pub fn add(&mut self, results: &[FileResult]) {
        for d in results.iter().flat_map(|r| &r.diagnostics) {
            let e = self
                .counts
                .entry(d.rule.code)
                .or_insert((0, d.rule.name, false));
            e.0 += 1;
            e.2 |= d
                .fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Safe);
        }
    }

    pub fn render(self) -> String {
        render_rows(self.counts)
    }

    /// `--statistics --output-format json`: ruff's rows (`code`, `name`, `count`, `fixable`),
    /// most frequent first, under `rules`, and what the memory check concluded over the runs
    /// under `memory`, so a script tells a checked run from one that was not.
    pub fn render_json(self, memory: &super::MemoryCounts) -> String {
        let rules: Vec<serde_json::Value> = sorted(self.counts)
            .into_iter()
            .map(|(code, (count, name, fixable))| {
                serde_json::json!({ "code": code, "name": name, "count": count, "fixable": fixable })
            })
            .collect();
        let doc = serde_json::json!({ "rules": rules, "memory": memory.to_json() });
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }
}

type Row = (&'static str, (usize, &'static str, bool));

/// Most frequent first; ties by code.
fn sorted(counts: BTreeMap<&'static str, (usize, &'static str, bool)>) -> Vec<Row> {
    let mut rows: Vec<Row> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    rows
}

fn render_rows(counts: BTreeMap<&'static str, (usize, &'static str, bool)>) -> String {
    sorted(counts)
        .iter()
        .map(|(code, (n, name, fix))| {
            format!(
                "{n:>5}  {code}  {name}{}\n",
                if *fix { "  [*]" } else { "" }
            )
        })
        .collect()
}
