//! The sticky comment and baseline artifacts against a fake GitHub API on loopback: create,
//! update in place, a marker found on a later page, a fork's 403, and an artifact picked from
//! the newest successful default-branch run.

use std::io::Write as _;

use serde_json::{Value, json};
use toolgate::github::Connection;
use toolgate::github::artifact;
use toolgate::github::comment::{Author, CommentError, Posted, upsert};
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{arg, output, repo, toolgate};

const MARKER: &str = "<!-- toolgate:sticky key=toolgate -->";
const TOKEN: &str = "ghs_canary_token_do_not_print";

fn connection(server: &MockServer) -> Connection {
    Connection {
        api_url: server.uri(),
        token: TOKEN.into(),
        repository: "acme/agent".into(),
    }
}

/// A comment as GitHub sends it (the fields toolgate reads, and a few more).
fn comment(id: u64, login: &str, body: &str) -> Value {
    json!({"id": id, "body": body, "user": {"login": login, "id": id + 1000, "type": "Bot"},
           "created_at": "2026-11-30T00:00:00Z", "html_url": format!("https://github.example/c/{id}")})
}

fn actions_bot() -> Author {
    Author::Login("github-actions[bot]".into())
}

fn comments_page(page: &str, comments: Vec<Value>) -> Mock {
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .and(query_param("page", page))
        .respond_with(ResponseTemplate::new(200).set_body_json(comments))
}

#[tokio::test]
async fn creates_the_comment_when_none_has_the_marker() {
    let server = MockServer::start().await;
    comments_page("1", vec![comment(1, "someone", "LGTM")])
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .and(body_partial_json(
            json!({"body": format!("{MARKER}\nreport")}),
        ))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(
            42,
            "github-actions[bot]",
            "x",
        )))
        .expect(1)
        .mount(&server)
        .await;
    let posted = upsert(
        &connection(&server),
        7,
        MARKER,
        &actions_bot(),
        &format!("{MARKER}\nreport"),
    )
    .await
    .expect("posted");
    assert_eq!(posted, Posted::Created(42));
}

#[tokio::test]
async fn updates_the_marked_comment_of_the_author_found_on_a_later_page() {
    let server = MockServer::start().await;
    let page_1: Vec<Value> = (1..=100)
        .map(|i| comment(i, "someone", "chatter"))
        .collect();
    comments_page("1", page_1).mount(&server).await;
    comments_page(
        "2",
        vec![
            // Same marker, other author: a user quoting the comment must not be overwritten.
            comment(300, "mallory", &format!("{MARKER}\nquoted")),
            comment(301, "github-actions[bot]", &format!("{MARKER}\nold report")),
            comment(
                302,
                "github-actions[bot]",
                "<!-- toolgate:sticky key=other -->\nother gate",
            ),
        ],
    )
    .mount(&server)
    .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/acme/agent/issues/comments/301"))
        .and(body_partial_json(
            json!({"body": format!("{MARKER}\nnew report")}),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment(
            301,
            "github-actions[bot]",
            "x",
        )))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let posted = upsert(
        &connection(&server),
        7,
        MARKER,
        &actions_bot(),
        &format!("{MARKER}\nnew report"),
    )
    .await
    .expect("posted");
    assert_eq!(posted, Posted::Updated(301));
}

/// A comment written by a person, not a bot.
fn human_comment(id: u64, login: &str, body: &str) -> Value {
    let mut comment = comment(id, login, body);
    comment["user"]["type"] = json!("User");
    comment
}

