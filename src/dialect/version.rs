//! The framework version a repository pins, and the defaults that follow from it.
//!
//! A dialect names its package and the newest release its readings were checked against
//! (`[version]`); a setting's default that changed between releases lists the older values
//! (`[[settings.X.before]]`). The version is the one the nearest dependency file above the
//! config pins (requirements*.txt, setup.py, pyproject.toml, environment.yml, uv.lock,
//! poetry.lock), else the newest hwlint knows, which is what a fresh `pip install` gets.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::setup::{Origin, TrainingSetup};
use super::spec::{Before, Dialect};

/// Files that pin dependencies, in the order they are read in one folder (lock files first:
/// they hold the version installed, the others a range).
const PIN_FILES: &[&str] = &[
    "uv.lock",
    "poetry.lock",
    "requirements.txt",
    "requirements-dev.txt",
    "setup.py",
    "pyproject.toml",
    "environment.yml",
];

/// Dependency files larger than this are not read (a lock file of a huge workspace).
const MAX_PIN_FILE: u64 = 4 << 20;

/// A version and where it came from, for `--show-settings` and messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// `0.18.0`.
    pub version: String,
    /// `setup.py:72 (`trl[vllm]==0.18.0`)`, or why none was found.
    pub from: String,
    /// Whether a file pinned it (else: the newest hwlint knows).
    pub pinned: bool,
}

/// A version as numbers (`1.9.0` -> [1, 9, 0]); pre-release tails are dropped.
pub fn parse(v: &str) -> Option<Vec<u64>> {
    let core = v.trim().trim_start_matches('v');
    let mut out = Vec::new();
    for part in core.split('.') {
        let digits: String = part.chars().take_while(|c| c.is_ascii_digit()).collect();
        if digits.is_empty() {
            break;
        }
        out.push(digits.parse().ok()?);
        if digits.len() != part.len() {
            break;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `a < b`, missing parts read as 0.
pub fn less(a: &[u64], b: &[u64]) -> bool {
    let n = a.len().max(b.len());
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x < y;
        }
    }
    false
}

/// The version a requirement line pins for `package`, as the newest version it allows: `==X`
/// and `<=X` give X, `~=X.Y` gives X.Y, `<X` the last release below X (read as X with its last
/// part lowered), a lower bound alone the newest hwlint knows.
fn from_spec(spec: &str, newest: &str) -> Option<String> {
    let mut best: Option<String> = None;
    let mut lower_only = false;
    for clause in spec.split(',') {
        let c = clause.trim().trim_matches(|ch| ch == '"' || ch == '\'');
        let (op, v) = if let Some(v) = c.strip_prefix("==") {
            ("==", v)
        } else if let Some(v) = c.strip_prefix("<=") {
            ("<=", v)
        } else if let Some(v) = c.strip_prefix("~=") {
            ("~=", v)
        } else if let Some(v) = c.strip_prefix(">=") {
            (">=", v)
        } else if let Some(v) = c.strip_prefix('<') {
            ("<", v)
        } else if let Some(v) = c.strip_prefix('>') {
            (">", v)
        } else {
            continue;
        };
        let v = v.trim().trim_end_matches(".*");
        let parsed = parse(v)?;
        match op {
            "==" | "<=" | "~=" => best = Some(v.to_string()),
            "<" => {
                // The release just below: lower the last part that is not zero.
                let mut p = parsed;
                if let Some(i) = p.iter().rposition(|x| *x > 0) {
                    p[i] -= 1;
                    for x in p.iter_mut().skip(i + 1) {
                        *x = 999;
                    }
                }
                best = Some(
                    p.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join("."),
                );
            }
            _ => lower_only = true,
        }
    }
    best.or_else(|| lower_only.then(|| newest.to_string()))
}

/// What follows `package`'s name at the start of `text`, names compared as pip does (PEP 503:
/// case and runs of `-`, `_`, `.` do not matter: `pytorch_lightning` is `pytorch-lightning`).
fn after_name<'t>(text: &'t str, package: &str) -> Option<&'t str> {
    let sep = |c: char| matches!(c, '-' | '_' | '.');
    let mut rest = text;
    for want in package.split(sep).filter(|p| !p.is_empty()).enumerate() {
        let (i, part) = want;
        if i > 0 {
            let trimmed = rest.trim_start_matches(sep);
            if trimmed.len() == rest.len() {
                return None;
            }
            rest = trimmed;
        }
        let head = rest.get(..part.len())?;
        if !head.eq_ignore_ascii_case(part) {
            return None;
        }
        rest = &rest[part.len()..];
    }
    Some(rest)
}

