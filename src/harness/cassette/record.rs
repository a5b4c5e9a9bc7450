//! Recording: the servers' backends, each run also writing its cassette as it goes.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::{
    CASSETTE_VERSION, Header, Interaction, MAX_INTERACTION_BYTES, RecordedAnswer, ServerEntry,
    file_name,
};
use crate::harness::{Backend, BackendFactory, Discovery, ServerBackends, ToolAnswer, ToolSet};
use crate::redact::{REDACTED, Redactor};
use crate::scenario::Scenario;

/// What is removed from a cassette before a line is written: secret values and patterns.
#[derive(Debug, Clone, Default)]
pub struct Scrubber {
    secrets: Redactor,
    patterns: Vec<regex::Regex>,
}

impl Scrubber {
    /// Removes `secrets` (the servers' `env` and header values, the variables named by
    /// `cassettes.redact_env`) and every match of `patterns` (Rust `regex` syntax).
    ///
    /// Errors: a pattern that does not compile, naming it.
    pub fn new(secrets: Redactor, patterns: &[String]) -> Result<Scrubber> {
        let patterns = patterns
            .iter()
            .map(|pattern| {
                regex::Regex::new(pattern)
                    .with_context(|| format!("invalid redact pattern `{pattern}`"))
            })
            .collect::<Result<_>>()?;
        Ok(Scrubber { secrets, patterns })
    }

    /// `text` with every secret and pattern match replaced by `[redacted]`.
    pub fn text(&self, text: &str) -> String {
        let mut out = self.secrets.redact(text);
        for pattern in &self.patterns {
            if pattern.is_match(&out) {
                out = pattern.replace_all(&out, REDACTED).into_owned();
            }
        }
        out
    }

    /// Whether [`Scrubber::text`] leaves `text` as it is: no secret, no URL, no pattern match.
    fn is_clean(&self, text: &str) -> bool {
        self.secrets.is_clean(text) && !self.patterns.iter().any(|pattern| pattern.is_match(text))
    }

    /// `value` with every string (keys stay) scrubbed as [`Scrubber::text`].
    pub fn value(&self, value: &Value) -> Value {
        let mut value = value.clone();
        self.scrub(&mut value);
        value
    }

    /// Scrubs every string of `value` (keys stay) as [`Scrubber::text`], in place: a string
    /// with nothing to remove is neither copied nor rewritten, which keeps the cost of a large
    /// clean result to one read of it.
    pub fn scrub(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if !self.is_clean(text) {
                    *text = self.text(text);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub(item)),
            Value::Object(map) => map.values_mut().for_each(|item| self.scrub(item)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// `map` (a call's arguments) with every string value scrubbed.
    pub fn map(&self, map: &Map<String, Value>) -> Map<String, Value> {
        let mut map = map.clone();
        map.values_mut().for_each(|value| self.scrub(value));
        map
    }

    fn answer(&self, answer: &RecordedAnswer) -> RecordedAnswer {
        match answer {
            RecordedAnswer::Result(value) => RecordedAnswer::Result(self.value(value)),
            RecordedAnswer::Text(text) => RecordedAnswer::Text(self.text(text)),
            RecordedAnswer::ToolError(text) => RecordedAnswer::ToolError(self.text(text)),
            RecordedAnswer::ProtocolError(text) => RecordedAnswer::ProtocolError(self.text(text)),
        }
    }
}

/// The user's servers, every run writing `DIR/<scenario>.r<repeat>.jsonl`.
pub struct RecordingBackends {
    inner: ServerBackends,
    dir: PathBuf,
    servers: Arc<Vec<ServerEntry>>,
    /// Tool name -> server name.
    routes: Arc<HashMap<String, String>>,
    scrubber: Arc<Scrubber>,
}

impl RecordingBackends {
    /// Records the runs of `inner` (started from `discovery`) into `dir`, created when missing.
    ///
    /// Errors: `dir` cannot be created.
    pub fn new(
        inner: ServerBackends,
        discovery: &Discovery,
        dir: &Path,
        scrubber: Scrubber,
    ) -> Result<RecordingBackends> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create cassette directory `{}`", dir.display()))?;
        let servers: Vec<ServerEntry> = discovery
            .servers
            .iter()
            .map(|server| {
                ServerEntry::new(
                    &server.name,
                    server.version.clone(),
                    server.protocol_version.clone(),
                    server.tools.clone(),
                )
            })
            .collect();
        let routes = servers
            .iter()
            .flat_map(|server| {
                server.tools.iter().filter_map(|tool| {
                    Some((tool["name"].as_str()?.to_owned(), server.name.clone()))
                })
            })
            .collect();
        Ok(RecordingBackends {
            inner,
            dir: dir.to_path_buf(),
            servers: Arc::new(servers),
            routes: Arc::new(routes),
            scrubber: Arc::new(scrubber),
        })
    }
}

impl RecordingBackends {
    /// Fresh servers for run `repeat` of the scenario `id` (seeded with a copy of `seed`),
    /// recording into `DIR/<id>.r<repeat>.jsonl` (replacing it). `Err` says why the servers
    /// did not start or the cassette could not be written.
    pub fn start_named<'a>(
        &'a self,
        id: &'a str,
        repeat: u32,
        seed: Option<&'a Path>,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        Box::pin(async move {
            let path = self.dir.join(file_name(id, repeat));
            let header = Header {
                cassette_version: CASSETTE_VERSION,
                scenario: id.to_owned(),
                repeat,
                toolgate: env!("CARGO_PKG_VERSION").to_owned(),
                servers: self.servers.to_vec(),
            };
            // Servers first: a run whose servers do not start leaves no cassette to replay.
            let mut inner = self.inner.start_seeded(seed).await?;
            let file = CassetteWriter::create(&path).and_then(|mut file| {
                file.line(&header)?;
                Ok(file)
            });
            let file = match file {
                Ok(file) => file,
                Err(error) => {
                    inner.close().await;
                    return Err(format!("{error:#}"));
                }
            };
            let seed_dir = inner
                .paths()
                .map(|paths| paths.seed_dir.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(Box::new(RecordingBackend {
                inner,
                seed_dir,
                file,
                seq: 0,
                routes: Arc::clone(&self.routes),
                scrubber: Arc::clone(&self.scrubber),
                failure: None,
            }) as Box<dyn Backend>)
        })
    }
}