/// PATCH of comment `id` to `body`, answered, expected `times` times.
async fn expect_patch(server: &MockServer, id: u64, body: &str, times: u64) {
    Mock::given(method("PATCH"))
        .and(path(format!("/repos/acme/agent/issues/comments/{id}")))
        .and(body_partial_json(json!({ "body": body })))
        .and(header("x-github-api-version", "2022-11-28"))
        .and(header("accept", "application/vnd.github+json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(comment(id, "x", body)))
        .expect(times)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_personal_token_finds_its_own_comment_by_its_login() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"login": "release-bot-pat"})))
        .expect(1)
        .mount(&server)
        .await;
    comments_page(
        "1",
        vec![
            comment(
                10,
                "github-actions[bot]",
                &format!("{MARKER}\nfrom another token"),
            ),
            human_comment(11, "release-bot-pat", &format!("{MARKER}\nold")),
        ],
    )
    .mount(&server)
    .await;
    let body = format!("{MARKER}\nnew");
    expect_patch(&server, 11, &body, 1).await;
    let posted = upsert(&connection(&server), 7, MARKER, &Author::Token, &body)
        .await
        .expect("posted");
    assert_eq!(posted, Posted::Updated(11));
}

#[tokio::test]
async fn an_app_token_that_cannot_read_user_updates_the_bots_comment_never_a_persons() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/user"))
        .respond_with(forbidden())
        .mount(&server)
        .await;
    comments_page(
        "1",
        vec![
            comment(20, "acme-gate[bot]", &format!("{MARKER}\nold")),
            human_comment(21, "mallory", &format!("quoting:\n{MARKER}\nold")),
        ],
    )
    .mount(&server)
    .await;
    let body = format!("{MARKER}\nnew");
    expect_patch(&server, 20, &body, 1).await;
    let posted = upsert(&connection(&server), 7, MARKER, &Author::Token, &body)
        .await
        .expect("posted");
    assert_eq!(posted, Posted::Updated(20));
}

#[tokio::test]
async fn an_unchanged_body_sends_no_patch() {
    let server = MockServer::start().await;
    let body = format!("{MARKER}\nsame report");
    comments_page("1", vec![comment(30, "github-actions[bot]", &body)])
        .mount(&server)
        .await;
    expect_patch(&server, 30, &body, 0).await;
    let posted = upsert(&connection(&server), 7, MARKER, &actions_bot(), &body)
        .await
        .expect("nothing to do");
    assert_eq!(posted, Posted::Unchanged(30));
}

fn forbidden() -> ResponseTemplate {
    ResponseTemplate::new(403).set_body_json(json!({
        "message": "Resource not accessible by integration",
        "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        "status": "403"
    }))
}

#[tokio::test]
async fn an_api_that_ignores_page_is_read_twice_not_forever() {
    let server = MockServer::start().await;
    let full: Vec<Value> = (1..=100).map(|id| comment(id, "someone", "LGTM")).collect();
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(full))
        .mount(&server)
        .await;
    let error = upsert(&connection(&server), 7, MARKER, &actions_bot(), "x")
        .await
        .expect_err("the listing never ends");
    assert!(error.to_string().contains("it ignores `page`"), "{error}");
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests
            .iter()
            .all(|request| request.method.as_str() == "GET")
    );
}

#[tokio::test]
async fn a_post_answered_502_is_tried_again_after_listing_again_never_twice_at_once() {
    let server = MockServer::start().await;
    comments_page("1", Vec::new()).mount(&server).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(
            43,
            "github-actions[bot]",
            "x",
        )))
        .mount(&server)
        .await;
    let posted = upsert(&connection(&server), 7, MARKER, &actions_bot(), "x")
        .await
        .expect("posted on the second attempt");
    assert_eq!(posted, Posted::Created(43));
    let methods: Vec<String> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| request.method.to_string())
        .collect();
    // List, POST (502), then list again before the second POST: one POST per attempt.
    assert_eq!(methods, vec!["GET", "POST", "GET", "POST"]);
}

#[tokio::test]
async fn a_comment_a_failed_post_did_create_is_found_not_posted_again() {
    let server = MockServer::start().await;
    let body = format!("{MARKER}\nreport");
    // The POST is answered 502, yet GitHub wrote the comment: the next listing has it.
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(Vec::<Value>::new()))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    comments_page("1", vec![comment(44, "github-actions[bot]", &body)])
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(502))
        .expect(1)
        .mount(&server)
        .await;
    let posted = upsert(&connection(&server), 7, MARKER, &actions_bot(), &body)
        .await
        .expect("found on the second attempt");
    assert_eq!(posted, Posted::Unchanged(44));
}

