//! One function per subcommand; maps outcomes to exit codes (0 clean, 1 problems, 2 errors).

mod add_ignore;
mod check;
mod docs;
mod init;
mod show_settings;
mod stream;

pub use docs::rule_markdown;

use std::io::{IsTerminal, Write};

use miette::{IntoDiagnostic, Report};

use crate::cli::{Cli, ColorChoice, Command, DetectArgs, EstimateArgs, TargetsArgs};
use crate::hardware::catalog;
use crate::report::{self, OutputFormat};

/// `0.1.0 (hardware catalog 2026-11-23)`.
pub fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        format!(
            "{} (hardware catalog {})",
            env!("CARGO_PKG_VERSION"),
            catalog().date
        )
    })
}

pub fn run(cli: Cli) -> Result<u8, Report> {
    match cli.command {
        Some(Command::Check(args)) => check::check(args),
        Some(Command::Targets(args)) => targets(args),
        Some(Command::Estimate(args)) => estimate(args),
        Some(Command::Detect(args)) => detect(args),
        Some(Command::Rule(args)) => docs::rule(args),
        Some(Command::Rules(args)) => docs::rules(args),
        Some(Command::Init(args)) => init::init(&args.path),
        Some(Command::Completions(args)) => {
            let mut out = Vec::new();
            clap_complete::generate(
                args.shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "hwlint",
                &mut out,
            );
            emit(&String::from_utf8_lossy(&out))?;
            Ok(0)
        }
        Some(Command::Man) => {
            let mut out = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
                .render(&mut out)
                .into_diagnostic()?;
            emit(&String::from_utf8_lossy(&out))?;
            Ok(0)
        }
        None => check::check(cli.check),
    }
}

/// Writes to stderr; a closed pipe (`hwlint nope 2>&1 | head -1`) is ignored, never a panic
/// (`eprintln!` panics when stderr is gone).
pub fn emit_err(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
}

/// An error as the command line prints it: `error: ...`, its causes and its help, without
/// miette's diagnostic-code header line.
pub fn error_text(report: &Report) -> String {
    let mut out = format!("error: {report}");
    for cause in report.chain().skip(1) {
        out.push_str(&format!("\n  caused by: {cause}"));
    }
    if let Some(help) = report
        .help()
        .map(|h| h.to_string())
        .filter(|h| !h.is_empty())
    {
        out.push_str(&format!("\n  help: {help}"));
    }
    out.push('\n');
    out
}

/// Writes to stdout; a closed pipe (`hwlint | head`) ends quietly.
pub(crate) fn emit(text: &str) -> Result<(), Report> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.into_diagnostic(),
    }
}

pub(crate) fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn estimate(args: EstimateArgs) -> Result<u8, Report> {
    let report = crate::estimate::command::run(&args)?;
    emit(&match args.output_format {
        OutputFormat::Json => report::render_estimate_json(&report),
        _ => report::render_estimate(&report),
    })?;
    Ok(0)
}

/// `hwlint detect`: this machine as a `[target]` table. Without a GPU or driver it still
/// describes the host, and says why no GPU is listed.
fn detect(args: DetectArgs) -> Result<u8, Report> {
    use crate::hardware::detect;
    let found = detect::detect();
    if args.output_format == OutputFormat::Json {
        let gpus = match &found.gpus {
            Ok(g) => serde_json::json!(g
                .iter()
                .map(|x| serde_json::json!({
                    "name": x.name, "memory_mib": x.memory_mib,
                    "compute_capability": x.compute_capability, "catalog_key": x.catalog_key,
                }))
                .collect::<Vec<_>>()),
            Err(e) => serde_json::json!({ "error": e }),
        };
        let v = serde_json::json!({
            "gpus": gpus,
            "cpu_cores": found.host.cpu_cores,
            "ram_gb": found.host.ram_gb,
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&v).into_diagnostic()?
        ))?;
        return Ok(0);
    }
    let no_gpu = !matches!(&found.gpus, Ok(g) if !g.is_empty());
    match &args.write {
        Some(path) => {
            // Without a GPU here, the GPU the file's target already names stays: detection
            // adds the host facts, it does not replace a cluster's GPU with none.
            let kept = no_gpu.then(|| detect::configured_gpu(path)).flatten();
            let table = detect::target_toml_keeping(&found, kept.as_ref());
            detect::write_into_config(path, &table).map_err(|e| miette::miette!("{e}"))?;
            let mut said = format!("wrote [target] to {}", path.display());
            if let Some(k) = &kept {
                said.push_str(&format!(
                    ": no GPU on this machine, so the target's GPU is kept (gpu = \"{}\"{}) and this machine's CPU cores and RAM are added",
                    k.gpu,
                    k.gpus.map_or(String::new(), |n| format!(", gpus = {n}"))
                ));
            }
            emit_err(&format!("{said}\n"));
        }
        None => emit(&detect::target_toml(&found))?,
    }
    Ok(0)
}

fn targets(args: TargetsArgs) -> Result<u8, Report> {
    let c = catalog();
    if args.output_format == OutputFormat::Json {
        let gpus: Vec<_> = c
            .gpus
            .iter()
            .map(|g| {
                serde_json::json!({
                    "key": g.key, "name": g.name, "vram_bytes": g.vram_bytes,
                    "approximate": g.approximate, "compute_capability": g.compute_capability,
                    "bf16": g.bf16, "fp8": g.fp8, "flash_attention_2": g.flash_attention_2,
                    "memory_bandwidth_gb_s": g.memory_bandwidth_gb_s, "bf16_tflops": g.bf16_tflops,
                })
            })
            .collect();
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(
                &serde_json::json!({ "catalog_date": c.date, "gpus": gpus })
            )
            .into_diagnostic()?
        ))?;
        return Ok(0);
    }
    emit(&targets_table())?;
    Ok(0)
}

/// The built-in GPUs and machines as a text table (also used in the README).
pub fn targets_table() -> String {
    let c = catalog();
    let mut s = format!(
        "{:<14} {:>10} {:>4} {:>5} {:>4} {:>4} {:>9} {:>11}\n",
        "target", "VRAM GiB", "CC", "bf16", "fp8", "FA2", "BW GB/s", "bf16 TFLOPS"
    );
    let yes = |b: bool| if b { "yes" } else { "no" };
    for g in &c.gpus {
        s.push_str(&format!(
            "{:<14} {:>9.1}{} {:>4} {:>5} {:>4} {:>4} {:>9} {:>11}\n",
            g.key,
            g.vram_gib(),
            if g.approximate { "~" } else { " " },
            g.compute_capability,
            yes(g.bf16),
            yes(g.fp8),
            yes(g.flash_attention_2),
            g.memory_bandwidth_gb_s,
            g.bf16_tflops
        ));
    }
    s.push_str("\nmachines:\n");
    for (name, t) in &c.targets {
        s.push_str(&format!(
            "{name:<14} {} x {}, {} cores, {} GB RAM, {} MB/s storage\n",
            t.gpus.unwrap_or(1),
            t.gpu.as_deref().unwrap_or("?"),
            t.cpu_cores.map_or("?".into(), |c| c.to_string()),
            t.ram_gb.map_or("?".into(), |c| c.to_string()),
            t.storage_mb_s.map_or("?".into(), |c| c.to_string()),
        ));
    }
    s.push_str(&format!(
        "\n~ approximate (datasheet) figure · catalog {}\n",
        c.date
    ));
    s
}
