//! [`OAuthConfig`]: who the client is, how it authenticates at the token
//! endpoint, and which grant it uses.

use std::fmt;
use std::sync::Arc;

use super::error::AuthError;
use super::jose::Es256Key;
use super::redirect::AuthorizationStep;

/// How the client identifies itself to authorization servers.
#[derive(Clone)]
pub struct OAuthConfig {
    pub(super) client_name: String,
    pub(super) redirect_uri: String,
    pub(super) preregistered: Option<(String, Option<String>)>,
    pub(super) metadata_document: Option<String>,
    pub(super) application_type: String,
    pub(super) step: Arc<dyn AuthorizationStep>,
    pub(super) grant: Grant,
    pub(super) dpop: bool,
    pub(super) assertion_key: Option<Es256Key>,
}

/// How tokens are obtained.
#[derive(Clone)]
pub(super) enum Grant {
    /// A user signs in (authorization code with PKCE).
    AuthorizationCode,
    /// Machine-to-machine with a client secret.
    ClientCredentials,
    /// A workload presents a JWT it was issued (RFC 7523).
    JwtBearer { assertion: String },
    /// Enterprise-managed: the identity provider's ID token is exchanged for
    /// an identity assertion grant (RFC 8693), then presented as a JWT bearer.
    Enterprise {
        idp_token_endpoint: String,
        idp_client_id: String,
        id_token: String,
    },
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field(
                "preregistered_client_id",
                &self.preregistered.as_ref().map(|(id, _)| id),
            )
            .field("metadata_document", &self.metadata_document)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// A client called `client_name` whose redirect URI is `redirect_uri`
    /// (localhost or https), signing in through `step`.
    pub fn new(
        client_name: impl Into<String>,
        redirect_uri: impl Into<String>,
        step: Arc<dyn AuthorizationStep>,
    ) -> Self {
        Self {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            preregistered: None,
            metadata_document: None,
            application_type: "native".into(),
            step,
            grant: Grant::AuthorizationCode,
            dpop: false,
            assertion_key: None,
        }
    }

    /// Machine-to-machine: the OAuth client credentials grant with these
    /// pre-registered credentials (`client_secret_basic`), no user and no
    /// redirect (the client credentials extension).
    pub fn client_credentials(mut self, client_id: impl Into<String>, secret: String) -> Self {
        self.preregistered = Some((client_id.into(), Some(secret)));
        self.grant = Grant::ClientCredentials;
        self
    }

    /// Machine-to-machine with a `private_key_jwt` client assertion signed
    /// by `private_key_pem` (a PKCS#8 P-256 key, ES256).
    ///
    /// # Errors
    /// When the key is not a PKCS#8 P-256 private key.
    pub fn client_credentials_jwt(
        mut self,
        client_id: impl Into<String>,
        private_key_pem: &str,
    ) -> Result<Self, AuthError> {
        self.assertion_key = Some(Es256Key::from_pem(private_key_pem)?);
        self.preregistered = Some((client_id.into(), None));
        self.grant = Grant::ClientCredentials;
        Ok(self)
    }

    /// Sender-constrained tokens (DPoP, RFC 9449) with a fresh ES256 key,
    /// when the authorization server supports them.
    pub fn dpop(mut self, enabled: bool) -> Self {
        self.dpop = enabled;
        self
    }

    /// Workload identity: present `assertion`, a JWT issued to this
    /// workload, with the JWT bearer grant (RFC 7523).
    pub fn jwt_bearer(
        mut self,
        client_id: impl Into<String>,
        assertion: impl Into<String>,
    ) -> Self {
        self.preregistered = Some((client_id.into(), None));
        self.grant = Grant::JwtBearer {
            assertion: assertion.into(),
        };
        self
    }

    /// Enterprise-managed authorization: exchange the identity provider's
    /// `id_token` at `idp_token_endpoint` for an identity assertion, then
    /// redeem it with these credentials at the MCP server's authorization server.
    pub fn enterprise_managed(
        mut self,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: impl Into<String>,
        client_id: impl Into<String>,
        secret: Option<String>,
    ) -> Self {
        self.preregistered = Some((client_id.into(), secret));
        self.grant = Grant::Enterprise {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            id_token: id_token.into(),
        };
        self
    }

    /// Credentials registered with the authorization server beforehand
    /// (used first).
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.preregistered = Some((client_id.into(), secret));
        self
    }

    /// The https URL of this client's metadata document, used as its
    /// `client_id` where the server supports client ID metadata documents.
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// `native` (default) or `web`, sent with dynamic registration.
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.application_type = kind.into();
        self
    }
}
