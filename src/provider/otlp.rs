//! Sending spans to an OTLP/HTTP collector (`POST {endpoint}/v1/traces`, JSON encoding), for
//! `gate --otel-endpoint`. Headers come from `OTEL_EXPORTER_OTLP_HEADERS` (`key=value` pairs,
//! comma-separated, values percent-decoded), as the OpenTelemetry SDKs read it; their values
//! are secrets, never shown.

use std::time::Duration;

use serde_json::Value;

use super::ProviderError;
use super::http::JsonEndpoint;

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Posts one `ExportTraceServiceRequest` (OTLP JSON) to `endpoint`, with bounded retries.
///
/// Errors: a bad URL, or the collector failing after the retries (its status and message,
/// credentials scrubbed).
pub async fn export(
    endpoint: &str,
    headers: Vec<(String, String)>,
    request: &Value,
) -> Result<(), ProviderError> {
    let url = traces_url(endpoint);
    let secrets: Vec<String> = headers.iter().map(|(_, value)| value.clone()).collect();
    let secret = secrets
        .iter()
        .max_by_key(|value| value.len())
        .map(String::as_str);
    let client = JsonEndpoint::new("OTLP", endpoint, &url, headers, secret, EXPORT_TIMEOUT, 3)?;
    client.post(request).await.map(|_| ())
}

#[cfg(test)]
mod tests {
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
