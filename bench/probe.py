#!/usr/bin/env python3
"""Probes of toolgate's outer surfaces: HTTP listeners, OTLP export, the pull-request comment,
signals, and `score` over a large trace. Each probe runs the real binary against fakes on
loopback and prints one row: probe, outcome (ok, or BAD and why), wall time, and the peak
resident memory of the toolgate process it started.

    python3 bench/probe.py [--bin target/debug/toolgate] [--score-mb 200] [--only NAME]

Exit status 1 when any probe is BAD. Stdlib only; the proxy probe needs python3 on PATH.
"""
import argparse
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESK = os.path.join(REPO, "examples", "support-desk", "mocks.yaml")
BROKEN = os.path.join(REPO, "tests", "peers", "broken_server.py")
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}})
CANARY = "ghs_probe_canary_token_0123456789"


class Child:
    """A toolgate process whose peak RSS is read when it is reaped (wait4)."""

    def __init__(self, args, **kwargs):
        self.process = subprocess.Popen(args, **kwargs)
        self.rss_kib = 0
        self.code = None

    def wait(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                self.rss_kib = usage.ru_maxrss
                self.code = os.waitstatus_to_exitcode(status)
                self.process.returncode = self.code
                return self.code
            time.sleep(0.02)
        raise TimeoutError(f"still running after {timeout} s")

    def kill(self):
        try:
            self.process.kill()
            self.wait(10)
        except (ProcessLookupError, TimeoutError, ChildProcessError):
            pass


def run(args, timeout=300, env=None, stdin=None):
    """Runs toolgate to the end; (exit code, stdout, stderr, peak RSS KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = Child(args, stdout=out, stderr=err, stdin=stdin or subprocess.DEVNULL,
                      env=env, cwd=REPO)
        child.wait(timeout)
        out.seek(0)
        err.seek(0)
        return child.code, out.read().decode(errors="replace"), err.read().decode(errors="replace"), child.rss_kib


def serve_listener(binary):
    """Starts `mock serve --listen 127.0.0.1:0`; (child, host:port)."""
    child = Child([binary, "mock", "serve", DESK, "--listen", "127.0.0.1:0"],
                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO)
    line = child.process.stdout.readline().decode()
    url = line.strip().rsplit(" ", 1)[-1]
    return child, url.removeprefix("http://").removesuffix("/mcp")


def post(authority, body, headers=None, timeout=30):
    request = urllib.request.Request(f"http://{authority}/mcp", data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def fake_http(handler):
    """A threaded HTTP server on loopback answering every request with `handler(self)`."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):
            handler(self)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            self.body = self.rfile.read(length)
            handler(self)

        do_PATCH = do_POST

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def reply(status, body=b"{}"):
    def handle(request):
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)
    return handle


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, IndexError):
        return True


# Each probe returns (ok, detail, peak RSS KiB).

def probe_listen_remote(binary):
    code, _, err, rss = run([binary, "mock", "serve", DESK, "--listen", "0.0.0.0:0"], timeout=30)
    return code == 2 and "--allow-remote" in err, f"exit {code}", rss


def probe_listen_origin(binary):
    child, at = serve_listener(binary)
    try:
        foreign = post(at, INITIALIZE.encode(), {"Origin": "https://evil.example"})
        local = post(at, INITIALIZE.encode(), {"Origin": "http://localhost:3000"})
        rebound = post(at, INITIALIZE.encode(), {"Host": "evil.example"})
    finally:
        child.kill()
    return (foreign, local, rebound) == (403, 200, 403), f"foreign {foreign}, localhost {local}, foreign Host {rebound}", child.rss_kib


def probe_listen_concurrent(binary):
    child, at = serve_listener(binary)
    try:
        with ThreadPoolExecutor(max_workers=200) as pool:
            codes = list(pool.map(lambda _: post(at, INITIALIZE.encode()), range(1000)))
    finally:
        child.kill()
    ok = sum(code == 200 for code in codes)
    return ok == 1000, f"{ok} of 1000 answered 200", child.rss_kib


