//! The final-state assertion language: CEL expressions over a backend's state, parsed and
//! checked when a scenario loads. Evaluation is in [`crate::score`].
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

use std::fmt::Write as _;

use cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue};
use cel::common::types::CelString;
use cel::parser::{ParseErrors, Parser};

/// The name that stands for the left-hand side evaluated on the seeded state.
pub(crate) const BASELINE: &str = "baseline";

/// CEL's comparison operators (`==`, `!=`, `<`, `<=`, `>`, `>=`), as the parser names them.
pub(crate) const COMPARISONS: [&str; 6] = ["_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"];

/// Identifiers CEL itself resolves: its type names (`type(x) == int`).
const CEL_NAMES: [&str; 10] = [
    "bool",
    "bytes",
    "double",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
    "uint",
];

/// Functions the rewrite introduces. Their `@` prefix cannot be written in CEL source, so they
/// never clash with a user's call.
pub(crate) const COUNT_FN: &str = "@count";
pub(crate) const INDEX_FN: &str = "@index";
pub(crate) const ADD_FN: &str = "@add";
pub(crate) const SUB_FN: &str = "@sub";
pub(crate) const MUL_FN: &str = "@mul";
pub(crate) const DIV_FN: &str = "@div";

/// Variables bound when comparing the two evaluated sides of a top-level comparison.
pub(crate) const LEFT_VAR: &str = "@left";
pub(crate) const RIGHT_VAR: &str = "@right";

/// Longest rendering of a value in a detail or error message, in characters.
pub(crate) const MAX_VALUE_CHARS: usize = 200;

/// A parsed and validated final-state assertion.
///
/// Holds the source and the rewritten syntax tree (not a compiled program), so it is cheap to
/// clone and can be shared across threads.
#[derive(Clone, Debug)]
pub struct Assertion {
    pub(crate) source: String,
    pub(crate) body: Body,
    /// Operator characters in the source (see [`MAX_OPERATORS`]): how deep the tree may be.
    pub(crate) operators: usize,
}

/// The shape of an assertion: a top-level comparison is evaluated side by side, so that a
/// failure can show both values and `baseline` can be computed.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    Comparison(Comparison),
    Plain(IdedExpr),
}

#[derive(Clone, Debug)]
pub(crate) struct Comparison {
    /// CEL's operator name, e.g. `_==_`.
    pub(crate) operator: &'static str,
    pub(crate) left: IdedExpr,
    pub(crate) right: IdedExpr,
    /// The left-hand side as written, for messages.
    pub(crate) left_text: String,
    /// The right-hand side as written, for messages.
    pub(crate) right_text: String,
    /// Whether the right-hand side mentions `baseline`.
    pub(crate) uses_baseline: bool,
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

impl Assertion {
    /// Parses and validates `source`; `roots` are the state's top-level names.
    ///
    /// # Errors
    ///
    /// [`AssertionError::Syntax`] when `source` is not CEL, [`AssertionError::UnknownName`] when
    /// it names something that is not in `roots` (nor `baseline`, a comprehension variable or a
    /// CEL type name), and [`AssertionError::MisplacedBaseline`] when `baseline` is used other
    /// than on the right-hand side of a top-level comparison.
    pub fn parse(source: &str, roots: &[String]) -> Result<Assertion, AssertionError> {
        let operators = check_size(source)?;
        // The CEL parser recurses deeply per nesting level; give it a stack of known size
        // instead of whatever thread the load runs on.
        on_large_stack(|| Assertion::parse_bounded(source, roots, operators)).unwrap_or_else(
            |reason| {
                Err(AssertionError::TooLarge {
                    reason: format!("the parser could not run: {reason}"),
                })
            },
        )
    }

    /// [`Assertion::parse`] once the size bounds hold.
    fn parse_bounded(
        source: &str,
        roots: &[String],
        operators: usize,
    ) -> Result<Assertion, AssertionError> {
        let (expr, source_info) = Parser::default()
            .parse_with_source_info(source)
            .map_err(|errors| syntax_error(source, &errors))?;
        let text = SourceText {
            source,
            offsets: |id| source_info.offset_for(id),
        };

        check_names(source, &expr, roots)?;

        let body = match top_level_comparison(&expr) {
            Some((operator, left, right)) => {
                if mentions_baseline(left) {
                    return Err(AssertionError::MisplacedBaseline {
                        assertion: source.to_owned(),
                        reason: format!(
                            "it may only appear on the right-hand side of the comparison, \
                             not in `{}`",
                            text.left_of(expr.id)
                        ),
                    });
                }
                Body::Comparison(Comparison {
                    operator,
                    left: rewrite(left, &text),
                    right: rewrite(right, &text),
                    left_text: text.left_of(expr.id),
                    right_text: text.right_of(expr.id),
                    uses_baseline: mentions_baseline(right),
                })
            }
            None => {
                if mentions_baseline(&expr) {
                    return Err(AssertionError::MisplacedBaseline {
                        assertion: source.to_owned(),
                        reason: "it needs a top-level comparison (`==`, `!=`, `<`, `<=`, `>`, \
                                 `>=`) with `baseline` on the right-hand side"
                            .to_owned(),
                    });
                }
                Body::Plain(rewrite(&expr, &text))
            }
        };
        Ok(Assertion {
            source: source.to_owned(),
            body,
            operators,
        })
    }

