//! The one integration-test binary, one module per area: the CLI end to end, the benchmark's
//! shape, agents against fake providers on loopback and as child processes, the `openai` agent
//! against a real local model server (llama-cpp-python), the judge, the gate in CI (baselines,
//! reports, a fake GitHub), the catalog linter against real MCP servers, and third-party MCP
//! clients against `toolgate serve`, and the example suites on real third-party servers.

mod action;
mod agents;
mod architecture;
mod bench;
mod captures;
mod cassettes;
mod cli;
mod conversations;
mod elicitation;
mod example_suites;
mod gate;
mod github;
mod init_servers;
mod judge;
mod lint;
mod listeners;
mod local_models;
mod mocks;
mod openai_agent;
mod own_servers;
mod peers;
mod production;
mod reliability;
mod report_browser;
mod schemas;
mod simulated_users;
mod support;
