//! `toolgate proxy`: toolgate between any MCP client and one stdio server, as a drop-in
//! `mcpServers` entry. The client sees the server's tools and answers; every call goes through
//! the harness (traced, faults injected from a file, optionally recorded as a cassette).
//! Calls the input schema rejects are still forwarded (the server decides), with their
//! violations in the trace.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result};

use crate::cli::ProxyArgs;
use crate::exit::Exit;
use crate::harness::cassette::{RecordingBackends, Scrubber};
use crate::harness::{self, Harness, ServerBackends};
use crate::suite::{ServerSpec, ToolFilter, Transport};
use crate::trace::TraceLine;

pub(super) fn proxy_command(
    args: &ProxyArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let (program, rest) = args
        .command
        .split_first()
        .context("give the server command after `--`")?;
    let scenario = args.scenario.clone().unwrap_or_else(|| args.name.clone());
    // Appended to, so that a client restarting the server keeps the earlier sessions; each
    // session's lines carry its own run id, which tells them apart.
    let trace = args
        .trace
        .as_deref()
        .map(TraceFile::append_to)
        .transpose()?
        .map(Arc::new);
    let writer = trace.clone();
    let session = super::new_run_id();
    let traced_as = scenario.clone();
    let spec = ServerSpec {
        name: args.name.clone(),
        transport: Transport::Stdio {
            command: program.clone(),
            args: rest.to_vec(),
            env: Vec::new(),
            cwd: None,
        },
        filter: ToolFilter::default(),
        reset: None,
        setup: None,
    };
    // A server may answer with what it was given: its environment, `env NAME=value`.
    let secrets = spec.secrets();
    let scrubber = Scrubber::new(secrets.clone(), &[])?;
    // Without a trace file nothing looks at the calls: none is recorded.
    let observer = writer.map(|file| -> crate::harness::Observer {
        Box::new(move |call| {
            let mut line = TraceLine::call(&traced_as, 0, call);
            line.run_id = Some(session.clone());
            let mut value = serde_json::to_value(&line).expect("a trace line is JSON");
            scrubber.scrub(&mut value);
            file.append(&value.to_string());
        })
    });
    if args.faults.is_none() && args.record.is_none() && args.listen.is_none() {
        // Nothing changes on the way: relay the bytes and trace from copies, off the
        // critical path.
        let mut command = std::process::Command::new(program);
        command.args(rest);
        crate::harness::tap::relay(command, program, observer)?;
        super::serve::trace_written(trace)?;
        return Ok(Exit::Pass);
    }
    if let Some(address) = &args.listen {
        let listen = harness::http::Listen {
            allow_remote: args.allow_remote,
            ..harness::http::Listen::default()
        };
        harness::http::check_address(address, &listen)?;
    }
    // One thread on stdio, as `serve`: every message hop between threads costs a wake-up.
    let rt = match args.listen {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("failed to start the async runtime")?,
        Some(_) => super::runtime()?,
    };
    let root = std::env::current_dir().context("failed to read the working directory")?;
    let discovery = rt.block_on(harness::discover(std::slice::from_ref(&spec), &root))?;
    let catalog = discovery.catalog()?;
    let faults = match &args.faults {
        Some(path) => crate::scenario::load_faults(path, &catalog)?,
        None => Vec::new(),
    };
    let backends = ServerBackends::new(vec![spec], &root, &discovery, super::suite::CALL_TIMEOUT)?;
    let backend = match &args.record {
        Some(dir) => {
            let recording =
                RecordingBackends::new(backends, &discovery, dir, Scrubber::new(secrets, &[])?)?;
            rt.block_on(recording.start_named(&scenario, 0, None))
        }
        None => rt.block_on(backends.start_seeded(None)),
    }
    .map_err(anyhow::Error::msg)?;
    // Calls stream to the trace file and are not kept: a proxy may run for days.
    let harness = Harness::new(backend, faults)
        .forwarding_invalid()
        .streaming(observer.unwrap_or_else(|| Box::new(|_| {})));
    let harness = Arc::new(harness);
    let served = rt.block_on(async {
        match &args.listen {
            None => {
                tokio::select! {
                    served = harness::server::serve_stdio(harness.clone()) => served,
                    () = super::interrupted() => Ok(()),
                }
            }
            Some(address) => {
                let server =
                    super::serve::listen(harness.clone(), address, args.allow_remote, err).await?;
                writeln!(out, "proxying `{}` at {}", args.name, server.url())?;
                out.flush()?;
                super::interrupted().await;
                Ok(())
            }
        }
    });
    rt.block_on(harness.close());
    served?;
    super::serve::trace_written(trace)?;
    Ok(Exit::Pass)
}

/// A trace file written one line per call, as calls are recorded (`proxy`, `serve`).
pub(super) struct TraceFile {
    path: std::path::PathBuf,
    state: Mutex<(std::fs::File, Option<String>)>,
}

impl TraceFile {
    /// A new trace at `path` (an old file is replaced).
    pub(super) fn create(path: &Path) -> Result<TraceFile> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("failed to create trace `{}`", path.display()))?;
        Ok(TraceFile {
            path: path.to_path_buf(),
            state: Mutex::new((file, None)),
        })
    }

    /// The trace at `path`, appended to (created when missing).
    pub(super) fn append_to(path: &Path) -> Result<TraceFile> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("failed to open trace `{}`", path.display()))?;
        Ok(TraceFile {
            path: path.to_path_buf(),
            state: Mutex::new((file, None)),
        })
    }

    /// Appends `line` (one JSON value, no line break); the first write error is kept for
    /// [`TraceFile::failure`].
    pub(super) fn append(&self, line: &str) {
        let mut json = String::with_capacity(line.len() + 1);
        json.push_str(line);
        json.push('\n');
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.1.is_none()
            && let Err(error) = state.0.write_all(json.as_bytes())
        {
            state.1 = Some(format!(
                "failed to write trace `{}`: {error}",
                self.path.display()
            ));
        }
    }

    /// The first write error, if any.
    pub(super) fn failure(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1
            .clone()
    }
}
