//! Renderers: pure functions from results and verdict to text. Choosing where the text goes
//! (stdout, a file) happens in the caller.

pub mod catalog;
pub mod json;
pub mod sanitize;
pub mod table;
