//! docs/rules/<CODE>.md is generated from each rule's doc comment; this test fails when a page
//! is stale or missing. `UPDATE_DOCS=1 cargo test --test docs` rewrites them.

use std::path::Path;

use hwlint::rules::RULES;

#[test]
fn rule_pages_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut stale = Vec::new();
    for r in RULES {
        let path = dir.join(format!("{}.md", r.code));
        let want = hwlint::app::rule_markdown(r);
        if update {
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(r.code);
        }
    }
    // No page for a rule that no longer exists.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let code = name.trim_end_matches(".md");
        if !RULES.iter().any(|r| r.code == code) {
            stale.push(Box::leak(code.to_string().into_boxed_str()));
        }
    }
    assert!(
        stale.is_empty(),
        "stale rule pages {stale:?}: run `UPDATE_DOCS=1 cargo test --test docs`"
    );
}
