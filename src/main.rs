//! The `toolgate` command: parses the command line, runs the library and maps the outcome to
//! an exit code (see `exit.rs`). Errors are printed here, once.

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[expect(clippy::print_stderr, reason = "errors are printed here, once")]
fn main() -> ExitCode {
    let action_args = std::env::var(toolgate::cli::ACTION_ARGS_VARIABLE).ok();
    let argv = match toolgate::cli::with_action_args(
        std::env::args_os().collect(),
        action_args.as_deref(),
    ) {
        Ok(argv) => argv,
        Err(message) => {
            eprintln!("error: {message}");
            return toolgate::exit::Exit::Error.into();
        }
    };
    let cli = toolgate::cli::Cli::parse_from(argv);
    match toolgate::run_cli(cli, &mut std::io::stdout(), &mut std::io::stderr()) {
        Ok(code) => code.into(),
        Err(error) => {
            // Every secret of the environment is redacted, whatever the error carries.
            let redactor = toolgate::redact::Redactor::from_env();
            eprintln!("error: {}", redactor.redact(&format!("{error:#}")));
            toolgate::exit::Exit::Error.into()
        }
    }
}
