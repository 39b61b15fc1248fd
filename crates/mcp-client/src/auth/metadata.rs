//! What discovery reads, and the rules it checks, without I/O: the
//! `WWW-Authenticate` challenge, the protected resource metadata (RFC 9728)
//! and the authorization server metadata (RFC 8414 / OpenID), each URL's
//! trust checks (see `discovery` for the chain they make up).

use serde::Deserialize;
use url::Url;

use super::error::{AuthError, invalid_url, redacted};

#[derive(Debug, Clone, Deserialize)]
pub(super) struct ResourceMetadata {
    pub(super) resource: Option<String>,
    #[serde(default)]
    pub(super) authorization_servers: Vec<String>,
    pub(super) scopes_supported: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct ServerMetadata {
    pub(super) issuer: String,
    pub(super) authorization_endpoint: String,
    pub(super) token_endpoint: String,
    pub(super) registration_endpoint: Option<String>,
    pub(super) scopes_supported: Option<Vec<String>>,
    pub(super) code_challenge_methods_supported: Option<Vec<String>>,
    pub(super) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(super) client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub(super) authorization_response_iss_parameter_supported: bool,
}

/// A `WWW-Authenticate: Bearer` challenge's parameters.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Bearer {
    pub(super) resource_metadata: Option<String>,
    pub(super) scope: Option<String>,
    pub(super) error: Option<String>,
}

pub(super) fn parse_challenge(header: &str) -> Bearer {
    let mut bearer = Bearer::default();
    let Some(start) = header.to_ascii_lowercase().find("bearer") else {
        return bearer;
    };
    let mut rest = &header[start + "bearer".len()..];
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            value = quoted[..end].to_owned();
            rest = quoted.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        match key.as_str() {
            "resource_metadata" => bearer.resource_metadata = Some(value),
            "scope" => bearer.scope = Some(value),
            "error" => bearer.error = Some(value),
            _ => {}
        }
    }
    bearer
}

/// Where the authorization server was found: through the protected
/// resource metadata (2025-06-18 on), or, for a server that publishes none,
/// the 2025-03-26 way at the server's own origin.
pub(super) struct Discovered {
    /// The resource indicator (RFC 8707) to send, only when the server
    /// published protected resource metadata: a 2025-03-26 authorization
    /// server predates resource indicators and may refuse an unknown one.
    pub(super) resource: Option<String>,
    /// The scopes the protected resource supports.
    pub(super) scopes_supported: Option<Vec<String>>,
    /// The authorization server's metadata.
    pub(super) server: ServerMetadata,
}

impl ServerMetadata {
    /// 2025-03-26 "fallbacks for servers without metadata discovery": the
    /// default endpoint paths at the authorization base URL. That revision
    /// makes PKCE mandatory for every client, so S256 is what such a
    /// server accepts; it has no `iss` parameter.
    pub(super) fn legacy_defaults(base: &str) -> Self {
        Self {
            issuer: base.to_owned(),
            authorization_endpoint: format!("{base}/authorize"),
            token_endpoint: format!("{base}/token"),
            registration_endpoint: Some(format!("{base}/register")),
            scopes_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
        }
    }
}

impl ServerMetadata {
    /// The document, when every endpoint it names is one the client may
    /// fetch or open.
    pub(super) fn checked(self) -> Result<Self, AuthError> {
        http_url("authorization endpoint", &self.authorization_endpoint)?;
        http_url("token endpoint", &self.token_endpoint)?;
        if let Some(registration) = &self.registration_endpoint {
            http_url("registration endpoint", registration)?;
        }
        Ok(self)
    }
}

/// The challenge's `resource_metadata`, when it is on the server's own
/// origin. RFC 9728 builds the metadata URL from the resource identifier,
/// which must be the server's URL: metadata anywhere else is not the
/// server's, and fetching it would let a server aim its clients' requests
/// at any host.
pub(super) fn same_origin_metadata(hint: &str, server: &Url) -> Result<String, AuthError> {
    let url = Url::parse(hint).map_err(|e| invalid_url("resource metadata URL", hint, e))?;
    if url.origin() != server.origin() {
        return Err(AuthError::ForeignResourceMetadata {
            url: redacted(hint),
            server: redacted(server.as_str()),
        });
    }
    Ok(url.into())
}

/// `url` parsed, when it is an http(s) URL without a fragment.
pub(super) fn http_url(role: &'static str, url: &str) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|e| invalid_url(role, url, e))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(unusable(role, url, "is not an http(s) URL"));
    }
    if parsed.fragment().is_some() {
        return Err(unusable(role, url, "has a fragment"));
    }
    Ok(parsed)
}

