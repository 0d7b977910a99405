//! Detection of the machine hwlint runs on, to write a `[target]` table for hwlint.toml.
//!
//! GPUs come from `nvidia-smi` (run as a process, not through NVML, so hwlint needs no driver
//! library at build or run time and still works on machines without a GPU), CPU cores from the
//! standard library, and RAM from `/proc/meminfo`. Everything here degrades to "unknown" instead
//! of failing: a linter must keep working on a laptop with no driver, on macOS, in a container.
//!
//! Parsing is kept in pure functions ([`parse_nvidia_smi`], `parse_meminfo`) so it is unit-tested
//! on recorded output; only [`query_nvidia_smi`] and [`detect_host`] touch the machine.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use toml_edit::{DocumentMut, Item, Table, Value};

use crate::hardware::catalog;

/// One GPU as `nvidia-smi` reports it, matched to the catalog where possible.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectedGpu {
    /// The name exactly as the driver prints it, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Total memory in MiB as the driver reports it; 0 when the driver says `[N/A]`.
    pub memory_mib: u64,
    /// `major.minor`, e.g. `9.0`; `None` on drivers older than 510 (no `compute_cap` field) or
    /// when the driver says `[N/A]`.
    pub compute_capability: Option<String>,
    /// The catalog key (`h100-sxm`), or `None` when the GPU is not in the catalog.
    pub catalog_key: Option<String>,
}

/// Host facts found on this machine; `None` means unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Host {
    pub cpu_cores: Option<u32>,
    /// Total RAM in decimal GB, rounded to one decimal place.
    pub ram_gb: Option<f64>,
}

/// Everything [`detect`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The GPUs, or why none could be listed (no driver, driver error, timeout).
    pub gpus: Result<Vec<DetectedGpu>, String>,
    pub host: Host,
}

/// The columns asked for; `compute_cap` exists since driver 510.
const QUERY: &str = "--query-gpu=name,memory.total,compute_cap";
/// The fallback for older drivers, which reject the whole query when one field is unknown.
const QUERY_WITHOUT_CC: &str = "--query-gpu=name,memory.total";
const FORMAT: &str = "--format=csv,noheader";
/// `nvidia-smi` can hang for a long time on a wedged driver or a GPU fallen off the bus; a
/// linter must not hang with it. Healthy drivers answer in well under a second (a few seconds
/// when persistence mode is off and the driver has to load).
const TIMEOUT: Duration = Duration::from_secs(20);
/// How far the reported memory may be from the catalog's figure for a match by memory alone:
/// catalog figures are what CUDA reports, `nvidia-smi` reports slightly more (for example
/// 81559 MiB against 81079 MiB on an H100 SXM), and some catalog figures are datasheet values.
const MEMORY_TOLERANCE: f64 = 0.03;
const MIB: f64 = 1024.0 * 1024.0;
/// First line of the comment block [`target_toml`] writes. [`write_into_config`] looks for it to
/// replace the previous block instead of stacking a new one on every run.
const HEADER_COMMENT: &str = "# Machine detected by hwlint";

/// Parses `nvidia-smi --query-gpu=name,memory.total,compute_cap --format=csv,noheader`.
///
/// Lines that do not look like a GPU (blank lines, error messages such as `No devices were
/// found`) are skipped; the output of an old driver without the `compute_cap` column is accepted.
pub fn parse_nvidia_smi(csv: &str) -> Vec<DetectedGpu> {
    csv.lines().filter_map(parse_gpu_line).collect()
}

fn parse_gpu_line(line: &str) -> Option<DetectedGpu> {
    // Split from the right: the numeric columns never contain commas, while nothing guarantees
    // that a marketing name never will.
    let mut three = line.rsplitn(3, ',');
    if let (Some(cc), Some(mem), Some(name)) = (three.next(), three.next(), three.next()) {
        if let Some(memory_mib) = parse_memory(mem) {
            return gpu(name, memory_mib, parse_compute_capability(cc));
        }
    }
    // Two columns: an old driver without `compute_cap` (or a name with a comma in it).
    let (name, mem) = line.rsplit_once(',')?;
    gpu(name, parse_memory(mem)?, None)
}

fn gpu(name: &str, memory_mib: u64, compute_capability: Option<String>) -> Option<DetectedGpu> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let catalog_key = match_catalog(name, memory_mib, compute_capability.as_deref());
    Some(DetectedGpu {
        name: name.to_string(),
        memory_mib,
        compute_capability,
        catalog_key,
    })
}

/// `81559 MiB` (or a bare number, as `nounits` prints it); `[N/A]` is 0 so that the GPU still
/// counts. Anything else is not a memory column, and `None` makes the caller try another split.
fn parse_memory(field: &str) -> Option<u64> {
    let field = field.trim();
    if is_not_available(field) {
        return Some(0);
    }
    let number = field
        .strip_suffix("MiB")
        .or_else(|| field.strip_suffix("mib"))
        .unwrap_or(field)
        .trim();
    number.parse().ok()
}

