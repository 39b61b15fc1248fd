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

use url::Url;

use super::client::OAuthClient;
use super::error::{AuthError, redacted};
use super::metadata::{
    Discovered, ResourceMetadata, ServerMetadata, check_resource, http_url, same_origin_metadata,
    unusable,
};

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
