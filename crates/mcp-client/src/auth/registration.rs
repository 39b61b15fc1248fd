//! Client registration: pre-registered, a client ID metadata document, or
//! dynamic registration (RFC 7591), kept per issuer.

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::Value;

use super::client::{OAuthClient, Registration};
use super::error::{AuthError, invalid_url};
use super::metadata::{ServerMetadata, offline_supported};
use super::token::json_answer;

impl OAuthClient {
    pub(super) async fn register(
        &self,
        server: &ServerMetadata,
        scopes: &str,
    ) -> Result<Registration, AuthError> {
        if let Some(existing) = self.lock().registrations.get(&server.issuer) {
            return Ok(existing.clone());
        }
        let methods = server
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| vec!["client_secret_basic".into()]);
        let registration = if let Some((id, secret)) = &self.config.preregistered {
            let method = if secret.is_none() {
                "none"
            } else if methods.iter().any(|m| m == "client_secret_basic") {
                "client_secret_basic"
            } else {
                "client_secret_post"
            };
            Registration {
                client_id: id.clone(),
                secret: secret.clone(),
                method: method.into(),
            }
        } else if let (true, Some(document)) = (
            server.client_id_metadata_document_supported,
            &self.config.metadata_document,
        ) {
            Registration {
                client_id: document.clone(),
                secret: None,
                method: "none".into(),
            }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.dynamic_registration(endpoint, server, scopes).await?
        } else {
            return Err(AuthError::NoRegistration {
                issuer: server.issuer.clone(),
            });
        };
        self.lock()
            .registrations
            .insert(server.issuer.clone(), registration.clone());
        Ok(registration)
    }

    pub(super) async fn dynamic_registration(
        &self,
        endpoint: &str,
        server: &ServerMetadata,
        scopes: &str,
    ) -> Result<Registration, AuthError> {
        let offline = offline_supported(server);
        let mut grant_types = vec!["authorization_code"];
        if offline {
            grant_types.push("refresh_token");
        }
        let methods = server
            .token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_default();
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| methods.is_empty() || methods.iter().any(|s| s == m))
            .unwrap_or("client_secret_basic");
        let mut body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": self.config.application_type,
        });
        if !scopes.is_empty() {
            body["scope"] = Value::from(scopes);
        }
        const ENDPOINT: &str = "registration endpoint";
        let request = Request::post(endpoint)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| invalid_url(ENDPOINT, endpoint, e))?;
        let (status, response) = self.send(request).await?;
        let registered = json_answer(ENDPOINT, endpoint, status, &response)?;
        let client_id = registered["client_id"]
            .as_str()
            .ok_or(AuthError::MissingField {
                endpoint: ENDPOINT,
                field: "client_id",
            })?
            .to_owned();
        let secret = registered["client_secret"].as_str().map(str::to_owned);
        let method = registered["token_endpoint_auth_method"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| {
                if secret.is_some() {
                    "client_secret_basic"
                } else {
                    "none"
                }
                .to_owned()
            });
        Ok(Registration {
            client_id,
            secret,
            method,
        })
    }
}