    /// The assertion as written.
    pub fn source(&self) -> &str {
        &self.source
    }
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
pub(crate) const INLINE_OPERATORS: usize = 48;

/// The stack the parser (and the evaluation of a large assertion) runs on, in bytes: reserved
/// address space, of which only touched pages are committed.
const LARGE_STACK_BYTES: usize = 64 << 20;

/// Runs `work` on a scoped thread with a [`LARGE_STACK_BYTES`] stack; `Err` says why it
/// could not (no thread, or the work panicked).
pub(crate) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel".to_owned())
            .stack_size(LARGE_STACK_BYTES)
            .spawn_scoped(scope, work)
            .map_err(|error| format!("no thread: {error}"))?
            .join()
            .map_err(|_| "it panicked".to_owned())
    })
}

/// Checks the size bounds on the text before the parser sees it: the parser and the
/// evaluator recurse per level, so an unbounded assertion would overflow the stack and abort
/// the process instead of failing its load. Returns the operator count.
fn check_size(source: &str) -> Result<usize, AssertionError> {
    let chars = source.chars().count();
    if chars > MAX_ASSERTION_CHARS {
        return Err(AssertionError::TooLarge {
            reason: format!("{chars} characters, at most {MAX_ASSERTION_CHARS}"),
        });
    }
    let (nesting, operators) = measure(source);
    if nesting > MAX_NESTING {
        return Err(AssertionError::TooLarge {
            reason: format!("brackets nest {nesting} deep, at most {MAX_NESTING}"),
        });
    }
    if operators > MAX_OPERATORS {
        return Err(AssertionError::TooLarge {
            reason: format!("{operators} operator characters, at most {MAX_OPERATORS}"),
        });
    }
    Ok(operators)
}

/// The deepest bracket nesting and the number of operator characters in `source`, skipping
/// string and bytes literals (`'..'`, `".."`, triple-quoted, raw).
fn measure(source: &str) -> (usize, usize) {
    let chars: Vec<char> = source.chars().collect();
    let (mut depth, mut deepest, mut operators) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '"' => {
                let raw = i > 0 && matches!(chars[i - 1], 'r' | 'R');
                let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                let quote_len = if triple { 3 } else { 1 };
                i += quote_len;
                while i < chars.len() {
                    if chars[i] == '\\' && !raw {
                        i += 2;
                        continue;
                    }
                    if chars[i] == c && (!triple || chars[i..].starts_with(&[c, c, c])) {
                        i += quote_len;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            '(' | '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '&' | '|' | '?' | '.' => {
                operators += 1;
            }
            _ => {}
        }
        i += 1;
    }
    (deepest, operators)
}

/// Builds [`AssertionError::Syntax`] from the parser's errors.
fn syntax_error(source: &str, errors: &ParseErrors) -> AssertionError {
    let lines: Vec<&str> = source.lines().collect();
    let mut details = String::new();
    for (i, error) in errors.errors.iter().enumerate() {
        if i > 0 {
            details.push('\n');
        }
        let message = error
            .msg
            .strip_prefix("Syntax error: ")
            .unwrap_or(&error.msg);
        let (line, column) = error.pos;
        let _ = write!(details, "line {line}, column {column}: {message}");
        let snippet = usize::try_from(line - 1)
            .ok()
            .and_then(|index| lines.get(index));
        if let (Some(snippet), Ok(column)) = (snippet, usize::try_from(column))
            && column >= 1
        {
            let _ = write!(details, "\n  {snippet}\n  {:>column$}", "^");
        }
    }
    AssertionError::Syntax {
        assertion: source.to_owned(),
        details,
    }
}

/// The source with the offsets of its nodes: byte indices of the node's first and last byte.
struct SourceText<'s, F> {
    source: &'s str,
    offsets: F,
}