/// `9.0`; anything else (`[N/A]`, a blank, an unexpected token) is unknown, since a GPU whose
/// name and memory parsed should still be counted.
fn parse_compute_capability(field: &str) -> Option<String> {
    let field = field.trim();
    let (major, minor) = field.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && digits(minor)).then(|| field.to_string())
}

/// `[N/A]`, `[Not Supported]`, `[Unknown Error]`, ...: nvidia-smi brackets every non-value.
fn is_not_available(field: &str) -> bool {
    field.eq_ignore_ascii_case("N/A") || (field.starts_with('[') && field.ends_with(']'))
}

/// By name first (the catalog knows the names `nvidia-smi` prints); failing that by memory and
/// compute capability, but only when that leaves no doubt, because a wrong GPU is worse than none:
/// the user is then told to pick one.
fn match_catalog(name: &str, memory_mib: u64, cc: Option<&str>) -> Option<String> {
    let c = catalog();
    if let Some(g) = c.gpu(name) {
        return Some(g.key.clone());
    }
    let cc = cc_pair(cc?)?;
    if memory_mib == 0 {
        return None;
    }
    let bytes = memory_mib as f64 * MIB;
    let mut hits = c.gpus.iter().filter(|g| {
        let vram = g.vram_bytes as f64;
        g.cc() == cc && (bytes - vram).abs() <= MEMORY_TOLERANCE * vram
    });
    match (hits.next(), hits.next()) {
        (Some(g), None) => Some(g.key.clone()),
        _ => None,
    }
}

fn cc_pair(cc: &str) -> Option<(u32, u32)> {
    let (major, minor) = cc.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Runs `nvidia-smi` and parses its answer. `Err` says, in words for the user, why no GPU list
/// could be had: no driver, a failing driver, a timeout, or output with no GPU in it.
pub fn query_nvidia_smi() -> Result<Vec<DetectedGpu>, String> {
    query_with(&["nvidia-smi"], TIMEOUT)
}

/// [`query_nvidia_smi`] with the command line spelled out, so tests can stand in a shell script
/// for the real binary.
fn query_with(command: &[&str], timeout: Duration) -> Result<Vec<DetectedGpu>, String> {
    let stdout = match run_query(command, QUERY, timeout)? {
        Ok(stdout) => stdout,
        // Drivers before 510 reject the query naming `compute_cap` as a whole; ask again without
        // it rather than report no GPU on a machine that has some.
        Err(message) if message.contains("compute_cap") => {
            run_query(command, QUERY_WITHOUT_CC, timeout)??
        }
        Err(message) => return Err(message),
    };
    let gpus = parse_nvidia_smi(&stdout);
    if gpus.is_empty() {
        return Err(match first_line(&stdout) {
            Some(line) => format!("nvidia-smi listed no GPU: {line}"),
            None => "nvidia-smi listed no GPU".to_string(),
        });
    }
    Ok(gpus)
}

/// The outer `Err` means no answer at all (missing binary, timeout); the inner one a non-zero
/// exit, kept apart so that the caller can retry an old driver with fewer columns.
fn run_query(
    command: &[&str],
    query: &str,
    timeout: Duration,
) -> Result<Result<String, String>, String> {
    let (program, prefix) = command
        .split_first()
        .ok_or_else(|| "no command to run".to_string())?;
    let mut cmd = Command::new(program);
    cmd.args(prefix).args([query, FORMAT]);
    let output = match output_with_timeout(cmd, timeout) {
        Ok(Some(output)) => output,
        Ok(None) => {
            return Err(format!(
                "nvidia-smi did not answer within {} s (the driver may be hung)",
                timeout.as_secs_f64()
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("nvidia-smi not found: no NVIDIA driver on this machine".to_string())
        }
        Err(e) => return Err(format!("cannot run nvidia-smi: {e}")),
    };
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        return Ok(Ok(stdout));
    }
    // nvidia-smi prints its errors ("NVIDIA-SMI has failed because it couldn't communicate with
    // the NVIDIA driver...") on stdout, so look at both streams.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let reason = first_line(&stdout)
        .or_else(|| first_line(&stderr))
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    Ok(Err(format!(
        "nvidia-smi failed ({}){reason}",
        output.status
    )))
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

struct Output {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// `Command::output` with a deadline: `Ok(None)` when the child had to be killed.
fn output_with_timeout(mut cmd: Command, timeout: Duration) -> std::io::Result<Option<Output>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Drain both pipes on their own threads, so that a child with more output than a pipe holds
    // cannot block on a full pipe while this thread waits for it to exit.
    fn drain(pipe: Option<impl Read + Send + 'static>) -> Option<JoinHandle<Vec<u8>>> {
        pipe.map(|mut p| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = p.read_to_end(&mut buf);
                buf
            })
        })
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            // Timed out, or cannot even wait on it: do not leave it running. The reader threads
            // end by themselves once the killed child's pipes close.
            other => {
                let _ = child.kill();
                let _ = child.wait();
                return other.map(|_| None);
            }
        }
    };
    let join = |h: Option<JoinHandle<Vec<u8>>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(Some(Output {
        status,
        stdout: join(stdout),
        stderr: join(stderr),
    }))
}

