use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = hwlint::cli::Cli::parse();
    match hwlint::app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(report) => {
            eprintln!("{report:?}");
            ExitCode::from(2)
        }
    }
}