impl<F: Fn(u64) -> Option<(u32, u32)>> SourceText<'_, F> {
    /// The text of the bytes `start..end`, widened to character boundaries, trimmed.
    fn slice(&self, start: usize, end: usize) -> String {
        let mut end = end.min(self.source.len());
        while !self.source.is_char_boundary(end) {
            end += 1;
        }
        let mut start = start.min(end);
        while !self.source.is_char_boundary(start) {
            start -= 1;
        }
        self.source[start..end].trim().to_owned()
    }

    /// The source left of the operator of the call `id`, with unbalanced parentheses removed.
    fn left_of(&self, id: u64) -> String {
        let start = (self.offsets)(id).map_or(0, |(start, _)| start as usize);
        balance(&self.slice(0, start))
    }

    /// The source right of the operator of the call `id`, with unbalanced parentheses removed.
    fn right_of(&self, id: u64) -> String {
        let end = (self.offsets)(id).map_or(self.source.len(), |(_, stop)| stop as usize + 1);
        balance(&self.slice(end, self.source.len()))
    }

    /// The source of the operand of an index or select expression: from the first character of
    /// any node in `operand` up to the `[` or `.` of the expression `id` (where the parser puts
    /// its offset).
    fn operand_of(&self, operand: &IdedExpr, id: u64) -> String {
        let start = min_offset(operand, &self.offsets).unwrap_or(0);
        let end = (self.offsets)(id).map_or(start, |(start, _)| start as usize);
        balance(&self.slice(start, end))
    }
}

/// The smallest start offset of any node in `expr`.
fn min_offset(expr: &IdedExpr, offsets: &impl Fn(u64) -> Option<(u32, u32)>) -> Option<usize> {
    let own = offsets(expr.id).map(|(start, _)| start as usize);
    children(expr)
        .into_iter()
        .filter_map(|child| min_offset(child, offsets))
        .chain(own)
        .min()
}

/// Drops leading `(` and trailing `)` that have no partner in `text`, which appear when a side
/// of a comparison is cut out of a parenthesized whole: `(a == b)` gives `a` and `b`.
fn balance(text: &str) -> String {
    let mut text = text.trim().to_owned();
    loop {
        let (open, close) = paren_balance(&text);
        if close > 0 && text.ends_with(')') {
            text.pop();
        } else if open > 0 && text.starts_with('(') {
            text.remove(0);
        } else {
            return text.trim().to_owned();
        }
        text = text.trim().to_owned();
    }
}

/// Counts unmatched `(` and unmatched `)` in `text`, outside string literals.
fn paren_balance(text: &str) -> (usize, usize) {
    let mut open = 0usize;
    let mut unmatched_close = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' => open += 1,
                ')' if open > 0 => open -= 1,
                ')' => unmatched_close += 1,
                _ => {}
            },
        }
    }
    (open, unmatched_close)
}