/// CPU cores and RAM of this machine.
pub fn detect_host() -> Host {
    // `available_parallelism` counts the logical CPUs this process may use (affinity masks and,
    // on Linux, cgroup CPU quotas included): what dataloader workers actually get in a container,
    // which the machine's total would overstate.
    let cpu_cores = std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok());
    // /proc/meminfo is Linux only; elsewhere RAM stays unknown, which keeps the RAM rules silent
    // rather than wrong. Inside a container it shows the host's RAM, not a cgroup memory limit.
    let ram_gb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| parse_meminfo(&text));
    Host { cpu_cores, ram_gb }
}

/// `MemTotal:       65762456 kB` as decimal GB with one decimal place (67.3), the unit of
/// `ram_gb` in hwlint.toml.
fn parse_meminfo(text: &str) -> Option<f64> {
    let rest = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("MemTotal:"))?;
    let mut parts = rest.split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    // The kernel writes "kB" but means KiB.
    if !parts.next()?.eq_ignore_ascii_case("kB") || n == 0 {
        return None;
    }
    let gb = n as f64 * 1024.0 / 1e9;
    Some((gb * 10.0).round() / 10.0)
}

/// GPUs and host of this machine. Never fails: what cannot be found is reported as unknown.
pub fn detect() -> Detected {
    Detected {
        gpus: query_nvidia_smi(),
        host: detect_host(),
    }
}

/// A `[target]` table for hwlint.toml describing `d`, preceded by comments saying what was found.
///
/// A target is one GPU model times a count, so on a machine with mixed GPUs it describes the most
/// common model (the first listed on a tie) and says so in a comment.
pub fn target_toml(d: &Detected) -> String {
    target_toml_keeping(d, None)
}

/// The GPU a config file's existing target names, kept when this machine has none to say
/// (`hwlint detect --write` on a laptop must not drop the cluster's GPU).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredGpu {
    pub gpu: String,
    pub gpus: Option<u32>,
}

/// The GPU (and count) the `target` of a hwlint.toml or pyproject.toml's `[tool.hwlint]` names:
/// a GPU or machine name, a target file, or a `[target]` table with `gpu`. `None` when the file
/// is missing, does not parse, or names no GPU.
pub fn configured_gpu(path: &Path) -> Option<ConfiguredGpu> {
    let text = crate::source::read_text(path, crate::source::MAX_FILE_BYTES).ok()?;
    let doc: toml::Table = text.parse().ok()?;
    let target = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        doc.get("tool")?.get("hwlint")?.get("target")?
    } else {
        doc.get("target")?
    };
    match target {
        toml::Value::String(name) => {
            let base = path.parent().unwrap_or(Path::new("."));
            let t = crate::settings::resolve_target(name, base, "hwlint.toml `target`").ok()?;
            Some(ConfiguredGpu {
                gpu: t.gpu.key,
                gpus: t.gpus,
            })
        }
        toml::Value::Table(t) => Some(ConfiguredGpu {
            gpu: t.get("gpu")?.as_str()?.to_string(),
            gpus: t
                .get("gpus")
                .and_then(toml::Value::as_integer)
                .and_then(|n| u32::try_from(n).ok()),
        }),
        _ => None,
    }
}