#[tokio::test]
async fn a_read_only_token_gets_a_typed_forbidden_error() {
    let server = MockServer::start().await;
    comments_page("1", Vec::new()).mount(&server).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(forbidden())
        .mount(&server)
        .await;
    let error = upsert(&connection(&server), 7, MARKER, &actions_bot(), "x")
        .await
        .expect_err("forbidden");
    assert!(
        matches!(error, CommentError::Forbidden { pr: 7, status: 403 }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the token may not comment on pull request #7 (HTTP 403); a fork's read-only token cannot, and the workflow needs `pull-requests: write`"
    );
}

/// A `pull_request` event payload for PR 7.
fn event_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("event.json");
    std::fs::write(&path, r#"{"pull_request": {"number": 7}}"#).expect("write event");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_on_the_comment_is_a_warning_and_never_changes_the_exit_code() {
    let server = MockServer::start().await;
    comments_page("1", Vec::new()).mount(&server).await;
    Mock::given(method("POST"))
        .respond_with(forbidden())
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let summary = dir.path().join("summary.md");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args(["gate", "--comment", "--out", &arg(dir.path(), "out")])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "acme/agent")
        .env("GITHUB_EVENT_PATH", event_file(dir.path()))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env_remove("GITHUB_OUTPUT");
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains(
        "::warning title=toolgate::not commenting: the token may not comment on pull request #7 (HTTP 403); a fork's read-only token cannot, and the workflow needs `pull-requests: write`; the report is in the step summary\n"
    ), "{stdout}");
    assert!(
        std::fs::read_to_string(&summary)
            .expect("summary")
            .starts_with("### ✅ toolgate: **pass**")
    );
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_posts_the_comment_body_with_marker_and_report() {
    let server = MockServer::start().await;
    comments_page("1", Vec::new()).mount(&server).await;
    Mock::given(method("POST"))
        .and(path("/repos/acme/agent/issues/7/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(comment(
            9,
            "github-actions[bot]",
            "x",
        )))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args(["gate", "--comment", "--out", &arg(dir.path(), "out")])
        .env_remove("GITHUB_ACTIONS")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "acme/agent")
        .env("GITHUB_EVENT_PATH", event_file(dir.path()));
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("commented on pull request #7 (comment 9)\n"),
        "{stdout}"
    );
    let requests = server.received_requests().await.expect("recorded");
    let post = requests
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .expect("a POST");
    assert_eq!(
        post.headers
            .get("authorization")
            .map(|v| v.to_str().unwrap_or_default().to_string()),
        Some(format!("Bearer {TOKEN}"))
    );
    let body: Value = serde_json::from_slice(&post.body).expect("JSON body");
    let text = body["body"].as_str().expect("body text");
    assert!(
        text.starts_with(&format!("{MARKER}\n### ✅ toolgate: **pass**")),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_gate_warns_and_keeps_its_verdict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args([
            "gate",
            "--comment",
            "--pr",
            "7",
            "--out",
            &arg(dir.path(), "out"),
        ])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN");
    let (code, _, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0);
    assert!(stderr.contains("warning: not commenting: GITHUB_TOKEN or GITHUB_REPOSITORY is not set; the report is in the step summary\n"), "{stderr}");
}

fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, text) in files {
        writer.start_file(*name, options).expect("start file");
        writer.write_all(text.as_bytes()).expect("write file");
    }
    writer.finish().expect("finish zip").into_inner()
}

fn artifact_json(id: u64, run: u64, branch: &str, created: &str) -> Value {
    json!({"id": id, "name": "toolgate-baseline", "expired": false, "created_at": created,
           "workflow_run": {"id": run, "head_branch": branch}})
}

