//! The README's rule and target tables are generated from the registry and the catalog, and
//! its benchmark table is bench/RESULTS.md; this test fails when they are stale. `UPDATE_README=1 cargo test --test readme` rewrites them.

use hwlint::rules::{FixAvailability, RULES};

/// Both tests read the README and, under UPDATE_README, write it back: one at a time, or the
/// second write would put back what the first replaced.
static README: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _only = README.lock().unwrap_or_else(|e| e.into_inner());
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
    // The latest `bench/run.sh` table, as it wrote bench/RESULTS.md.
    let bench =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/RESULTS.md")).unwrap();
    let table = bench
        .split_once('\n')
        .map_or(bench.as_str(), |(_, rest)| rest.trim_start());
    want = replace_between(&want, "<!-- bench:start -->", "<!-- bench:end -->", table);
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(path, &want).unwrap();
        return;
    }
    assert!(
        text == want,
        "README tables are stale: run `UPDATE_README=1 cargo test --test readme`"
    );
}

/// Each `$ hwlint estimate ...` example in the README, with the output it prints now. Written
/// back with UPDATE_README=1.
#[test]
fn readme_estimate_examples_are_current() {
    let _only = README.lock().unwrap_or_else(|e| e.into_inner());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    let mut rest = text.as_str();
    let mut examples = 0;
    while let Some(at) = rest.find("```text\n$ hwlint estimate ") {
        let block = at + "```text\n".len();
        out.push_str(&rest[..block]);
        let cmd_end = block + rest[block..].find('\n').unwrap();
        let command = &rest[block + "$ hwlint ".len()..cmd_end];
        let fence = cmd_end + rest[cmd_end..].find("\n```").unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_hwlint"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("NO_COLOR", "1")
            .args(&args)
            .output()
            .unwrap();
        assert!(run.status.success(), "README example `{command}` failed");
        let printed = String::from_utf8(run.stdout).unwrap();
        out.push_str(&rest[block..=cmd_end]);
        out.push_str(printed.trim_end_matches('\n'));
        rest = &rest[fence..];
        examples += 1;
    }
    out.push_str(rest);
    assert!(
        examples >= 4,
        "only {examples} estimate examples in the README"
    );
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(path, &out).unwrap();
        return;
    }
    assert!(
        text == out,
        "README estimate examples are stale: run `UPDATE_README=1 cargo test --test readme`"
    );
}
