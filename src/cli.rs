//! Command-line definitions (clap derive) only.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::OutputFormat;

#[derive(Debug, Parser)]
#[command(
    name = "hwlint",
    version = crate::app::version(),
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
    /// Estimate the peak GPU memory of one training step, from a config or from flags.
    Estimate(EstimateArgs),
    /// Describe this machine as a target (GPUs via nvidia-smi, CPU cores, RAM).
    Detect(DetectArgs),
    /// Print a rule's documentation (`hwlint rule HW101`).
    Rule(RuleArgs),
    /// List every rule: code, name, severity, fix.
    Rules(RulesArgs),
    /// Write a commented hwlint.toml here, with this machine as the target when it has a GPU.
    Init(InitArgs),
    /// Print a shell completion script (`hwlint completions bash > ~/.local/share/bash-completion/completions/hwlint`).
    Completions(CompletionsArgs),
    /// Print the man page (roff), generated from these definitions (`hwlint man > hwlint.1`).
    Man,
}

#[derive(Debug, Args, Clone)]
pub struct InitArgs {
    /// Where to write it (default: hwlint.toml in the current folder). An existing file is
    /// never overwritten.
    #[arg(long, value_name = "FILE", default_value = "hwlint.toml")]
    pub path: PathBuf,
}

#[derive(Debug, Args, Clone)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DocFormat {
    /// Plain text for a terminal.
    Text,
    /// The documentation as markdown.
    Markdown,
    Json,
}

#[derive(Debug, Args, Clone)]
pub struct RuleArgs {
    /// A rule code (`HW101`) or name (`batch-exceeds-vram`).
    pub code: String,
    #[arg(long, alias = "format", value_enum, default_value = "text")]
    pub output_format: DocFormat,
}

#[derive(Debug, Args, Clone)]
pub struct RulesArgs {
    #[arg(long, alias = "format", value_enum, default_value = "text")]
    pub output_format: DocFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args, Clone)]
pub struct CheckArgs {
    /// Files or folders to lint (default: the current folder; `-` reads standard input).
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
    /// Add these rules to the selection (hwlint.toml's `select` or --select) instead of
    /// replacing it.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    pub extend_select: Option<Vec<String>>,
    /// Skip files and folders matching these globs, instead of hwlint.toml's `exclude`
    /// (relative to the current folder; comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "GLOBS")]
    pub exclude: Option<Vec<String>>,
    /// Skip these too, on top of `exclude` (comma-separated globs).
    #[arg(long, value_delimiter = ',', value_name = "GLOBS")]
    pub extend_exclude: Option<Vec<String>>,
    /// How to print diagnostics (default: `full`, or `github` when GITHUB_ACTIONS=true).
    #[arg(long, value_enum, env = "HWLINT_OUTPUT_FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Write the diagnostics to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output_file: Option<PathBuf>,
    /// Print how many times each rule fired instead of the diagnostics (with
    /// `--output-format json`: a JSON object with the rules and the memory check's outcomes).
    #[arg(long)]
    pub statistics: bool,
    /// With --fix, list the fixes applied.
    #[arg(long)]
    pub show_fixes: bool,
    /// Exit 0 even when problems remain.
    #[arg(long)]
    pub exit_zero: bool,
    /// Exit 1 when --fix changed a file, even if no problem remains (for pre-commit).
    #[arg(long)]
    pub exit_non_zero_on_fix: bool,
    /// Apply `exclude` from hwlint.toml to files named on the command line too (pre-commit
    /// passes every staged file by name).
    #[arg(long)]
    pub force_exclude: bool,
    /// The file name standard input stands for when the path is `-` (format, hwlint.toml).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// The machine the run will use: a GPU (h100-sxm), a machine (workstation), or a TOML file.
    #[arg(long, value_name = "NAME|FILE")]
    pub target: Option<String>,
    /// GPUs (processes) the run uses; makes the world size known.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus: Option<u32>,
    /// CPU cores of the host, for the dataloader rules.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cpu_cores: Option<u32>,
    /// RAM of the host in GB, for the dataloader rules.
    #[arg(long, value_name = "N", value_parser = positive_gb)]
    pub ram_gb: Option<f64>,
    /// Use this hwlint.toml for every file instead of the closest one.
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<PathBuf>,
    /// Ignore every hwlint.toml, .hwlint.toml and [tool.hwlint].
    #[arg(long)]
    pub no_config: bool,
    /// Add `hwlint: ignore[CODES]` comments for every current diagnostic (adopting hwlint on
    /// a large repository). Plain `.json` files hold no comments and are left alone.
    #[arg(long, conflicts_with_all = ["fix", "diff"])]
    pub add_ignore: bool,
    /// Print, per file, the dialect recognised and every setting read (value and origin),
    /// instead of diagnostics.
    #[arg(long)]
    pub show_settings: bool,
    /// List the files hwlint would check, one per line with the config file that applies,
    /// and check nothing.
    #[arg(long, conflicts_with_all = ["fix", "diff", "show_settings", "add_ignore"])]
    pub show_files: bool,
    /// Say on standard error what was read: the config file that applied to each file, the
    /// dialect recognised and the keys that decided it, the files merged in.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
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
    #[arg(long, alias = "format", value_enum, default_value = "full")]
    pub output_format: OutputFormat,
}

