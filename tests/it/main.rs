//! The integration tests: the `toolgate` binary end to end, with real MCP peers as child
//! processes.

mod lint;
