//! The `openai` agent against real local model servers: llama-cpp-python's OpenAI-compatible
//! server (PyPI `llama-cpp-python[server]`, built by tests/peers/install.sh into
//! target/peers/venv-llama) and llama.cpp's own `llama-server` (built by
//! tests/peers/llama-server.sh into target/peers/llama-server). Two models:
//! - the tiny zero-weight model that tests/peers/tiny_gguf.py writes, with the
//!   `chatml-function-calling` chat format: with zero weights and temperature 0 its answers
//!   are fixed by the vocabulary's order and the server's grammar, so the tool calls, turns and
//!   token counts are exact;
//! - a real small model, Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, target/peers/models), in both
//!   tool-calling modes, on both servers: natively its calls come back as text, prompted they
//!   are real calls.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{output, peer_missing, repo, toolgate};

/// The llama-cpp-python environment's Python, or `None` (after saying why) when it is not
/// installed and this is not CI. Under CI (`CI` set) a missing server fails the test: .ci/run
/// installs it.
fn llama_python() -> Option<PathBuf> {
    let python = repo().join("target/peers/venv-llama/bin/python");
    let ready = Command::new(&python)
        .args(["-c", "import llama_cpp.server.app, gguf"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if ready {
        return Some(python);
    }
    peer_missing(
        "llama-cpp-python is not installed in target/peers/venv-llama",
        "`bash tests/peers/install.sh` builds it, in about seven minutes",
    );
    None
}

/// llama.cpp's own server, built by tests/peers/llama-server.sh, or `None` (after saying why)
/// when it is not built and this is not CI.
fn llama_server_binary() -> Option<PathBuf> {
    let binary = repo().join("target/peers/llama-server/bin/llama-server");
    if binary.is_file() {
        return Some(binary);
    }
    peer_missing(
        "llama-server is not built in target/peers/llama-server",
        "`bash tests/peers/llama-server.sh` builds it, in about twelve minutes",
    );
    None
}

/// The real small model install.sh downloads, or `None` (after saying why) when it is missing
/// and this is not CI.
fn qwen_model() -> Option<PathBuf> {
    let model = repo().join("target/peers/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    if model.is_file() {
        return Some(model);
    }
    peer_missing(
        "the Qwen2.5-Coder-0.5B model is not in target/peers/models",
        "`bash tests/peers/install.sh` downloads it",
    );
    None
}

/// A model server (llama-cpp-python's or llama.cpp's) on a free loopback port, killed when the
/// test ends.
struct LlamaServer {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl LlamaServer {
    /// Writes the tiny model and starts the server on it with a context window of `n_ctx`
    /// tokens; returns once it accepts connections (it loads the model before listening).
    fn start(python: &Path, n_ctx: u32) -> LlamaServer {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let model = dir.path().join("tiny.gguf");
        let status = Command::new(python)
            .arg(repo().join("tests/peers/tiny_gguf.py"))
            .arg(&model)
            .status()
            .expect("python runs");
        assert!(
            status.success(),
            "tests/peers/tiny_gguf.py failed: {status}"
        );
        let models = json!([{
            "model": model,
            "model_alias": "tiny",
            "chat_format": "chatml-function-calling",
            "n_ctx": n_ctx,
            "n_threads": 1,
            "n_threads_batch": 1,
            "verbose": false,
        }]);
        LlamaServer::serve(python, dir, models)
    }

    /// Starts the server on `models` (llama-cpp-python's config-file entries; the server loads
    /// the one a request names by its `model_alias`), its files in `dir`.
    fn serve(python: &Path, dir: tempfile::TempDir, models: Value) -> LlamaServer {
        let port = free_port();
        let config = json!({"host": "127.0.0.1", "port": port, "models": models});
        let config_file = dir.path().join("server.json");
        std::fs::write(&config_file, config.to_string()).expect("writes the server config");
        let mut command = Command::new(python);
        command
            .args(["-m", "llama_cpp.server", "--config_file"])
            .arg(&config_file);
        // It loads the model before it listens.
        LlamaServer::spawn(command, port, dir, "/v1/models")
    }

    /// llama.cpp's own server (`binary`) on `model`, one slot with a window of 16,384 tokens,
    /// the model's own chat template (`--jinja`) reading native tool calls.
    fn llama_cpp(binary: &Path, model: &Path) -> LlamaServer {
        let port = free_port();
        let mut command = Command::new(binary);
        command
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "-c",
                "16384",
                "-np",
                "1",
                "-t",
                "2",
                "--jinja",
                "--no-webui",
            ]);
        let dir = tempfile::tempdir().expect("a temporary folder");
        // It listens at once and answers 503 until the model is loaded.
        LlamaServer::spawn(command, port, dir, "/health")
    }

    /// Starts `command` with its output in `dir`/server.log; returns once `GET ready_path`
    /// answers 200.
    fn spawn(
        mut command: Command,
        port: u16,
        dir: tempfile::TempDir,
        ready_path: &str,
    ) -> LlamaServer {
        let log = std::fs::File::create(dir.path().join("server.log")).expect("creates the log");
        let child = command
            .stdout(log.try_clone().expect("the log again"))
            .stderr(log)
            .spawn()
            .expect("the model server starts");
        let mut server = LlamaServer {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !is_ready(port, ready_path) {
            let exited = server.child.try_wait().expect("the server's status");
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "the model server was not ready on {port} ({exited:?}):\n{}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("server.log")).unwrap_or_default()
    }

    /// `toolgate gate --agent openai --model tiny --temperature 0` against this server with
    /// `args`, its output in `out`; returns the exit code, results.json and trace.jsonl.
    fn gate(&self, out: &Path, args: &[&str]) -> (i32, Value, Vec<Value>) {
        let (code, results, trace, _) = self.gate_model("tiny", "60s", out, args);
        (code, results, trace)
    }

    /// `toolgate gate --agent openai --model MODEL --temperature 0` with `args`, each model
    /// request allowed `request_timeout`; returns the exit code, results.json, trace.jsonl and
    /// what it printed.
    fn gate_model(
        &self,
        model: &str,
        request_timeout: &str,
        out: &Path,
        args: &[&str],
    ) -> (i32, Value, Vec<Value>, String) {
        let mut command = toolgate();
        command
            .env("OPENAI_BASE_URL", self.base_url())
            .env_remove("OPENAI_API_KEY")
            .env("TOOLGATE_REQUEST_TIMEOUT", request_timeout)
            .current_dir(repo())
            .args(["gate", "--agent", "openai", "--model", model])
            .args(["--temperature", "0", "--out"])
            .arg(out)
            .args(args);
        let (code, stdout, stderr) = output(command);
        let results = std::fs::read_to_string(out.join("results.json"))
            .unwrap_or_else(|_| panic!("no results.json:\n{stdout}{stderr}\n{}", self.log()));
        let results: Value = serde_json::from_str(&results).expect("results.json is JSON");
        let trace = std::fs::read_to_string(out.join("trace.jsonl"))
            .expect("trace.jsonl")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a trace line is JSON"))
            .collect();
        (code, results, trace, stdout)
    }
}

/// A port that was free a moment ago on loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// Whether `GET path` on the loopback `port` answers 200.
fn is_ready(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let mut response = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut response).is_ok()
        && response.starts_with("HTTP/1.1 200")
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The (tool, turn) of each call line of a trace.
fn calls(trace: &[Value]) -> Vec<(String, u64)> {
    trace
        .iter()
        .filter_map(|line| Some((line["tool"].as_str()?.to_owned(), line["turn"].as_u64()?)))
        .collect()
}

#[test]
fn the_default_request_gets_tool_calls_from_llama_cpp_python_turn_after_turn() {
    let Some(python) = llama_python() else {
        return;
    };
    let server = LlamaServer::start(&python, 32768);
    let out = tempfile::tempdir().expect("a temporary folder");

    let (_, results, trace) = server.gate(out.path(), &["--only", "T2-007", "--max-turns", "3"]);

    let run = &results["scenarios"][0];
    assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
    assert_eq!(run["outcome"], "fail", "{run}");
    // Every turn called a tool: the server saw the tools, and took the echoed assistant turns
    // and tool results of the turns before.
    assert_eq!(run["turns"], 3);
    assert_eq!(run["hit_turn_limit"], true);
    // The zero-weight model's grammar-bound choice, the same on every run.
    let tool = "admin_assign_role".to_owned();
    assert_eq!(
        calls(&trace),
        vec![(tool.clone(), 1), (tool.clone(), 2), (tool, 3)]
    );
    assert!(
        trace.iter().all(|line| line.get("notes").is_none()),
        "llama-cpp-python's empty `function_call` beside its tool calls is no disagreement: {trace:?}"
    );
    assert_eq!(run["usage"]["requests"], 3);
    assert!(run["usage"]["prompt_tokens"].as_u64() > Some(0), "{run}");
}

#[test]
fn a_conversation_beyond_the_context_window_errors_naming_it() {
    let Some(python) = llama_python() else {
        return;
    };
    let server = LlamaServer::start(&python, 256);
    let out = tempfile::tempdir().expect("a temporary folder");

    let (code, results, _, stdout) =
        server.gate_model("tiny", "60s", out.path(), &["--only", "T2-007"]);

    let run = &results["scenarios"][0];
    assert_eq!(run["outcome"], "errored", "{run}");
    // The verdict names the overflow and what the tools cost, not the model.
    let tokens = results["run"]["catalog_tokens"]
        .as_u64()
        .expect("catalog tokens");
    assert!(
        stdout.contains(&format!(
            "1 of 1 runs overflowed the model's context window; the tools offered cost about \
             {tokens} tokens (o200k) before any message"
        )),
        "{stdout}"
    );
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with(
            "the conversation does not fit the model's context window (HTTP 400): This model's maximum context length is 256 tokens."
        ),
        "{error}"
    );
    assert_ne!(code, 0, "an errored run never passes the gate");
}

/// The catalog's tool names.
fn catalog_tools() -> Vec<String> {
    toolgate::catalog::Catalog::builtin()
        .tools()
        .iter()
        .map(|tool| tool.name.clone())
        .collect()
}

#[test]
fn a_real_small_model_makes_scored_calls_when_prompted_and_none_natively() {
    let (Some(python), Some(model)) = (llama_python(), qwen_model()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let entry = |alias: &str, chat_format: &str| {
        json!({"model": model, "model_alias": alias, "chat_format": chat_format,
               "n_ctx": 16384, "n_threads": 2, "verbose": false})
    };
    let models = json!([
        entry("qwen", "chatml"),
        entry("qwen-native", "chatml-function-calling")
    ]);
    let server = LlamaServer::serve(&python, dir, models);
    // The first turn reads the whole catalog (about 8,000 tokens) at 50-90 tokens/s on two
    // cores; later turns reuse the server's prefix cache.
    let limits = [
        "--only",
        "T1-001",
        "--max-turns",
        "2",
        "--max-tokens",
        "256",
        "--concurrency",
        "1",
        "--timeout",
        "20m",
    ];

    // Prompted: the tools in the system prompt, the calls read from the text. A handful of
    // scenarios: a look-up, a write and a Tier 5 request; at concurrency 1 the catalog is read
    // once, the later scenarios reuse it from the server's prompt cache.
    let out = tempfile::tempdir().expect("a temporary folder");
    let mut args = limits.to_vec();
    args.extend([
        "--tool-calling",
        "prompted",
        "--only",
        "T2-004",
        "--only",
        "T5-001",
    ]);
    let (_, results, trace, _) = server.gate_model("qwen", "15m", out.path(), &args);
    let runs = results["scenarios"].as_array().expect("scenarios");
    assert_eq!(runs.len(), 3, "{results}");
    for run in runs {
        assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
        assert!(
            run["outcome"] == "pass" || run["outcome"] == "fail",
            "{run}"
        );
    }
    assert_eq!(results["run"]["tool_calling"], "prompted");
    assert_eq!(results["pins"]["tool_calling"], "prompted");
    let known = catalog_tools();
    let is_known = |tool: &str| known.iter().any(|name| name == tool);
    let tools: Vec<&str> = trace
        .iter()
        .filter_map(|line| line["tool"].as_str())
        .collect();
    assert!(
        tools.iter().any(|tool| is_known(tool)),
        "the model made no call to a catalog tool: {tools:?}\n{results}\n{}",
        server.log()
    );
    assert!(
        trace.iter().any(|line| line["outcome"] == "success"),
        "no call ran: {trace:?}"
    );
    // A tool the model invented (it does: `crm_delete_contacts`) is scored as such.
    for run in runs {
        let invented = trace.iter().any(|line| {
            line["scenario"] == run["id"]
                && line["tool"].as_str().is_some_and(|tool| !is_known(tool))
        });
        let flagged = run["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|check| check["kind"] == "unknown_tool" && check["passed"] == false);
        assert_eq!(invented, flagged, "{run}");
    }
    // Scored like any other call: an expected call's checks looked at it.
    assert!(
        runs.iter()
            .flat_map(|run| run["checks"].as_array().into_iter().flatten())
            .any(|check| check["kind"] == "tool_selection" && check["passed"] == true),
        "{results}"
    );

    // Native, through the server's function-calling chat format: the call comes back as text,
    // and the report says so instead of blaming the model.
    let out = tempfile::tempdir().expect("a temporary folder");
    let mut args = limits.to_vec();
    args.extend([
        "--system-prompt-text",
        "You are a helpful assistant with access to tools.",
    ]);
    let (_, results, trace, stdout) = server.gate_model("qwen-native", "15m", out.path(), &args);
    let run = &results["scenarios"][0];
    assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
    assert!(
        trace.iter().all(|line| line.get("tool").is_none()),
        "{trace:?}"
    );
    let answer = run["final_answer"].as_str().unwrap_or_default();
    assert!(answer.starts_with("functions."), "{run}");
    assert_eq!(run["call_as_text"], true, "{run}");
    assert!(
        stdout.contains("1 of 1 runs ended on a tool call written as text"),
        "{stdout}"
    );
    assert!(stdout.contains("try --tool-calling prompted"), "{stdout}");
}

#[test]
fn a_real_small_model_through_llama_server_writes_its_calls_as_text_natively_and_makes_them_prompted()
 {
    let (Some(binary), Some(model)) = (llama_server_binary(), qwen_model()) else {
        return;
    };
    let server = LlamaServer::llama_cpp(&binary, &model);
    // A look-up and a Tier 5 request, each offered only its own tool groups: the first turn of
    // each mode reads about 4,000 tokens at 30-90 tokens/s on two cores, later turns reuse the
    // server's prefix cache.
    let limits = [
        "--only",
        "T1-001",
        "--only",
        "T5-001",
        "--tool-offer",
        "scenario",
        "--max-turns",
        "2",
        "--max-tokens",
        "256",
        "--concurrency",
        "1",
        "--timeout",
        "20m",
    ];
    let known = catalog_tools();
    let is_known = |tool: &str| known.iter().any(|name| name == tool);

    // Native, through the model's own chat template (`--jinja`): the server reads a call only
    // inside `<tool_call>` tags, and this model writes it as a fenced JSON block instead, so
    // no call is made and the report says it is a serving problem.
    let out = tempfile::tempdir().expect("a temporary folder");
    let (_, results, trace, stdout) = server.gate_model("qwen", "15m", out.path(), &limits);
    assert_eq!(results["run"]["tool_calling"], "native");
    let runs = results["scenarios"].as_array().expect("scenarios");
    assert_eq!(runs.len(), 2, "{results}");
    for run in runs {
        assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
        assert_eq!(run["outcome"], "fail", "{run}");
        assert_eq!(run["call_as_text"], true, "{run}");
        assert_eq!(run["usage"]["requests"], 1, "{run}");
        let answer = run["final_answer"].as_str().unwrap_or_default();
        assert!(answer.contains("\"name\""), "{run}");
    }
    assert!(
        trace.iter().all(|line| line.get("tool").is_none()),
        "{trace:?}"
    );
    assert!(
        stdout.contains("2 of 2 runs ended on a tool call written as text"),
        "{stdout}"
    );

    // Prompted: the same server and model make real calls, scored like any other.
    let out = tempfile::tempdir().expect("a temporary folder");
    let mut args = limits.to_vec();
    args.extend(["--tool-calling", "prompted"]);
    let (_, results, trace, _) = server.gate_model("qwen", "15m", out.path(), &args);
    assert_eq!(results["run"]["tool_calling"], "prompted");
    let runs = results["scenarios"].as_array().expect("scenarios");
    assert_eq!(runs.len(), 2, "{results}");
    for run in runs {
        assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
        assert!(
            run["outcome"] == "pass" || run["outcome"] == "fail",
            "{run}"
        );
    }
    let lookup = trace
        .iter()
        .find(|line| line["scenario"] == "T1-001" && line.get("tool").is_some())
        .unwrap_or_else(|| panic!("T1-001 made no call: {trace:?}\n{}", server.log()));
    assert_eq!(lookup["tool"], "crm_search_contacts", "{lookup}");
    assert_eq!(lookup["outcome"], "success", "{lookup}");
    assert!(is_known(lookup["tool"].as_str().unwrap_or_default()));
    let t1 = &runs[0];
    assert_eq!(t1["id"], "T1-001");
    assert!(
        t1["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|check| check["kind"] == "tool_selection" && check["passed"] == true),
        "{t1}"
    );
}

#[test]
fn a_real_small_model_holds_a_scripted_conversation_through_llama_cpp_python() {
    let (Some(python), Some(model)) = (llama_python(), qwen_model()) else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let models = json!([{"model": model, "model_alias": "qwen", "chat_format": "chatml",
                         "n_ctx": 16384, "n_threads": 2, "verbose": false}]);
    let server = LlamaServer::serve(&python, dir, models);
    // T1-101: "Log a call with John" is ambiguous (two Johns); the user names him if asked.
    let out = tempfile::tempdir().expect("a temporary folder");
    let args = [
        "--only",
        "T1-101",
        "--tool-calling",
        "prompted",
        "--tool-offer",
        "scenario",
        "--max-turns",
        "6",
        "--max-tokens",
        "256",
        "--concurrency",
        "1",
        "--timeout",
        "20m",
    ];
    let (_, results, trace, _) = server.gate_model("qwen", "15m", out.path(), &args);
    let run = &results["scenarios"][0];
    assert_eq!(run["error"], Value::Null, "{run}\n{}", server.log());
    assert!(
        run["outcome"] == "pass" || run["outcome"] == "fail",
        "{run}"
    );
    // Whatever the model did, the conversation is recorded as the rules played it: the
    // prompt first; the user's answer only after a reply, and then also in trace.jsonl.
    let conversation = &run["conversation"];
    let exchanges = conversation["exchanges"].as_array().expect("exchanges");
    assert_eq!(
        exchanges[0]["user"], "Log a call with John: he wants a product demo next month.",
        "{run}"
    );
    let user_lines: Vec<&Value> = trace
        .iter()
        .filter(|line| line.get("user").is_some())
        .collect();
    assert_eq!(user_lines.len(), exchanges.len() - 1, "{trace:?}");
    if exchanges.len() > 1 {
        assert_eq!(
            exchanges[1]["user"], "John Carter, from Initech. The call took about 15 minutes.",
            "{run}"
        );
        assert_eq!(user_lines[0]["user"], exchanges[1]["user"]);
    } else {
        assert_ne!(conversation["ended"]["kind"], "finished", "{run}");
    }
}