#[derive(Debug, Args, Clone)]
pub struct EstimateArgs {
    /// A training config to read the run from (flags override what it says).
    pub config: Option<PathBuf>,
    /// Model: a catalog name, a Hugging Face id, or a config.json / model folder.
    #[arg(long, value_name = "NAME|FILE")]
    pub model: Option<String>,
    /// Micro-batch per GPU.
    #[arg(long, value_name = "N")]
    pub batch_size: Option<u64>,
    /// Tokens per sample.
    #[arg(long, value_name = "N")]
    pub seq_len: Option<u64>,
    /// Image side in pixels (vision models).
    #[arg(long, value_name = "N")]
    pub image_size: Option<u64>,
    #[arg(long, value_enum)]
    pub precision: Option<crate::estimate::memory::Precision>,
    #[arg(long, value_enum)]
    pub optimizer: Option<crate::estimate::memory::Optimizer>,
    #[arg(long, value_enum)]
    pub checkpointing: Option<crate::estimate::memory::Checkpointing>,
    /// `sdpa` (fused kernels, the default) or `eager` (keeps the s x s scores).
    #[arg(long, value_enum)]
    pub attention: Option<crate::estimate::memory::Attention>,
    /// LoRA rank (freezes the base model).
    #[arg(long, value_name = "N")]
    pub lora_r: Option<u64>,
    /// Modules LoRA adapts (comma-separated; default q_proj,v_proj).
    #[arg(long, value_delimiter = ',', value_name = "MODULES")]
    pub lora_targets: Option<Vec<String>>,
    /// Load the frozen base in 4-bit (QLoRA).
    #[arg(long)]
    pub load_in_4bit: bool,
    /// The bitsandbytes release the run uses (before 0.43.2 its 4-bit matmul keeps each
    /// input for backward). Default: the one the config's repository pins, else the newest.
    #[arg(long, value_name = "VERSION")]
    pub bitsandbytes: Option<String>,
    /// Gradient accumulation steps (above 1, the gradients stay allocated through every
    /// micro-batch's forward and backward).
    #[arg(long, value_name = "N")]
    pub grad_accum: Option<u64>,
    /// ZeRO stage (3 = FSDP full shard).
    #[arg(long, value_name = "0|1|2|3")]
    pub zero: Option<u8>,
    /// Keep optimizer states in CPU memory (DeepSpeed offload_optimizer, FSDP CPU offload).
    #[arg(long)]
    pub offload_optimizer: bool,
    /// Keep parameters in CPU memory, gathered per block (ZeRO-3 offload_param).
    #[arg(long)]
    pub offload_params: bool,
    /// Data-parallel GPUs the model states are sharded over.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u64>,
    /// The GPU or machine to check against (default: the config's target or `workstation`).
    #[arg(long, value_name = "NAME|FILE")]
    pub target: Option<String>,
    /// Compare several GPUs: `all`, or a comma-separated list.
    #[arg(long, value_delimiter = ',', value_name = "all|LIST")]
    pub targets: Option<Vec<String>>,
    /// Fraction of GPU memory the framework may use (JAX XLA_PYTHON_CLIENT_MEM_FRACTION).
    #[arg(long, value_name = "F")]
    pub memory_fraction: Option<f64>,
    /// Optimizer steps of the run, for the run time (default: the config's).
    #[arg(long, value_name = "N")]
    pub steps: Option<u64>,
    /// `full` prints a table, `json` an object.
    #[arg(long, alias = "format", value_enum, default_value = "full")]
    pub output_format: OutputFormat,
}

#[derive(Debug, Args, Clone)]
pub struct DetectArgs {
    /// Add (or replace) the `[target]` table in this hwlint.toml instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// `full` prints the TOML table, `json` what was detected.
    #[arg(long, alias = "format", value_enum, default_value = "full")]
    pub output_format: OutputFormat,
}

/// A positive, finite amount of memory in GB.
fn positive_gb(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!("`{s}` is not a positive number of GB")),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}
