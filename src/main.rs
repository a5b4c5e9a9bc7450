//! The `toolgate` command: parses the command line, runs the library and maps the outcome to
//! an exit code (see `exit.rs`). Errors are printed here, once.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = toolgate::cli::Cli::parse();
    match toolgate::run_cli(cli, &mut std::io::stdout()) {
        Ok(code) => code.into(),
        Err(error) => {
            eprintln!("error: {error:#}");
            toolgate::exit::Exit::Error.into()
        }
    }
}
