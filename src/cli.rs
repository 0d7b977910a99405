//! Command-line definitions (clap derive) only.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::OutputFormat;

#[derive(Debug, Parser)]
#[command(
    name = "hwlint",
    version,
    about = "Lint and auto-fix ML training configs against the hardware they will run on",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `hwlint [PATHS]` is `hwlint check [PATHS]`.
    #[command(flatten)]
    pub check: CheckArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint config files (the default command).
    Check(CheckArgs),
    /// List the built-in hardware targets.
    Targets(TargetsArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// Files or folders to lint (default: the current folder).
    pub paths: Vec<PathBuf>,
    /// Apply safe fixes, writing each file atomically.
    #[arg(long)]
    pub fix: bool,
    /// Also apply (and count as fixable) fixes that change what the run does.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the unified diff of the fixes instead of writing them; exit 1 if there is one.
    #[arg(long)]
    pub diff: bool,
    /// Only run these rules (codes or prefixes, comma-separated: HW2,HW301).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub select: Option<Vec<String>>,
    /// Skip these rules (codes or prefixes, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub ignore: Option<Vec<String>>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value = "full")]
    pub output_format: OutputFormat,
    /// Exit 0 even when problems remain.
    #[arg(long)]
    pub exit_zero: bool,
    /// The machine the run will use: a GPU (h100-sxm), a machine (workstation), or a TOML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub target: Option<String>,
    /// GPUs (processes) the run uses; makes the world size known.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u32>,
    /// CPU cores of the host, for the dataloader rules.
    #[arg(long, value_name = "N")]
    pub cpu_cores: Option<u32>,
    /// RAM of the host in GB, for the dataloader rules.
    #[arg(long, value_name = "N")]
    pub ram_gb: Option<f64>,
    /// Use this hwlint.toml for every file instead of the closest one.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,
    /// Ignore every hwlint.toml, .hwlint.toml and [tool.hwlint].
    #[arg(long)]
    pub no_config: bool,
    /// Print, per file, the dialect recognised and every setting read (value and origin),
    /// instead of diagnostics.
    #[arg(long)]
    pub show_settings: bool,
    /// Print diagnostics only, no summary line.
    #[arg(short, long)]
    pub quiet: bool,
    /// Colour in the output (NO_COLOR is honoured under auto).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(Debug, Args, Clone)]
pub struct TargetsArgs {
    /// `full` prints a table, `json` the catalog as JSON.
    #[arg(long, value_enum, default_value = "full")]
    pub output_format: OutputFormat,
}