def probe_listen_idle(binary):
    child, at = serve_listener(binary)
    host, port = at.split(":")
    idle = []
    try:
        for _ in range(400):
            idle.append(socket.create_connection((host, int(port))))
        status = post(at, INITIALIZE.encode(), timeout=60)
    finally:
        for sock in idle:
            sock.close()
        child.kill()
    return status == 200, f"400 idle connections, then a request: {status}", child.rss_kib


def probe_listen_oversized(binary):
    child, at = serve_listener(binary)
    try:
        body = post(at, b'{"x": "' + b"a" * (5 * 1024 * 1024) + b'"}')
        try:
            headers = post(at, INITIALIZE.encode(), {"X-Big": "a" * (1024 * 1024)})
        except (ConnectionError, urllib.error.URLError) as error:
            headers = f"closed ({type(error).__name__})"
    finally:
        child.kill()
    return body == 413 and headers in (431, "closed (ConnectionResetError)", "closed (URLError)"), f"5 MiB body {body}, 1 MiB header {headers}", child.rss_kib


def gate_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OTEL_"))}
    env.update(extra)
    return env


def probe_otel(binary, kind):
    with tempfile.TemporaryDirectory() as out:
        server = None
        if kind == "dead":
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
            sock.close()
        elif kind == "500":
            server, endpoint = fake_http(reply(500, b"collector down"))
        else:
            server, endpoint = fake_http(lambda request: time.sleep(120))
        started = time.time()
        code, stdout, stderr, rss = run([binary, "gate", "--only", "T1-001", "--out", out],
                                        env=gate_env(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                                                     OTEL_EXPORTER_OTLP_TIMEOUT="3000"))
        took = time.time() - started
        if server:
            server.shutdown()
    warned = "warning: failed to send spans" in stdout
    return code == 0 and warned, f"exit {code}, warned {warned}, {took:.1f} s", rss


def probe_comment(binary, status):
    def handle(request):
        if request.command == "GET":
            reply(200, b"[]")(request)
        else:
            reply(status, json.dumps({"message": f"no ({CANARY})"}).encode())(request)
    server, api = fake_http(handle)
    with tempfile.TemporaryDirectory() as out:
        code, stdout, stderr, rss = run(
            [binary, "gate", "--only", "T1-001", "--out", out, "--comment", "--pr", "7"],
            env=gate_env(GITHUB_TOKEN=CANARY, GITHUB_REPOSITORY="acme/agent", GITHUB_API_URL=api))
    server.shutdown()
    leaked = CANARY in stdout + stderr
    return code == 0 and not leaked, f"exit {code}, token shown {leaked}", rss


def probe_comment_slow(binary):
    server, api = fake_http(lambda request: time.sleep(300))
    with tempfile.TemporaryDirectory() as out:
        started = time.time()
        code, _, _, rss = run([binary, "gate", "--only", "T1-001", "--out", out, "--comment", "--pr", "7"],
                              env=gate_env(GITHUB_TOKEN=CANARY, GITHUB_REPOSITORY="acme/agent", GITHUB_API_URL=api),
                              timeout=400)
        took = time.time() - started
    server.shutdown()
    return code == 0 and took < 200, f"exit {code} after {took:.0f} s (deadline 120 s)", rss


def probe_signal_gate(binary, sig):
    with tempfile.TemporaryDirectory() as dir:
        script = f"cd '{dir}' || exit 1; sleep 300 & echo $! > child.pid; echo $$ > agent.pid; wait"
        child = Child([binary, "gate", "--agent", "command", "--only", "T1-001", "--command", script,
                       "--out", os.path.join(dir, "out")], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL, cwd=REPO)
        pid_file = os.path.join(dir, "agent.pid")
        for _ in range(600):
            if os.path.exists(pid_file) and open(pid_file).read().endswith("\n"):
                break
            time.sleep(0.05)
        agent = open(pid_file).read().strip()
        kid = open(os.path.join(dir, "child.pid")).read().strip()
        child.process.send_signal(sig)
        code = child.wait(60)
        time.sleep(1)
        left = [pid for pid in (agent, kid) if not gone(pid)]
        for pid in left:
            os.kill(int(pid), signal.SIGKILL)
    # After SIGKILL the kernel stops the agent itself; a child it started may outlive it.
    wanted = [agent] if sig == signal.SIGKILL else [agent, kid]
    ok = not [pid for pid in wanted if pid in left]
    return ok, f"exit {code}, left running: {len(left)}", child.rss_kib


