//! What a launcher's own flags say (`torchrun --nproc_per_node=8`): read from
//! `rules/launchers.toml` like a dialect's settings, and laid over the run's setup.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::dialect::{self, Concept, Dialect, SettingSpec, TrainingSetup};
use crate::syntax::{Format, Loader, Node};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    launcher: Vec<Launcher>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Launcher {
    /// The programs (as the shell front-end tags them: `launch:<program>`).
    program: Vec<String>,
    title: String,
    /// The launcher flag that names a config file of the launcher's own (accelerate's
    /// `--config_file`), read through the dialect `config_dialect`; the flags win over it.
    config_flag: Option<String>,
    config_dialect: Option<String>,
    settings: BTreeMap<Concept, SettingSpec>,
}

/// A launcher as read from `rules/launchers.toml`.
struct Known {
    program: Vec<String>,
    dialect: Dialect,
    config: Option<(String, String)>,
}

/// Each launcher as a dialect over the launch line's tree, so its flags read as any key does.
fn launchers() -> &'static [Known] {
    static ALL: OnceLock<Vec<Known>> = OnceLock::new();
    ALL.get_or_init(|| {
        let file: File = serde_json::from_str(include_str!(concat!(
            env!("OUT_DIR"),
            "/rules/launchers.json"
        )))
        // Compiled in and unit-tested: a failure is a build bug.
        .expect("rules/launchers.toml is valid (unit-tested)");
        file.launcher
            .into_iter()
            .map(|l| {
                let d = Dialect {
                    name: l.title.clone(),
                    title: l.title,
                    loader: Loader::Yaml11,
                    formats: vec![Format::Shell],
                    load: Default::default(),
                    detect: Vec::new(),
                    settings: l.settings.into(),
                    semantics: Default::default(),
                    not_training: Vec::new(),
                    mount: Vec::new(),
                    setup_name: None,
                    inherit: None,
                    architecture: None,
                    version: None,
                    jepa: None,
                    policy: None,
                    detector: None,
                    link: Vec::new(),
                    hydra: false,
                    recipe: Vec::new(),
                };
                Known {
                    program: l.program,
                    dialect: d,
                    config: l.config_flag.zip(l.config_dialect),
                }
            })
            .collect()
    })
}

/// The launcher flag that names the launcher's own config file on this line, and the dialect
/// that reads it (`config_file`, `accelerate`).
pub fn config_of(launch_root: &Node) -> Option<(&'static str, &'static str)> {
    let program = program(launch_root)?;
    let known = launchers()
        .iter()
        .find(|k| k.program.iter().any(|x| x == program))?;
    known
        .config
        .as_ref()
        .map(|(flag, dialect)| (flag.as_str(), dialect.as_str()))
}

/// The program a launch root starts (`torchrun`), from the front-end's tag.
pub fn program(root: &Node) -> Option<&str> {
    root.tag.as_deref()?.strip_prefix("launch:")
}

/// Lays what the launcher's flags say over `setup`: a flag written on the line wins over
/// everything; the launcher's own default wins over what is not written anywhere.
pub fn overlay(setup: &mut TrainingSetup, launch_root: &Node) {
    let Some(program) = program(launch_root) else {
        return;
    };
    let Some(known) = launchers()
        .iter()
        .find(|k| k.program.iter().any(|x| x == program))
    else {
        return;
    };
    let d = &known.dialect;
    let said = dialect::resolve(d, launch_root);
    // A per-node count the line fixes makes any other total process count moot.
    let fixes_devices = said
        .get(Concept::DevicesPerNode)
        .is_some_and(|s| s.origin.is_explicit())
        && said.get(Concept::Processes).is_none();
    if fixes_devices {
        setup.settings.remove(&Concept::Processes);
    }
    for (concept, setting) in said.settings {
        let written = setting.origin.is_explicit();
        let keep_file = setup.get(concept).is_some_and(|s| s.origin.is_explicit());
        if written || !keep_file {
            setup.settings.insert(concept, setting);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_file_is_valid() {
        assert!(launchers().len() >= 3);
    }
}
