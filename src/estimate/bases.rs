//! `base = "other-entry"` in rules/models.toml, resolved at build time (build.rs includes this
//! file) so that start-up reads finished entries; the unit tests use it too.

/// Resolves `base = "other-entry"`: the entry starts as a copy of that entry's fields (its
/// aliases apart, which stay unique to it) and its own fields override them. A pre-quantized
/// checkpoint or a re-upload names its base instead of repeating the dimensions.
pub fn with_bases(mut table: toml::Table) -> toml::Table {
    let names: Vec<String> = table.keys().cloned().collect();
    for name in names {
        let mut fields = table[&name].as_table().cloned().unwrap_or_default();
        let mut seen = vec![name.clone()];
        while let Some(base) = fields.remove("base") {
            let base = base.as_str().unwrap_or_default().to_string();
            // Unit-tested: every base names an entry, and no chain loops.
            assert!(!seen.contains(&base), "models.toml: `base` loops at {base}");
            seen.push(base.clone());
            let Some(mut inherited) = table.get(&base).and_then(|b| b.as_table()).cloned() else {
                panic!("models.toml: {name} has an unknown base {base}");
            };
            inherited.remove("aliases");
            inherited.extend(fields);
            fields = inherited;
        }
        table.insert(name, toml::Value::Table(fields));
    }
    table
}
