//! Converts the built-in catalogs (`rules/**/*.toml`) to JSON at build time: the binary parses
//! JSON at start-up, several times faster than TOML, with the same serde types. The TOML stays
//! the source; a unit test checks that both read the same (src/dialect/mod.rs, builtin tests).

use std::path::Path;

#[path = "src/estimate/bases.rs"]
mod bases;

fn main() {
    println!("cargo:rerun-if-changed=rules");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out).join("rules");
    convert_dir(Path::new("rules"), &out);
}

fn convert_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("OUT_DIR is writable");
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .expect("rules/ is readable")
        .map(|e| e.expect("rules/ entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().expect("a file name");
        if path.is_dir() {
            convert_dir(&path, &to.join(name));
            continue;
        }
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("a catalog is UTF-8");
        let mut table: toml::Table = toml::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()));
        if path.ends_with("rules/models.toml") {
            table = bases::with_bases(table);
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name");
        // A dialect's settings apart: start-up reads only what detection needs.
        if path.parent().is_some_and(|p| p.ends_with("dialects")) {
            let settings = table
                .remove("settings")
                .unwrap_or_else(|| toml::Value::Table(Default::default()));
            let json = serde_json::to_string(&settings).expect("TOML values serialize as JSON");
            std::fs::write(to.join(format!("{stem}.settings.json")), json)
                .expect("OUT_DIR is writable");
        }
        let json = serde_json::to_string(&table).expect("TOML values serialize as JSON");
        std::fs::write(to.join(format!("{stem}.json")), json).expect("OUT_DIR is writable");
    }
}
