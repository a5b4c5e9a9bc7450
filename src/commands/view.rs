//! `toolgate view`: a results folder served to a browser on a loopback address, to look at
//! `report.html` before pushing. Only GET and HEAD, only files inside the folder, and only
//! requests whose `Host` names the loopback address, so a web page elsewhere cannot read the
//! report through a rebound DNS name.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use super::runtime;
use crate::cli::ViewArgs;
use crate::exit::Exit;

/// The report `view` opens; the folder's other files are served too.
const REPORT: &str = "report.html";

/// Serves `args.dir` on `127.0.0.1:args.port` until Ctrl-C; prints the address first.
///
/// Errors: the folder does not exist or holds no `report.html` (naming the folder and how to
/// make one), or the port cannot be bound.
pub(super) fn view_command(
    args: &ViewArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let root = args
        .dir
        .canonicalize()
        .with_context(|| format!("no results folder at `{}`", args.dir.display()))?;
    if !root.join(REPORT).is_file() {
        bail!(
            "`{}` holds no {REPORT}: `toolgate gate` writes one beside results.json (name the folder it wrote with `toolgate view DIR`)",
            args.dir.display()
        );
    }
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .with_context(|| format!("failed to listen on 127.0.0.1:{}", args.port))?;
        let address = listener
            .local_addr()
            .context("failed to read the listening address")?;
        let url = format!("http://{address}/{REPORT}");
        writeln!(out, "serving {} at {url} (Ctrl-C to stop)", root.display())?;
        out.flush()?;
        if args.open {
            open_browser(&url, err)?;
        }
        let root = Arc::new(root);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let root = Arc::clone(&root);
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                            let response = answer(&request, &root, address);
                            async move { Ok::<_, std::convert::Infallible>(response) }
                        });
                        // A broken connection only loses that request.
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                _ = tokio::signal::ctrl_c() => break,
            }
        }
        Ok(Exit::Pass)
    })
}

/// Starts the desktop's browser on `url` without waiting for it; a failure is a warning on
/// `err` (the address was printed, so the user can open it by hand).
fn open_browser(url: &str, err: &mut dyn Write) -> Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(error) = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        writeln!(
            err,
            "warning: could not start `{opener}` ({error}): open {url} in a browser"
        )?;
    }
    Ok(())
}

/// The answer to one request for a file under `root` (canonical), served at `address`.
fn answer(request: &Request<Incoming>, root: &Path, address: SocketAddr) -> Response<Full<Bytes>> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok());
    let local_names = [address.to_string(), format!("localhost:{}", address.port())];
    if !host.is_some_and(|host| local_names.iter().any(|name| name == host)) {
        return plain(
            StatusCode::FORBIDDEN,
            "only the loopback address is served\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD only\n");
        response
            .headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let path = request.uri().path();
    if path == "/" {
        let mut response = plain(StatusCode::FOUND, "");
        response.headers_mut().insert(
            header::LOCATION,
            header::HeaderValue::from_static("/report.html"),
        );
        return response;
    }
    let Some((file, bytes)) = resolve(root, path).and_then(|file| {
        let bytes = std::fs::read(&file).ok()?;
        Some((file, bytes))
    }) else {
        return plain(
            StatusCode::NOT_FOUND,
            "no such file in the results folder\n",
        );
    };
    let length = bytes.len();
    let body = if request.method() == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from(bytes)
    };
    let mut response = Response::new(Full::new(body));
    let headers = response.headers_mut();
    // A HEAD answer says how long the GET answer would be.
    headers.insert(header::CONTENT_LENGTH, header::HeaderValue::from(length));
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type(&file)),
    );
    secure(headers);
    response
}

/// The file `path` (a URL path) names inside `root`, when it is a regular file there: no
/// `..`, `.` or empty segment, no backslash or percent sign, and no symbolic link out of it.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = path.strip_prefix('/')?;
    let plain_segments = relative
        .split('/')
        .all(|segment| !matches!(segment, "" | "." | "..") && !segment.contains(['\\', '%']));
    if !plain_segments {
        return None;
    }
    let file = root.join(relative).canonicalize().ok()?;
    (file.starts_with(root) && file.is_file()).then_some(file)
}

/// The `Content-Type` of a results folder's file, by extension; text formats the browser
/// should show rather than run (`.md`, `.jsonl`) are plain text.
fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|extension| extension.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("md" | "jsonl" | "txt" | "yaml" | "yml") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    secure(headers);
    response
}

/// Headers on every answer: no sniffing a type, no caching of a report that the next run
/// replaces, no referrer leaving the page.
fn secure(headers: &mut http::HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    //! Which paths `view` serves from a results folder.
    use super::*;

    #[test]
    fn only_plain_paths_inside_the_folder_resolve() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        std::fs::write(root.join("report.html"), "<p>").expect("write");
        std::fs::create_dir(root.join("shard-1")).expect("mkdir");
        std::fs::write(root.join("shard-1/results.json"), "{}").expect("write");
        assert_eq!(
            resolve(&root, "/report.html"),
            Some(root.join("report.html"))
        );
        assert_eq!(
            resolve(&root, "/shard-1/results.json"),
            Some(root.join("shard-1/results.json"))
        );
        for path in [
            "/../etc/passwd",
            "/shard-1/../report.html",
            "//report.html",
            "/%2e%2e/x",
            "/shard-1",
            "/missing.html",
            "report.html",
        ] {
            assert_eq!(resolve(&root, path), None, "{path}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", root.join("out.txt")).expect("symlink");
            assert_eq!(resolve(&root, "/out.txt"), None);
        }
    }

    #[test]
    fn text_formats_are_shown_not_run() {
        assert_eq!(
            content_type(Path::new("a/report.html")),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("report.md")),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("trace.jsonl")),
            "text/plain; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("x.svg")), "application/octet-stream");
    }
}