async fn fake_artifacts(baseline_text: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"default_branch": "main"})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent/actions/artifacts"))
        .and(query_param("name", "toolgate-baseline"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"total_count": 3, "artifacts": [
                artifact_json(13, 23, "feature", "2026-11-30T01:00:00Z"),
                artifact_json(11, 21, "main", "2026-11-28T02:00:00Z"),
                artifact_json(12, 22, "main", "2026-11-29T02:00:00Z"),
            ]}),
        ))
        .mount(&server)
        .await;
    for (run, conclusion) in [(21, "success"), (22, "failure")] {
        Mock::given(method("GET"))
            .and(path(format!("/repos/acme/agent/actions/runs/{run}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"id": run, "conclusion": conclusion})),
            )
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent/actions/artifacts/11/zip"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(zip_of(&[
            ("notes.txt", "x"),
            ("baseline.json", baseline_text),
        ])))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn the_artifact_comes_from_the_newest_successful_default_branch_run() {
    let server = fake_artifacts("{\"x\": 1}").await;
    let fetched = artifact::fetch_newest(
        &connection(&server),
        "toolgate-baseline",
        artifact::DEADLINE,
    )
    .await
    .expect("found");
    assert_eq!((fetched.artifact_id, fetched.run_id), (11, 21));
    assert_eq!(fetched.file, "baseline.json");
    assert_eq!(fetched.text, "{\"x\": 1}");
}

/// Issue case: an API that sends its answer a byte at a time never trips the per-read
/// timeout, and `--baseline artifact:NAME` never ended. The whole fetch has one deadline.
#[tokio::test]
async fn an_api_that_drips_its_answer_runs_into_the_fetch_deadline() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                loop {
                    if stream.write_all(b" ").await.is_err() {
                        return;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            });
        }
    });
    let connection = Connection {
        api_url: format!("http://{address}"),
        token: TOKEN.into(),
        repository: "acme/agent".into(),
    };
    let error = artifact::fetch_newest(
        &connection,
        "toolgate-baseline",
        std::time::Duration::from_millis(500),
    )
    .await
    .expect_err("the deadline passes");
    assert_eq!(
        error.to_string(),
        "failed to fetch baseline artifact `toolgate-baseline` of `acme/agent`: GitHub did not \
         finish answering within 0.5 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_compares_with_an_artifact_baseline() {
    let shipped = std::fs::read_to_string(repo().join("baseline.json")).expect("baseline");
    let server = fake_artifacts(&shipped).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args([
            "gate",
            "--baseline",
            "artifact:toolgate-baseline",
            "--out",
            &arg(dir.path(), "out"),
        ])
        .env_remove("GITHUB_ACTIONS")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "acme/agent");
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with(
        "baseline: artifact `toolgate-baseline` (id 11) of workflow run 21, file `baseline.json`\n"
    ), "{stdout}");
    assert!(stdout.contains("\nverdict: PASS\n"), "{stdout}");
}

#[test]
fn an_artifact_without_a_json_file_is_an_error_naming_what_it_holds() {
    let error = artifact::unpack(&zip_of(&[("a.txt", "x")])).expect_err("no JSON");
    assert_eq!(
        error.to_string(),
        "expected `baseline.json` or a single `.json` file, found none"
    );
}

/// Issue: a GITHUB_TOKEN echoed by the API while fetching an `artifact:` baseline was printed
/// whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_api_echoes_in_an_error_is_never_printed() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/acme/agent"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "message": format!("Bad credentials: {TOKEN}"),
            "documentation_url": "https://docs.github.com/rest"
        })))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = toolgate();
    command
        .current_dir(repo())
        .args([
            "gate",
            "--baseline",
            "artifact:toolgate-baseline",
            "--out",
            &arg(dir.path(), "out"),
        ])
        .env_remove("GITHUB_ACTIONS")
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "acme/agent");
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || output(command))
        .await
        .expect("join");
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.starts_with(
            "error: failed to fetch baseline artifact `toolgate-baseline` of `acme/agent`"
        ),
        "{stderr}"
    );
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "{stderr}"
    );
}
