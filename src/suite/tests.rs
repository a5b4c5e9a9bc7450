//! The servers section: stdio and HTTP servers, variables expanded, secrets hidden, errors named.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "API_TOKEN" => Some("s3cret-token-value".to_string()),
        "HOME" => Some("/home/u".to_string()),
        _ => None,
    }
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

fn load(text: &str) -> anyhow::Result<Vec<ServerSpec>> {
    from_value(&yaml(text), Path::new("suite/toolgate.yaml"), &env)
}

fn error(text: &str) -> String {
    format!("{:#}", load(text).expect_err("an invalid servers section"))
}

#[test]
fn reads_stdio_and_http_servers_with_variables_expanded() {
    let specs = load(
        "memory:\n  command: node\n  args: [server.js, '{seed}']\n  env: {MEMORY_FILE_PATH: '{seed_dir}/m.jsonl', HOME_DIR: '${HOME}'}\n  include: ['*_entities', read_graph]\n  exclude: [delete_*]\napi:\n  url: http://127.0.0.1:9/mcp\n  headers: {Authorization: 'Bearer ${API_TOKEN}'}\n  reset: {tool: reset_all}\n",
    )
    .expect("valid");
    assert_eq!(specs.len(), 2, "in file order");
    let api = &specs[1];
    assert_eq!(api.name, "api");
    assert_eq!(api.label(), "http://127.0.0.1:9/mcp");
    assert_eq!(
        api.reset,
        Some(Reset::Tool {
            name: "reset_all".into(),
            arguments: serde_json::Map::new()
        })
    );
    assert_eq!(
        api.secrets().redact("got s3cret-token-value"),
        "got [redacted]"
    );
    let memory = &specs[0];
    assert!(memory.filter.admits("create_entities"));
    assert!(memory.filter.admits("read_graph"));
    assert!(!memory.filter.admits("delete_entities"));
    assert!(!memory.filter.admits("search_nodes"));
    let paths = RunPaths {
        seed_dir: PathBuf::from("/tmp/run1"),
        seed: PathBuf::from("/tmp/run1/memory.jsonl"),
    };
    let launch = memory
        .launch_for(Path::new("/suite"), &paths)
        .expect("a stdio server");
    assert_eq!(launch.args, ["server.js", "/tmp/run1/memory.jsonl"]);
    assert_eq!(
        launch.env,
        [
            ("HOME_DIR".to_string(), "/home/u".to_string()),
            (
                "MEMORY_FILE_PATH".to_string(),
                "/tmp/run1/m.jsonl".to_string()
            )
        ]
    );
    assert_eq!(launch.cwd, PathBuf::from("/suite"));
    assert_eq!(
        launch.command, "node",
        "a bare name is left for the PATH lookup"
    );
    assert_eq!(memory.label(), "node server.js {seed}");
}

#[test]
fn a_relative_command_is_the_suite_roots_whatever_the_cwd() {
    let specs = load(
        "git:\n  command: ../../peers/bin/mcp-server-git\n  cwd: '{seed_dir}'\nabs:\n  command: /usr/bin/server\n  cwd: sub\n",
    )
    .expect("valid");
    let paths = RunPaths {
        seed_dir: PathBuf::from("/tmp/run1"),
        seed: PathBuf::from("/tmp/run1/seed"),
    };
    let git = specs[0]
        .launch_for(Path::new("/work/examples/git"), &paths)
        .expect("a stdio server");
    assert_eq!(
        PathBuf::from(&git.command),
        PathBuf::from("/work/examples/git/../../peers/bin/mcp-server-git")
    );
    assert_eq!(git.cwd, PathBuf::from("/tmp/run1"));
    let abs = specs[1]
        .launch_for(Path::new("/work/examples/git"), &paths)
        .expect("a stdio server");
    assert_eq!(abs.command, "/usr/bin/server");
    assert_eq!(abs.cwd, PathBuf::from("/work/examples/git/sub"));
}

#[test]
fn unknown_fields_name_the_file_and_the_field() {
    assert_eq!(
        error("memory:\n  comand: node\n"),
        "`suite/toolgate.yaml`: servers.memory.comand: unknown field `comand`, expected one of `type`, `command`, `args`, `env`, `cwd`, `url`, `headers`, `include`, `exclude`, `reset`, `setup`"
    );
    assert_eq!(
        error("memory:\n  command: node\n  args: [a, 3]\n"),
        "`suite/toolgate.yaml`: servers.memory.args[1]: invalid type: integer `3`, expected a string"
    );
}

