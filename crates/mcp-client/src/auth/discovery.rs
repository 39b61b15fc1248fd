//! Discovery: the `WWW-Authenticate` challenge, the protected resource
//! metadata (RFC 9728) and the authorization server metadata (RFC 8414 /
//! OpenID), in the spec's order, with the issuer and resource checks.
//!
//! Every URL the client fetches (or hands the user's browser) comes down one
//! trust chain, checked before any request is made:
//! - the protected resource metadata only from the MCP server's own origin
//!   (scheme, host, port): the challenge's `resource_metadata` on another
//!   origin is refused ([`AuthError::ForeignResourceMetadata`]); the
//!   well-known URLs are built on that origin;
//! - the authorization server metadata only at the well-known URLs of the
//!   issuer that metadata names, an http(s) URL without query or fragment
//!   (RFC 8414 §2), and only when the document names that same issuer
//!   (RFC 8414 §3.3);
//! - the authorization, token and registration endpoints only from that
//!   validated document, and only http(s) URLs without a fragment (RFC 6749
//!   §3.1, §3.2): a `file:` or custom-scheme "endpoint" is never opened;
//! - a 2025-03-26 server's authorization server at the server's own origin.
//!
//! (The identity provider's token endpoint of the enterprise-managed grant
//! comes from the host's configuration, not from any server.)

use serde::Deserialize;
use url::Url;

use super::*;

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

impl OAuthClient {
    /// The protected resource metadata and its authorization server; for a
    /// server without any (no challenge hint and no well-known document),
    /// the 2025-03-26 discovery at the server's origin.
    pub(super) async fn discover(
        &self,
        server_url: &Url,
        hinted: Option<&str>,
    ) -> Result<Discovered, AuthError> {
        let Some(resource) = self.resource_metadata(server_url, hinted).await? else {
            // A challenge that names its metadata is a newer server whose
            // metadata is broken, never a 2025-03-26 one.
            if hinted.is_some() {
                return Err(AuthError::NoResourceMetadata {
                    server: redacted(server_url.as_str()),
                });
            }
            return self.legacy_server_metadata(server_url).await;
        };
        let resource_id = resource
            .resource
            .clone()
            .unwrap_or_else(|| server_url.as_str().to_owned());
        check_resource(&resource_id, server_url)?;
        let issuer = resource.authorization_servers.first().ok_or_else(|| {
            AuthError::NoAuthorizationServer {
                resource: resource_id.clone(),
            }
        })?;
        let server =
            self.server_metadata(issuer)
                .await?
                .ok_or_else(|| AuthError::NoServerMetadata {
                    issuer: issuer.clone(),
                })?;
        Ok(Discovered {
            resource: Some(resource_id),
            scopes_supported: resource.scopes_supported,
            server,
        })
    }

    /// RFC 9728: the challenge's URL, else the path form, else the root.
    async fn resource_metadata(
        &self,
        server: &Url,
        hinted: Option<&str>,
    ) -> Result<Option<ResourceMetadata>, AuthError> {
        let mut candidates = Vec::new();
        if let Some(hint) = hinted {
            candidates.push(same_origin_metadata(hint, server)?);
        }
        let origin = server.origin().ascii_serialization();
        let path = server.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(format!(
                "{origin}/.well-known/oauth-protected-resource{path}"
            ));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
        for candidate in candidates {
            if let Some(metadata) = self.get_json::<ResourceMetadata>(&candidate).await? {
                return Ok(Some(metadata));
            }
        }
        Ok(None)
    }

    /// RFC 8414 and OpenID discovery, in the spec's order, with the issuer
    /// check; `None` when no candidate answers.
    async fn server_metadata(&self, issuer: &str) -> Result<Option<ServerMetadata>, AuthError> {
        let url = http_url("issuer", issuer)?;
        if url.query().is_some() {
            return Err(unusable("issuer", issuer, "has a query"));
        }
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let candidates = if path.is_empty() {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server"),
                format!("{origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server{path}"),
                format!("{origin}/.well-known/openid-configuration{path}"),
                format!("{origin}{path}/.well-known/openid-configuration"),
            ]
        };
        for candidate in candidates {
            if let Some(metadata) = self.get_json::<ServerMetadata>(&candidate).await? {
                if metadata.issuer != issuer {
                    return Err(AuthError::MetadataIssuerMismatch {
                        url: candidate,
                        expected: issuer.to_owned(),
                        found: metadata.issuer,
                    });
                }
                return metadata.checked().map(Some);
            }
        }
        Ok(None)
    }

    /// 2025-03-26: the authorization base URL is the server's URL without
    /// its path; its RFC 8414 metadata, else the default endpoints there.
    async fn legacy_server_metadata(&self, server_url: &Url) -> Result<Discovered, AuthError> {
        let base = server_url.origin().ascii_serialization();
        tracing::debug!(
            base = %base,
            "no protected resource metadata; discovering the 2025-03-26 way"
        );
        let server = match self.server_metadata(&base).await? {
            Some(server) => server,
            None => ServerMetadata::legacy_defaults(&base),
        };
        Ok(Discovered {
            resource: None,
            scopes_supported: None,
            server,
        })
    }
}

impl ServerMetadata {
    /// 2025-03-26 "fallbacks for servers without metadata discovery": the
    /// default endpoint paths at the authorization base URL. That revision
    /// makes PKCE mandatory for every client, so S256 is what such a
    /// server accepts; it has no `iss` parameter.
    fn legacy_defaults(base: &str) -> Self {
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
    fn checked(self) -> Result<Self, AuthError> {
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
fn same_origin_metadata(hint: &str, server: &Url) -> Result<String, AuthError> {
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
fn http_url(role: &'static str, url: &str) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|e| invalid_url(role, url, e))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(unusable(role, url, "is not an http(s) URL"));
    }
    if parsed.fragment().is_some() {
        return Err(unusable(role, url, "has a fragment"));
    }
    Ok(parsed)
}

fn unusable(role: &'static str, url: &str, reason: &'static str) -> AuthError {
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
