//! The subcommands: wiring between the CLI and the library.

mod adaptive;
mod cassette;
mod catalog;
mod gating;
mod html;
mod init;
mod proxy;
mod run;
mod schema;
mod score;
mod serve;
mod spend;
mod suite;
mod view;

use std::io::Write;

use anyhow::{Context as _, Result};

use crate::cli::{CassetteCommand, Cli, Command, MockCommand, ValidateArgs};
use crate::exit::Exit;

/// Runs one command; the report goes to `out`. Returns the exit status; `Err` means exit 2.
pub fn run_cli(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    match cli.command {
        Command::Gate(args) => run::gate_command(&args, out, err),
        Command::Validate(args) => validate_command(&args, out, err),
        Command::Serve(args) => serve::serve_command(&args),
        Command::Tools(args) => catalog::tools_command(&args, out),
        Command::Verify(args) => init::verify_command(&args, out, err),
        Command::Lint(args) => catalog::lint_command(&args, out, err),
        Command::Snapshot(args) => catalog::snapshot_command(&args, out),
        Command::Drift(args) => catalog::drift_command(&args, out),
        Command::Baseline(args) => gating::baseline_command(&args, out),
        Command::Record(args) => gating::record_command(&args, out),
        Command::Merge(args) => gating::merge_command(&args, out),
        Command::Mock(args) => match &args.command {
            MockCommand::Serve(args) => serve::mock_serve_command(args, out, err),
            MockCommand::FromCassette(args) => cassette::from_cassette_command(args, out, err),
        },
        Command::Cassette(args) => match &args.command {
            CassetteCommand::Verify(args) => cassette::verify_command(args, out),
        },
        Command::Proxy(args) => proxy::proxy_command(&args, out, err),
        Command::Score(args) => score::score_command(&args, out),
        Command::Init(args) => init::init_command(&args, out, err),
        Command::Schema(args) => schema::schema_command(&args, out),
        Command::View(args) => view::view_command(&args, out, err),
    }
}

/// How many draft ids a summary line names before it says how many more there are (a suite
/// `init` wrote for a large catalog has hundreds).
const DRAFTS_SHOWN: usize = 10;

/// The first `shown` of `names`, comma-separated, and how many are left out:
/// `a, b, ... and 3 more`.
fn first_names(names: &[&str], shown: usize) -> String {
    if names.len() <= shown {
        return names.join(", ");
    }
    format!(
        "{}, ... and {} more",
        names[..shown].join(", "),
        names.len() - shown
    )
}

/// The ids of the scenarios marked `draft: true`, in suite order.
fn draft_ids(scenarios: &[crate::scenario::Scenario]) -> Vec<&str> {
    scenarios
        .iter()
        .filter(|s| s.draft)
        .map(|s| s.id.as_str())
        .collect()
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
}

/// Resolves on Ctrl-C or SIGTERM (see [`crate::process::stop_requested`]).
async fn interrupted() {
    crate::process::stop_requested().await;
}

fn validate_command(args: &ValidateArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, None)?;
    let loaded = suite::load(
        &args.suite,
        &file,
        &file_path,
        args.lock.as_deref(),
        suite::CALL_TIMEOUT,
    )?;
    loaded.warn_listing(err)?;
    let selected = loaded
        .scenarios
        .iter()
        .filter(|s| loaded.smoke.contains(s))
        .count();
    write!(
        out,
        "{} scenarios valid; the smoke set selects {selected}",
        loaded.scenarios.len()
    )?;
    match &loaded.mocks {
        Some(path) => writeln!(out, " (mock catalog `{}`)", path.display())?,
        None => writeln!(out)?,
    }
    let drafts = draft_ids(&loaded.scenarios);
    if !drafts.is_empty() {
        writeln!(
            out,
            "{} drafts still to finish (`draft: true`): {}",
            drafts.len(),
            first_names(&drafts, DRAFTS_SHOWN)
        )?;
    }
    if !loaded.servers.is_empty() {
        let source = match (&args.lock, &loaded.replay) {
            (Some(_), _) => "the lock file".to_owned(),
            (None, Some(dir)) => format!("as recorded in `{}`", dir.display()),
            (None, None) => "their live tools/list".to_owned(),
        };
        writeln!(
            out,
            "checked against {} tools of {} servers ({source})",
            loaded.catalog.tools().len(),
            loaded.servers.len()
        )?;
    }
    Ok(Exit::Pass)
}

/// The `run` block of the results: how this run was configured, without secrets.
/// A run id unique on this machine: milliseconds since the Unix epoch and the process id,
/// both in hex (`19ae2f3c0b1-3f2a`).
pub(super) fn new_run_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    format!("{millis:x}-{:x}", std::process::id())
}
