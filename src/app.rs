//! One function per subcommand; maps outcomes to exit codes (0 clean, 1 problems, 2 errors).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use miette::{IntoDiagnostic, Report};
use rayon::prelude::*;

use crate::cli::{CheckArgs, Cli, ColorChoice, Command, EstimateArgs, TargetsArgs};
use crate::discover::discover;
use crate::fix::{write_atomic, Applicability};
use crate::hardware::catalog;
use crate::lint::{lint_path, FileResult, FixMode};
use crate::report::{self, OutputFormat};
use crate::settings::{ConfigResolver, Overrides};
use crate::syntax::Format;

pub fn run(cli: Cli) -> Result<u8, Report> {
    match cli.command {
        Some(Command::Check(args)) => check(args),
        Some(Command::Targets(args)) => targets(args),
        Some(Command::Estimate(args)) => estimate(args),
        None => check(cli.check),
    }
}

/// Writes to stdout; a closed pipe (`hwlint | head`) ends quietly.
fn emit(text: &str) -> Result<(), Report> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.into_diagnostic(),
    }
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn check(args: CheckArgs) -> Result<u8, Report> {
    let overrides = Overrides {
        config: args.config.clone(),
        no_config: args.no_config,
        target: args.target.clone(),
        gpus: args.gpus,
        cpu_cores: args.cpu_cores,
        ram_gb: args.ram_gb,
        select: args.select.clone(),
        ignore: args.ignore.clone(),
    };
    let configs = ConfigResolver::new(overrides)?;
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let files = discover(&paths, &configs)?;
    let min = if args.unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    };
    let mode = if args.fix || args.diff {
        FixMode::Apply(min)
    } else {
        FixMode::Off
    };
    let results: Vec<FileResult> = files
        .par_iter()
        .map(|path| {
            let config = configs.config_for(path)?;
            let settings = config.for_file(path, configs.overrides())?;
            let format = Format::from_path(path).unwrap_or(Format::Yaml);
            Ok(lint_path(path, format, settings, mode))
        })
        .collect::<Result<_, crate::settings::ConfigError>>()?;
    let results = once_per_model(results);

    if args.show_settings {
        emit(&show_settings(&results))?;
        return Ok(0);
    }
    let mut code = 0u8;
    if args.diff {
        let mut diff = String::new();
        for r in results.iter().filter(|r| r.changed()) {
            let name = r.path.display().to_string();
            diff.push_str(
                &similar::TextDiff::from_lines(&r.original, &r.text)
                    .unified_diff()
                    .header(&format!("a/{name}"), &format!("b/{name}"))
                    .to_string(),
            );
        }
        emit(&diff)?;
        if !diff.is_empty() {
            code = 1;
        }
    } else if args.fix {
        for r in results.iter().filter(|r| r.changed()) {
            let mut expected = Vec::new();
            if r.bom {
                expected.extend_from_slice("\u{feff}".as_bytes());
            }
            expected.extend_from_slice(r.original.as_bytes());
            write_atomic(&r.path, &expected, &r.output_bytes())?;
        }
    }

    if !args.diff {
        let out = match args.output_format {
            OutputFormat::Full => {
                report::render_full(&results, use_color(args.color), args.unsafe_fixes)
            }
            OutputFormat::Concise => report::render_concise(&results, args.unsafe_fixes),
            OutputFormat::Json => report::render_json(&results),
        };
        emit(&out)?;
    }
    if !args.quiet && args.output_format != OutputFormat::Json {
        let line = report::summary(
            &results,
            &target_text(&results, &configs)?,
            args.unsafe_fixes,
            args.diff,
        );
        if args.diff {
            eprintln!("{line}");
        } else {
            emit(&format!("{line}\n"))?;
        }
    }
    if report::counts(&results).failing > 0 {
        code = 1;
    }
    Ok(if args.exit_zero { 0 } else { code })
}

/// HW901 says the same thing for every file that names the same unknown model: keep the first.
fn once_per_model(mut results: Vec<FileResult>) -> Vec<FileResult> {
    let mut seen = std::collections::HashSet::new();
    for r in &mut results {
        r.diagnostics
            .retain(|d| d.rule.code != "HW901" || seen.insert(d.message.clone()));
    }
    results
}

/// `--show-settings`: what hwlint read from each file, and from where.
fn show_settings(results: &[FileResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(settings) = &r.settings else {
            continue;
        };
        let Some(name) = &r.dialect else {
            out.push_str(&format!(
                "{}: not a training config hwlint knows\n",
                r.path.display()
            ));
            continue;
        };
        out.push_str(&format!(
            "{}: {name} · target {}\n",
            r.path.display(),
            settings.target.describe()
        ));
        let Some(d) = settings.dialects.iter().find(|d| &d.name == name) else {
            continue;
        };
        let Ok(doc) =
            crate::syntax::parse(&r.text, Format::from_path(&r.path).unwrap_or(Format::Yaml))
        else {
            continue;
        };
        for root in &doc.roots {
            if crate::dialect::detect(&settings.dialects, root, doc.format, &r.path)
                .map(|x| &x.name)
                != Some(name)
            {
                continue;
            }
            let setup = crate::dialect::resolve(d, root);
            for (concept, s) in &setup.settings {
                out.push_str(&format!(
                    "  {:<26} {:<22} {}\n",
                    format!("{concept:?}"),
                    format!("{:?}", s.value),
                    s.origin.describe()
                ));
            }
        }
    }
    out
}

/// The target named in the summary line: the one every file used, or a note that they differ.
fn target_text(results: &[FileResult], configs: &ConfigResolver) -> Result<String, Report> {
    let mut targets = results
        .iter()
        .filter_map(|r| r.settings.as_ref())
        .map(|s| &s.target);
    let first = match targets.next() {
        Some(t) => t.clone(),
        None => {
            configs
                .config_for(std::path::Path::new("./x"))?
                .for_file(std::path::Path::new("./x"), configs.overrides())?
                .target
        }
    };
    if targets.any(|t| *t != first) {
        return Ok("varies per file (hwlint.toml per-path)".into());
    }
    let mut s = format!("{}: {}", first.name, first.describe());
    if first.is_default {
        s.push_str(" (default)");
    }
    Ok(s)
}

fn estimate(args: EstimateArgs) -> Result<u8, Report> {
    let report = crate::estimate::command::run(&args)?;
    emit(&match args.output_format {
        OutputFormat::Json => report::render_estimate_json(&report),
        _ => report::render_estimate(&report),
    })?;
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
