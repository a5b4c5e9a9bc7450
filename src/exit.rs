//! The exit-code table, in one place. Every command maps its outcome here.

use std::process::ExitCode;

/// How a `toolgate` process ends.
///
/// | code | meaning |
/// |---|---|
/// | 0 | the gate passed (or the command succeeded) |
/// | 1 | the gate failed: a regression beyond the tolerance band, or a Tier 5 failure |
/// | 2 | error: bad input, bad usage, or an internal failure; nothing was judged |
/// | 3 | could not evaluate: most runs errored (provider outage, timeouts), so no verdict |
/// | 4 | inconclusive: a drop beyond the band that is not significant (only with `--on-inconclusive distinct`; by default it exits 0) |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Code 0.
    Pass,
    /// Code 1.
    GateFailed,
    /// Code 2 (also clap's code for usage errors).
    Error,
    /// Code 3.
    CouldNotEvaluate,
    /// Code 4.
    Inconclusive,
}

impl Exit {
    /// The numeric process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::GateFailed => 1,
            Exit::Error => 2,
            Exit::CouldNotEvaluate => 3,
            Exit::Inconclusive => 4,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