/// The requirement of `package` on one line of a dependency file, and the version it pins.
fn pin_in_line(line: &str, package: &str, newest: &str) -> Option<String> {
    let l = line.trim().trim_start_matches(['"', '\'', '-', ' ']);
    let lower = l.to_ascii_lowercase();
    let rest = after_name(&lower, package)?;
    // `trl`, `trl[vllm]`, not `trl-utils` or `trlx`.
    let rest = match rest.chars().next() {
        Some('[') => &rest[rest.find(']')? + 1..],
        Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' => return None,
        _ => rest,
    };
    // A requirement for another platform (`; sys_platform == 'darwin'`) is not what a
    // training machine installs.
    let marker = rest
        .split('#')
        .next()
        .unwrap_or("")
        .split_once(';')
        .map(|(_, m)| m);
    if marker.is_some_and(|m| !holds_on_linux(m)) {
        return None;
    }
    let spec: String = rest
        .trim_start()
        .trim_start_matches(':')
        .trim()
        .split(['#', ';'])
        .next()
        .unwrap_or("")
        .trim_end_matches([',', '"', '\''])
        .to_string();
    // Poetry's `trl = "^0.18.0"` / `trl = { version = "..." }` and conda's `trl=0.18.0`.
    let spec = spec
        .trim_start_matches('=')
        .trim()
        .trim_start_matches("{ version =")
        .trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '}' || c == ' ');
    let spec = if let Some(v) = spec.strip_prefix('^') {
        format!(">={v}")
    } else if parse(spec).is_some() && !spec.starts_with(['<', '>', '=', '~']) {
        format!("=={spec}")
    } else {
        spec.to_string()
    };
    from_spec(&spec, newest)
}

/// Whether a PEP 508 environment marker holds on Linux, the platform GPUs train on: each
/// `sys_platform` test is evaluated, every other test is taken to hold; `or` of `and`s.
fn holds_on_linux(marker: &str) -> bool {
    let marker = marker.trim().trim_end_matches([',', '"', '\'', ' ']);
    marker.split(" or ").any(|all| {
        all.split(" and ").all(|test| {
            let t: String = test
                .chars()
                .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '"' | '\''))
                .collect();
            let Some(rest) = t.strip_prefix("sys_platform") else {
                return true;
            };
            if let Some(v) = rest.strip_prefix("==") {
                v == "linux"
            } else if let Some(v) = rest.strip_prefix("!=") {
                v != "linux"
            } else {
                true
            }
        })
    })
}

/// The version a lock file records for `package` (`name = "trl"` then `version = "..."`).
fn pin_in_lock(text: &str, package: &str) -> Option<(usize, String)> {
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let l = line.trim();
        if l.strip_prefix("name = \"")
            .and_then(|n| n.strip_suffix('"'))
            .is_some_and(|n| after_name(n, package) == Some(""))
        {
            for (n, next) in lines.by_ref() {
                let t = next.trim();
                if let Some(v) = t.strip_prefix("version = ") {
                    return Some((n + 1, v.trim_matches('"').to_string()));
                }
                if t.is_empty() || t.starts_with('[') {
                    break;
                }
            }
        }
    }
    None
}

