use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = hwlint::cli::Cli::parse();
    match hwlint::app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(report) => {
            hwlint::app::emit_err(&hwlint::app::error_text(&report));
            ExitCode::from(2)
        }
    }
}
