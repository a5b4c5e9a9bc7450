//! A suite of the user's own MCP servers: the `servers:` section of `toolgate.yaml` (or an
//! `mcpServers` file it points at), read into validated [`ServerSpec`]s.
//!
//! Two layers, as for every file users write: `file` mirrors the YAML/JSON exactly (unknown
//! fields are errors naming the file and the field), and [`from_value`] checks it and expands
//! `${VAR}` from the environment. The per-run templates (`{seed_dir}`, `{seed}`) are filled in
//! by [`ServerSpec::launch_for`] when a run starts. See `docs/own-servers.md`.

mod file;
mod load;
mod seed;

use std::path::{Path, PathBuf};

use globset::GlobSet;

use crate::redact::Redactor;

pub(crate) use file::ServersSchema;
pub(crate) use load::{Fields, expand_vars, from_value, read_mcp_json};
pub(crate) use seed::{archive_stem, unpack};

/// One of the user's servers, validated.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's key under `servers:` (or `mcpServers`), unique in the suite.
    pub name: String,
    /// How the server is reached.
    pub transport: Transport,
    /// Which of its tools the suite uses.
    pub filter: ToolFilter,
    /// What makes an HTTP server's state fresh before each run; `None` for stdio servers (a
    /// fresh process per run) and HTTP servers without state.
    pub reset: Option<Reset>,
    /// A stdio server's `setup:` command (program first, at least one element, templates not
    /// yet filled): run in `{seed_dir}` with the server's `env` before every start of the
    /// server; `None` for HTTP servers and stdio servers without one.
    pub setup: Option<Vec<String>>,
}

