//! Context cost: how many tokens the catalog takes in a model's context, per tool and in total,
//! counted with the o200k encoding (GPT-4o and later; tiktoken-rs's vocabulary, laid out as a
//! lookup table in the binary by build.rs: nothing is downloaded or built at run time).
//!
//! Each tool is counted as the compact JSON of the function-tool object providers are sent,
//! `{"type":"function","function":{"name","description","parameters"}}`. Providers wrap tools
//! in their own prompt format, so the real cost differs by a few tokens per tool; the count is
//! for budgets and comparisons, not billing.

use super::checks::CheckId;
use serde::Serialize;
use serde_json::{Value, json};

use super::{Finding, LintOptions, Severity, ToolRef};

/// The encoding's name, as tiktoken spells it.
pub const ENCODING: &str = "o200k_base";

/// Token counts of a catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TokenCount {
    /// The encoding counted with ([`ENCODING`]).
    pub encoding: &'static str,
    /// Sum over all tools.
    pub total: usize,
    /// One entry per tool, in catalog order.
    pub per_tool: Vec<ToolTokens>,
}

/// The token count of one tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTokens {
    pub server: String,
    pub tool: String,
    pub tokens: usize,
}

/// Tokens of `text` in o200k.
pub fn count_text(text: &str) -> usize {
    super::o200k::count(text)
}

/// The function-tool object a provider is sent, borrowing from the definition (copying the
/// schema of every tool only to print it cost more than counting its tokens).
#[derive(Serialize)]
struct ModelView<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionView<'a>,
}

#[derive(Serialize)]
struct FunctionView<'a> {
    name: &'a str,
    description: &'a Value,
    parameters: &'a Value,
}

/// The compact JSON a provider is sent for `tool`:
/// `{"type":"function","function":{"name","description","parameters"}}`.
fn model_view(tool: &ToolRef<'_>) -> String {
    static NULL: Value = Value::Null;
    static EMPTY: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| json!({}));
    let definition = tool.definition;
    let view = ModelView {
        kind: "function",
        function: FunctionView {
            name: tool.name,
            description: definition.get("description").unwrap_or(&NULL),
            parameters: definition.get("inputSchema").unwrap_or(&EMPTY),
        },
    };
    serde_json::to_string(&view).expect("a tool definition serializes: plain JSON")
}

/// Tools per thread below which counting stays on one thread.
const TOOLS_PER_THREAD: usize = 64;

/// Counts every tool of the catalog (on several threads for large catalogs; the result does not
/// depend on how many).
pub fn count(tools: &[ToolRef<'_>]) -> TokenCount {
    let count_one = |tool: &ToolRef<'_>| ToolTokens {
        server: tool.server.to_owned(),
        tool: tool.name.to_owned(),
        tokens: count_text(&model_view(tool)),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(tools.len() / TOOLS_PER_THREAD)
        .max(1);
    let per_tool: Vec<ToolTokens> = if threads == 1 {
        tools.iter().map(count_one).collect()
    } else {
        let chunk = tools.len().div_ceil(threads);
        super::o200k::warm_up();
        std::thread::scope(|scope| {
            let handles: Vec<_> = tools
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().map(count_one).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| handle.join().expect("counting tokens does not panic"))
                .collect()
        })
    };
    TokenCount {
        encoding: ENCODING,
        total: per_tool.iter().map(|tool| tool.tokens).sum(),
        per_tool,
    }
}

/// A warning when the catalog is over `options.token_budget`; an info for each tool over
/// `options.tool_token_budget`.
pub fn check(
    tools: &[ToolRef<'_>],
    count: &TokenCount,
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    if count.total > options.token_budget {
        out.push(Finding::catalog(
            CheckId::TokenBudgetExceeded,
            Severity::Warning,
            None,
            format!(
                "the catalog costs {} tokens ({ENCODING}), over the budget of {}",
                count.total, options.token_budget
            ),
            "shorten schemas and descriptions, split servers, or raise `--token-budget`",
        ));
    }
    for (tool, tokens) in tools.iter().zip(&count.per_tool) {
        if tokens.tokens > options.tool_token_budget {
            out.push(Finding::tool(
                CheckId::ToolTokenBudgetExceeded,
                Severity::Info,
                tool,
                "",
                format!(
                    "the tool costs {} tokens, over the per-tool budget of {}",
                    tokens.tokens, options.tool_token_budget
                ),
                "trim the description and schema, or raise `--tool-token-budget`",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    //! Context cost: o200k counts match tiktoken-rs, per tool and in total against the budgets.

    use super::*;

    /// The packed vocabulary encodes exactly as tiktoken-rs's own o200k (ordinary text: toolgate
    /// recognizes no special tokens, so `<|endoftext|>` is text). `o200k`'s tests compare the
    /// whole table and a large corpus.
    #[test]
    fn the_packed_vocabulary_encodes_as_tiktoken_rs_does() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs embeds o200k");
        let text = concat!(
            "Use crm_search_contacts when the user names a person; never for company-wide lists.\n",
            "{\"type\":\"object\",\"properties\":{\"limit\":{\"type\":\"integer\",\"maximum\":100}}}\n",
            "Ünïcödé — 東京 🚀 \t\r\n    indented   spaces 12345678901234567890 <|endoftext|>",
        );
        let expected = reference.encode_ordinary(text);
        assert_eq!(super::super::o200k::encode(text), expected);
        assert_eq!(count_text(text), expected.len());
        for rank in [0, 1, 100_000, 199_997] {
            let bytes = reference.decode_bytes(&[rank]).expect("an o200k rank");
            assert_eq!(super::super::o200k::rank(&bytes), Some(rank));
        }
    }

    #[test]
    fn counts_o200k_tokens() {
        // Reference counts from tiktoken's o200k_base.
        assert_eq!(count_text("hello world"), 2);
        assert_eq!(count_text(""), 0);
    }

    #[test]
    fn counts_each_tool_and_the_total_against_budgets() {
        let definition = json!({"name": "add", "description": "Add two numbers.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}}});
        let tools = [ToolRef {
            server: "s",
            name: "add",
            definition: &definition,
        }; 2];
        let counted = count(&tools);
        let one = count_text(
            r#"{"type":"function","function":{"name":"add","description":"Add two numbers.","parameters":{"type":"object","properties":{"a":{"type":"number"}}}}}"#,
        );
        assert_eq!(counted.per_tool[0].tokens, one);
        assert_eq!(counted.total, 2 * one);
        let options = LintOptions {
            token_budget: one,
            tool_token_budget: one - 1,
            ..LintOptions::default()
        };
        let mut out = Vec::new();
        check(&tools, &counted, &options, &mut out);
        let found: Vec<_> = out.iter().map(|f| (f.check.as_str(), f.severity)).collect();
        assert_eq!(
            found,
            [
                ("token_budget_exceeded", Severity::Warning),
                ("tool_token_budget_exceeded", Severity::Info),
                ("tool_token_budget_exceeded", Severity::Info),
            ]
        );
    }
}
