//! Call budgets (field case B33): `max_calls`, `max_reads`, `max_writes`, `max_per_tool`
//! and `max_failures`.
//!
//! Budgets count what the agent emitted, refused calls included: a refused call is still an
//! attempt. Reports show the emitted calls split into executed and refused, never a single
//! "used" figure that mixes the two.

use std::collections::BTreeMap;

use super::{Check, CheckKind};
use crate::scenario::{FailureCounting, Scenario};
use crate::trace::CallRecord;

/// The calls of one run split by what the harness did with them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Calls that reached the tool (whether it succeeded, failed or had a fault injected).
    pub executed: usize,
    /// Calls the harness refused before they reached the tool.
    pub refused: usize,
}

impl CallCounts {
    /// Counts `trace`.
    pub fn of(trace: &[CallRecord]) -> CallCounts {
        let refused = trace.iter().filter(|call| call.refused).count();
        CallCounts {
            executed: trace.len() - refused,
            refused,
        }
    }

    /// Every emitted call.
    pub fn emitted(self) -> usize {
        self.executed + self.refused
    }

    /// "4 tool calls (3 executed, 1 refused)", or "3 tool calls" ("1 tool call") when none
    /// was refused.
    pub fn describe(self) -> String {
        let calls = calls(self.emitted(), "tool call");
        if self.refused == 0 {
            calls
        } else {
            format!(
                "{calls} ({} executed, {} refused)",
                self.executed, self.refused
            )
        }
    }
}

/// `n` and `noun`, plural unless `n` is 1: "1 call", "2 calls".
fn calls(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Failures of a run as `counting` counts them: failing calls, or turns with a failing call.
pub fn failures(trace: &[CallRecord], counting: FailureCounting) -> usize {
    let failing = trace.iter().filter(|call| !call.is_success());
    match counting {
        FailureCounting::PerCall => failing.count(),
        FailureCounting::PerTurn => {
            let mut turns: Vec<u32> = failing.map(|call| call.turn).collect();
            turns.sort_unstable();
            turns.dedup();
            turns.len()
        }
    }
}

/// The budget checks of `scenario`, in file order: `max_calls`, each `max_per_tool` entry
/// (by tool name), `max_failures`.
pub fn checks(scenario: &Scenario, trace: &[CallRecord]) -> Vec<Check> {
    let mut checks = Vec::new();
    let counts = CallCounts::of(trace);
    if let Some(budget) = scenario.max_calls {
        checks.push(Check {
            kind: CheckKind::MaxCalls,
            subject: "max_calls".into(),
            passed: counts.emitted() <= budget as usize,
            detail: format!("{}, budget {budget}", counts.describe()),
        });
    }
    let is_read = |call: &&CallRecord| scenario.is_read_only(&call.tool);
    let reads = CallCounts {
        executed: trace.iter().filter(is_read).filter(|c| !c.refused).count(),
        refused: trace.iter().filter(is_read).filter(|c| c.refused).count(),
    };
    // A call to a tool the server does not offer fails its own check; it is no write. A
    // failed write retried at once (the next write is to the same tool) is one write: the
    // retry is recovery, not a second change.
    let write_calls: Vec<&CallRecord> = trace
        .iter()
        .filter(|call| !call.unknown_tool && !scenario.is_read_only(&call.tool))
        .collect();
    let retried = write_calls
        .windows(2)
        .filter(|pair| !pair[0].is_success() && pair[0].tool == pair[1].tool)
        .count();
    let writes = write_calls.len() - retried;
    if let Some(budget) = scenario.max_reads {
        let counts = reads;
        checks.push(Check {
            kind: CheckKind::MaxReads,
            subject: "max_reads".into(),
            passed: counts.emitted() <= budget as usize,
            detail: format!("{} to read-only tools, budget {budget}", counts.describe()),
        });
    }
    if let Some(budget) = scenario.max_writes {
        checks.push(Check {
            kind: CheckKind::MaxWrites,
            subject: "max_writes".into(),
            passed: writes <= budget as usize,
            detail: if retried == 0 {
                format!("{} to other tools, budget {budget}", calls(writes, "call"))
            } else {
                format!(
                    "{} to other tools (a failed write retried counts once), budget {budget}",
                    calls(writes, "call")
                )
            },
        });
    }
    if !scenario.max_per_tool.is_empty() {
        let mut per_tool: BTreeMap<&str, CallCounts> = BTreeMap::new();
        for call in trace {
            let entry = per_tool.entry(call.tool.as_str()).or_default();
            if call.refused {
                entry.refused += 1;
            } else {
                entry.executed += 1;
            }
        }
        for (tool, &budget) in &scenario.max_per_tool {
            let counts = per_tool.get(tool.as_str()).copied().unwrap_or_default();
            checks.push(Check {
                kind: CheckKind::MaxPerTool,
                subject: format!("max_per_tool.{tool}"),
                passed: counts.emitted() <= budget as usize,
                detail: format!("`{tool}`: {}, budget {budget}", counts.describe()),
            });
        }
    }
    if let Some(budget) = scenario.max_failures {
        let counting = scenario.failure_counting;
        let failed = failures(trace, counting);
        let detail = match counting {
            FailureCounting::PerCall => {
                format!("{failed} failing calls (per_call), budget {budget}")
            }
            FailureCounting::PerTurn => format!(
                "{failed} {} with failing calls ({} failing calls, per_turn), budget {budget}",
                if failed == 1 { "turn" } else { "turns" },
                failures(trace, FailureCounting::PerCall)
            ),
        };
        checks.push(Check {
            kind: CheckKind::MaxFailures,
            subject: "max_failures".into(),
            passed: failed <= budget as usize,
            detail,
        });
    }
    checks
}