impl BackendFactory for RecordingBackends {
    fn tools(&self) -> &Arc<ToolSet> {
        self.inner.tools()
    }

    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        self.start_named(&scenario.id, repeat, scenario.seed_path.as_deref())
    }
}

/// A cassette being written, one flushed line at a time (a run cut short keeps its lines).
struct CassetteWriter {
    path: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
}

impl CassetteWriter {
    fn create(path: &Path) -> Result<CassetteWriter> {
        let file = std::fs::File::create(path)
            .with_context(|| format!("failed to create cassette `{}`", path.display()))?;
        Ok(CassetteWriter {
            path: path.to_path_buf(),
            file: std::io::BufWriter::new(file),
        })
    }

    /// Writes one line. Errors on a write failure, or on a line over
    /// [`MAX_INTERACTION_BYTES`], which a replay would refuse.
    fn line(&mut self, value: &impl serde::Serialize) -> Result<()> {
        let json = serde_json::to_string(value).expect("a cassette line is JSON");
        if json.len() > MAX_INTERACTION_BYTES {
            anyhow::bail!(
                "cassette `{}`: an answer of {} MiB is more than a cassette holds ({} MiB)",
                self.path.display(),
                json.len() / (1024 * 1024),
                MAX_INTERACTION_BYTES / (1024 * 1024)
            );
        }
        writeln!(self.file, "{json}")
            .and_then(|()| self.file.flush())
            .with_context(|| format!("failed to write cassette `{}`", self.path.display()))
    }
}

/// One run's servers, recording.
struct RecordingBackend {
    inner: Box<dyn Backend>,
    /// The run's seed directory, written as `{seed_dir}` (empty: nothing is replaced).
    seed_dir: String,
    file: CassetteWriter,
    seq: u64,
    routes: Arc<HashMap<String, String>>,
    scrubber: Arc<Scrubber>,
    failure: Option<String>,
}

impl Backend for RecordingBackend {
    fn tools(&self) -> &Arc<ToolSet> {
        self.inner.tools()
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer> {
        Box::pin(async move {
            let started = Instant::now();
            let answer = self.inner.call(tool, arguments).await;
            let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.seq += 1;
            let interaction = Interaction {
                seq: self.seq,
                server: self.routes.get(tool).cloned().unwrap_or_default(),
                tool: tool.to_owned(),
                arguments: self.scrubber.map(arguments),
                answer: self.scrubber.answer(&RecordedAnswer::from_answer(&answer)),
                latency_us,
            }
            .with_seed_placeholder(&self.seed_dir);
            if let Err(error) = self.file.line(&interaction) {
                self.failure.get_or_insert(format!("{error:#}"));
            }
            answer
        })
    }

    fn state(&self) -> Option<Value> {
        self.inner.state()
    }

    fn failure(&self) -> Option<String> {
        self.inner.failure().or_else(|| self.failure.clone())
    }

    fn paths(&self) -> Option<crate::suite::RunPaths> {
        self.inner.paths()
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        self.inner.close()
    }
}