/// The direct sub-expressions of `expr`.
fn children(expr: &IdedExpr) -> Vec<&IdedExpr> {
    match &expr.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => map
            .entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                cel::common::ast::EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
                cel::common::ast::EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Struct(s) => s
            .entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                cel::common::ast::EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
                cel::common::ast::EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Select(select) => vec![&select.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// The top-level comparison of `expr`: CEL's operator name, the left and the right side.
fn top_level_comparison(expr: &IdedExpr) -> Option<(&'static str, &IdedExpr, &IdedExpr)> {
    let Expr::Call(call) = &expr.expr else {
        return None;
    };
    let (None, [left, right]) = (&call.target, call.args.as_slice()) else {
        return None;
    };
    COMPARISONS
        .into_iter()
        .find(|name| *name == call.func_name)
        .map(|name| (name, left, right))
}

/// Whether `expr` refers to `baseline` as a free name (not a comprehension variable).
fn mentions_baseline(expr: &IdedExpr) -> bool {
    let mut found = false;
    visit_free_idents(expr, &mut Vec::new(), &mut |name| found |= name == BASELINE);
    found
}

/// Calls `visit` with every identifier in `expr` not bound by an enclosing comprehension.
fn visit_free_idents<'e>(
    expr: &'e IdedExpr,
    bound: &mut Vec<&'e str>,
    visit: &mut impl FnMut(&'e str),
) {
    match &expr.expr {
        Expr::Ident(name) => {
            if !bound.contains(&name.as_str()) {
                visit(name);
            }
        }
        Expr::Comprehension(c) => {
            visit_free_idents(&c.iter_range, bound, visit);
            visit_free_idents(&c.accu_init, bound, visit);
            let depth = bound.len();
            bound.push(&c.iter_var);
            if let Some(var) = &c.iter_var2 {
                bound.push(var);
            }
            bound.push(&c.accu_var);
            visit_free_idents(&c.loop_cond, bound, visit);
            visit_free_idents(&c.loop_step, bound, visit);
            visit_free_idents(&c.result, bound, visit);
            bound.truncate(depth);
        }
        _ => {
            for child in children(expr) {
                visit_free_idents(child, bound, visit);
            }
        }
    }
}

/// Fails on the first free identifier that is neither a root, `baseline`, nor a CEL name.
fn check_names(source: &str, expr: &IdedExpr, roots: &[String]) -> Result<(), AssertionError> {
    let mut unknown: Option<&str> = None;
    visit_free_idents(expr, &mut Vec::new(), &mut |name| {
        let known =
            name == BASELINE || CEL_NAMES.contains(&name) || roots.iter().any(|root| root == name);
        if !known && unknown.is_none() {
            unknown = Some(name);
        }
    });
    let Some(name) = unknown else {
        return Ok(());
    };
    let mut sorted: Vec<&String> = roots.iter().collect();
    sorted.sort();
    sorted.dedup();
    let known = if sorted.is_empty() {
        "the state has no top-level names".to_owned()
    } else {
        let names: Vec<String> = sorted.iter().map(|root| format!("`{root}`")).collect();
        format!("known names: {}", names.join(", "))
    };
    Err(AssertionError::UnknownName {
        assertion: source.to_owned(),
        name: name.to_owned(),
        known,
    })
}

/// Rewrites toolgate's additions into calls of the `@` functions that [`context`] registers:
/// `x.count` to `@count(x, "x")`, `x[i]` to `@index(x, i, "x")`, and mixed-number arithmetic
/// to `@add`, `@sub`, `@mul` and `@div`.
fn rewrite<F: Fn(u64) -> Option<(u32, u32)>>(
    expr: &IdedExpr,
    text: &SourceText<'_, F>,
) -> IdedExpr {
    let rewritten = match &expr.expr {
        Expr::Select(select) if !select.test && select.field == "count" => {
            let operand_text = text.operand_of(&select.operand, expr.id);
            call(
                COUNT_FN,
                vec![
                    rewrite(&select.operand, text),
                    string_literal(&operand_text),
                ],
            )
        }
        Expr::Call(c) if c.target.is_none() && c.func_name == "_[_]" && c.args.len() == 2 => {
            let operand_text = text.operand_of(&c.args[0], expr.id);
            call(
                INDEX_FN,
                vec![
                    rewrite(&c.args[0], text),
                    rewrite(&c.args[1], text),
                    string_literal(&operand_text),
                ],
            )
        }
        Expr::Call(c) if c.target.is_none() && c.args.len() == 2 && !is_macro_step(c) => {
            let function = match c.func_name.as_str() {
                "_+_" => Some(ADD_FN),
                "_-_" => Some(SUB_FN),
                "_*_" => Some(MUL_FN),
                "_/_" => Some(DIV_FN),
                _ => None,
            };
            let args = c.args.iter().map(|arg| rewrite(arg, text)).collect();
            match function {
                Some(function) => call(function, args),
                None => Expr::Call(CallExpr {
                    func_name: c.func_name.clone(),
                    target: None,
                    args,
                }),
            }
        }
        _ => return rewrite_children(expr, text),
    };
    IdedExpr {
        id: expr.id,
        expr: rewritten,
    }
}

/// Whether `call` is a step a macro generated over its accumulator (`@result + [x]`), which
/// stays as CEL wrote it.
fn is_macro_step(call: &CallExpr) -> bool {
    call.args
        .iter()
        .any(|arg| matches!(&arg.expr, Expr::Ident(name) if name.starts_with('@')))
}

/// `expr` with each direct sub-expression rewritten.
fn rewrite_children<F: Fn(u64) -> Option<(u32, u32)>>(
    expr: &IdedExpr,
    text: &SourceText<'_, F>,
) -> IdedExpr {
    let mut out = expr.clone();
    match &mut out.expr {
        Expr::Call(c) => {
            if let Some(target) = &mut c.target {
                **target = rewrite(target, text);
            }
            for arg in &mut c.args {
                *arg = rewrite(arg, text);
            }
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                *part = rewrite(part, text);
            }
        }
        Expr::List(list) => {
            for element in &mut list.elements {
                *element = rewrite(element, text);
            }
        }
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let cel::common::ast::EntryExpr::MapEntry(e) = &mut entry.expr {
                    e.key = rewrite(&e.key, text);
                    e.value = rewrite(&e.value, text);
                }
            }
        }
        Expr::Select(select) => {
            *select.operand = rewrite(&select.operand, text);
        }
        Expr::Struct(_) | Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
    out
}

pub(crate) fn call(function: &str, args: Vec<IdedExpr>) -> Expr {
    Expr::Call(CallExpr {
        func_name: function.to_owned(),
        target: None,
        args,
    })
}

pub(crate) fn ident(name: &str) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Ident(name.to_owned()),
    }
}

fn string_literal(text: &str) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Literal(LiteralValue::String(CelString::from(text.to_owned()))),
    }
}
