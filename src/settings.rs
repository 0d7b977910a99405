//! hwlint.toml / .hwlint.toml / `[tool.hwlint]` in pyproject.toml: discovery (the closest file
//! to the linted file wins), and the merge with command-line flags (flags win).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::dialect::{self, Dialect};
use crate::estimate::models::Architecture;
use crate::hardware::{catalog, Host, Target, TargetSpec};
use crate::rules::RuleOptions;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub target: Option<TargetField>,
    #[serde(default)]
    pub select: Vec<String>,
    #[serde(default)]
    pub ignore: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub dialects: Vec<PathBuf>,
    pub ram_per_worker_gb: Option<f64>,
    /// Files larger than this many MiB are reported (HW902), not read.
    pub max_file_size_mb: Option<f64>,
    /// Bytes the dataloader reads from storage per sample (for HW206).
    pub bytes_per_sample: Option<f64>,
    /// Measured training throughput per process, samples/s (HW206; else it is estimated).
    pub samples_per_second: Option<f64>,
    #[serde(default, rename = "per-path")]
    pub per_path: Vec<PerPath>,
    #[serde(default, rename = "per-file-ignores")]
    pub per_file_ignores: BTreeMap<String, Vec<String>>,
    /// Model architectures for the memory estimator (read by `hwlint estimate`).
    #[serde(default)]
    pub models: BTreeMap<String, toml::Table>,
}

/// `target = "h100-sxm"` (a name or a file path) or an inline `[target]` table.
#[derive(Debug, Clone)]
pub enum TargetField {
    Name(String),
    Inline(TargetSpec),
}

/// By hand rather than `#[serde(untagged)]`: an untagged enum swallows the table's own error
/// (which key, where) into "did not match any variant".
impl<'de> Deserialize<'de> for TargetField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TargetField, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TargetField;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a target name or file (`target = \"h100-sxm\"`) or a `[target]` table with `gpu`, `gpus`, `cpu_cores`, `ram_gb`, `storage_mb_s`",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TargetField, E> {
                Ok(TargetField::Name(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<TargetField, A::Error> {
                TargetSpec::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(TargetField::Inline)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A TOML error as the user should read it: where, what, and the key that was meant when an
/// unknown one is close to a known one.
fn toml_error_message(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let Some(rest) = e.message().strip_prefix("unknown field `") else {
        return text;
    };
    let Some((field, expected)) = rest.split_once("`, expected ") else {
        return text;
    };
    let meant = expected
        .split(['`', ','])
        .map(str::trim)
        .filter(|k| !k.is_empty() && *k != "one of")
        .map(|k| (crate::rules::edit_distance(field, k), k))
        .filter(|(d, k)| *d <= 2 && *d < k.len())
        .min();
    match meant {
        Some((_, k)) => format!("{}\ndid you mean `{k}`?", text.trim_end()),
        None => text,
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerPath {
    pub paths: Vec<String>,
    pub bytes_per_sample: Option<f64>,
    pub storage_mb_s: Option<f64>,
    pub target: Option<String>,
    pub gpus: Option<u32>,
    pub cpu_cores: Option<u32>,
    pub ram_gb: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
struct Pyproject {
    tool: Option<PyTool>,
}

#[derive(Debug, Clone, Deserialize)]
struct PyTool {
    hwlint: Option<ConfigFile>,
}

/// A configuration error: exit code 2.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ConfigError {
    #[error("cannot read {path}: {message}")]
    #[diagnostic(code(hwlint::config))]
    Read { path: String, message: String },
    #[error("invalid configuration in {path}: {message}")]
    #[diagnostic(code(hwlint::config))]
    Invalid { path: String, message: String },
    #[error("unknown target `{name}`{context}")]
    #[diagnostic(
        code(hwlint::target),
        help("`hwlint targets` lists the built-in GPUs and machines; a path to a TOML file with `gpu`, `gpus`, `cpu_cores`, `ram_gb`, `storage_mb_s` also works")
    )]
    UnknownTarget { name: String, context: String },
    #[error("target `{name}` is ambiguous{context}: it could be {candidates}")]
    #[diagnostic(
        code(hwlint::target),
        help("name one of them (`hwlint targets` lists them all)")
    )]
    AmbiguousTarget {
        name: String,
        context: String,
        candidates: String,
    },
    #[error("{source_of}: {message}")]
    #[diagnostic(
        code(hwlint::rule_code),
        help("`hwlint rules` lists the codes; a prefix such as `HW2` selects a group")
    )]
    UnknownRule { source_of: String, message: String },
    #[error(transparent)]
    #[diagnostic(transparent)]
    Dialect(#[from] dialect::DialectError),
}

