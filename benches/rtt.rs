//! MCP `tools/call` round trips over stdio from a compiled client, whose own cost per call is
//! a few microseconds: it writes one JSON-RPC line and reads lines until the answer with the
//! same id. Prints the p50, p95 and p99 round trip and the server's CPU time per call, all in
//! microseconds, on one line. The server's CPU time is the sum over its threads of
//! `/proc/PID/task/*/schedstat`'s first field (nanoseconds on CPU), read after the warm-up
//! (the first tenth of the calls, left out of every figure) and at the end.
//!
//!     cargo bench --bench rtt -- CALLS TOOL ARGS_JSON -- SERVER COMMAND...
//!     cargo bench --bench rtt -- CALLS - '{}' -- --echo   # the floor: this binary echoing lines
//!
//! With TOOL `-` no handshake is made and each request line comes back as it is; `--echo` as
//! the server runs this binary as that echo (one blocking read and write per line).
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--echo") {
        echo();
        return;
    }
    let split = args
        .iter()
        .position(|a| a == "--")
        .expect("usage: CALLS TOOL ARGS -- COMMAND...");
    let (options, command) = (&args[..split], &args[split + 1..]);
    let calls: usize = options[0].parse().expect("CALLS is a number");
    let tool = options[1].as_str();
    let arguments: Value = serde_json::from_str(&options[2]).expect("ARGS is JSON");
    let mut command: Vec<String> = command.to_vec();
    if command == ["--echo"] {
        let me = std::env::current_exe().expect("the bench binary's path");
        command = vec![me.display().to_string(), "--echo".to_owned()];
    }
    let mut server = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let pid = server.id();
    let mut client = Client {
        input: server.stdin.take().expect("piped"),
        output: BufReader::with_capacity(1 << 16, server.stdout.take().expect("piped")),
        line: String::new(),
    };
    if tool != "-" {
        client.call(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "rtt", "version": "1"}}}),
            0,
        );
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    let warm_up = calls / 10;
    let mut samples = Vec::with_capacity(calls);
    let mut cpu_at_warm_up = 0;
    for i in 1..=calls {
        if i == warm_up + 1 {
            cpu_at_warm_up = cpu_ns(pid);
        }
        let id = u64::try_from(i).expect("fits");
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": {"name": tool, "arguments": arguments}});
        let started = Instant::now();
        let answer = client.call(&message, id);
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        if i == 1 && tool != "-" {
            let failed = answer.get("error").is_some()
                || answer["result"]["isError"].as_bool() == Some(true);
            assert!(!failed, "tools/call failed: {answer}");
        }
    }
    let cpu = cpu_ns(pid).saturating_sub(cpu_at_warm_up);
    drop(client);
    let _ = server.kill();
    let _ = server.wait();
    let mut measured = samples.split_off(warm_up);
    measured.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        let index = ((q * measured.len() as f64) as usize).min(measured.len() - 1);
        measured[index]
    };
    let cpu_per_call = cpu as f64 / 1e3 / measured.len() as f64;
    println!(
        "{:.0} {:.0} {:.0} {cpu_per_call:.1}",
        pick(0.50),
        pick(0.95),
        pick(0.99)
    );
}

/// The client's ends of the server's pipes.
struct Client {
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Client {
    /// Writes `message` as one line.
    fn send(&mut self, message: &Value) {
        let mut text = message.to_string();
        text.push('\n');
        self.input
            .write_all(text.as_bytes())
            .expect("the server reads");
    }

    /// Sends `message` and reads lines until the one whose `id` is `id` (skipping the
    /// server's notifications in between).
    fn call(&mut self, message: &Value, id: u64) -> Value {
        self.send(message);
        loop {
            self.line.clear();
            let read = self
                .output
                .read_line(&mut self.line)
                .expect("the server writes");
            assert!(read > 0, "the server closed stdout");
            let answer: Value = serde_json::from_str(&self.line).expect("a JSON-RPC line");
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                return answer;
            }
        }
    }
}

/// Nanoseconds on CPU of every thread of process `pid` so far.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The floor's server: echoes every line back, one blocking read and write each.
fn echo() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut line = String::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if stdout
                    .write_all(line.as_bytes())
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}
