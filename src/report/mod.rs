//! Renderers: pure functions from results and verdict to text, one file per format. Choosing
//! where the text goes (stdout, a file, the step summary, a pull-request comment) happens in
//! the caller.

pub mod catalog;
pub mod comment;
pub mod github;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod otel;
pub mod sanitize;
pub mod table;
pub mod text;
pub mod traces;

#[cfg(test)]
pub(crate) mod sample;