/// What the command line says; `None` leaves the config file's value.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub no_config: bool,
    pub target: Option<String>,
    pub gpus: Option<u32>,
    pub cpu_cores: Option<u32>,
    pub ram_gb: Option<f64>,
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    /// Added to the selection (`--extend-select`).
    pub extend_select: Vec<String>,
    /// Replaces hwlint.toml's `exclude` (`--exclude`), globs relative to the working folder.
    pub exclude: Option<Vec<String>>,
    /// Added to `exclude` (`--extend-exclude`).
    pub extend_exclude: Vec<String>,
}

/// Settings that apply to one linted file.
#[derive(Debug, Clone)]
pub struct FileSettings {
    pub target: Target,
    pub select: Vec<String>,
    pub ignore: Vec<String>,
    pub options: RuleOptions,
    pub dialects: Arc<Vec<Dialect>>,
    /// Architectures declared in `[models.NAME]` tables.
    pub models: Arc<Vec<Architecture>>,
    /// The config file these came from, for messages.
    pub source: Option<PathBuf>,
    /// Larger files are reported, not read.
    pub max_file_bytes: u64,
    /// The files this invocation lints, canonical, where the caller says (`hwlint check`): a
    /// finding that a merged file (a `_BASE_`, a launch line's config) gives on its own is
    /// left to that file only when it is one of them, so a child linted alone still says what
    /// its base sets wrong (src/lint.rs `settle`). `None`: every merged file is taken to be
    /// linted too.
    pub linted: Option<Arc<std::collections::BTreeSet<PathBuf>>>,
}

/// A loaded config file with its globs compiled, relative to its folder.
#[derive(Debug)]
pub struct LoadedConfig {
    pub path: Option<PathBuf>,
    pub dir: PathBuf,
    pub file: ConfigFile,
    exclude: GlobSet,
    per_path: Vec<(GlobSet, PerPath)>,
    per_file_ignores: Vec<(GlobSet, Vec<String>)>,
    dialects: Arc<Vec<Dialect>>,
    models: Arc<Vec<Architecture>>,
}