/// [`target_toml`], with `kept` written as the GPU when this machine has none.
pub fn target_toml_keeping(d: &Detected, kept: Option<&ConfiguredGpu>) -> String {
    let mut head = vec![HEADER_COMMENT.to_string()];
    let mut body = Vec::new();
    let suggest = || {
        "# Add the GPU your runs train on, e.g. gpu = \"h100-sxm\" (`hwlint targets` lists\n\
         # them); without it hwlint assumes its default GPU."
            .to_string()
    };
    match &d.gpus {
        Ok(gpus) if !gpus.is_empty() => {
            let groups = group_by_name(gpus);
            head.push("# GPUs (nvidia-smi):".to_string());
            for (g, n) in &groups {
                head.push(format!("#   {n} x {}", describe(g)));
            }
            // `max_by_key` keeps the last maximum; reversing keeps the first, in nvidia-smi order.
            let (top, count) = groups
                .iter()
                .rev()
                .max_by_key(|(_, n)| *n)
                .copied()
                .expect("groups of a non-empty list");
            if groups.len() > 1 {
                head.push(format!(
                    "# Mixed GPUs: this target describes the {count} x {}.",
                    comment_safe(&top.name)
                ));
            }
            match &top.catalog_key {
                Some(key) => body.push(format!("gpu = {}", Value::from(key.as_str()))),
                None => {
                    head.push(format!(
                        "# {} is not in hwlint's GPU catalog, so `gpu` is left out.",
                        comment_safe(&top.name)
                    ));
                    head.push(suggest());
                }
            }
            body.push(format!("gpus = {count}"));
        }
        Ok(_) | Err(_) => {
            let why = match &d.gpus {
                Err(reason) => comment_safe(reason),
                Ok(_) => "nvidia-smi listed none".to_string(),
            };
            head.push(format!("# No GPU found: {why}."));
            match kept {
                Some(k) => {
                    head.push(
                        "# The GPU of the target this file had is kept; the host facts are this machine's."
                            .to_string(),
                    );
                    body.push(format!("gpu = {}", Value::from(k.gpu.as_str())));
                    if let Some(n) = k.gpus {
                        body.push(format!("gpus = {n}"));
                    }
                }
                None => head.push(suggest()),
            }
        }
    }
    // Host facts are written even without a GPU: the host rules (workers vs. cores, RAM) need
    // no GPU.
    match d.host.cpu_cores {
        Some(n) => body.push(format!("cpu_cores = {n}")),
        None => head.push("# CPU cores: unknown.".to_string()),
    }
    match d.host.ram_gb {
        // `{:.1}` keeps it a TOML float (`64.0`, not `64`) and rejects nothing; a NaN or
        // infinity would not be valid TOML, so it counts as unknown.
        Some(gb) if gb.is_finite() && gb > 0.0 => body.push(format!("ram_gb = {gb:.1}")),
        _ => head.push("# RAM: unknown (no /proc/meminfo on this system).".to_string()),
    }
    let mut out = head.join("\n");
    out.push_str("\n[target]\n");
    for line in body {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// GPUs with the same name, in the order `nvidia-smi` first lists them.
fn group_by_name(gpus: &[DetectedGpu]) -> Vec<(&DetectedGpu, usize)> {
    let mut groups: Vec<(&DetectedGpu, usize)> = Vec::new();
    for g in gpus {
        match groups.iter_mut().find(|(first, _)| first.name == g.name) {
            Some((_, n)) => *n += 1,
            None => groups.push((g, 1)),
        }
    }
    groups
}

fn describe(g: &DetectedGpu) -> String {
    let memory = match g.memory_mib {
        0 => "memory unknown".to_string(),
        m => format!("{m} MiB"),
    };
    let cc = g.compute_capability.as_deref().unwrap_or("unknown");
    let key = match &g.catalog_key {
        Some(k) => format!("catalog: {k}"),
        None => "not in the catalog".to_string(),
    };
    format!(
        "{}, {memory}, compute capability {cc} ({key})",
        comment_safe(&g.name)
    )
}

/// TOML comments may hold any character but control characters (tab aside); driver output and
/// error messages are not trusted to be free of them.
fn comment_safe(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .collect()
}

/// Adds the `[target]` table of `table` (as [`target_toml`] renders it) to the config file at
/// `path`, replacing any `target` there, and keeps everything else, comments included. In a
/// `pyproject.toml` it goes to `[tool.hwlint.target]`. A missing file is created.
///
/// Comments right above an old `[target]` header are kept, except the block a previous run
/// wrote, so running it again does not stack the detection comments. Comments inside the old
/// table go with it.
pub fn write_into_config(path: &Path, table: &str) -> Result<(), String> {
    let shown = path.display();
    let generated: DocumentMut = table
        .parse()
        .map_err(|e| format!("the [target] table to write is not valid TOML: {e}"))?;
    let new_target = match generated.as_table().get("target") {
        Some(Item::Table(t)) => t.clone(),
        Some(Item::Value(Value::InlineTable(t))) => t.clone().into_table(),
        _ => return Err("the text to write has no [target] table".to_string()),
    };
    let existing = match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(
            crate::source::read_bytes(path, crate::source::MAX_FILE_BYTES)
                .map_err(|e| format!("cannot read {shown}: {e}"))?,
        ),
    };
    let text = match &existing {
        Some(bytes) => std::str::from_utf8(bytes)
            .map_err(|_| format!("{shown} is not UTF-8; [target] not written"))?,
        None => "",
    };
    // Refuse to touch a file that does not parse: rewriting it could lose what the user meant.
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("{shown} is not valid TOML; [target] not written: {e}"))?;
    let has_content = !text.trim().is_empty();
    let parent = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        tool_hwlint(&mut doc).map_err(|e| format!("{shown}: {e}"))?
    } else {
        doc.as_table_mut()
    };
    put_target(parent, new_target, has_content);
    let new_text = doc.to_string();
    // A last check before writing, so a bug here can never leave an unreadable config behind.
    new_text
        .parse::<toml::Table>()
        .map_err(|e| format!("internal error: the updated {shown} would not parse: {e}"))?;
    match existing {
        // Atomic, and only if nobody changed the file since it was read.
        Some(old) => {
            // The user named this file: a symlink (a dotfiles checkout) is written through.
            let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            crate::fix::write_atomic(&real, &old, new_text.as_bytes()).map_err(|e| e.to_string())
        }
        None => {
            // `create_new`: a file that appeared since the read above is not clobbered.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| format!("cannot create {shown}: {e}"))?;
            f.write_all(new_text.as_bytes())
                .map_err(|e| format!("cannot write {shown}: {e}"))
        }
    }
}

