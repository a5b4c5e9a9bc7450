//! The one integration-test binary: the CLI end to end, agents against fake providers on
//! loopback, and third-party MCP clients against `toolgate serve`.

mod cli;
mod gate;
mod github;
mod openai_agent;
mod peers;
mod support;