fn globset(patterns: &[String], path: &Path) -> Result<GlobSet, ConfigError> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let g = Glob::new(p).map_err(|e| ConfigError::Invalid {
            path: path.display().to_string(),
            message: format!("bad glob `{p}`: {e}"),
        })?;
        b.add(g);
    }
    b.build().map_err(|e| ConfigError::Invalid {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

impl LoadedConfig {
    fn new(path: Option<PathBuf>, file: ConfigFile) -> Result<LoadedConfig, ConfigError> {
        let dir = path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let shown = path.clone().unwrap_or_default();
        if let Some(mb) = file
            .max_file_size_mb
            .filter(|mb| !(mb.is_finite() && *mb > 0.0))
        {
            return Err(ConfigError::Invalid {
                path: shown.display().to_string(),
                message: format!("`max_file_size_mb` must be a positive number of MiB, not {mb}"),
            });
        }
        let where_ = shown.display().to_string();
        check_rule_codes(&file.select, &format!("{where_}: select"))?;
        check_rule_codes(&file.ignore, &format!("{where_}: ignore"))?;
        for (glob, codes) in &file.per_file_ignores {
            check_rule_codes(codes, &format!("{where_}: per-file-ignores \"{glob}\""))?;
        }
        for p in &file.per_path {
            let bad = [
                ("gpus", p.gpus.map(f64::from)),
                ("cpu_cores", p.cpu_cores.map(f64::from)),
                ("ram_gb", p.ram_gb),
                ("storage_mb_s", p.storage_mb_s),
                ("bytes_per_sample", p.bytes_per_sample),
            ]
            .into_iter()
            .find(|(_, v)| v.is_some_and(|v| !(v.is_finite() && v > 0.0)));
            if let Some((key, _)) = bad {
                return Err(ConfigError::Invalid {
                    path: shown.display().to_string(),
                    message: format!("[[per-path]] for {:?}: `{key}` must be positive", p.paths),
                });
            }
        }
        let exclude = globset(&file.exclude, &shown)?;
        let per_path = file
            .per_path
            .iter()
            .map(|p| Ok((globset(&p.paths, &shown)?, p.clone())))
            .collect::<Result<_, ConfigError>>()?;
        let per_file_ignores = file
            .per_file_ignores
            .iter()
            .map(|(g, codes)| Ok((globset(std::slice::from_ref(g), &shown)?, codes.clone())))
            .collect::<Result<_, ConfigError>>()?;
        let dialect_paths: Vec<PathBuf> = file.dialects.iter().map(|d| dir.join(d)).collect();
        let dialects = Arc::new(dialect::with_user_dialects(&dialect_paths)?);
        let models = file
            .models
            .iter()
            .map(|(name, table)| {
                let mut a: Architecture = toml::Value::Table(table.clone()).try_into().map_err(
                    |e: toml::de::Error| ConfigError::Invalid {
                        path: shown.display().to_string(),
                        message: format!("[models.{name}]: {e}"),
                    },
                )?;
                a.name = name.clone();
                if let Some((field, n)) = a.implausible() {
                    return Err(ConfigError::Invalid {
                        path: shown.display().to_string(),
                        message: format!(
                            "[models.{name}]: `{field}` is {n}, past any model hwlint can size"
                        ),
                    });
                }
                Ok(a)
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        Ok(LoadedConfig {
            path,
            dir,
            file,
            exclude,
            per_path,
            per_file_ignores,
            dialects,
            models: Arc::new(models),
        })
    }

    /// Reads hwlint.toml, .hwlint.toml or pyproject.toml (`None` when a pyproject has no
    /// `[tool.hwlint]`).
    pub fn read(path: &Path) -> Result<Option<LoadedConfig>, ConfigError> {
        let text =
            crate::source::read_text(path, crate::source::MAX_FILE_BYTES).map_err(|message| {
                ConfigError::Read {
                    path: path.display().to_string(),
                    message,
                }
            })?;
        let invalid = |e: toml::de::Error| ConfigError::Invalid {
            path: path.display().to_string(),
            message: toml_error_message(&e),
        };
        let file = if path.file_name().and_then(|n| n.to_str()) == Some("pyproject.toml") {
            let py: Pyproject = toml::from_str(&text).map_err(invalid)?;
            match py.tool.and_then(|t| t.hwlint) {
                Some(f) => f,
                None => return Ok(None),
            }
        } else {
            toml::from_str(&text).map_err(invalid)?
        };
        LoadedConfig::new(Some(path.to_path_buf()), file).map(Some)
    }

    pub fn empty() -> Result<LoadedConfig, ConfigError> {
        LoadedConfig::new(None, ConfigFile::default())
    }

    fn relative<'p>(&self, file: &'p Path) -> std::borrow::Cow<'p, Path> {
        let abs = absolute(file);
        match abs.strip_prefix(absolute(&self.dir)) {
            Ok(rel) => std::borrow::Cow::Owned(rel.to_path_buf()),
            Err(_) => std::borrow::Cow::Borrowed(file),
        }
    }

    /// Whether `exclude` covers the file (or any folder above it, up to the config's folder).
    pub fn is_excluded(&self, file: &Path) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        let rel = self.relative(file);
        rel.ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| self.exclude.is_match(a))
    }

    /// The settings for one file, with the command line on top.
    pub fn for_file(&self, file: &Path, o: &Overrides) -> Result<FileSettings, ConfigError> {
        let rel = self.relative(file);
        let per_path = self
            .per_path
            .iter()
            .find(|(g, _)| g.is_match(rel.as_ref()))
            .map(|(_, p)| p);
        let mut target = match (
            &o.target,
            per_path.and_then(|p| p.target.as_ref()),
            &self.file.target,
        ) {
            (Some(name), _, _) => resolve_target(name, Path::new("."), "--target")?,
            (None, Some(name), _) => resolve_target(name, &self.dir, "per-path target")?,
            (None, None, Some(TargetField::Name(name))) => {
                resolve_target(name, &self.dir, "hwlint.toml `target`")?
            }
            (None, None, Some(TargetField::Inline(spec))) => {
                let file = self.path.as_deref().unwrap_or(Path::new("hwlint.toml"));
                target_from_spec("[target]", spec, &format!("{} [target]", file.display()))?
            }
            (None, None, None) => default_target(),
        };
        if let Some(p) = per_path {
            target.gpus = p.gpus.or(target.gpus);
            target.host.cpu_cores = p.cpu_cores.or(target.host.cpu_cores);
            target.host.ram_gb = p.ram_gb.or(target.host.ram_gb);
            target.host.storage_mb_s = p.storage_mb_s.or(target.host.storage_mb_s);
        }
        if o.gpus.is_some() {
            target.gpus = o.gpus;
        }
        target.host.cpu_cores = o.cpu_cores.or(target.host.cpu_cores);
        target.host.ram_gb = o.ram_gb.or(target.host.ram_gb);
        if o.gpus.is_some() || o.cpu_cores.is_some() || o.ram_gb.is_some() || per_path.is_some() {
            target.is_default = false;
        }
        let mut ignore = o.ignore.clone().unwrap_or_else(|| self.file.ignore.clone());
        for (g, codes) in &self.per_file_ignores {
            if g.is_match(rel.as_ref()) || rel.file_name().is_some_and(|n| g.is_match(n)) {
                ignore.extend(codes.iter().cloned());
            }
        }
        let mut select = o.select.clone().unwrap_or_else(|| self.file.select.clone());
        // An empty selection is every rule already.
        if !select.is_empty() {
            select.extend(o.extend_select.iter().cloned());
        }
        Ok(FileSettings {
            target,
            select,
            ignore,
            options: RuleOptions {
                ram_per_worker_gb: self.file.ram_per_worker_gb.unwrap_or(2.5),
                bytes_per_sample: per_path
                    .and_then(|p| p.bytes_per_sample)
                    .or(self.file.bytes_per_sample),
                samples_per_second: self.file.samples_per_second,
            },
            dialects: self.dialects.clone(),
            models: self.models.clone(),
            source: self.path.clone(),
            linted: None,
            max_file_bytes: self
                .file
                .max_file_size_mb
                .map_or(crate::source::MAX_FILE_BYTES, |mb| {
                    (mb * (1u64 << 20) as f64) as u64
                }),
        })
    }
}

