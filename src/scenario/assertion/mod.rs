//! The final-state assertion language: CEL expressions over a backend's state, parsed and
//! checked when a scenario loads (`parse`) and
//! evaluated after a run (`eval`) as a pure function of the assertion and the two states.
//!
//! A scenario's `final_state_assertions` are strings such as `contacts.count == baseline + 1`.
//! They are ordinary [CEL](https://github.com/google/cel-spec) (evaluated by the `cel` crate,
//! which is not Turing-complete), with four additions made by rewriting the parsed tree:
//!
//! - `X.count` is the size of the list or map `X`. A map that has a `count` key keeps it:
//!   `{"count": 7}.count` is `7`, so a record's own `count` field is never hidden.
//! - `xs[-1]` is the last element of `xs`, `xs[-2]` the one before it. An index out of range
//!   either way is an evaluation error naming the list and its length.
//! - `baseline`, on the right-hand side of a top-level comparison, is the left-hand side
//!   evaluated on the seeded (initial) state.
//! - Numbers compare and combine by value: `1 == 1.0` (plain CEL already compares mixed numbers),
//!   and arithmetic that mixes `int` and `double` is done in `double` (plain CEL rejects it).
//!
//! Names are checked at parse time: every free identifier must be a top-level key of the state,
//! `baseline`, or a CEL type name (`int`, `string`, ...). Evaluation is pure and deterministic.

mod eval;
mod parse;

use cel::common::ast::IdedExpr;

pub use eval::{Evaluation, States};

/// The name that stands for the left-hand side evaluated on the seeded state.
const BASELINE: &str = "baseline";

/// CEL's comparison operators (`==`, `!=`, `<`, `<=`, `>`, `>=`), as the parser names them.
const COMPARISONS: [&str; 6] = ["_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"];

/// Functions the rewrite introduces. Their `@` prefix cannot be written in CEL source, so they
/// never clash with a user's call.
const COUNT_FN: &str = "@count";
const INDEX_FN: &str = "@index";
const ADD_FN: &str = "@add";
const SUB_FN: &str = "@sub";
const MUL_FN: &str = "@mul";
const DIV_FN: &str = "@div";

/// Variables bound when comparing the two evaluated sides of a top-level comparison.
const LEFT_VAR: &str = "@left";
const RIGHT_VAR: &str = "@right";

/// Longest rendering of a value in a detail or error message, in characters.
const MAX_VALUE_CHARS: usize = 200;

/// A parsed and validated final-state assertion.
///
/// Holds the source and the rewritten syntax tree (not a compiled program), so it is cheap to
/// clone and can be shared across threads.
#[derive(Clone, Debug)]
pub struct Assertion {
    source: String,
    body: Body,
    /// Operator characters in the source (see [`MAX_OPERATORS`]): how deep the tree may be.
    operators: usize,
}

/// A CEL expression over one state that yields a value rather than a verdict: where an answer
/// value comes from (`inventory.filter(p, p.id == "SKU-200")[0].on_hand`). Parsed like an
/// assertion (the same names, additions and size bounds), without `baseline`.
#[derive(Clone, Debug)]
pub struct Expression(Assertion);

impl Expression {
    /// Parses `source`; `roots` are the state's top-level names.
    ///
    /// # Errors
    ///
    /// As [`Assertion::parse`], and [`AssertionError::MisplacedBaseline`] for any `baseline`.
    pub fn parse(source: &str, roots: &[String]) -> Result<Expression, AssertionError> {
        let assertion = Assertion::parse(source, roots)?;
        if let Body::Comparison(comparison) = &assertion.body
            && comparison.uses_baseline
        {
            return Err(AssertionError::MisplacedBaseline {
                assertion: source.to_owned(),
                reason: "a value expression reads one state, so it has no baseline".to_owned(),
            });
        }
        Ok(Expression(assertion))
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.0.source
    }
}

/// The shape of an assertion: a top-level comparison is evaluated side by side, so that a
/// failure can show both values and `baseline` can be computed.
#[derive(Clone, Debug)]
enum Body {
    Comparison(Comparison),
    Plain(IdedExpr),
}

#[derive(Clone, Debug)]
struct Comparison {
    /// CEL's operator name, e.g. `_==_`.
    operator: &'static str,
    left: IdedExpr,
    right: IdedExpr,
    /// The left-hand side as written, for messages.
    left_text: String,
    /// The right-hand side as written, for messages.
    right_text: String,
    /// Whether the right-hand side mentions `baseline`.
    uses_baseline: bool,
}

/// Why an assertion could not be parsed.
///
/// Every variant quotes the assertion as written.
#[derive(Debug, thiserror::Error)]
pub enum AssertionError {
    /// The source is not valid CEL. `details` has one entry per syntax error, each with its line
    /// and column (1-based), the offending line and a caret under the column.
    #[error("failed to parse assertion `{assertion}`:\n{details}")]
    Syntax {
        /// The assertion as written.
        assertion: String,
        /// The parser's messages with positions and carets.
        details: String,
    },
    /// The assertion is longer, more deeply nested or has more operators than
    /// [`MAX_ASSERTION_CHARS`], [`MAX_NESTING`] or [`MAX_OPERATORS`] allow.
    #[error("assertion is too large to evaluate safely: {reason}")]
    TooLarge {
        /// Which bound was exceeded, with the bound and the measured size.
        reason: String,
    },
    /// A free identifier is neither a top-level name of the state, `baseline`, nor a CEL name.
    #[error("unknown name `{name}` in assertion `{assertion}`; {known}")]
    UnknownName {
        /// The assertion as written.
        assertion: String,
        /// The unknown identifier.
        name: String,
        /// The known names, as a sentence fragment ("known names: `a`, `b`").
        known: String,
    },
    /// `baseline` appears outside the right-hand side of a top-level comparison.
    #[error("misplaced `baseline` in assertion `{assertion}`: {reason}")]
    MisplacedBaseline {
        /// The assertion as written.
        assertion: String,
        /// Where `baseline` was found and where it may go.
        reason: String,
    },
}

/// The longest assertion accepted, in characters.
pub const MAX_ASSERTION_CHARS: usize = 4_096;

/// The deepest nesting of `(`, `[` and `{` accepted. Real assertions nest three or four
/// levels; the bound keeps the parser's recursion (tens of kilobytes of stack per level in a
/// debug build) far inside the 64 MiB stack the parser runs on.
pub const MAX_NESTING: usize = 32;

/// The most operator characters (`+ - * / % < > = ! & | ? .`) outside string literals. Each
/// one can deepen the parsed tree by a level, which evaluation walks recursively.
pub const MAX_OPERATORS: usize = 256;

/// Assertions with at most this many operator characters are evaluated on the caller's
/// thread; larger ones on a thread of [`LARGE_STACK_BYTES`].
const INLINE_OPERATORS: usize = 48;
