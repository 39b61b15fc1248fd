//! A protected MCP server: the streamable HTTP endpoint behind a
//! `BearerGuard`, an OAuth 2.1 resource server. Requests without a valid
//! token get 401 with a `WWW-Authenticate` challenge pointing at the
//! protected resource metadata (served by the guard at
//! `/.well-known/oauth-protected-resource/mcp`), from which a client such
//! as `mcp_client::auth::OAuthClient` finds the authorization server.
//!
//! Tokens here are opaque strings looked up in a table (a `TokenVerifier`
//! of a few lines); a real deployment verifies JWTs with `JwtVerifier`
//! against its authorization server's JWKS, or introspects tokens.
//!
//! ```text
//! cargo run --example bearer-guard -- --port 3000
//! curl -i http://127.0.0.1:3000/mcp -X POST            # 401 and the challenge
//! curl http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use mcp_server::{Context, HttpServerConfig, ServeConfig, Server};
use mcp_transport::http::{
    BearerGuard, ProtectedResource, TokenClaims, TokenRejection, TokenVerifier, Verification, serve,
};
use tokio::net::TcpListener;

/// Opaque tokens and what each grants.
struct TokenTable(HashMap<String, TokenClaims>);

impl TokenVerifier for TokenTable {
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> Verification<'a> {
        Box::pin(async move {
            let claims = self
                .0
                .get(token)
                .ok_or_else(|| TokenRejection::Invalid("unknown token".into()))?;
            // RFC 8707: a token issued for another resource is refused.
            if !claims.audiences.iter().any(|audience| audience == resource) {
                return Err(TokenRejection::WrongAudience);
            }
            Ok(claims.clone())
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => 3000,
        [flag, port] if flag == "--port" => port.parse()?,
        _ => return Err("usage: bearer-guard [--port N]".into()),
    };
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let endpoint = format!("http://{}/mcp", listener.local_addr()?);

    let server = Server::builder("protected", "1.0.0")
        .tool(
            "whoami",
            "Who the token belongs to",
            |cx: Context| async move {
                // The guard's verified identity (issuer, subject, client), never the token.
                match &cx.transport().principal {
                    Some(principal) => format!("you are {principal}"),
                    None => "anonymous".to_owned(),
                }
            },
        )
        .build()?;

    // This server's identifier (the audience tokens must name) and the
    // authorization server that issues them.
    let resource = ProtectedResource::new(&endpoint, "https://auth.example.com")
        .with_scopes_supported(["mcp:tools"])
        .with_required_scopes(["mcp:tools"]);
    let token = std::env::var("DEMO_TOKEN").unwrap_or_else(|_| "demo-token".into());
    let claims = TokenClaims::new()
        .with_subject("alice")
        .with_scopes(["mcp:tools"])
        .with_audiences([endpoint.clone()]);
    let verifier = Arc::new(TokenTable(HashMap::from([(token, claims)])));

    let service = server.streamable_http_service(HttpServerConfig::new());
    let serve_config = ServeConfig::new().service_shutdown(service.shutdown_handle());
    let guarded = BearerGuard::new(service, resource, verifier);
    eprintln!("protected MCP endpoint on {endpoint} (Ctrl-C stops it)");
    serve(
        listener,
        guarded,
        serve_config,
        mcp_server::shutdown_signal(),
    )
    .await?;
    Ok(())
}
