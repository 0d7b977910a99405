//! The program a config is made for (a dialect's `[[recipe]]`), when the file names it: by its
//! own name (`7B_lora_single_device.yaml`) or by the command its header comment runs
//! (`# tune run lora_finetune_single_device --config ...`). What that program fixes, no key
//! holds: torchtune's single-device recipes run one process whatever the machine has.

use std::path::Path;

use super::resolve::{condition_holds, condition_text, from_toml};
use super::setup::{Origin, Setting, TrainingSetup};
use super::spec::{Dialect, Recipe};
use crate::syntax::Node;

/// Lays the settings of the one recipe the file names over `setup`; keys the file sets win.
/// Two recipes named at once (a header that runs one, a name that says the other) name none.
pub fn overlay(setup: &mut TrainingSetup, dialect: &Dialect, root: &Node, path: &Path, text: &str) {
    if dialect.recipe.is_empty() {
        return;
    }
    let header = header_commands(text);
    let named: Vec<(&Recipe, String)> = dialect
        .recipe
        .iter()
        .filter_map(|r| named_by(r, path, &header).map(|how| (r, how)))
        .collect();
    let [(recipe, how)] = named.as_slice() else {
        return;
    };
    if let Some(cond) = &recipe.unless {
        // An unreadable condition may hold: the recipe's settings are not sure either.
        if condition_holds(dialect.loader, root, cond) != Some(false) {
            for concept in recipe.settings.keys() {
                setup.unread.insert(
                    *concept,
                    format!(
                        "hwlint does not read what {} ({how}) fixes, as {}",
                        recipe.title,
                        condition_text(cond)
                    ),
                );
            }
            return;
        }
    }
    let by = format!("{} ({how})", recipe.title);
    for (concept, value) in &recipe.settings {
        if setup.get(*concept).is_some_and(|s| s.origin.is_explicit()) {
            continue;
        }
        setup.settings.insert(
            *concept,
            Setting {
                value: from_toml(*concept, value),
                origin: Origin::Implied { by: by.clone() },
            },
        );
    }
    setup.recipe = Some(format!("{by}: {}", recipe.why));
}

/// What in the file names `recipe`: its name, or a command in its header.
fn named_by(recipe: &Recipe, path: &Path, header: &[(usize, String)]) -> Option<String> {
    if let Some(command) = &recipe.command {
        for (line, text) in header {
            let Some(rest) = text.split_once(command.as_str()).map(|(_, r)| r) else {
                continue;
            };
            // The words before the config flag: launcher flags and the program.
            let program = rest
                .split_whitespace()
                .take_while(|w| !w.starts_with("--config"))
                .find(|w| recipe.programs.iter().any(|p| w == p));
            if let Some(program) = program {
                return Some(format!(
                    "the header runs `{command} {program}`, line {line}"
                ));
            }
        }
    }
    let stem = path.file_stem()?.to_str()?;
    let words: Vec<&str> = stem.split(['-', '_', '.']).collect();
    let by_word = recipe
        .file_stem_words
        .iter()
        .any(|w| words.contains(&w.as_str()));
    (by_word
        || recipe
            .file_stem_ends
            .iter()
            .any(|end| stem.ends_with(end.as_str())))
    .then(|| {
        let name = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        format!("the file name `{name}`")
    })
}

/// The comment lines that open the file, with their 1-based line numbers; a line ending in
/// `\` continues on the next comment line.
fn header_commands(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut continues = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continues = false;
            continue;
        }
        let Some(comment) = t.strip_prefix('#') else {
            break;
        };
        let comment = comment.trim();
        let (body, more) = match comment.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (comment, false),
        };
        match out.last_mut() {
            Some((_, last)) if continues => {
                last.push(' ');
                last.push_str(body);
            }
            _ => out.push((i + 1, body.to_string())),
        }
        continues = more;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{parse_dialect, resolve, Concept};
    use crate::syntax::{parse, Format};

    const D: &str = r#"
name = "t"
title = "Test"
formats = ["yaml"]
[[detect]]
keys = { a = 1 }
min_score = 1
[settings.processes]
from = [{ key = "procs" }]
[[recipe]]
title = "the one-process recipe"
why = "runs one process"
file_stem_ends = ["_single"]
file_stem_words = ["solo"]
command = "run"
programs = ["single_prog"]
settings = { processes = 1 }
[[recipe]]
title = "the sharded recipe"
why = "shards"
command = "run"
programs = ["dist_prog"]
unless = { key = "replicate", is = ["*"] }
settings = { fsdp = "full_shard" }
"#;

    fn setup_of(name: &str, text: &str) -> TrainingSetup {
        let d = parse_dialect("t", D).unwrap();
        let doc = parse(text, Format::Yaml).unwrap();
        let mut s = resolve(&d, &doc.roots[0]);
        overlay(&mut s, &d, &doc.roots[0], Path::new(name), text);
        s
    }

    #[test]
    fn a_recipe_is_named_by_the_file_or_its_header_and_a_key_the_file_sets_wins() {
        let by_name = setup_of("cfg/x_single.yaml", "a: 1\n");
        assert_eq!(by_name.int(Concept::Processes).map(|(p, _)| p), Some(1));
        assert!(by_name
            .recipe
            .as_deref()
            .is_some_and(|r| r.contains("`x_single.yaml`")));
        let by_word = setup_of("toy-solo-run.yaml", "a: 1\n");
        assert_eq!(by_word.int(Concept::Processes).map(|(p, _)| p), Some(1));
        // `solo` must be a whole word of the name.
        assert!(setup_of("consolidate.yaml", "a: 1\n").recipe.is_none());
        let by_header = setup_of(
            "cfg.yaml",
            "# run --nproc 4 dist_prog --config cfg.yaml\na: 1\n",
        );
        assert_eq!(
            by_header.str(Concept::Fsdp).map(|(f, _)| f.to_string()),
            Some("full_shard".into())
        );
        // The file's own key wins over what the recipe fixes.
        let written = setup_of("x_single.yaml", "a: 1\nprocs: 4\n");
        assert_eq!(written.int(Concept::Processes).map(|(p, _)| p), Some(4));
    }

    #[test]
    fn two_recipes_named_at_once_or_a_changing_key_fix_nothing() {
        let both = setup_of("x_single.yaml", "# run dist_prog --config x\na: 1\n");
        assert!(both.recipe.is_none() && both.get(Concept::Processes).is_none());
        assert!(both.get(Concept::Fsdp).is_none());
        let hsdp = setup_of(
            "cfg.yaml",
            "# run dist_prog --config x\na: 1\nreplicate: 2\n",
        );
        assert!(hsdp.get(Concept::Fsdp).is_none());
        assert!(hsdp
            .unread
            .get(&Concept::Fsdp)
            .is_some_and(|w| w.contains("`replicate` is set")));
    }

    #[test]
    fn a_header_command_continued_over_lines_reads_as_one() {
        let text = "# Config\n#   tune run --nproc_per_node 2 \\\n#     lora_finetune_single_device \\\n#     --config x\n\nkey: 1\n# not header\n";
        let h = header_commands(text);
        assert_eq!(h.len(), 2);
        assert_eq!(h[1].0, 2);
        assert!(h[1]
            .1
            .contains("tune run --nproc_per_node 2 lora_finetune_single_device --config x"));
        assert!(!h.iter().any(|(_, l)| l.contains("not header")));
    }
}
