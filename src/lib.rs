//! toolgate measures how well an LLM agent uses tools over the Model Context Protocol and
//! gates pull requests on it.
//!
//! Data flows one way, each arrow a plain data type owned by the module that produces it:
//!
//! ```text
//! scenario -> harness(backend, agent) -> trace -> score -> results -> gate -> report / github
//! ```
//!
//! - [`scenario`]: the scenario format, loading and validation, the assertion language and
//!   fixtures (uses only the [`catalog`]).
//! - [`harness`]: a fresh [`harness::Harness`] per run serves the catalog over MCP (rmcp lives
//!   here), injects faults, checks arguments and records the trace, in front of a
//!   [`harness::Backend`]: today the built-in `world`; the seam for the user's own servers,
//!   mocks and recorded cassettes. `runner` drives each run with an `agent`. `suite`
//!   reads the user's own servers (`servers:` in `toolgate.yaml`), which the harness's
//!   [`harness::ServerBackends`] starts fresh for every run.
//! - [`trace`]: the call records every later stage reads, and the `trace.jsonl` line type.
//! - [`score`]: deterministic checks, trajectory metrics, assertion evaluation (reads
//!   scenarios and traces only).
//! - [`results`]: the run report (`results.json`), pins, shards and look-alike pointers.
//! - [`gate`]: baseline, history, policy -> verdict; [`report`] renders text (pure; its
//!   [`report::html`] page is public for its benchmark), and
//!   [`github`] delivers it (octocrab lives here).
//! - [`provider`]: where model APIs are reached and the HTTP client for them, shared by the
//!   agents and the `judge`; `defaults` holds every default.
//! - Neutral helpers any layer may use: `json`, `values` (how checks compare values),
//!   `calendar`, `arith`, `prose` (values and claims in written English), [`fs`],
//!   [`exit`], `tls`.
//!
//! `tests/it/architecture.rs` enforces these directions and the crates' corners.
//!
//! [`verify`] checks the benchmark itself: the reference agent passes every scenario, and
//! broken trajectories derived from its runs fail.
//! Apart from that flow, [`lint`] checks a catalog (built-in, or any MCP server's tools/list)
//! for what makes agents fail before a scenario runs: broken schemas, names a provider rejects,
//! vague descriptions, look-alike tools, context cost and drift against a lock file.

pub mod agent;
pub(crate) mod arith;
pub(crate) mod calendar;
pub mod catalog;
pub mod cli;
pub(crate) mod config;
pub(crate) mod defaults;
pub mod exit;
pub mod fs;
pub mod gate;
pub mod github;
pub mod harness;
pub mod ingest;
pub(crate) mod json;
pub mod judge;
pub mod lint;
pub mod mock;
pub(crate) mod plan;
pub(crate) mod process;
pub(crate) mod prose;
pub mod provider;
pub mod redact;
pub mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod score;
pub(crate) mod suite;
pub(crate) mod tls;
pub mod trace;
pub(crate) mod values;
pub mod verify;
pub(crate) mod world;

mod commands;

pub use commands::run_cli;
