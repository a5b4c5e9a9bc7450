//! toolgate measures how well an LLM agent uses tools over the Model Context Protocol and
//! gates pull requests on it.
//!
//! Data flows one way:
//! scenario files ([`scenario`]) -> a fresh harness per run ([`harness`], backed by
//! [`world`] and the [`catalog`]) driven by an agent ([`agent`]) -> the trace -> deterministic
//! checks ([`score`]) -> the results ([`results`]) -> the verdict ([`gate`]) -> text
//! ([`report`]).

pub mod agent;
pub mod catalog;
pub mod ci;
pub mod cli;
pub mod exit;
pub mod gate;
pub mod github;
pub mod harness;
pub mod pins;
pub mod report;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod score;
pub mod shard;
pub mod world;

mod commands;

pub use commands::run_cli;
