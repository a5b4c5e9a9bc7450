//! Keeping secrets out of everything toolgate writes: error messages, results, reports, logs.
//!
//! A [`Redactor`] knows the secret values of a run (API keys, tokens, the credentials inside
//! a base URL) and replaces each with `[redacted]`. Values shorter than
//! [`MIN_SECRET_CHARS`] are never replaced: a placeholder key such as `x` would otherwise
//! blank every `x` in a message while protecting nothing. Text is always redacted *before*
//! it is cut to a length, so a secret straddling the cut cannot leak in part.

/// The shortest value treated as a secret, in characters. Real API keys and tokens are far
/// longer (OpenAI `sk-...` 51+, GitHub `ghp_...` 40); placeholders for local servers are
/// shorter.
pub const MIN_SECRET_CHARS: usize = 8;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Query parameters whose values are credentials (compared case-insensitively).
const SECRET_QUERY_KEYS: [&str; 11] = [
    "key",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_token",
    "auth",
    "secret",
    "sig",
    "signature",
    "password",
];

/// Environment variables whose values are always secrets, besides any variable named
/// `*_KEY`, `*_TOKEN`, `*_SECRET` or `*_PASSWORD`.
const SECRET_VARIABLES: [&str; 5] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "TOOLGATE_JUDGE_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
];

/// A set of secret values to remove from text.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, so a secret containing another is replaced whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor for `secrets`; values shorter than [`MIN_SECRET_CHARS`] are dropped.
    pub fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Redactor {
        let mut redactor = Redactor::default();
        for secret in secrets {
            redactor.add(secret.as_ref());
        }
        redactor
    }

    /// The secrets in the environment: the known key and token variables, and every variable
    /// whose name ends in `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`. `vars` lists the
    /// environment as (name, value) pairs.
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Redactor {
        let mut redactor = Redactor::default();
        for (name, value) in vars {
            let upper = name.to_ascii_uppercase();
            let is_secret = SECRET_VARIABLES.contains(&upper.as_str())
                || ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"]
                    .iter()
                    .any(|suffix| upper.ends_with(suffix));
            if is_secret {
                redactor.add(&value);
            } else if value.contains("://") {
                // A URL in any variable (a base URL, a proxy) may carry credentials.
                redactor.add_url_credentials(&value);
            }
        }
        redactor
    }

    /// The secrets in this process's environment (see [`Redactor::from_vars`]).
    pub fn from_env() -> Redactor {
        Redactor::from_vars(std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        }))
    }

    /// Adds one secret (ignored when shorter than [`MIN_SECRET_CHARS`]).
    pub fn add(&mut self, secret: &str) {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_CHARS || self.secrets.iter().any(|s| s == secret) {
            return;
        }
        self.secrets.push(secret.to_owned());
        self.secrets
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    }

    /// Adds the credentials inside `url`: its user name and password, and the values of
    /// credential-like query parameters (`key`, `api_key`, `token`, `sig`, ...).
    pub fn add_url_credentials(&mut self, url: &str) {
        for credential in url_credentials(url) {
            self.add(&credential);
        }
    }

    /// Adds every secret of `other`.
    pub fn extend(&mut self, other: &Redactor) {
        for secret in &other.secrets {
            self.add(secret);
        }
    }

    /// `text` with every secret replaced by [`REDACTED`], and the credentials of any URL in
    /// it (user info, credential-like query values) replaced too, known or not.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        scrub_urls(&out)
    }

    /// Whether [`Redactor::redact`] returns `text` unchanged because it holds no secret and no
    /// URL; a `false` may still leave it unchanged (a URL without credentials).
    pub fn is_clean(&self, text: &str) -> bool {
        !text.contains("://")
            && !self
                .secrets
                .iter()
                .any(|secret| text.contains(secret.as_str()))
    }

    /// `text` redacted, then cut to `max_chars` characters (`...` appended when cut).
    pub fn redact_and_cut(&self, text: &str, max_chars: usize) -> String {
        cut(&self.redact(text), max_chars)
    }
}

/// `text` cut to `max_chars` characters, `...` appended when cut.
pub fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// The credentials inside a URL: user name, password, credential-like query values.
fn url_credentials(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Some((_, rest)) = url.split_once("://") else {
        return found;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        for part in userinfo.split(':') {
            found.push(percent_decoded(part));
            found.push(part.to_owned());
        }
        // As an HTTP client sends them: `Authorization: Basic base64(user:password)`.
        found.push(basic_credentials(&percent_decoded(userinfo)));
    }
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            if let Some((key, value)) = pair.split_once('=')
                && is_secret_query_key(key)
            {
                found.push(value.to_owned());
                found.push(percent_decoded(value));
            }
        }
    }
    found
}

