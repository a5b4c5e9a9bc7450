//! Parsing and checking an assertion when its scenario loads: CEL syntax, the size bounds,
//! the names it may read, where `baseline` may stand, and the rewrite that adds `.count`,
//! negative indices and mixed-number arithmetic.

use std::fmt::Write as _;

use cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue};
use cel::common::types::CelString;
use cel::parser::{ParseErrors, Parser};

use super::{
    ADD_FN, Assertion, AssertionError, BASELINE, Body, COMPARISONS, COUNT_FN, Comparison, DIV_FN,
    INDEX_FN, MAX_ASSERTION_CHARS, MAX_NESTING, MAX_OPERATORS, MUL_FN, SUB_FN,
};

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

/// The stack the parser (and the evaluation of a large assertion) runs on, in bytes: reserved
/// address space, of which only touched pages are committed.
const LARGE_STACK_BYTES: usize = 64 << 20;

/// Runs `work` on a scoped thread with a [`LARGE_STACK_BYTES`] stack; `Err` says why it
/// could not (no thread, or the work panicked).
pub(super) fn on_large_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
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
        // Instants compare as instants, as the state's own strings do (see `eval`).
        Expr::Literal(LiteralValue::String(literal)) => {
            match crate::calendar::canonical_instant(literal.inner()) {
                Some(canonical) => string_literal(&canonical).expr,
                None => return expr.clone(),
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

pub(super) fn call(function: &str, args: Vec<IdedExpr>) -> Expr {
    Expr::Call(CallExpr {
        func_name: function.to_owned(),
        target: None,
        args,
    })
}

pub(super) fn ident(name: &str) -> IdedExpr {
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

#[cfg(test)]
mod tests {
    //! Parsing assertions: unknown names, a misplaced baseline, bad syntax or size fail the load.

    use super::super::Assertion;

    fn roots() -> Vec<String> {
        ["contacts", "activities", "deals", "settings"]
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn parse(source: &str) -> Assertion {
        Assertion::parse(source, &roots())
            .unwrap_or_else(|error| panic!("`{source}` should parse: {error}"))
    }

    fn parse_error(source: &str) -> String {
        match Assertion::parse(source, &roots()) {
            Ok(assertion) => panic!("`{source}` should not parse, got {assertion:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn brackets_and_operators_inside_string_literals_do_not_count() {
        let inside = "(".repeat(40) + &"+".repeat(300);
        for quoted in [
            format!("'{inside}'"),
            format!("\"{inside}\""),
            format!("r'''{inside}'''"),
        ] {
            let source = format!("contacts.exists(c, c.name == {quoted})");
            assert_eq!(parse(&source).operators, 4, "{source}");
        }
        assert_eq!(
            parse(r"contacts.exists(c, c.name == 'Gr\'a(ce') || true").operators,
            6
        );
    }

    #[test]
    fn assertion_is_clone_debug_send_and_sync() {
        fn check<T: Clone + std::fmt::Debug + Send + Sync>() {}
        check::<Assertion>();
    }

    #[test]
    fn source_returns_the_assertion_as_written() {
        assert_eq!(parse("contacts.count == 3").source(), "contacts.count == 3");
    }

    #[test]
    fn baseline_on_the_left_side_is_a_parse_error() {
        assert_eq!(
            parse_error("baseline + 1 == contacts.count"),
            "misplaced `baseline` in assertion `baseline + 1 == contacts.count`: it may only \
             appear on the right-hand side of the comparison, not in `baseline + 1`"
        );
    }

    #[test]
    fn baseline_without_a_top_level_comparison_is_a_parse_error() {
        let expected = "misplaced `baseline` in assertion `{}`: it needs a top-level comparison \
                        (`==`, `!=`, `<`, `<=`, `>`, `>=`) with `baseline` on the right-hand side";
        for source in [
            "baseline",
            "contacts.count == baseline + 1 && deals.count == 2",
            "contacts.exists(c, c.id == baseline)",
            "!(contacts.count == baseline)",
        ] {
            assert_eq!(
                parse_error(source),
                expected.replace("{}", source),
                "{source}"
            );
        }
    }

    #[test]
    fn unknown_top_level_name_is_a_parse_error_listing_the_known_ones() {
        assert_eq!(
            parse_error("contact.count == 1"),
            "unknown name `contact` in assertion `contact.count == 1`; known names: \
             `activities`, `contacts`, `deals`, `settings`"
        );
    }

    #[test]
    fn unknown_name_with_no_roots_says_the_state_is_empty() {
        let error = Assertion::parse("x == 1", &[]).map(|_| ());
        assert_eq!(
            error.map_err(|e| e.to_string()),
            Err(
                "unknown name `x` in assertion `x == 1`; the state has no top-level names"
                    .to_owned()
            )
        );
    }

    #[test]
    fn unknown_name_inside_a_comprehension_is_a_parse_error() {
        assert_eq!(
            parse_error("contacts.exists(c, d.id == c.id)"),
            "unknown name `d` in assertion `contacts.exists(c, d.id == c.id)`; known names: \
             `activities`, `contacts`, `deals`, `settings`"
        );
    }

    #[test]
    fn comprehension_variables_do_not_leak_out_of_their_macro() {
        assert_eq!(
            parse_error("contacts.exists(c, true) && c.id == 1"),
            "unknown name `c` in assertion `contacts.exists(c, true) && c.id == 1`; known \
             names: `activities`, `contacts`, `deals`, `settings`"
        );
    }

    #[test]
    fn syntax_error_shows_the_source_with_a_caret_under_the_column() {
        assert_eq!(
            parse_error("contacts.count == == 1"),
            "failed to parse assertion `contacts.count == == 1`:\n\
             line 1, column 19: extraneous input '==' expecting {'[', '{', '(', '.', '-', '!', \
             'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n  \
             contacts.count == == 1\n                    ^"
        );
    }

    #[test]
    fn trailing_garbage_is_a_syntax_error_at_its_column() {
        assert_eq!(
            parse_error("contacts.count == 1 x"),
            "failed to parse assertion `contacts.count == 1 x`:\n\
             line 1, column 21: extraneous input 'x' expecting <EOF>\n  \
             contacts.count == 1 x\n                      ^"
        );
    }

    #[test]
    fn assertions_beyond_the_size_bounds_fail_to_load_instead_of_overflowing_the_stack() {
        let deep = format!("{}contacts.count{} == 3", "(".repeat(60), ")".repeat(60));
        assert_eq!(
            parse_error(&deep),
            "assertion is too large to evaluate safely: brackets nest 60 deep, at most 32"
        );
        let long = format!("{} == 1", vec!["1"; 5_000].join(" + "));
        assert_eq!(
            parse_error(&long),
            "assertion is too large to evaluate safely: 20002 characters, at most 4096"
        );
        let dense = format!("{}==1", vec!["1"; 1_000].join("+"));
        assert_eq!(
            parse_error(&dense),
            "assertion is too large to evaluate safely: 1001 operator characters, at most 256"
        );
        let wide = format!("contacts.count == {}", "1".repeat(5_000));
        assert!(parse_error(&wide).ends_with("5018 characters, at most 4096"));
    }
}