fn absolute(p: &Path) -> PathBuf {
    // The working folder, asked once: `std::path::absolute` asks the OS on every call, and a
    // run looks up every file's config and exclusions.
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let cwd = CWD.get_or_init(|| std::env::current_dir().ok());
    match cwd {
        Some(cwd) if p.is_relative() => std::path::absolute(cwd.join(p)),
        _ => std::path::absolute(p),
    }
    .unwrap_or_else(|_| p.to_path_buf())
}

/// The built-in `workstation` target: world size unknown (DESIGN.md "World size").
pub fn default_target() -> Target {
    let spec = catalog()
        .targets
        .get("workstation")
        .cloned()
        .unwrap_or_default();
    // The catalog's own entries are unit-tested, so this cannot fail in a built binary.
    let mut t =
        target_from_spec("workstation", &spec, "built-in").expect("workstation target is valid");
    t.gpus = None;
    t.is_default = true;
    t
}

/// A target from a catalog GPU name, a catalog machine name, or a TOML file.
pub fn resolve_target(name: &str, base: &Path, context: &str) -> Result<Target, ConfigError> {
    let c = catalog();
    if let Some(gpu) = c.gpu(name) {
        // A bare GPU name says which GPU, not how many (DESIGN.md "World size").
        return Ok(Target {
            name: gpu.key.clone(),
            gpu: gpu.clone(),
            gpus: None,
            host: Host::default(),
            is_default: false,
        });
    }
    if let Some(spec) = c.targets.get(name) {
        return target_from_spec(name, spec, context);
    }
    let path = base.join(name);
    if path.is_file() {
        let text =
            crate::source::read_text(&path, crate::source::MAX_FILE_BYTES).map_err(|message| {
                ConfigError::Read {
                    path: path.display().to_string(),
                    message,
                }
            })?;
        #[derive(Deserialize)]
        struct Wrapped {
            target: TargetSpec,
        }
        let spec = toml::from_str::<Wrapped>(&text)
            .map(|w| w.target)
            .or_else(|_| toml::from_str::<TargetSpec>(&text))
            .map_err(|e| ConfigError::Invalid {
                path: path.display().to_string(),
                message: toml_error_message(&e),
            })?;
        return target_from_spec(name, &spec, &path.display().to_string());
    }
    let candidates = c.gpus_starting(name);
    if candidates.len() > 1 {
        return Err(ConfigError::AmbiguousTarget {
            name: name.to_string(),
            context: format!(" (from {context})"),
            candidates: candidates
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    if let [one] = candidates.as_slice() {
        return resolve_target(one, base, context);
    }
    Err(ConfigError::UnknownTarget {
        name: name.to_string(),
        context: format!(" (from {context})"),
    })
}

/// Checks rule codes and prefixes (`--select`, `ignore = [...]`): an unknown one would turn
/// rules off without a word, so it is a usage error saying what was meant.
pub fn check_rule_codes(codes: &[String], source_of: &str) -> Result<(), ConfigError> {
    for c in codes {
        if let Err(message) = crate::rules::check_selector(c) {
            return Err(ConfigError::UnknownRule {
                source_of: source_of.to_string(),
                message,
            });
        }
    }
    Ok(())
}

fn target_from_spec(name: &str, spec: &TargetSpec, context: &str) -> Result<Target, ConfigError> {
    let zero = |key: &str| ConfigError::Invalid {
        path: context.to_string(),
        message: format!("`{key}` must be positive"),
    };
    if spec.gpus == Some(0) {
        return Err(zero("gpus"));
    }
    if spec.cpu_cores == Some(0) {
        return Err(zero("cpu_cores"));
    }
    for (key, v) in [("ram_gb", spec.ram_gb), ("storage_mb_s", spec.storage_mb_s)] {
        if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(zero(key));
        }
    }
    let gpu_name = spec.gpu.as_deref().unwrap_or("rtx-4090");
    let gpu = catalog()
        .gpu(gpu_name)
        .ok_or_else(|| ConfigError::UnknownTarget {
            name: gpu_name.to_string(),
            context: format!(" (GPU of {context})"),
        })?;
    Ok(Target {
        name: name.to_string(),
        gpu: gpu.clone(),
        gpus: Some(spec.gpus.unwrap_or(1)),
        host: Host {
            cpu_cores: spec.cpu_cores,
            ram_gb: spec.ram_gb,
            storage_mb_s: spec.storage_mb_s,
        },
        is_default: false,
    })
}

/// Finds and caches the closest config for each folder.
pub struct ConfigResolver {
    overrides: Overrides,
    /// `--exclude` and `--extend-exclude`, relative to the working folder.
    exclude: Option<GlobSet>,
    extend_exclude: GlobSet,
    fixed: Option<Arc<LoadedConfig>>,
    cache: Mutex<HashMap<PathBuf, Arc<LoadedConfig>>>,
    empty: Arc<LoadedConfig>,
}

const CONFIG_NAMES: [&str; 3] = ["hwlint.toml", ".hwlint.toml", "pyproject.toml"];

impl ConfigResolver {
    pub fn new(overrides: Overrides) -> Result<ConfigResolver, ConfigError> {
        check_rule_codes(overrides.select.as_deref().unwrap_or(&[]), "--select")?;
        check_rule_codes(overrides.ignore.as_deref().unwrap_or(&[]), "--ignore")?;
        check_rule_codes(&overrides.extend_select, "--extend-select")?;
        let exclude = overrides
            .exclude
            .as_deref()
            .map(|g| globset(g, Path::new("--exclude")))
            .transpose()?;
        let extend_exclude = globset(&overrides.extend_exclude, Path::new("--extend-exclude"))?;
        let fixed = match (&overrides.config, overrides.no_config) {
            (_, true) => Some(Arc::new(LoadedConfig::empty()?)),
            (Some(p), false) => Some(Arc::new(LoadedConfig::read(p)?.ok_or_else(|| {
                ConfigError::Invalid {
                    path: p.display().to_string(),
                    message: "no [tool.hwlint] table".into(),
                }
            })?)),
            (None, false) => None,
        };
        Ok(ConfigResolver {
            overrides,
            exclude,
            extend_exclude,
            fixed,
            cache: Mutex::new(HashMap::new()),
            empty: Arc::new(LoadedConfig::empty()?),
        })
    }

    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// Whether a file (or a folder above it) is excluded: by `--exclude` when given, else by
    /// the governing hwlint.toml's `exclude`; and by `--extend-exclude` either way.
    pub fn is_excluded(&self, file: &Path) -> Result<bool, ConfigError> {
        let on_command_line = |set: &GlobSet| {
            // Most runs pass no --exclude: no working-folder lookup per file then.
            if set.is_empty() {
                return false;
            }
            let rel = file.strip_prefix("./").unwrap_or(file);
            let rel = std::env::current_dir()
                .ok()
                .and_then(|cwd| absolute(rel).strip_prefix(cwd).ok().map(Path::to_path_buf))
                .unwrap_or_else(|| rel.to_path_buf());
            rel.ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .any(|a| set.is_match(a))
        };
        let excluded = match &self.exclude {
            Some(set) => on_command_line(set),
            None => self.config_for(file)?.is_excluded(file),
        };
        Ok(excluded || on_command_line(&self.extend_exclude))
    }

    /// The config that governs `file`: the closest one in its folder or above.
    pub fn config_for(&self, file: &Path) -> Result<Arc<LoadedConfig>, ConfigError> {
        if let Some(f) = &self.fixed {
            return Ok(f.clone());
        }
        let abs = absolute(file);
        let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
        self.config_in(&dir)
    }

    fn config_in(&self, dir: &Path) -> Result<Arc<LoadedConfig>, ConfigError> {
        if let Some(c) = self.cache.lock().ok().and_then(|c| c.get(dir).cloned()) {
            return Ok(c);
        }
        let mut found = None;
        for name in CONFIG_NAMES {
            let p = dir.join(name);
            if p.is_file() {
                if let Some(c) = LoadedConfig::read(&p)? {
                    found = Some(Arc::new(c));
                    break;
                }
            }
        }
        let config = match found {
            Some(c) => c,
            None => match dir.parent() {
                Some(parent) => self.config_in(parent)?,
                None => self.empty.clone(),
            },
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(dir.to_path_buf(), config.clone());
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_target_has_unknown_world_size_and_a_host() {
        let t = default_target();
        assert!(t.is_default);
        assert_eq!(t.gpus, None);
        assert_eq!(t.gpu.key, "rtx-4090");
        assert_eq!(t.host.cpu_cores, Some(16));
    }

    #[test]
    fn a_bare_gpu_name_sets_the_gpu_not_the_count_and_no_host() {
        let t = resolve_target("H100-SXM", Path::new("."), "test").unwrap();
        assert_eq!(t.gpu.key, "h100-sxm");
        assert_eq!(t.gpus, None);
        assert_eq!(t.host.cpu_cores, None);
        assert!(resolve_target("no-such-gpu", Path::new("."), "test").is_err());
        // A family name that fits several GPUs picks none of them.
        let e = resolve_target("H100", Path::new("."), "test").unwrap_err();
        assert!(e.to_string().contains("`h100-pcie`, `h100-sxm`"), "{e}");
    }

    #[test]
    fn inline_target_and_per_path() {
        let file: ConfigFile = toml::from_str(
            "[target]\ngpu = 'h100-pcie'\ngpus = 2\ncpu_cores = 18\nram_gb = 136.0\n\n[[per-path]]\npaths = ['cluster/**']\ntarget = 'h100-sxm'\ngpus = 8\n\n[per-file-ignores]\n'legacy/*.yaml' = ['HW202']\n",
        )
        .unwrap();
        let c = LoadedConfig::new(Some(PathBuf::from("/p/hwlint.toml")), file).unwrap();
        let o = Overrides::default();
        let s = c.for_file(Path::new("/p/a.yaml"), &o).unwrap();
        assert_eq!(
            (s.target.gpu.key.as_str(), s.target.gpus),
            ("h100-pcie", Some(2))
        );
        assert_eq!(s.target.host.cpu_cores, Some(18));
        let s = c.for_file(Path::new("/p/cluster/x/a.yaml"), &o).unwrap();
        assert_eq!(
            (s.target.gpu.key.as_str(), s.target.gpus),
            ("h100-sxm", Some(8))
        );
        let s = c.for_file(Path::new("/p/legacy/a.yaml"), &o).unwrap();
        assert_eq!(s.ignore, vec!["HW202".to_string()]);
    }
}