/// Pins already looked up in this run, by folder and package: a tree of many configs under one
/// repository reads its dependency files once.
type PinCache = HashMap<(PathBuf, String), Option<Resolved>>;

fn cache() -> &'static std::sync::Mutex<PinCache> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<PinCache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The pin of `package` in the nearest dependency file above `config` (stopping at a
/// repository's root, where a `.git` is).
pub fn pinned(config: &Path, package: &str, newest: &str) -> Option<Resolved> {
    // A file named without a folder (`hwlint train.sh`) has the empty path as its parent.
    let start = config
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let start: PathBuf = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let key = (start.clone(), package.to_string());
    if let Some(hit) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let found = search(&start, package, newest);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, found.clone());
    }
    found
}

/// The dependency files of one folder, with their texts, read once per run: a folder's pins
/// are looked up for each package (the framework, torch, bitsandbytes) and each config below.
type FolderPins = std::sync::Arc<Vec<(&'static str, String)>>;

fn pin_files(dir: &Path) -> FolderPins {
    static FOLDERS: std::sync::OnceLock<std::sync::Mutex<HashMap<PathBuf, FolderPins>>> =
        std::sync::OnceLock::new();
    let folders = FOLDERS.get_or_init(Default::default);
    if let Some(hit) = folders.lock().ok().and_then(|f| f.get(dir).cloned()) {
        return hit;
    }
    let read: FolderPins = std::sync::Arc::new(
        PIN_FILES
            .iter()
            .filter_map(|name| {
                let file = dir.join(name);
                let meta = std::fs::metadata(&file).ok()?;
                if !meta.is_file() || meta.len() > MAX_PIN_FILE {
                    return None;
                }
                Some((*name, std::fs::read_to_string(&file).ok()?))
            })
            .collect(),
    );
    if let Ok(mut f) = folders.lock() {
        f.insert(dir.to_path_buf(), read.clone());
    }
    read
}

fn search(start: &Path, package: &str, newest: &str) -> Option<Resolved> {
    for (depth, dir) in start.ancestors().enumerate() {
        for (name, text) in pin_files(dir).iter() {
            // Relative to the config's folder, as a reader finds it from there.
            let shown = format!("{}{name}", "../".repeat(depth));
            if name.ends_with(".lock") {
                if let Some((line, v)) = pin_in_lock(text, package) {
                    return Some(Resolved {
                        from: format!("{shown}:{line}"),
                        version: v,
                        pinned: true,
                    });
                }
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                if let Some(v) = pin_in_line(line, package, newest) {
                    return Some(Resolved {
                        from: format!("{shown}:{} (`{}`)", n + 1, line.trim()),
                        version: v,
                        pinned: true,
                    });
                }
            }
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// The framework version for a config of `dialect` at `path`: pinned, else the newest.
pub fn resolve(dialect: &Dialect, path: &Path) -> Option<Resolved> {
    let spec = dialect.version.as_ref()?;
    // The package, else a name the same releases ship under (`lightning` and
    // `pytorch-lightning`).
    // The nearest pin of any of them (its `from` climbs fewest folders).
    let mut r = std::iter::once(&spec.package)
        .chain(&spec.also)
        .filter_map(|p| pinned(path, p, &spec.newest))
        .min_by_key(|r| r.from.matches("../").count())
        .unwrap_or_else(|| pinned_or_newest(path, &spec.package, &spec.newest));
    if let Some(from) = unchecked(spec, &r) {
        r.from.push_str(&format!(
            "; the defaults below were read at {from}, none checked for older releases"
        ));
    }
    Some(r)
}

/// The release the dialect's defaults were read at, when the pinned one is older than any
/// release they were checked for.
fn unchecked<'a>(spec: &'a super::spec::VersionSpec, r: &Resolved) -> Option<&'a str> {
    let from = spec.checked_from.as_deref()?;
    (r.pinned && less(&parse(&r.version)?, &parse(from)?)).then_some(from)
}

/// The release of `package` pinned above `path`, else `newest`, saying which.
fn pinned_or_newest(path: &Path, package: &str, newest: &str) -> Resolved {
    pinned(path, package, newest).unwrap_or_else(|| Resolved {
        version: newest.to_string(),
        from: format!(
            "no pin of `{package}` found above the config: the newest release hwlint knows"
        ),
        pinned: false,
    })
}

/// Applies the version's defaults to the settings that took the framework's default, and
/// names the release on each of them (`not set: TRL 0.18.0 default`).
pub fn apply(setup: &mut TrainingSetup, dialect: &Dialect, path: &Path) {
    let resolved = resolve(dialect, path);
    let have = resolved.as_ref().and_then(|r| parse(&r.version));
    // Keys a pinned release predates have no effect there: the setting is what it gives
    // without them. A file that pins nothing is read as written (it uses the key, so it runs a
    // release that has it).
    if let (Some(r), Some(h)) = (resolved.as_ref().filter(|r| r.pinned), have.as_ref()) {
        let newer = std::mem::take(&mut setup.newer_keys);
        for (concept, n) in newer {
            let from_it = setup
                .settings
                .get(&concept)
                .is_some_and(|s| matches!(&s.origin, Origin::File { key, .. } if *key == n.key));
            if !from_it || !parse(&n.since).is_some_and(|since| less(h, &since)) {
                continue;
            }
            let why = format!("{} reads it from {} on", dialect.title, n.since);
            match n.older {
                Some(mut s) => {
                    if let Origin::Default { key, ignored, .. } = &mut s.origin {
                        key.clone_from(&n.key);
                        *ignored = Some(why.clone());
                    }
                    setup.settings.insert(concept, s);
                }
                None => {
                    setup.settings.remove(&concept);
                }
            }
            let said = format!(
                "`{}` has no effect in {} {} (pinned at {}): {why}",
                n.key, dialect.title, r.version, r.from
            );
            setup.unread.insert(concept, said.clone());
            setup.ignored.insert(concept, said);
        }
    }
    // Defaults read at one release, for a pin older than any release read: that release's,
    // said to be unchecked for the pinned one.
    let label =
        resolved.as_ref().map(
            |r| match dialect.version.as_ref().and_then(|v| unchecked(v, r)) {
                Some(from) => (
                    format!("{} {from}", dialect.title),
                    Some(format!("not checked for the pinned {}", r.version)),
                ),
                None => (format!("{} {}", dialect.title, r.version), None),
            },
        );
    for (concept, setting) in setup.settings.iter_mut() {
        let Some(spec) = dialect.settings.get(concept) else {
            continue;
        };
        // A default's own history, or that of the source the file's key went through.
        let history = match &mut setting.origin {
            Origin::Default {
                framework, caveat, ..
            } => {
                if let Some((l, c)) = &label {
                    framework.clone_from(l);
                    caveat.clone_from(c);
                }
                // A default that follows another package's release (transformers' optimizer
                // under torch) names the release that decided it.
                if let Some((b, package)) = older_of_package(&spec.before, path) {
                    // `../requirements.txt:4`, without the line's text.
                    let at = package.from.split(" (").next().unwrap_or(&package.from);
                    *framework = format!(
                        "{framework} under {} {} ({at})",
                        b.package.as_deref().unwrap_or_default(),
                        package.version,
                    );
                    setting.value = super::resolve::from_toml(*concept, &b.default);
                    continue;
                }
                &spec.before
            }
            Origin::File { key, .. } => match spec.from.iter().find(|s| &s.key == key) {
                Some(source) => &source.before,
                None => continue,
            },
            _ => continue,
        };
        if let Some(b) = have.as_ref().and_then(|h| older(history, None, h)) {
            setting.value = super::resolve::from_toml(*concept, &b.default);
        }
    }
    setup.version = resolved;
}

/// Of a default's entries that follow another package (`package = "torch"`), the one the
/// release pinned above `path` (else the newest hwlint knows) is below, with that release.
fn older_of_package<'b>(history: &'b [Before], path: &Path) -> Option<(&'b Before, Resolved)> {
    history
        .iter()
        .filter_map(|b| b.package.as_deref())
        .find_map(|package| {
            let release = pinned_or_newest(path, package, newest_of(package)?);
            let hit = older(history, Some(package), &parse(&release.version)?)?;
            Some((hit, release))
        })
}

/// The newest release hwlint knows of a package `rules/libraries.toml` lists.
fn newest_of(package: &str) -> Option<&'static str> {
    let l = libraries();
    [
        (&l.bitsandbytes.package, &l.bitsandbytes.newest),
        (&l.torch.package, &l.torch.newest),
        (&l.transformers.package, &l.transformers.newest),
    ]
    .into_iter()
    .find(|(p, _)| p.as_str() == package)
    .map(|(_, n)| n.as_str())
}