pub(super) fn unusable(role: &'static str, url: &str, reason: &'static str) -> AuthError {
    AuthError::UnusableUrl {
        role,
        url: redacted(url),
        reason,
    }
}

/// Whether the authorization server lists `offline_access`, the only case
/// where asking for it (and for refresh tokens) is allowed.
pub(super) fn offline_supported(server: &ServerMetadata) -> bool {
    server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
}

/// RFC 8707 / RFC 9728: the metadata's resource must be the server being
/// accessed (same origin, and a prefix of its path).
pub(super) fn check_resource(resource: &str, server: &Url) -> Result<(), AuthError> {
    let parsed = Url::parse(resource).map_err(|e| invalid_url("resource", resource, e))?;
    let same_origin = parsed.origin() == server.origin();
    // A prefix of whole segments: `/mcp` covers `/mcp/x`, never `/mcpx`.
    let prefix = parsed.path().trim_end_matches('/');
    let path_ok = server
        .path()
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if same_origin && path_ok {
        Ok(())
    } else {
        Err(AuthError::ForeignResource {
            resource: redacted(resource),
            server: redacted(server.as_str()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_with_quoted_and_bare_values() {
        let bearer = parse_challenge(
            r#"Bearer resource_metadata="https://s/.well-known/oauth-protected-resource", scope="a b", error=insufficient_scope"#,
        );
        assert_eq!(
            bearer.resource_metadata.as_deref(),
            Some("https://s/.well-known/oauth-protected-resource")
        );
        assert_eq!(bearer.scope.as_deref(), Some("a b"));
        assert_eq!(bearer.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(parse_challenge("Basic realm=x"), Bearer::default());
    }

    #[test]
    fn resource_metadata_is_taken_from_the_servers_own_origin_only() {
        let server = Url::parse("http://127.0.0.1:3000/mcp").expect("url");
        let same = "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            same_origin_metadata(same, &server).expect("same origin"),
            same
        );
        for foreign in [
            "http://127.0.0.1:3001/.well-known/oauth-protected-resource",
            "https://127.0.0.1:3000/.well-known/oauth-protected-resource",
            "http://localhost:3000/.well-known/oauth-protected-resource",
            "http://169.254.169.254/latest/meta-data",
        ] {
            assert!(
                matches!(
                    same_origin_metadata(foreign, &server),
                    Err(AuthError::ForeignResourceMetadata { .. })
                ),
                "{foreign}"
            );
        }
        let port = Url::parse("https://mcp.example.com/mcp").expect("url");
        assert!(
            same_origin_metadata("https://mcp.example.com:443/.well-known/x", &port).is_ok(),
            "the default port is the same origin"
        );
        assert!(matches!(
            same_origin_metadata("not a url", &server),
            Err(AuthError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn issuers_and_endpoints_must_be_http_urls_without_a_fragment() {
        assert!(http_url("issuer", "https://as.example/tenant").is_ok());
        for (url, reason) in [
            ("file:///etc/passwd", "is not an http(s) URL"),
            ("javascript:alert(1)", "is not an http(s) URL"),
            ("https://as.example/authorize#x", "has a fragment"),
        ] {
            assert!(
                matches!(
                    http_url("authorization endpoint", url),
                    Err(AuthError::UnusableUrl { reason: r, .. }) if r == reason
                ),
                "{url}"
            );
        }
        let mut metadata = ServerMetadata::legacy_defaults("https://as.example");
        assert!(metadata.clone().checked().is_ok());
        metadata.registration_endpoint = Some("ftp://as.example/register".into());
        assert!(matches!(
            metadata.checked(),
            Err(AuthError::UnusableUrl {
                role: "registration endpoint",
                ..
            })
        ));
    }

    #[test]
    fn the_resource_must_be_the_server_being_accessed() {
        let server = Url::parse("http://localhost:3000/mcp").expect("url");
        assert!(check_resource("http://localhost:3000/mcp", &server).is_ok());
        assert!(check_resource("http://localhost:3000", &server).is_ok());
        assert!(check_resource("https://evil.example.com/mcp", &server).is_err());
        assert!(check_resource("http://localhost:3000/other", &server).is_err());
        assert!(
            check_resource("http://localhost:3000/m", &server).is_err(),
            "a prefix of a segment is another resource"
        );
        let nested = Url::parse("http://localhost:3000/mcp/v1").expect("url");
        assert!(check_resource("http://localhost:3000/mcp/", &nested).is_ok());
    }
}