/// `[tool.hwlint]`, created (implicitly, so no empty headers are written) when missing.
fn tool_hwlint(doc: &mut DocumentMut) -> Result<&mut Table, String> {
    let implicit = || {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    };
    doc.as_table_mut()
        .entry("tool")
        .or_insert_with(implicit)
        .as_table_mut()
        .ok_or("`tool` is not a table")?
        .entry("hwlint")
        .or_insert_with(implicit)
        .as_table_mut()
        .ok_or_else(|| "`tool.hwlint` is not a table".to_string())
}

fn put_target(parent: &mut Table, mut new: Table, has_content: bool) {
    let generated = prefix_of(new.decor()).unwrap_or_default();
    // What stood above the old definition, and where the old table sat in the file.
    let (kept, position) = match parent.get("target") {
        Some(Item::Table(old)) if !old.is_dotted() => (
            strip_generated(&prefix_of(old.decor()).unwrap_or_default()).to_string(),
            old.position(),
        ),
        // `target = "h100-sxm"` or an inline/dotted table: its comments move with the new
        // table, which goes after the other tables.
        Some(_) => {
            let comments = parent
                .key("target")
                .and_then(|k| prefix_of(k.leaf_decor()))
                .unwrap_or_default();
            let comments = strip_generated(comments.trim_start_matches(['\n', '\r']));
            (format!("\n{comments}"), None)
        }
        None if has_content => ("\n".to_string(), None),
        None => (String::new(), None),
    };
    new.set_position(position);
    new.set_implicit(false);
    new.decor_mut().set_prefix(format!("{kept}{generated}"));
    // Remove first so that the old key's own decor does not survive on the new header.
    parent.remove("target");
    parent.insert("target", Item::Table(new));
}

fn prefix_of(decor: &toml_edit::Decor) -> Option<String> {
    decor.prefix().and_then(|p| p.as_str()).map(str::to_string)
}