/// The libraries besides the framework whose release changes what a step holds
/// (`rules/libraries.toml`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Libraries {
    pub bitsandbytes: Bitsandbytes,
    /// PyTorch, whose release decides defaults of frameworks on top of it
    /// (`[[settings.X.before]] package = "torch"`).
    pub torch: Package,
    /// transformers, whose TrainingArguments give the Trainer's defaults
    /// (`[[settings.X.before]] package = "transformers"`).
    pub transformers: Package,
}

/// A package whose release a default follows.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    pub package: String,
    pub newest: String,
}

/// bitsandbytes: the 4-bit and 8-bit Linear layers of QLoRA and LLM.int8 training.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bitsandbytes {
    pub package: String,
    pub newest: String,
    /// The first release whose 4-bit matmul no longer keeps its input for backward.
    pub matmul_4bit_keeps_input_before: String,
}

const LIBRARIES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/rules/libraries.json"));

/// The built-in library table.
pub fn libraries() -> &'static Libraries {
    static TABLE: std::sync::OnceLock<Libraries> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        serde_json::from_str(LIBRARIES_JSON).expect("rules/libraries.toml is valid (unit-tested)")
    })
}

/// The bitsandbytes release a run gets: pinned above `path`, else the newest.
pub fn bitsandbytes_at(path: &Path) -> Resolved {
    let b = &libraries().bitsandbytes;
    pinned_or_newest(path, &b.package, &b.newest)
}

