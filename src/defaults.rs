//! Every default a run starts from, in one place: the CLI, `toolgate.yaml`, the agents, the
//! judge and the runner all read these, so a default can never differ between them.

use std::time::Duration;

/// Model responses per run before it ends with `hit_turn_limit` (`--max-turns`).
pub(crate) const MAX_TURNS: u32 = 12;

/// Output tokens per model reply (`--max-tokens`; 0 sends no limit). A reply that reaches it
/// with no tool call fails the run as `truncated`, so a model that rambles is judged within
/// seconds instead of holding the run until its timeout. 4096 is far above what a tool-calling
/// turn writes (a call, or an answer of a few paragraphs) and is what Anthropic's Messages API
/// has always needed to be sent; reasoning models that think at length may need more.
pub(crate) const MAX_TOKENS: u32 = 4096;

/// Wall-time limit of one HTTP request to a provider (`request_timeout`).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Attempts per provider request; 429, 5xx and timeouts are retried (`max_attempts`).
pub(crate) const MAX_ATTEMPTS: u32 = 4;

/// Wall-time limit of one scenario run (`--timeout`); past it the run is `errored`.
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// Wall-time limit of one tool call.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Scenario runs at the same time (`--concurrency`). Runs wait on the model, not the CPU, so
/// this is well above a CI runner's core count; it starts the whole smoke set (36 scenarios)
/// in one wave, so the smoke run takes about as long as its longest scenario. Providers that
/// answer 429 are retried with backoff.
pub(crate) const CONCURRENCY: usize = 64;

/// The largest hand-written input read, in bytes: `toolgate.yaml`, a scenario, a smoke set,
/// a quarantine list, a system prompt, an MCP config. 4 MiB is far beyond any real one and
/// keeps `TOOLGATE_CONFIG=/dev/zero`-style mistakes from eating memory.
pub(crate) const MAX_SMALL_FILE_BYTES: u64 = 4 << 20;

/// The largest data input read, in bytes: a fixture (`seed_state`), a lock file, a saved
/// tools/list.
pub(crate) const MAX_DATA_FILE_BYTES: u64 = 64 << 20;

/// The largest run artifact read back, in bytes: results, a baseline, recordings
/// (`trace.jsonl`), the history file.
pub(crate) const MAX_RUN_FILE_BYTES: u64 = 512 << 20;
