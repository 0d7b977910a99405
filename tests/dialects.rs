//! Every dialect against its fixtures in fixtures/dialects/ and its folders: each `expect.toml` names,
//! for each fixture file, the dialect hwlint must pick, the settings it must read (canonical
//! concept = value, as `--show-settings --output-format json` gives them) and every rule code it
//! must report on the default target. A setting not listed may take any value; a code not
//! listed fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn hwlint(args: &[&str]) -> serde_json::Value {
    let out = Command::new(assert_cmd::cargo::cargo_bin("hwlint"))
        .args(["--no-config", "--output-format", "json"])
        .args(args)
        .output()
        .expect("hwlint runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn expect_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir("fixtures/dialects")
        .unwrap()
        .map(|e| e.unwrap().path().join("expect.toml"))
        .chain([PathBuf::from("fixtures/dialects/expect.toml")])
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// A setting's value as the JSON gives it, compared with the TOML the fixture wrote.
fn same(json: &serde_json::Value, want: &toml::Value) -> bool {
    match want {
        toml::Value::Integer(i) => json.as_i64() == Some(*i) || json.as_f64() == Some(*i as f64),
        toml::Value::Float(f) => json.as_f64().is_some_and(|j| (j - f).abs() < 1e-9),
        toml::Value::Boolean(b) => json.as_bool() == Some(*b),
        toml::Value::String(s) => json.as_str() == Some(s),
        toml::Value::Table(t) => t
            .iter()
            .all(|(k, v)| json.get(k).is_some_and(|j| same(j, v))),
        _ => false,
    }
}

fn check_fixture(dir: &Path, name: &str, want: &toml::Table, failures: &mut Vec<String>) {
    let path = dir.join(name);
    let shown = path.display().to_string();
    let settings = hwlint(&["--show-settings", &shown]);
    let file = &settings["files"][0];
    let dialect = file["dialect"].as_str().unwrap_or("-");
    if let Some(w) = want.get("dialect").and_then(|d| d.as_str()) {
        if dialect != w {
            failures.push(format!("{shown}: dialect {dialect}, expected {w}"));
        }
    }
    let run = &file["runs"][0];
    if let Some(w) = want.get("settings").and_then(|s| s.as_table()) {
        for (concept, value) in w {
            let got = run["settings"]
                .as_array()
                .and_then(|s| s.iter().find(|s| s["concept"] == concept.as_str()));
            match got {
                Some(g) if same(&g["value"], value) => {}
                Some(g) => failures.push(format!(
                    "{shown}: {concept} = {}, expected {value}",
                    g["value"]
                )),
                None => failures.push(format!("{shown}: {concept} not read, expected {value}")),
            }
        }
    }
    if let Some(w) = want.get("codes").and_then(|c| c.as_array()) {
        let want: BTreeSet<&str> = w.iter().filter_map(|c| c.as_str()).collect();
        let found = hwlint(&[&shown]);
        let got: BTreeSet<&str> = found
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["code"].as_str())
            .collect();
        if got != want {
            failures.push(format!("{shown}: codes {got:?}, expected {want:?}"));
        }
    }
}

#[test]
fn every_dialect_reads_its_fixtures_as_its_framework_does() {
    let mut failures = Vec::new();
    let mut fixtures = 0;
    let mut dialects = BTreeSet::new();
    for expect in expect_files() {
        let dir = expect.parent().unwrap();
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&expect).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", expect.display()));
        for (name, want) in &table {
            let want = want.as_table().expect("one table per fixture");
            if let Some(d) = want.get("dialect").and_then(|d| d.as_str()) {
                if d != "-" {
                    dialects.insert(d.to_string());
                }
            }
            check_fixture(dir, name, want, &mut failures);
            fixtures += 1;
        }
        // Every fixture file of the folder is listed: none is left unchecked.
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name != "expect.toml" && p.is_file() && !table.contains_key(&name) {
                failures.push(format!("{}: not listed in expect.toml", p.display()));
            }
        }
    }
    eprintln!("{fixtures} dialect fixtures of {} dialects", dialects.len());
    assert!(fixtures > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
