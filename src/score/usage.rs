//! Usage budgets: what one run spent on the model (tokens, model calls, wall time, cost)
//! against its scenario's `usage_budget`. A prompt change that doubles the tokens is a
//! regression a team pays for even when every run still passes.

use serde::{Deserialize, Serialize};

use super::{Check, CheckKind};
use crate::scenario::UsageBudget;

/// What a run of a model agent spent on its model, as the provider reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Input tokens over the run's model requests.
    pub prompt_tokens: u64,
    /// Output tokens over the run's model requests.
    pub completion_tokens: u64,
    /// Model requests that answered (one per turn).
    pub model_calls: u32,
}

/// A model's price, in US dollars per million tokens, as the user's `--prices` table gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// US dollars per million input tokens, at least 0.
    pub prompt: f64,
    /// US dollars per million output tokens, at least 0.
    pub completion: f64,
}

impl Price {
    /// The cost in US dollars of `prompt_tokens` input and `completion_tokens` output tokens.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.prompt + completion_tokens as f64 * self.completion)
            / 1_000_000.0
    }
}

/// Limits on the mean usage of a run's judged model runs (`--max-tokens-per-run`,
/// `--max-cost-per-run`, `--max-token-growth`). Each `None` is no limit; a run without model
/// usage (the reference, `command` and `replay` agents) is never blocked by them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageLimits {
    /// Mean input plus output tokens per judged model run.
    pub max_tokens_per_run: Option<u64>,
    /// Mean cost per judged model run, in US dollars (priced by the results' pinned price).
    pub max_cost_per_run: Option<f64>,
    /// Growth of the mean tokens per run over the baseline's, in percent (0 or more).
    pub max_token_growth_percent: Option<f64>,
}

/// Whether a cost in US dollars is within `limit`, allowing for the rounding of sums of
/// binary fractions (a billionth of the limit): $0.001 computed as a mean of ten runs is
/// within a $0.001 limit.
pub fn cost_within(cost: f64, limit: f64) -> bool {
    cost <= limit + limit.abs() * 1e-9
}

/// The checks of `budget` on one run that took `wall_ms` milliseconds and, for a model agent,
/// spent `spent` (`None` for agents without a model: their token, model-call and cost limits
/// are not checked). A cost limit without a `price` is not checked either: the gate refuses to
/// start a model run whose scenarios set one without a price (see `toolgate gate --prices`).
/// In the order the limits are listed in [`UsageBudget`]; each check holds at the limit.
pub fn checks(
    budget: &UsageBudget,
    spent: Option<Spent>,
    wall_ms: u64,
    price: Option<Price>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut limit = |field: &str, used: u64, limit: Option<u64>, what: String| {
        if let Some(limit) = limit {
            checks.push(Check {
                kind: CheckKind::UsageBudget,
                subject: format!("usage_budget.{field}"),
                passed: used <= limit,
                detail: format!("{what}, budget {limit}"),
            });
        }
    };
    if let Some(spent) = spent {
        let calls = match spent.model_calls {
            1 => "1 model call".to_owned(),
            n => format!("{n} model calls"),
        };
        let total = spent.prompt_tokens + spent.completion_tokens;
        limit(
            "max_tokens",
            total,
            budget.max_tokens,
            format!(
                "{total} tokens ({} in, {} out) over {calls}",
                spent.prompt_tokens, spent.completion_tokens
            ),
        );
        limit(
            "max_prompt_tokens",
            spent.prompt_tokens,
            budget.max_prompt_tokens,
            format!("{} input tokens over {calls}", spent.prompt_tokens),
        );
        limit(
            "max_completion_tokens",
            spent.completion_tokens,
            budget.max_completion_tokens,
            format!("{} output tokens over {calls}", spent.completion_tokens),
        );
        limit(
            "max_model_calls",
            u64::from(spent.model_calls),
            budget.max_model_calls,
            calls,
        );
    }
    limit(
        "max_wall_ms",
        wall_ms,
        budget.max_wall_ms,
        format!("{wall_ms} ms of wall time"),
    );
    if let (Some(spent), Some(price), Some(limit)) = (spent, price, budget.max_cost_usd) {
        let cost = price.cost(spent.prompt_tokens, spent.completion_tokens);
        checks.push(Check {
            kind: CheckKind::UsageBudget,
            subject: "usage_budget.max_cost_usd".to_owned(),
            passed: cost_within(cost, limit),
            detail: format!(
                "${cost:.6} for {} input and {} output tokens (${}/${} per million), budget ${limit}",
                spent.prompt_tokens, spent.completion_tokens, price.prompt, price.completion
            ),
        });
    }
    checks
}

#[cfg(test)]
mod tests {
    //! Each limit holds at its value and fails one past it; agents without a model are checked
    //! on wall time only.
    use super::*;

    fn budget() -> UsageBudget {
        UsageBudget {
            max_tokens: Some(1_000),
            max_prompt_tokens: Some(900),
            max_completion_tokens: Some(100),
            max_model_calls: Some(3),
            max_wall_ms: Some(5_000),
            max_cost_usd: Some(0.001),
        }
    }

    fn verdicts(checks: &[Check]) -> Vec<(&str, bool)> {
        checks
            .iter()
            .map(|check| (check.subject.as_str(), check.passed))
            .collect()
    }

    #[test]
    fn limits_hold_at_their_value_and_fail_past_it() {
        let price = Price {
            prompt: 1.0,
            completion: 1.0,
        };
        let at = Spent {
            prompt_tokens: 900,
            completion_tokens: 100,
            model_calls: 3,
        };
        let checks = checks(&budget(), Some(at), 5_000, Some(price));
        assert!(checks.iter().all(|check| check.passed), "{checks:?}");
        assert_eq!(checks.len(), 6);
        assert_eq!(
            checks[0].detail,
            "1000 tokens (900 in, 100 out) over 3 model calls, budget 1000"
        );
        assert_eq!(
            checks[5].detail,
            "$0.001000 for 900 input and 100 output tokens ($1/$1 per million), budget $0.001"
        );
        let past = Spent {
            prompt_tokens: 901,
            completion_tokens: 100,
            model_calls: 4,
        };
        let past = super::checks(&budget(), Some(past), 5_001, Some(price));
        assert_eq!(
            verdicts(&past),
            [
                ("usage_budget.max_tokens", false),
                ("usage_budget.max_prompt_tokens", false),
                ("usage_budget.max_completion_tokens", true),
                ("usage_budget.max_model_calls", false),
                ("usage_budget.max_wall_ms", false),
                ("usage_budget.max_cost_usd", false),
            ]
        );
    }

    #[test]
    fn without_a_model_only_wall_time_is_checked_and_without_a_price_no_cost() {
        assert_eq!(
            verdicts(&checks(&budget(), None, 10, None)),
            [("usage_budget.max_wall_ms", true)]
        );
        let spent = Spent {
            prompt_tokens: 1,
            completion_tokens: 1,
            model_calls: 1,
        };
        let checks = checks(&budget(), Some(spent), 10, None);
        assert_eq!(checks.len(), 5, "{checks:?}");
        assert_eq!(checks[3].detail, "1 model call, budget 3");
        assert!(
            checks
                .iter()
                .all(|check| check.kind == CheckKind::UsageBudget)
        );
    }

    #[test]
    fn price_is_per_million_tokens() {
        let price = Price {
            prompt: 0.15,
            completion: 0.6,
        };
        assert!((price.cost(2_000_000, 1_000_000) - 0.9).abs() < 1e-12);
    }
}
