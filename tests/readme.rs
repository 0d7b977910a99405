//! The README's rule and target tables are generated from the registry and the catalog; this
//! test fails when they are stale. `UPDATE_README=1 cargo test --test readme` rewrites them.

use hwlint::rules::{FixAvailability, RULES};

fn rule_table() -> String {
    let mut s =
        String::from("| code | name | severity | fix | what it checks |\n|---|---|---|---|---|\n");
    for r in RULES {
        let fix = match r.fix {
            FixAvailability::Always => "yes",
            FixAvailability::Sometimes => "sometimes",
            FixAvailability::None => "",
        };
        s.push_str(&format!(
            "| {} | {} | {} | {fix} | {} |\n",
            r.code,
            r.name,
            r.severity.as_str(),
            r.summary().replace('|', "\\|")
        ));
    }
    s
}

fn replace_between(text: &str, start: &str, end: &str, body: &str) -> String {
    let (Some(a), Some(b)) = (text.find(start), text.find(end)) else {
        panic!("README lacks the markers {start} / {end}");
    };
    format!("{}{start}\n{body}{}", &text[..a], &text[b..])
}

#[test]
fn readme_tables_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut want = replace_between(
        &text,
        "<!-- rules:start -->",
        "<!-- rules:end -->",
        &rule_table(),
    );
    let targets = format!("```text\n{}```\n", hwlint::app::targets_table());
    want = replace_between(
        &want,
        "<!-- targets:start -->",
        "<!-- targets:end -->",
        &targets,
    );
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(path, &want).unwrap();
        return;
    }
    assert!(
        text == want,
        "README tables are stale: run `UPDATE_README=1 cargo test --test readme`"
    );
}