/// How a server is reached.
#[derive(Debug, Clone)]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout, started fresh for every run.
    Stdio {
        /// The program (looked up on `PATH` unless it has a `/`; a relative path is the
        /// suite root's, whatever `cwd` is).
        command: String,
        /// Its arguments; may hold `{seed_dir}` and `{seed}`.
        args: Vec<String>,
        /// Extra environment variables, `${VAR}` already expanded; values may hold templates.
        /// Values are secrets: never printed.
        env: Vec<(String, String)>,
        /// The working directory, absolute or relative to the suite root (the default);
        /// may hold templates.
        cwd: Option<String>,
    },
    /// A streamable HTTP server that is already running (toolgate does not start it).
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:3001/mcp`.
        url: String,
        /// Extra request headers, `${VAR}` already expanded. Values are secrets.
        headers: Vec<(String, String)>,
    },
}

/// What resets an HTTP server before each run.
#[derive(Debug, Clone, PartialEq)]
pub enum Reset {
    /// A program and its arguments, run in the suite root (templates allowed); a non-zero
    /// exit makes the run errored.
    Command(Vec<String>),
    /// A tool call on the server itself, outside the trace; an error result makes the run
    /// errored.
    Tool {
        /// The tool (it need not pass the suite's include/exclude filter).
        name: String,
        /// Its arguments.
        arguments: serde_json::Map<String, serde_json::Value>,
    },
}

/// A server's `include` and `exclude` tool-name globs (`*`, `?`, `[abc]`, as `globset`
/// reads them). A tool is used when it matches some `include` (or `include` is empty) and
/// no `exclude`.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl ToolFilter {
    /// A filter admitting exactly the tools named in `names` (matched literally); all tools
    /// when `names` is empty.
    pub fn only(names: &[&str]) -> ToolFilter {
        if names.is_empty() {
            return ToolFilter::default();
        }
        let mut builder = globset::GlobSetBuilder::new();
        for name in names {
            builder.add(
                globset::Glob::new(&globset::escape(name)).expect("an escaped name is a glob"),
            );
        }
        ToolFilter {
            include: Some(builder.build().expect("literal globs build")),
            exclude: None,
        }
    }

    /// Whether the suite uses the tool named `tool`.
    pub fn admits(&self, tool: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(tool))
            && self.exclude.as_ref().is_none_or(|set| !set.is_match(tool))
    }
}

/// The per-run values of the templates in a stdio server's `args`, `env` and `cwd`.
#[derive(Debug, Clone)]
pub struct RunPaths {
    /// `{seed_dir}`: the run's own fresh temporary directory.
    pub seed_dir: PathBuf,
    /// `{seed}`: the copy of the scenario's `seed_path` inside it; `{seed_dir}/seed` when the
    /// scenario has none (the path does not exist then).
    pub seed: PathBuf,
}

/// A stdio server's launch for one run: templates filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The working directory (absolute).
    pub cwd: PathBuf,
}

impl ServerSpec {
    /// The launch of this stdio server for a run with `paths`, resolving `cwd` against `root`
    /// (the suite root, also the default), and a `command` given by a relative path with a
    /// `/` (`../bin/server`) against `root` too, made absolute, so that it does not depend on
    /// `cwd`; a bare name stays as it is, for a `PATH` lookup. `None` for an HTTP server.
    pub fn launch_for(&self, root: &Path, paths: &RunPaths) -> Option<Launch> {
        let Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } = &self.transport
        else {
            return None;
        };
        let fill = |text: &str| fill_templates(text, paths);
        let program = fill(command);
        // A relative path is the suite root's, whatever `cwd` is (the child would otherwise
        // look for it from its own working directory).
        let program = if program.contains('/') && Path::new(&program).is_relative() {
            let joined = root.join(&program);
            std::path::absolute(&joined)
                .unwrap_or(joined)
                .to_string_lossy()
                .into_owned()
        } else {
            program
        };
        Some(Launch {
            command: program,
            args: args.iter().map(|arg| fill(arg)).collect(),
            env: env
                .iter()
                .map(|(key, value)| (key.clone(), fill(value)))
                .collect(),
            cwd: match cwd {
                Some(cwd) => root.join(fill(cwd)),
                None => root.to_path_buf(),
            },
        })
    }

    /// The server's command line or URL as pins and reports show it: the program and its
    /// arguments (never `env` or header values), or the URL, with every value of
    /// [`ServerSpec::secrets`] redacted (a `${API_TOKEN}` in `args` is expanded to run the
    /// server, never to pin it).
    pub fn label(&self) -> String {
        let shown = match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => url.clone(),
        };
        self.secrets().redact(&shown)
    }

    /// The secret values of this server, to keep out of traces, cassettes, results and
    /// messages: `env` and header values, URL credentials, the values of `NAME=value`
    /// arguments whose name is a secret's (`env API_TOKEN=... server`), and the secrets of
    /// toolgate's own environment (see [`Redactor::from_env`]), which the server inherits.
    pub fn secrets(&self) -> Redactor {
        let mut redactor = Redactor::from_env();
        match &self.transport {
            Transport::Stdio { env, args, .. } => {
                for (_, value) in env {
                    redactor.add(value);
                }
                let assignments = args.iter().filter_map(|arg| {
                    let (name, value) = arg.split_once('=')?;
                    Some((name.to_owned(), value.to_owned()))
                });
                redactor.extend(&Redactor::from_vars(assignments));
            }
            Transport::Http { url, headers } => {
                redactor.add_url_credentials(url);
                for (_, value) in headers {
                    // `Bearer TOKEN`: the token alone is as secret as the whole value.
                    redactor.add(value);
                    for word in value.split_whitespace() {
                        redactor.add(word);
                    }
                }
            }
        }
        redactor
    }
}

/// `text` with `{seed_dir}` and `{seed}` replaced by the run's paths.
pub(crate) fn fill_templates(text: &str, paths: &RunPaths) -> String {
    text.replace("{seed_dir}", &paths.seed_dir.to_string_lossy())
        .replace("{seed}", &paths.seed.to_string_lossy())
}

#[cfg(test)]
mod tests;
