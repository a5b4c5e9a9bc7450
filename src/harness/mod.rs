//! The MCP harness: serves a run's catalog over MCP, intercepts every call into the trace,
//! checks arguments, injects faults, and hands the rest to the run's [`Backend`] (today the
//! built-in `World` (`crate::world`), through [`WorldBackend`]).
//!
//! rmcp lives here ([`server`], [`client`]); the rest of the crate sees plain data: the
//! [`CallRecord`](crate::trace::CallRecord)s of [`crate::trace`] and the final state.

mod backend;
pub mod cassette;
mod child;
pub mod client;
mod elicit;
pub mod http;
mod interceptor;
mod line_transport;
pub mod server;
pub mod servers;
pub mod tap;
mod toolset;
pub mod user_endpoint;
mod wire_tap;

pub use backend::{Backend, BackendFactory, ToolAnswer, WorldBackend, WorldBackends};
pub use elicit::{ElicitationUser, Elicitations, ScriptedUser};
pub use interceptor::{Harness, Observer};
pub use servers::{Discovery, ServerBackends, discover, discover_seeded};
pub use toolset::{SchemaCheck, ToolSet, check_arguments, nullable_type};
