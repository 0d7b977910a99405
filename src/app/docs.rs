//! `hwlint rule` and `hwlint rules`: the rules' documentation, from their doc comments.

use miette::Report;

use super::emit;
use crate::cli::{DocFormat, RuleArgs, RulesArgs};
use crate::rules::{by_code, FixAvailability, Rule, RULES};

fn fix_text(r: &Rule) -> &'static str {
    match r.fix {
        FixAvailability::Always => "always",
        FixAvailability::Sometimes => "sometimes",
        FixAvailability::None => "none",
    }
}

/// A rule's page as markdown: title, metadata, then its documentation.
pub fn rule_markdown(r: &Rule) -> String {
    format!(
        "# {} {}\n\nSeverity: {} · Fix: {}\n\n{}\n",
        r.code,
        r.name,
        r.severity.as_str(),
        fix_text(r),
        r.doc().trim_end()
    )
}

/// The markdown for a terminal: headings without `#`, code fences dropped.
fn rule_text(r: &Rule) -> String {
    let mut out = format!(
        "{} {} ({}, fix: {})\n",
        r.code,
        r.name,
        r.severity.as_str(),
        fix_text(r)
    );
    for line in r.doc().lines() {
        if line.starts_with("```") {
            continue;
        }
        match line.strip_prefix("## ") {
            Some(h) => out.push_str(&format!("{h}\n")),
            None if line.is_empty() => out.push('\n'),
            None => out.push_str(&format!("  {line}\n")),
        }
    }
    out
}

fn rule_json(r: &Rule) -> serde_json::Value {
    serde_json::json!({
        "code": r.code,
        "name": r.name,
        "severity": r.severity.as_str(),
        "fix": fix_text(r),
        "summary": r.summary(),
        "documentation": r.doc(),
    })
}

pub(super) fn rule(args: RuleArgs) -> Result<u8, Report> {
    let Some(r) = by_code(&args.code) else {
        return Err(miette::miette!(
            help = "`hwlint rules` lists them",
            "no rule `{}`",
            args.code
        ));
    };
    emit(&match args.output_format {
        DocFormat::Text => rule_text(r),
        DocFormat::Markdown => rule_markdown(r),
        DocFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&rule_json(r)).unwrap_or_default()
        ),
    })?;
    Ok(0)
}

pub(super) fn rules(args: RulesArgs) -> Result<u8, Report> {
    let out = match args.output_format {
        DocFormat::Json => {
            let all: Vec<_> = RULES.iter().map(rule_json).collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(&all).unwrap_or_default()
            )
        }
        DocFormat::Markdown => {
            let mut s =
                String::from("| code | name | severity | fix | summary |\n|---|---|---|---|---|\n");
            for r in RULES {
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    r.code,
                    r.name,
                    r.severity.as_str(),
                    fix_text(r),
                    r.summary().replace('|', "\\|")
                ));
            }
            s
        }
        DocFormat::Text => RULES
            .iter()
            .map(|r| {
                format!(
                    "{}  {:<30} {:<8} fix: {}\n",
                    r.code,
                    r.name,
                    r.severity.as_str(),
                    fix_text(r)
                )
            })
            .collect(),
    };
    emit(&out)?;
    Ok(0)
}
