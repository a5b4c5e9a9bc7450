//! The exit-code table, in one place. Every command maps its outcome here.

use std::process::ExitCode;

/// How a `toolgate` process ends.
///
/// | code | meaning |
/// |---|---|
/// | 0 | the gate passed (or the command succeeded; `lint`: no finding at or above `--fail-on`; `drift`: no drift; `score`: the traces were scored) |
/// | 1 | the gate failed: a regression beyond the tolerance band, a Tier 5 failure, or a pass rate under `--min-pass-rate`; `lint`: a finding at or above `--fail-on`; `drift`: a breaking change; `cassette verify`: a live answer or catalog differs from the recording |
/// | 2 | error: bad input, bad usage, or an internal failure; nothing was judged |
/// | 3 | could not evaluate: most runs errored (provider outage, timeouts), or the results are of an interrupted run, so no verdict |
/// | 4 | `drift`: descriptions changed, nothing breaking |
/// | 5 | `drift`: only non-breaking changes (tools or optional parameters added) |
/// | 6 | inconclusive: a drop beyond the band that is not significant (only with `--on-inconclusive distinct`; by default it exits 0) |
/// | 130 | interrupted (Ctrl-C or SIGTERM): the results of the runs that finished were written, no verdict |
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
    DriftDescription,
    /// Code 5.
    DriftNonBreaking,
    /// Code 6.
    Inconclusive,
    /// Code 130 (128 + SIGINT, as shells report it).
    Interrupted,
}

impl Exit {
    /// The numeric process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::GateFailed => 1,
            Exit::Error => 2,
            Exit::CouldNotEvaluate => 3,
            Exit::DriftDescription => 4,
            Exit::DriftNonBreaking => 5,
            Exit::Inconclusive => 6,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
