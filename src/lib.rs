//! toolgate measures how well an LLM agent uses tools over the Model Context Protocol and
//! gates pull requests on it.
//!
//! Data flows one way:
//! scenario files ([`scenario`]) -> a fresh harness per run ([`harness`], backed by
//! [`world`] and the [`catalog`]) driven by an agent ([`agent`]) -> the trace -> deterministic
//! checks ([`score`]) -> the results ([`results`]) -> the verdict ([`gate`]) -> text
//! ([`report`]).
//!
//! [`verify`] checks the benchmark itself: the reference agent passes every scenario, and
//! broken trajectories derived from its runs fail.
//! Apart from that flow, [`lint`] checks a catalog (built-in, or any MCP server's tools/list)
//! for what makes agents fail before a scenario runs: broken schemas, names a provider rejects,
//! vague descriptions, look-alike tools, context cost and drift against a lock file.

pub mod agent;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod defaults;
pub mod exit;
pub mod fs;
pub mod gate;
pub mod github;
pub mod harness;
pub mod json;
pub mod judge;
pub mod lint;
pub mod provider;
pub mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod score;
pub mod tls;
pub mod trace;
pub mod verify;
pub mod world;

mod commands;

pub use commands::run_cli;
