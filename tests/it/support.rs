//! Shared test helpers: the repo root, scratch suites, a scripted fake chat-completions
//! provider on loopback.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The repository root (holds scenarios/, fixtures/, smoke-set.yaml, baseline.json).
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch suite root with the repo's fixtures, the given scenario files and a smoke set
/// selecting every tier.
pub(crate) fn scratch_suite(scenarios: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("fixtures")).expect("mkdir fixtures");
    std::fs::create_dir_all(root.join("scenarios")).expect("mkdir scenarios");
    std::fs::copy(
        repo().join("fixtures/crm_baseline.json"),
        root.join("fixtures/crm_baseline.json"),
    )
    .expect("copy fixture");
    for (name, text) in scenarios {
        std::fs::write(root.join("scenarios").join(name), text).expect("write scenario");
    }
    std::fs::write(root.join("smoke-set.yaml"), "tiers: [1, 2, 3, 4, 5]\n")
        .expect("write smoke set");
    dir
}

/// `bash tests/peers/install.sh` as the tests run it: without the llama-cpp-python build (about
/// seven minutes) and without Chromium (apt, as root), which .ci/run installs and whose tests
/// skip without them outside CI.
pub(crate) fn peer_installer() -> std::process::Command {
    let mut command = std::process::Command::new("bash");
    command
        .arg(repo().join("tests/peers/install.sh"))
        .env("TOOLGATE_PEERS_SKIP_LLAMA", "1")
        .env("TOOLGATE_PEERS_SKIP_BROWSER", "1");
    command
}

/// The `toolgate` binary under test, isolated from a CI runner's GitHub environment (tests
/// that need it set it again).
pub(crate) fn toolgate() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    for name in [
        "GITHUB_ACTIONS",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_EVENT_PATH",
        "GITHUB_TOKEN",
        "GITHUB_REPOSITORY",
        "GITHUB_API_URL",
        "TOOLGATE_BASELINE",
        "TOOLGATE_COMMENT",
        "TOOLGATE_COMMENT_AUTHOR",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "TOOLGATE_ACTION_ARGS",
    ] {
        command.env_remove(name);
    }
    command
}

/// Runs `command` and returns (exit code, stdout, stderr).
pub(crate) fn output(mut command: std::process::Command) -> (i32, String, String) {
    let output = command.output().expect("toolgate runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Path of `name` under `dir`, as a string for arguments.
pub(crate) fn arg(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A chat-completions reply with text only.
pub(crate) fn answer(text: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
}

/// A chat-completions reply with tool calls given as (id, name, raw arguments text).
pub(crate) fn tool_calls(calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
}

/// A fake OpenAI-compatible provider on loopback: replays `script` in order, then repeats
/// `fallback` (if any) for every later request, and keeps every request body.
pub(crate) struct FakeProvider {
    pub server: MockServer,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

struct Script {
    steps: Mutex<VecDeque<ResponseTemplate>>,
    fallback: Option<ResponseTemplate>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        self.requests.lock().expect("requests lock").push(body);
        let next = self.steps.lock().expect("steps lock").pop_front();
        next.or_else(|| self.fallback.clone())
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script exhausted"))
    }
}

impl FakeProvider {
    pub(crate) async fn start(
        script: Vec<ResponseTemplate>,
        fallback: Option<ResponseTemplate>,
    ) -> FakeProvider {
        let server = MockServer::start().await;
        let requests = Arc::new(Mutex::new(Vec::new()));
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                steps: Mutex::new(script.into()),
                fallback,
                requests: requests.clone(),
            })
            .mount(&server)
            .await;
        FakeProvider { server, requests }
    }

    /// The base URL to give the agent (`OPENAI_BASE_URL`).
    pub(crate) fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    pub(crate) fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("requests lock").clone()
    }
}

/// Whether process `pid` is gone, or a zombie nobody reaped yet (it runs no more code).
pub(crate) fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// Polls `ready` every 50 ms for up to a minute; panics naming `what` when it never is.
pub(crate) fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A peer a test needs is missing: under CI (`CI` set, where .ci/run installs every peer) the
/// test fails naming it; elsewhere the test is skipped, saying why and how to install it
/// (`missing`: what is missing; `install`: the command, and how long it takes).
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says why, where cargo test shows it"
)]
pub(crate) fn peer_missing(missing: &str, install: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{missing}: run `bash tests/peers/install.sh`"
    );
    eprintln!("skipped: {missing} ({install})");
}

/// A `command` agent running the Python `program`, with examples/ on its `PYTHONPATH` (for
/// `scripted_agent`'s MCP client). The program lives in the returned directory.
pub(crate) fn python_command_agent(program: &str) -> (toolgate::agent::Agent, tempfile::TempDir) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("agent.py");
    std::fs::write(&path, program).expect("write the agent");
    let agent = toolgate::agent::Agent::Command(toolgate::agent::command::CommandAgent {
        command: format!(
            "PYTHONPATH='{}' python3 '{}'",
            examples.display(),
            path.display()
        ),
        model: None,
        system_prompt: None,
    });
    (agent, dir)
}