/// Whether bitsandbytes' 4-bit matmul at `release` (the newest hwlint knows when `None`)
/// keeps its input for backward.
pub fn matmul_4bit_keeps_input(release: Option<&str>) -> bool {
    let release = release.unwrap_or(&libraries().bitsandbytes.newest);
    let before = &libraries().bitsandbytes.matmul_4bit_keeps_input_before;
    match (parse(release), parse(before)) {
        (Some(have), Some(before)) => less(&have, &before),
        _ => false,
    }
}

/// Of the releases `have` is below, the lowest: what held then.
/// `package` is the entries' package (`None`: the framework's own).
fn older<'b>(history: &'b [Before], package: Option<&str>, have: &[u64]) -> Option<&'b Before> {
    history
        .iter()
        .filter(|b| b.package.as_deref() == package)
        .filter_map(|b| parse(&b.version).map(|v| (v, b)))
        .filter(|(v, _)| less(have, v))
        .min_by(|(x, _), (y, _)| {
            if less(x, y) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        })
        .map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_4bit_matmul_keeps_its_input_before_0_43_2() {
        assert!(parse(&libraries().bitsandbytes.newest).is_some());
        assert!(parse(&libraries().torch.newest).is_some());
        assert!(parse(&libraries().transformers.newest).is_some());
        assert_eq!(
            newest_of("transformers"),
            Some(libraries().transformers.newest.as_str())
        );
        assert_eq!(newest_of("torch"), Some(libraries().torch.newest.as_str()));
        assert_eq!(newest_of("trl"), None);
        for (release, keeps) in [
            ("0.41.0", true),
            ("0.42.0", true),
            ("0.43.1", true),
            ("0.43.2", false),
            ("0.50.1", false),
        ] {
            assert_eq!(matmul_4bit_keeps_input(Some(release)), keeps, "{release}");
        }
        assert!(
            !matmul_4bit_keeps_input(None),
            "the newest release keeps no input"
        );
    }

    /// pip compares names case-blind with `-`, `_` and `.` alike (PEP 503).
    #[test]
    fn package_names_compare_as_pip_normalizes_them() {
        for line in [
            "pytorch-lightning==2.1.3",
            "pytorch_lightning==2.1.3",
            "PyTorch.Lightning == 2.1.3",
        ] {
            assert_eq!(
                pin_in_line(line, "pytorch-lightning", "2.6.6").as_deref(),
                Some("2.1.3"),
                "{line}"
            );
        }
        assert_eq!(
            pin_in_line("lightning==2.1.3", "pytorch-lightning", "2.6.6"),
            None
        );
        assert_eq!(
            pin_in_line("pytorch-lightning==2.1.3", "lightning", "2.6.6"),
            None
        );
        assert_eq!(pin_in_line("trl-utils==1.0", "trl", "1.9.0"), None);
        let lock = "[[package]]\nname = \"pytorch-lightning\"\nversion = \"2.4.0\"\n";
        assert_eq!(
            pin_in_lock(lock, "pytorch_lightning")
                .map(|(_, v)| v)
                .as_deref(),
            Some("2.4.0")
        );
    }

    #[test]
    fn requirement_lines_give_the_newest_version_they_allow() {
        let newest = "1.9.0";
        for (line, want) in [
            ("trl==0.18.0", Some("0.18.0")),
            ("    \"trl[vllm]==0.18.0\",", Some("0.18.0")),
            ("\"trl>=0.18.0,<=0.24.0\",", Some("0.24.0")),
            ("trl>=0.18", Some("1.9.0")),
            ("trl<1.7", Some("1.6")),
            ("trl<1.7.0", Some("1.6.999")),
            ("trl~=0.19.1", Some("0.19.1")),
            ("trl = \"^0.20.0\"", Some("1.9.0")),
            ("trl = \"0.21.0\"", Some("0.21.0")),
            ("trlx==0.7.0", None),
            ("trl-utils==1.0", None),
            // LitGPT's pyproject.toml: a pin per platform; a GPU trains on Linux.
            ("  \"trl>=0.42,<0.43; sys_platform=='darwin'\",", None),
            (
                "  \"trl>=0.45.2,<0.50; sys_platform=='linux' or sys_platform=='win32'\",",
                Some("0.49"),
            ),
            (
                "    \"trl==0.49.1 ; sys_platform != 'darwin'\",",
                Some("0.49.1"),
            ),
            ("trl==0.19.0; python_version >= '3.10'", Some("0.19.0")),
            ("transformers==4.52.3", None),
            ("trl", None),
        ] {
            assert_eq!(pin_in_line(line, "trl", newest).as_deref(), want, "{line}");
        }
    }

    #[test]
    fn lock_files_give_the_installed_version() {
        let lock = "[[package]]\nname = \"torch\"\nversion = \"2.7.0\"\n\n[[package]]\nname = \"trl\"\nversion = \"0.19.1\"\nsource = { registry = \"https://pypi.org/simple\" }\n";
        assert_eq!(pin_in_lock(lock, "trl"), Some((7, "0.19.1".into())));
    }

    #[test]
    fn versions_compare_by_their_parts() {
        let v = |s| parse(s).unwrap();
        assert!(less(&v("0.19.1"), &v("1.7.0")));
        assert!(less(&v("1.6.999"), &v("1.7")));
        assert!(!less(&v("1.7.0"), &v("1.7")));
        assert!(!less(&v("1.10.0"), &v("1.9.0")));
        assert_eq!(parse("1.10.0.dev0"), Some(vec![1, 10, 0]));
    }
}
