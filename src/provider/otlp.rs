//! Sending spans to an OTLP/HTTP collector (`POST {endpoint}/v1/traces`, JSON encoding), for
//! `gate --otel-endpoint`. Headers come from `OTEL_EXPORTER_OTLP_HEADERS` (`key=value` pairs,
//! comma-separated, values percent-decoded), as the OpenTelemetry SDKs read it; their values
//! are secrets, never shown, and so are the environment's secrets (`*_TOKEN`, `*_KEY`, ...),
//! should a collector echo them.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::ProviderError;
use super::http::JsonEndpoint;
use crate::redact::Redactor;

/// How long one export may take, retries included, unless `OTEL_EXPORTER_OTLP_TIMEOUT` says
/// otherwise: 10 s, the OpenTelemetry SDKs' default for that variable.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Attempts within the export's time: a 5xx or a broken connection is retried.
const MAX_ATTEMPTS: u32 = 3;

/// The export's time limit from `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or
/// `OTEL_EXPORTER_OTLP_TIMEOUT` (whole milliseconds, as the OpenTelemetry specification
/// defines them; the traces variable wins), else [`EXPORT_TIMEOUT`]. A value that is not a
/// positive integer is ignored.
pub fn timeout_from(traces: Option<&str>, general: Option<&str>) -> Duration {
    [traces, general]
        .into_iter()
        .flatten()
        .find_map(|text| text.trim().parse::<u64>().ok().filter(|&ms| ms > 0))
        .map_or(EXPORT_TIMEOUT, Duration::from_millis)
}

/// The traces URL of an OTLP/HTTP `endpoint`: `endpoint` itself when it already ends in
/// `/v1/traces`, else `{endpoint}/v1/traces` (as `OTEL_EXPORTER_OTLP_ENDPOINT` is read).
pub fn traces_url(endpoint: &str) -> String {
    let endpoint = endpoint.trim_end_matches('/');
    if endpoint.ends_with("/v1/traces") {
        endpoint.to_owned()
    } else {
        format!("{endpoint}/v1/traces")
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, percent-decoded; malformed pairs are
/// skipped (the SDKs do the same).
pub fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| (key.to_owned(), percent_decode(value.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Posts one `ExportTraceServiceRequest` (OTLP JSON) to `endpoint` within `timeout`, retries
/// included (up to 3 attempts).
///
/// Errors: a one-line reason, in the collector's terms: a bad URL, the collector refusing the
/// spans, or no success within `timeout`; it says how long the export took, and every header
/// value and every secret of `environment` (see [`Redactor::from_env`]) is scrubbed from it.
pub async fn export(
    endpoint: &str,
    headers: Vec<(String, String)>,
    request: &Value,
    timeout: Duration,
    environment: &Redactor,
) -> Result<(), String> {
    let url = traces_url(endpoint);
    let mut secrets = Redactor::new(headers.iter().map(|(_, value)| value.as_str()));
    secrets.extend(environment);
    let client = JsonEndpoint::new("OTLP", endpoint, &url, headers, None, timeout, MAX_ATTEMPTS)
        .map_err(|error| error.to_string())?
        .redacting(&secrets);
    let started = Instant::now();
    match tokio::time::timeout(timeout, client.post(request)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(format!(
            "{} (gave up after {:.1} s)",
            collector_reason(error),
            started.elapsed().as_secs_f64()
        )),
        Err(_) => Err(client.redact(&format!(
            "`{url}` did not accept the spans within {:.1} s, retries included \
             (OTEL_EXPORTER_OTLP_TIMEOUT sets the limit, in milliseconds)",
            timeout.as_secs_f64()
        ))),
    }
}

/// Why a collector did not take the spans, in its own terms (the HTTP client's errors speak
/// of a model provider).
fn collector_reason(error: ProviderError) -> String {
    match error {
        ProviderError::Http { status, message } => {
            format!("the collector answered HTTP {status}: {message}")
        }
        ProviderError::Transport(reason)
        | ProviderError::BadResponse(reason)
        | ProviderError::Config(reason) => reason,
        ProviderError::ContextOverflow { status, message } => {
            format!("the collector answered HTTP {status}: {message}")
        }
    }
}

/// Checks an OTLP/HTTP endpoint before anything is exported: an http or https URL.
///
/// Errors: the reason, naming the endpoint.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    match reqwest::Url::parse(&traces_url(endpoint)) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(()),
        Ok(url) => Err(format!(
            "`{endpoint}` is not an OTLP/HTTP endpoint: expected http or https, not `{}`",
            url.scheme()
        )),
        Err(error) => Err(format!(
            "`{endpoint}` is not an OTLP/HTTP endpoint: {error}"
        )),
    }
}

#[cfg(test)]
mod tests {
    //! OTLP settings: the traces path is added once; timeout and headers read as OTel SDKs do.

    use super::*;

    #[test]
    fn the_traces_path_is_added_once() {
        assert_eq!(
            traces_url("http://localhost:4318"),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://c:4318/v1/traces/"),
            "http://c:4318/v1/traces"
        );
    }

    #[test]
    fn the_timeout_comes_from_the_traces_variable_then_the_general_one_in_milliseconds() {
        assert_eq!(timeout_from(None, None), Duration::from_secs(10));
        assert_eq!(
            timeout_from(None, Some("2500")),
            Duration::from_millis(2500)
        );
        assert_eq!(
            timeout_from(Some("700"), Some("2500")),
            Duration::from_millis(700)
        );
        assert_eq!(timeout_from(Some("soon"), Some("0")), EXPORT_TIMEOUT);
    }

    #[test]
    fn headers_are_comma_separated_pairs_with_percent_decoded_values() {
        assert_eq!(
            parse_headers("Authorization=Basic%20abc%3D%3D, x-team = qa ,broken"),
            [
                ("Authorization".to_owned(), "Basic abc==".to_owned()),
                ("x-team".to_owned(), "qa".to_owned())
            ]
        );
    }
}