def probe_proxy_kill(binary, sig):
    with tempfile.TemporaryDirectory() as dir:
        pid_file = os.path.join(dir, "server.pid")
        child = Child([binary, "proxy", "--name", "hang", "--", "python3", BROKEN, "hang", pid_file],
                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        child.process.stdin.write((INITIALIZE + "\n").encode())
        child.process.stdin.flush()
        for _ in range(600):
            if os.path.exists(pid_file) and open(pid_file).read().endswith("\n"):
                break
            time.sleep(0.05)
        server = open(pid_file).read().strip()
        if sig is None:
            child.process.stdin.close()
        else:
            child.process.send_signal(sig)
        code = child.wait(60)
        for _ in range(200):
            if gone(server):
                break
            time.sleep(0.05)
        left = not gone(server)
        if left:
            os.kill(int(server), signal.SIGKILL)
    how = "client closed stdin" if sig is None else signal.Signals(sig).name
    return not left, f"{how}: exit {code}, server left running {left}", child.rss_kib


def probe_gate_own_server(binary, sig):
    """`gate` on a suite whose own server hangs on its first call; `sig` while it hangs."""
    with tempfile.TemporaryDirectory() as dir:
        pid_file = os.path.join(dir, "server.pid")
        os.makedirs(os.path.join(dir, "scenarios"))
        with open(os.path.join(dir, "toolgate.yaml"), "w") as config:
            config.write(f"servers:\n  broken:\n    command: python3\n    args: ['{BROKEN}', hang, '{pid_file}']\n")
        with open(os.path.join(dir, "scenarios", "b.yaml"), "w") as scenario:
            scenario.write("id: B-001\ntier: 1\ntype: single_call\nprompt: Echo hi.\n"
                           "expected_calls:\n  - tool: echo\n    args_match: {text: hi}\n")
        with open(os.path.join(dir, "smoke-set.yaml"), "w") as smoke:
            smoke.write("tiers: [1]\n")
        child = Child([binary, "gate", "--root", dir, "--out", os.path.join(dir, "out")],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        server = None
        for _ in range(1200):
            # Discovery starts the server once and stops it; the run starts it again.
            if os.path.exists(pid_file):
                pid = open(pid_file).read().strip()
                if pid and pid != server and not gone(pid):
                    server = pid
                    time.sleep(1)
                    if not gone(pid):
                        break
            time.sleep(0.05)
        child.process.send_signal(sig)
        code = child.wait(60)
        for _ in range(200):
            if server is None or gone(server):
                break
            time.sleep(0.05)
        left = server is not None and not gone(server)
        if left:
            os.kill(int(server), signal.SIGKILL)
        results = os.path.join(dir, "out", "results.json")
        passed = os.path.exists(results) and '"verdict": "pass"' in open(results).read()
    return not left and code != 0 and not passed, f"exit {code}, server left running {left}", child.rss_kib


def probe_score_otlp(binary, traces):
    """One OTLP line of `traces` trace ids, as a batching exporter may write it."""
    spans = [{"traceId": f"{i:032x}", "spanId": f"{i:016x}", "name": "execute_tool lookup",
              "startTimeUnixNano": "1", "endTimeUnixNano": "2",
              "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}},
                             {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}]}
             for i in range(traces)]
    with tempfile.TemporaryDirectory() as dir:
        path = os.path.join(dir, "otlp.jsonl")
        with open(path, "w") as file:
            file.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
        size = os.path.getsize(path) / 1e6
        started = time.time()
        code, _, err, rss = run([binary, "score", "--format", "otel", "--traces", path,
                                 "--out", os.path.join(dir, "out")], timeout=600)
        took = time.time() - started
    return code == 0, f"{traces} traces in one {size:.0f} MB line: {took:.1f} s", rss


def probe_score(binary, megabytes):
    line = {"run_id": None, "scenario": "s", "tool": "crm_search_contacts",
            "arguments": {"query": "x" * 100}, "outcome": "success", "result": {"contacts": ["y" * 200]}}
    with tempfile.TemporaryDirectory() as dir:
        trace = os.path.join(dir, "trace.jsonl")
        with open(trace, "w") as file:
            written, session = 0, 0
            while written < megabytes * 1024 * 1024:
                # Two sessions interleaved, as two proxies appending to one file write them.
                for run_id in (f"a{session}", f"b{session}"):
                    line["run_id"] = run_id
                    text = json.dumps(line) + "\n"
                    file.write(text)
                    written += len(text)
                session += 1 if written % 7 == 0 else 0
        started = time.time()
        code, stdout, stderr, rss = run([binary, "score", "--format", "toolgate", "--traces", trace,
                                         "--out", os.path.join(dir, "out")], timeout=3600)
        took = time.time() - started
    return code == 0 and rss < 300 * 1024, f"{megabytes} MB in {took:.0f} s", rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(REPO, "target", "debug", "toolgate"))
    parser.add_argument("--score-mb", type=int, default=200)
    parser.add_argument("--only")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    probes = [
        ("listen: non-loopback address", lambda: probe_listen_remote(binary)),
        ("listen: foreign Origin and Host", lambda: probe_listen_origin(binary)),
        ("listen: 1,000 concurrent requests", lambda: probe_listen_concurrent(binary)),
        ("listen: 400 idle connections", lambda: probe_listen_idle(binary)),
        ("listen: oversized body and headers", lambda: probe_listen_oversized(binary)),
        ("otel: dead collector", lambda: probe_otel(binary, "dead")),
        ("otel: collector answers 500", lambda: probe_otel(binary, "500")),
        ("otel: collector never answers", lambda: probe_otel(binary, "slow")),
        *[(f"comment: POST answered {status}", (lambda s: lambda: probe_comment(binary, s))(status))
          for status in (403, 404, 422, 502)],
        ("comment: API never answers", lambda: probe_comment_slow(binary)),
        ("gate: SIGINT with a command agent", lambda: probe_signal_gate(binary, signal.SIGINT)),
        ("gate: SIGTERM with a command agent", lambda: probe_signal_gate(binary, signal.SIGTERM)),
        ("gate: SIGKILL with a command agent", lambda: probe_signal_gate(binary, signal.SIGKILL)),
        ("proxy: client leaves a hung server", lambda: probe_proxy_kill(binary, None)),
        ("proxy: SIGTERM with a hung server", lambda: probe_proxy_kill(binary, signal.SIGTERM)),
        ("proxy: SIGKILL with a hung server", lambda: probe_proxy_kill(binary, signal.SIGKILL)),
        ("gate: SIGINT with a hung own server", lambda: probe_gate_own_server(binary, signal.SIGINT)),
        ("gate: SIGKILL with a hung own server", lambda: probe_gate_own_server(binary, signal.SIGKILL)),
        ("score: large interleaved trace", lambda: probe_score(binary, args.score_mb)),
        ("score: 200,000 traces in one OTLP line", lambda: probe_score_otlp(binary, 200_000)),
    ]
    bad = 0
    print(f"{'probe':<40} {'outcome':<7} {'wall':>7} {'peak RSS':>9}  detail")
    for name, probe in probes:
        if args.only and args.only not in name:
            continue
        started = time.time()
        try:
            ok, detail, rss = probe()
        except Exception as error:  # a probe that breaks is a BAD row, not a crash
            ok, detail, rss = False, f"{type(error).__name__}: {error}", 0
        bad += not ok
        outcome = "ok" if ok else "BAD"
        print(f"{name:<40} {outcome:<7} {time.time() - started:>6.1f}s {rss / 1024:>7.0f}MB  {detail}",
              flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