/// `prefix` without the comment block a previous run wrote (from its header line to the end).
fn strip_generated(prefix: &str) -> &str {
    let mut at = 0;
    for line in prefix.split_inclusive('\n') {
        if line.trim_start().starts_with(HEADER_COMMENT) {
            return &prefix[..at];
        }
        at += line.len();
    }
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> DetectedGpu {
        let mut gpus = parse_nvidia_smi(line);
        assert_eq!(gpus.len(), 1, "{line:?} -> {gpus:?}");
        gpus.remove(0)
    }

    #[test]
    fn parses_known_gpus() {
        let h100 = one("NVIDIA H100 80GB HBM3, 81559 MiB, 9.0");
        assert_eq!(h100.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(h100.memory_mib, 81559);
        assert_eq!(h100.compute_capability.as_deref(), Some("9.0"));
        assert_eq!(h100.catalog_key.as_deref(), Some("h100-sxm"));

        let rtx = one("NVIDIA GeForce RTX 4090, 24564 MiB, 8.9");
        assert_eq!(rtx.memory_mib, 24564);
        assert_eq!(rtx.compute_capability.as_deref(), Some("8.9"));
        assert_eq!(rtx.catalog_key.as_deref(), Some("rtx-4090"));

        let t4 = one("Tesla T4, 15360 MiB, 7.5");
        assert_eq!(t4.name, "Tesla T4");
        assert_eq!(t4.catalog_key.as_deref(), Some("t4"));

        let a100 = one("NVIDIA A100-SXM4-80GB, 81920 MiB, 8.0");
        assert_eq!(a100.catalog_key.as_deref(), Some("a100-80gb"));
    }

    #[test]
    fn unknown_gpu_has_no_catalog_key() {
        // Compute capability 8.6 is in the catalog, but at 22-24 GiB, not 45 GiB.
        let a40 = one("NVIDIA A40, 46068 MiB, 8.6");
        assert_eq!(a40.name, "NVIDIA A40");
        assert_eq!(a40.catalog_key, None);
        let gh = one("NVIDIA GH200 480GB, 97871 MiB, 9.0");
        assert_eq!(gh.catalog_key, None);
    }

    #[test]
    fn matches_by_memory_only_when_unambiguous() {
        // nvidia-smi prints "Graphics Device" for device IDs its name table lacks.
        let t4 = one("NVIDIA Graphics Device, 15360 MiB, 7.5");
        assert_eq!(t4.catalog_key.as_deref(), Some("t4"));
        // H100 PCIe and H100 SXM are both 9.0 and 80 GB: no guess.
        let h100 = one("NVIDIA Graphics Device, 81559 MiB, 9.0");
        assert_eq!(h100.catalog_key, None);
        // Without a compute capability there is no fallback.
        assert_eq!(one("Graphics Device, 15360 MiB").catalog_key, None);
        // Same compute capability, memory 10% off.
        assert_eq!(one("Graphics Device, 16896 MiB, 7.5").catalog_key, None);
    }

    #[test]
    fn tolerates_old_drivers_na_and_whitespace() {
        let v100 = one("Tesla V100-SXM2-16GB, 16160 MiB");
        assert_eq!(v100.compute_capability, None);
        assert_eq!(v100.catalog_key.as_deref(), Some("v100-16gb"));

        let na = one("NVIDIA H100 80GB HBM3, [N/A], [N/A]");
        assert_eq!((na.memory_mib, na.compute_capability), (0, None));
        assert_eq!(na.catalog_key.as_deref(), Some("h100-sxm"));
        assert_eq!(one("Tesla T4, 15360 MiB, [N/A]").compute_capability, None);
        assert_eq!(one("Tesla T4, 15360, 7.5").memory_mib, 15360);

        let gpus = parse_nvidia_smi(
            "\n  Tesla T4 , 15360 MiB , 7.5   \r\n\r\n\nNVIDIA GeForce RTX 4090, 24564 MiB, 8.9  \n",
        );
        let names: Vec<_> = gpus.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["Tesla T4", "NVIDIA GeForce RTX 4090"]);
        assert_eq!(gpus[0].compute_capability.as_deref(), Some("7.5"));

        // A comma in the name, no compute capability column.
        assert_eq!(one("Foo, Bar, 1024 MiB").name, "Foo, Bar");
    }

    #[test]
    fn garbage_gives_no_gpu() {
        for text in [
            "",
            "\n\n  \n",
            "No devices were found",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            "Field \"compute_cap\" is not a valid field to query.",
            "name, memory.total [MiB], compute_cap",
            ", 1024 MiB, 9.0",
            "a,b,c,d",
            "x, 99999999999999999999999999 MiB, 9.0",
            "x, -5 MiB, 9.0",
            ",,,",
            "\u{0}\u{ff}\u{7f},\u{1}",
        ] {
            assert_eq!(parse_nvidia_smi(text), Vec::new(), "{text:?}");
        }
    }

    #[test]
    fn meminfo() {
        let text = "MemTotal:       65762456 kB\nMemFree:        1234 kB\nMemAvailable: 5 kB\n";
        // 65762456 KiB = 67.34 GB.
        assert_eq!(parse_meminfo(text), Some(67.3));
        assert_eq!(
            parse_meminfo("MemFree: 1 kB\nMemTotal: 16000000 kB"),
            Some(16.4)
        );
        for bad in [
            "",
            "MemFree: 1 kB",
            "MemTotal:",
            "MemTotal: lots kB",
            "MemTotal: 0 kB",
            "MemTotal: 100 MB",
            "MemTotal: 100",
        ] {
            assert_eq!(parse_meminfo(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn detect_host_never_fails() {
        let host = detect_host();
        assert!(host.cpu_cores.is_some_and(|n| n > 0));
        if cfg!(target_os = "linux") {
            assert!(host.ram_gb.is_some_and(|gb| gb > 0.0));
        }
    }

    fn parse(text: &str) -> toml::Table {
        toml::from_str::<toml::Table>(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The table must also be what hwlint.toml's `[target]` accepts (unknown keys are errors).
    fn spec(text: &str) -> crate::hardware::TargetSpec {
        #[derive(serde::Deserialize)]
        struct Wrapped {
            target: crate::hardware::TargetSpec,
        }
        toml::from_str::<Wrapped>(text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
            .target
    }

    fn host() -> Host {
        Host {
            cpu_cores: Some(64),
            ram_gb: Some(1031.9),
        }
    }

    #[test]
    fn target_toml_with_gpus() {
        let csv = "NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n".repeat(8);
        let d = Detected {
            gpus: Ok(parse_nvidia_smi(&csv)),
            host: host(),
        };
        let text = target_toml(&d);
        assert!(text.starts_with(HEADER_COMMENT), "{text}");
        assert!(
            text.contains("8 x NVIDIA H100 80GB HBM3, 81559 MiB"),
            "{text}"
        );
        parse(&text);
        let s = spec(&text);
        assert_eq!(s.gpu.as_deref(), Some("h100-sxm"));
        assert_eq!(s.gpus, Some(8));
        assert_eq!(s.cpu_cores, Some(64));
        assert_eq!(s.ram_gb, Some(1031.9));

        // A whole number of GB is still written as a float.
        let d = Detected {
            host: Host {
                cpu_cores: None,
                ram_gb: Some(64.0),
            },
            ..d
        };
        let text = target_toml(&d);
        assert!(text.contains("ram_gb = 64.0\n"), "{text}");
        assert!(text.contains("# CPU cores: unknown"), "{text}");
        assert_eq!(spec(&text).cpu_cores, None);
    }

    #[test]
    fn target_toml_mixed_and_unknown_gpus() {
        let csv = "NVIDIA GeForce RTX 4090, 24564 MiB, 8.9\n\
                   NVIDIA A40, 46068 MiB, 8.6\n\
                   NVIDIA A40, 46068 MiB, 8.6\n";
        let d = Detected {
            gpus: Ok(parse_nvidia_smi(csv)),
            host: host(),
        };
        let text = target_toml(&d);
        let s = spec(&text);
        // The A40 pair wins, and it is not in the catalog: no `gpu`, but the count stays.
        assert_eq!(s.gpu, None, "{text}");
        assert_eq!(s.gpus, Some(2));
        assert!(
            text.contains("NVIDIA A40 is not in hwlint's GPU catalog"),
            "{text}"
        );
        assert!(text.contains("Mixed GPUs"), "{text}");
        assert!(text.contains("gpu = \"h100-sxm\""), "{text}");

        // A tie goes to the first one listed.
        let d = Detected {
            gpus: Ok(parse_nvidia_smi(
                "Tesla T4, 15360 MiB, 7.5\nNVIDIA GeForce RTX 4090, 24564 MiB, 8.9",
            )),
            host: host(),
        };
        let s = spec(&target_toml(&d));
        assert_eq!((s.gpu.as_deref(), s.gpus), (Some("t4"), Some(1)));
    }

    #[test]
    fn target_toml_without_gpu() {
        let d = Detected {
            gpus: Err("nvidia-smi not found: no NVIDIA driver on this machine".into()),
            host: host(),
        };
        let text = target_toml(&d);
        assert!(
            text.contains("# No GPU found: nvidia-smi not found: no NVIDIA driver"),
            "{text}"
        );
        assert!(text.contains("hwlint targets"), "{text}");
        let table = parse(&text);
        let target = table["target"].as_table().unwrap();
        assert!(!target.contains_key("gpu") && !target.contains_key("gpus"));
        assert_eq!(target["cpu_cores"].as_integer(), Some(64));
        assert_eq!(target["ram_gb"].as_float(), Some(1031.9));

        // Nothing known at all, and an error message with line breaks in it.
        let d = Detected {
            gpus: Err("line one\nline two\r\n\u{7}".into()),
            host: Host {
                cpu_cores: None,
                ram_gb: Some(f64::NAN),
            },
        };
        let text = target_toml(&d);
        assert!(
            parse(&text)["target"].as_table().unwrap().is_empty(),
            "{text}"
        );
        assert_eq!(spec(&text), crate::hardware::TargetSpec::default());
        let d = Detected {
            gpus: Ok(Vec::new()),
            host: Host::default(),
        };
        parse(&target_toml(&d));
    }

    #[test]
    fn target_toml_with_odd_names() {
        let d = Detected {
            gpus: Ok(vec![DetectedGpu {
                name: "Weird \"GPU\" # [x]\n[target]\u{0}".into(),
                memory_mib: 0,
                compute_capability: None,
                catalog_key: None,
            }]),
            host: Host::default(),
        };
        let text = target_toml(&d);
        let s = spec(&text);
        assert_eq!((s.gpu, s.gpus), (None, Some(1)));
    }

    fn detected_h100() -> String {
        target_toml(&Detected {
            gpus: Ok(parse_nvidia_smi(
                "NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n".repeat(2).as_str(),
            )),
            host: host(),
        })
    }

    #[test]
    fn write_replaces_target_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hwlint.toml");
        let before = "# project settings\n\
                      select = [\"HW1\"]  # only hardware rules\n\
                      \n\
                      # the box we train on\n\
                      [target]\n\
                      gpu = \"rtx-3090\"  # old\n\
                      gpus = 2\n\
                      \n\
                      [per-file-ignores]\n\
                      \"a.yaml\" = [\"HW101\"]\n";
        std::fs::write(&path, before).unwrap();
        write_into_config(&path, &detected_h100()).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        for kept in [
            "# project settings\n",
            "select = [\"HW1\"]  # only hardware rules\n",
            "# the box we train on\n",
            "[per-file-ignores]\n\"a.yaml\" = [\"HW101\"]\n",
            "gpu = \"h100-sxm\"\n",
            "gpus = 2\n",
        ] {
            assert!(after.contains(kept), "{kept:?} missing in\n{after}");
        }
        assert!(!after.contains("rtx-3090"), "{after}");
        // The old table's place in the file is kept.
        assert!(
            after.find("[target]") < after.find("[per-file-ignores]"),
            "{after}"
        );
        let config: crate::settings::ConfigFile = toml::from_str(&after).unwrap();
        assert_eq!(config.select, ["HW1"]);
        assert!(matches!(
            config.target,
            Some(crate::settings::TargetField::Inline(_))
        ));

        // Running it again replaces the detection comments instead of adding a second block.
        write_into_config(&path, &detected_h100()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
        assert_eq!(after.matches(HEADER_COMMENT).count(), 1, "{after}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_creates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hwlint.toml");
        write_into_config(&path, &detected_h100()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(HEADER_COMMENT), "{text}");
        assert_eq!(spec(&text).gpu.as_deref(), Some("h100-sxm"));
    }

    #[test]
    fn write_replaces_a_target_name_and_adds_to_files_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hwlint.toml");
        std::fs::write(
            &path,
            "# mine\ntarget = \"a100-80gb\"\nignore = [\"HW3\"]\n",
        )
        .unwrap();
        write_into_config(&path, &detected_h100()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let t = parse(&text);
        assert_eq!(t["target"]["gpu"].as_str(), Some("h100-sxm"), "{text}");
        assert_eq!(t["ignore"][0].as_str(), Some("HW3"), "{text}");
        assert!(text.contains("# mine\n"), "{text}");

        std::fs::write(&path, "ignore = [\"HW3\"]\n").unwrap();
        write_into_config(&path, &detected_h100()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("ignore = [\"HW3\"]\n\n# Machine"),
            "{text}"
        );
        assert_eq!(spec(&text).gpus, Some(2));
    }

    #[test]
    fn write_into_pyproject_uses_tool_hwlint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pyproject.toml");
        std::fs::write(
            &path,
            "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 99\n",
        )
        .unwrap();
        write_into_config(&path, &detected_h100()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let t = parse(&text);
        assert_eq!(
            t["tool"]["hwlint"]["target"]["gpu"].as_str(),
            Some("h100-sxm")
        );
        assert_eq!(t["tool"]["ruff"]["line-length"].as_integer(), Some(99));
        assert!(text.contains("[tool.hwlint.target]\n"), "{text}");
        assert!(!text.contains("[tool.hwlint]\n"), "{text}");
        assert!(!text.contains("[tool]\n"), "{text}");
    }

    #[test]
    fn write_leaves_invalid_files_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hwlint.toml");
        std::fs::write(&path, "select = [\n").unwrap();
        let err = write_into_config(&path, &detected_h100()).unwrap_err();
        assert!(err.contains("not valid TOML"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "select = [\n");
        assert!(write_into_config(&path, "gpu = 1\n").is_err());
    }

    #[test]
    fn write_goes_through_a_symlinked_config() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles.toml");
        std::fs::write(&real, "select = [\"HW2\"]\n").unwrap();
        let link = dir.path().join("hwlint.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_into_config(&link, &detected_h100()).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let text = std::fs::read_to_string(&real).unwrap();
        assert!(
            text.starts_with("select = [\"HW2\"]\n") && text.contains("[target]"),
            "{text}"
        );
    }

    #[test]
    fn missing_nvidia_smi_is_an_error_not_a_panic() {
        let err = query_with(&["hwlint-no-such-nvidia-smi"], TIMEOUT).unwrap_err();
        assert_eq!(
            err,
            "nvidia-smi not found: no NVIDIA driver on this machine"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fake_nvidia_smi() {
        // `sh -c SCRIPT sh ARGS...`: the script sees the query arguments as $1 and $2.
        let run = |script: &str| query_with(&["sh", "-c", script, "sh"], TIMEOUT);

        let gpus = run("echo 'Tesla T4, 15360 MiB, 7.5'; echo 'Tesla T4, 15360 MiB, 7.5'").unwrap();
        assert_eq!(gpus.len(), 2);

        // An old driver: the query with compute_cap fails, the one without it works.
        let old = r#"case "$1" in *compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;; esac
                     echo 'Tesla V100-SXM2-16GB, 16160 MiB'"#;
        let gpus = run(old).unwrap();
        assert_eq!(gpus[0].catalog_key.as_deref(), Some("v100-16gb"));

        let err = run("echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"; exit 9").unwrap_err();
        assert!(
            err.starts_with("nvidia-smi failed (exit status: 9): NVIDIA-SMI has failed"),
            "{err}"
        );
        let err = run("echo 'No devices were found'; exit 6").unwrap_err();
        assert!(err.ends_with("No devices were found"), "{err}");
        let err = run("true").unwrap_err();
        assert_eq!(err, "nvidia-smi listed no GPU");

        let err =
            query_with(&["sh", "-c", "exec sleep 5"], Duration::from_millis(200)).unwrap_err();
        assert!(err.contains("did not answer"), "{err}");
    }
}
