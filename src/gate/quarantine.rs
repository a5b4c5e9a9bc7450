//! The quarantine list: the only way around Tier 5 zero tolerance. Every entry names a
//! scenario, says why, and expires; reports list every entry in use, and an expired entry
//! stops covering its scenario.
//!
//! ```yaml
//! schema_version: 1
//! quarantine:
//!   - scenario: T5-002
//!     reason: refusal wording changed upstream, fix in progress
//!     expires: 2026-12-14
//! ```

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

/// The quarantine file format version this build reads.
pub const QUARANTINE_SCHEMA_VERSION: u32 = 1;

/// The furthest an entry may expire after the day it is read: quarantines are short.
pub const MAX_QUARANTINE_DAYS: u64 = 90;

const DAY: Duration = Duration::from_secs(86_400);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QuarantineFile {
    schema_version: u32,
    quarantine: Vec<EntryFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    scenario: String,
    reason: String,
    expires: String,
}

/// One quarantined scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct QuarantineEntry {
    /// The scenario id.
    pub scenario: String,
    /// Why, as written; not empty.
    pub reason: String,
    /// The last day (UTC, `YYYY-MM-DD`) the entry covers.
    pub expires: String,
    /// The end of that day.
    #[serde(skip)]
    pub expires_at: SystemTime,
}

impl QuarantineEntry {
    /// Whether the entry still covers its scenario at `now`.
    pub fn is_active(&self, now: SystemTime) -> bool {
        now < self.expires_at
    }
}

/// Reads the quarantine list at `path`; a missing file is an empty list.
///
/// Errors: invalid YAML or shape (with line and column), an unsupported `schema_version`,
/// an empty reason, a date that is not `YYYY-MM-DD`, an entry expiring more than
/// [`MAX_QUARANTINE_DAYS`] after `now`, or a scenario listed twice.
pub fn load(path: &Path, now: SystemTime) -> Result<Vec<QuarantineEntry>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = crate::fs::read_text(
        path,
        "quarantine list",
        crate::defaults::MAX_SMALL_FILE_BYTES,
    )?;
    parse(&text, now).with_context(|| format!("invalid quarantine list `{}`", path.display()))
}

/// Parses quarantine list text; see [`load`].
pub fn parse(text: &str, now: SystemTime) -> Result<Vec<QuarantineEntry>> {
    let file: QuarantineFile = serde_saphyr::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?;
    if file.schema_version != QUARANTINE_SCHEMA_VERSION {
        bail!(
            "schema_version: {} is not supported (this toolgate reads {QUARANTINE_SCHEMA_VERSION})",
            file.schema_version
        );
    }
    let mut entries: Vec<QuarantineEntry> = Vec::new();
    for (i, entry) in file.quarantine.into_iter().enumerate() {
        let at = |field: &str| format!("quarantine[{i}].{field}");
        if entry.reason.trim().is_empty() {
            bail!("{}: a quarantine needs a reason", at("reason"));
        }
        let day = humantime::parse_rfc3339_weak(&format!("{} 00:00:00", entry.expires))
            .ok()
            .filter(|_| entry.expires.len() == 10)
            .with_context(|| {
                format!(
                    "{}: `{}` is not a date `YYYY-MM-DD`",
                    at("expires"),
                    entry.expires
                )
            })?;
        let expires_at = day + DAY;
        if expires_at > now + DAY * (MAX_QUARANTINE_DAYS as u32 + 1) {
            bail!(
                "{}: `{}` is more than {MAX_QUARANTINE_DAYS} days ahead; quarantines are short, renew them instead",
                at("expires"),
                entry.expires
            );
        }
        if entries.iter().any(|e| e.scenario == entry.scenario) {
            bail!("{}: `{}` is listed twice", at("scenario"), entry.scenario);
        }
        entries.push(QuarantineEntry {
            scenario: entry.scenario,
            reason: entry.reason.trim().to_string(),
            expires: entry.expires,
            expires_at,
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    //! Quarantine: an entry covers its scenario through its last day; incomplete ones are refused.

    use super::*;

    fn now() -> SystemTime {
        humantime::parse_rfc3339("2026-11-30T12:00:00Z").expect("valid time")
    }

    #[test]
    fn an_entry_covers_its_scenario_through_its_last_day() {
        let list = parse(
            "schema_version: 1\nquarantine:\n  - scenario: T5-002\n    reason: fix in progress\n    expires: 2026-11-30\n",
            now(),
        )
        .expect("valid");
        assert_eq!(list[0].scenario, "T5-002");
        assert!(list[0].is_active(now()));
        assert!(!list[0].is_active(now() + DAY));
    }

    #[test]
    fn rejects_entries_without_reason_or_date_or_too_far_ahead() {
        let error = |text: &str| format!("{:#}", parse(text, now()).expect_err("invalid"));
        assert_eq!(
            error(
                "schema_version: 1\nquarantine:\n  - scenario: A\n    reason: ' '\n    expires: 2026-12-01\n"
            ),
            "quarantine[0].reason: a quarantine needs a reason"
        );
        assert_eq!(
            error(
                "schema_version: 1\nquarantine:\n  - scenario: A\n    reason: r\n    expires: soon\n"
            ),
            "quarantine[0].expires: `soon` is not a date `YYYY-MM-DD`"
        );
        assert_eq!(
            error(
                "schema_version: 1\nquarantine:\n  - scenario: A\n    reason: r\n    expires: 2027-06-01\n"
            ),
            "quarantine[0].expires: `2027-06-01` is more than 90 days ahead; quarantines are short, renew them instead"
        );
        assert!(error("schema_version: 1\nquarantine:\n  - scenario: A\n    reason: r\n    expires: 2026-12-01\n    owner: me\n").contains("owner"));
    }

    #[test]
    fn a_missing_file_is_an_empty_list() {
        assert_eq!(
            load(Path::new("/nonexistent/quarantine.yaml"), now()).expect("missing is fine"),
            Vec::new()
        );
    }
}
