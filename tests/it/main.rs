//! The integration tests, one binary.

mod agents;