#[test]
fn bad_servers_are_errors_naming_the_field() {
    assert_eq!(
        error("m:\n  command: node\n  url: http://x\n"),
        "`suite/toolgate.yaml`: servers.m: has both `command` and `url`; keep one"
    );
    assert_eq!(
        error("m: {}\n"),
        "`suite/toolgate.yaml`: servers.m: needs `command` (a stdio server) or `url` (a streamable HTTP server)"
    );
    assert_eq!(
        error("m:\n  command: node\n  env: {TOKEN: '${NOPE}'}\n"),
        "`suite/toolgate.yaml`: servers.m.env.TOKEN: environment variable `NOPE` is not set"
    );
    assert_eq!(
        error("m:\n  command: node\n  include: ['a[']\n"),
        "`suite/toolgate.yaml`: servers.m.include[0]: `a[` is not a glob: error parsing glob 'a[': unclosed character class; missing ']'"
    );
    assert_eq!(
        error("m:\n  command: node\n  reset: {tool: x}\n"),
        "`suite/toolgate.yaml`: servers.m.reset: a stdio server is a fresh process for every run and needs no reset"
    );
    assert_eq!(
        error("m:\n  url: http://x\n  reset: {}\n"),
        "`suite/toolgate.yaml`: servers.m.reset: needs exactly one of `command` (a program and its arguments) or `tool`"
    );
    assert_eq!(
        error("{}\n"),
        "`suite/toolgate.yaml`: servers: names no server"
    );
}

#[test]
fn a_setup_command_is_read_with_variables_and_checked() {
    let specs = load(
        "git:\n  command: mcp-server-git\n  setup: {command: [git, -C, '{seed}', tag, '${HOME}']}\n",
    )
    .expect("valid");
    assert_eq!(
        specs[0].setup,
        Some(vec![
            "git".to_string(),
            "-C".into(),
            "{seed}".into(),
            "tag".into(),
            "/home/u".into()
        ])
    );
    assert_eq!(
        error("m:\n  command: node\n  setup: {command: []}\n"),
        "`suite/toolgate.yaml`: servers.m.setup.command: must name a program"
    );
    assert_eq!(
        error("m:\n  url: http://x\n  setup: {command: [x]}\n"),
        "`suite/toolgate.yaml`: servers.m.setup: is for stdio servers (`command`)"
    );
    assert_eq!(
        error("m:\n  command: node\n  setup: {comand: [x]}\n"),
        "`suite/toolgate.yaml`: servers.m.setup.comand: unknown field `comand`, expected `command`"
    );
}

#[test]
fn reads_servers_from_an_mcp_json_file_next_to_the_config() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(
        dir.path().join(".mcp.json"),
        json!({"mcpServers": {"fs": {"type": "stdio", "command": "npx", "args": ["-y", "x"]}}})
            .to_string(),
    )
    .expect("writes");
    let config = dir.path().join("toolgate.yaml");
    let specs = from_value(&json!({"from": ".mcp.json"}), &config, &env).expect("valid");
    assert_eq!(specs[0].name, "fs");
    assert_eq!(specs[0].label(), "npx -y x");
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"fs": {"command": "npx", "disabled": true}}}"#,
    )
    .expect("writes");
    let error = from_value(&json!({"from": ".mcp.json"}), &config, &env).expect_err("unknown");
    assert!(
        error.to_string().starts_with(&format!(
            "`{}`: mcpServers.fs.disabled: unknown field `disabled`",
            dir.path().join(".mcp.json").display()
        )),
        "{error}"
    );
}

#[test]
fn expands_variables_and_keeps_other_dollars() {
    assert_eq!(
        load::expand_vars("a ${HOME} $x $$ b", &env).expect("expands"),
        "a /home/u $x $ b"
    );
    assert_eq!(
        load::expand_vars("${HOME", &env).expect_err("unclosed"),
        "`${` without a closing `}` in `${HOME`"
    );
}

/// `env NAME=value` in a server's command line passes a secret the server may echo; a
/// `${VAR}` expanded into `args` is run, not pinned.
#[test]
fn secret_assignments_in_args_are_secrets_and_labels_hide_them() {
    let spec = ServerSpec {
        name: "memory".to_owned(),
        transport: Transport::Stdio {
            command: "env".to_owned(),
            args: vec![
                "API_TOKEN=tok-canary-2718281828".to_owned(),
                "MEMORY_FILE_PATH=/tmp/graph-file.jsonl".to_owned(),
                "node".to_owned(),
                "--key=tok-canary-2718281828".to_owned(),
            ],
            env: Vec::new(),
            cwd: None,
        },
        filter: ToolFilter::default(),
        reset: None,
        setup: None,
    };
    assert_eq!(
        spec.label(),
        "env API_TOKEN=[redacted] MEMORY_FILE_PATH=/tmp/graph-file.jsonl node --key=[redacted]"
    );
    assert_eq!(
        spec.secrets().redact("stored tok-canary-2718281828"),
        "stored [redacted]"
    );
}
