//! Renderers: pure functions from results and verdict to text, one file per format. Choosing
//! where the text goes (stdout, a file, the step summary, a pull-request comment) happens in
//! the caller.

pub(crate) mod catalog;
pub(crate) mod comment;
pub(crate) mod github;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod otel;
pub(crate) mod sanitize;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod traces;

#[cfg(test)]
pub(crate) mod sample;