/// The Base64 form of `user:password` in a `Basic` authorization header (RFC 7617).
pub fn basic_credentials(userinfo: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(userinfo)
}

fn is_secret_query_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_QUERY_KEYS.contains(&key.as_str())
}

/// `text` with `%XX` escapes decoded (invalid ones kept as they are), as URL user
/// information is decoded before it is sent.
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(high * 16 + low).expect("two hex digits fit a byte"));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Replaces the user info and credential-like query values of every `scheme://` URL in `text`.
fn scrub_urls(text: &str) -> String {
    if !text.contains("://") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>' | ')'))
            .unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        out.push_str(&scrub_url_tail(url));
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The part of a URL after `scheme://`, with user info and credential query values replaced.
fn scrub_url_tail(url: &str) -> String {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, path) = url.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{REDACTED}@{host}"),
        None => authority.to_owned(),
    };
    let Some((before_query, query)) = path.split_once('?') else {
        return format!("{authority}{path}");
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if is_secret_query_key(key) => format!("{key}={REDACTED}"),
            _ => pair.to_owned(),
        })
        .collect();
    let mut out = format!("{authority}{before_query}?{}", pairs.join("&"));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    //! Redaction: secrets known by variable name or found in URLs are hidden, even across a cut.

    use super::*;

    #[test]
    fn text_is_clean_only_without_a_secret_and_without_a_url() {
        let redactor = Redactor::new(["sk-live-12345678"]);
        let clean: Vec<bool> = [
            "plain text",
            "key sk-live-12345678 here",
            "see https://example.com/docs",
        ]
        .iter()
        .map(|text| redactor.is_clean(text))
        .collect();
        assert_eq!(clean, [true, false, false]);
    }

    #[test]
    fn a_placeholder_key_shorter_than_the_minimum_is_never_redacted() {
        let redactor = Redactor::new(["x"]);
        assert_eq!(redactor.redact("expected value"), "expected value");
    }

    #[test]
    fn a_secret_straddling_the_cut_is_redacted_before_cutting() {
        let key = "sk-live-0123456789abcdefghij";
        let redactor = Redactor::new([key]);
        let text = format!("{}{key} rest", "e".repeat(490));
        let shown = redactor.redact_and_cut(&text, 500);
        assert!(!shown.contains("sk-live-01"), "{shown}");
        assert_eq!(shown, format!("{}[redacted]...", "e".repeat(490)));
    }

    #[test]
    fn credentials_inside_urls_are_scrubbed_known_or_not() {
        let redactor = Redactor::default();
        assert_eq!(
            redactor.redact(
                "failed to POST `https://user:hunter2hunter2@api.example.com/v1?api-version=1&key=abc#x`: reset"
            ),
            "failed to POST `https://[redacted]@api.example.com/v1?api-version=1&key=[redacted]#x`: reset"
        );
        assert_eq!(
            redactor.redact("see http://localhost:11434/v1"),
            "see http://localhost:11434/v1"
        );
    }

    #[test]
    fn url_credentials_are_also_redacted_where_they_appear_alone() {
        let mut redactor = Redactor::default();
        redactor.add_url_credentials(
            "https://bob:s3cr3t-passw0rd@proxy.example/v1?token=tok_0123456789",
        );
        assert_eq!(
            redactor.redact("auth s3cr3t-passw0rd and tok_0123456789 failed"),
            "auth [redacted] and [redacted] failed"
        );
        // The `Basic` header a client makes of them, echoed by a server.
        assert_eq!(
            basic_credentials("bob:s3cr3t-passw0rd"),
            "Ym9iOnMzY3IzdC1wYXNzdzByZA=="
        );
        assert_eq!(
            redactor.redact("got Authorization: Basic Ym9iOnMzY3IzdC1wYXNzdzByZA=="),
            "got Authorization: Basic [redacted]"
        );
    }

    #[test]
    fn secret_variables_are_found_by_name_and_urls_by_their_credentials() {
        let redactor = Redactor::from_vars([
            ("OPENAI_API_KEY".to_owned(), "sk-abcdefghijkl".to_owned()),
            ("MY_SERVICE_TOKEN".to_owned(), "tok-123456789".to_owned()),
            ("HOME".to_owned(), "/root/homedir".to_owned()),
            (
                "OPENAI_BASE_URL".to_owned(),
                "https://u:pw-12345678@h.example/v1".to_owned(),
            ),
            ("SHORT_KEY".to_owned(), "x".to_owned()),
        ]);
        assert_eq!(
            redactor.redact("sk-abcdefghijkl tok-123456789 pw-12345678 /root/homedir x"),
            "[redacted] [redacted] [redacted] /root/homedir x"
        );
    }
}
