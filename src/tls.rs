//! The TLS crypto provider behind every HTTPS client (model providers, the judge, MCP servers
//! over HTTPS, the GitHub API): rustls with ring.
//!
//! reqwest is built without a default provider, so one must be installed before any client is
//! built; [`install_crypto_provider`] does that once per process.

use std::sync::Once;

/// Installs ring as the process-wide rustls provider; later calls do nothing. Call before
/// building an HTTPS client.
pub(crate) fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means a provider is already installed (an embedding program chose its own); that
        // one serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    //! The crypto provider installs once, a second install is harmless, and HTTPS clients build.

    #[test]
    fn installs_a_provider_once_and_a_second_call_is_harmless() {
        super::install_crypto_provider();
        super::install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        assert!(reqwest::Client::builder().build().is_ok());
    }
}
