//! How the user signs in: the authorization step a host provides
//! ([`LoopbackRedirect`] on a desktop: the system browser and a redirect
//! listener on 127.0.0.1; [`HeadlessRedirect`] in tests) and what it hands
//! back.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use mcp_transport::http::HttpsClient;
use url::Url;

use super::error::{AuthError, invalid_url, redacted};

/// Where the authorization code comes back: the redirect's query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`, if the user or the server refused.
    pub error: Option<String>,
}

impl AuthorizationResponse {
    /// The parameters of the redirect to `url` (its query).
    pub fn from_redirect(url: &Url) -> Self {
        let mut answer = Self {
            code: None,
            state: None,
            iss: None,
            error: None,
        };
        for (key, value) in url.query_pairs() {
            match key.as_ref() {
                "code" => answer.code = Some(value.into_owned()),
                "state" => answer.state = Some(value.into_owned()),
                "iss" => answer.iss = Some(value.into_owned()),
                "error" => answer.error = Some(value.into_owned()),
                _ => {}
            }
        }
        answer
    }
}

/// What an [`AuthorizationStep`] returns: the redirect's parameters, or why
/// signing in did not complete (an application's own failure goes in
/// [`AuthError::Step`]).
pub type StepOutcome<'a> =
    Pin<Box<dyn Future<Output = Result<AuthorizationResponse, AuthError>> + Send + 'a>>;

/// Sends the user to the authorization URL and returns what came back to
/// the redirect URI.
pub trait AuthorizationStep: Send + Sync + fmt::Debug + 'static {
    /// Opens `url` (a browser, a device prompt…) and waits for the redirect.
    fn authorize(&self, url: Url) -> StepOutcome<'_>;
}

/// Follows the authorization URL without a user: fetches it and reads the
/// redirect's `Location` (for tests and authorization servers that
/// auto-approve).
#[derive(Debug)]
pub struct HeadlessRedirect {
    client: HttpsClient,
}

impl HeadlessRedirect {
    /// A headless step on its own HTTP client.
    ///
    /// # Errors
    /// When TLS cannot be set up.
    pub fn new() -> Result<Self, mcp_transport::Error> {
        Ok(Self {
            client: mcp_transport::http::hyper_client()?,
        })
    }
}

impl AuthorizationStep for HeadlessRedirect {
    fn authorize(&self, url: Url) -> StepOutcome<'_> {
        Box::pin(async move {
            let request = Request::get(url.as_str())
                .body(Full::new(Bytes::new()))
                .map_err(|e| invalid_url("authorization endpoint", url.as_str(), e))?;
            let response =
                self.client
                    .request(request)
                    .await
                    .map_err(|e| AuthError::Unreachable {
                        url: redacted(url.as_str()),
                        source: Box::new(e),
                    })?;
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(AuthError::NoRedirect {
                    status: response.status().as_u16(),
                })?;
            let redirect = Url::parse(location)
                .or_else(|_| url.join(location))
                .map_err(|_| AuthError::InvalidRedirect)?;
            Ok(AuthorizationResponse::from_redirect(&redirect))
        })
    }
}

/// The path the authorization server redirects to on the loopback listener.
const CALLBACK_PATH: &str = "/callback";
/// The largest request head the loopback listener reads, in bytes.
const MAX_CALLBACK_HEAD: usize = 8 * 1024;
/// How long one connection to the loopback listener may take to send its
/// request head (a browser sends it at once).
const CALLBACK_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How [`LoopbackRedirect`] shows the user the authorization URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Browser {
    /// The system's browser: `$BROWSER` when set, else `xdg-open` (Linux and
    /// the BSDs), `open` (macOS) or `explorer` (Windows). The URL is printed
    /// too, for when no browser comes up.
    System,
    /// This program, given the URL as its only argument.
    Command(String),
    /// No browser: only print the URL (a remote shell, a headless host).
    PrintOnly,
}

/// Tells the user where to sign in: the authorization URL and whether a
/// browser was started for it.
pub type SignInNotice = Arc<dyn Fn(&Url, bool) + Send + Sync>;

/// The desktop sign-in (RFC 8252 "loopback interface redirection"): a
/// listener on `127.0.0.1` at an ephemeral port receives the redirect, and
/// the authorization URL opens in the system browser (or is printed). The
/// PKCE verifier and `state` are made and checked by [`OAuthClient`](super::OAuthClient).
///
/// Register [`redirect_uri`](Self::redirect_uri) with the client:
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_client::auth::{LoopbackRedirect, OAuthClient, OAuthConfig};
///
/// # fn run() -> Result<(), mcp_client::auth::AuthError> {
/// let step = LoopbackRedirect::bind()?;
/// let redirect_uri = step.redirect_uri();
/// let oauth = OAuthClient::new(OAuthConfig::new("my-host", redirect_uri, Arc::new(step)))?;
/// # let _ = oauth;
/// # Ok(())
/// # }
/// ```
///
/// A redirect whose `state` is not the one of the URL being authorized is
/// answered 400 and ignored (another local process cannot end the sign-in
/// with a forged answer); other paths get 404. The listener lives as long as
/// the step, so a step-up authorization reuses the same redirect URI.
pub struct LoopbackRedirect {
    listener: std::net::TcpListener,
    port: u16,
    browser: Browser,
    timeout: Duration,
    notice: SignInNotice,
}

impl fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("browser", &self.browser)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Binds the redirect listener on `127.0.0.1` at a port the system
    /// picks; the system browser, a 5-minute limit for signing in, and the
    /// URL printed on stderr.
    ///
    /// # Errors
    /// [`AuthError::Listener`] when no loopback port can be bound.
    pub fn bind() -> Result<Self, AuthError> {
        Self::bind_port(0)
    }

    /// [`bind`](Self::bind) at a fixed `port` (for an authorization server
    /// that only accepts a pre-registered redirect URI; 0 picks one).
    ///
    /// # Errors
    /// [`AuthError::Listener`] when the port cannot be bound.
    pub fn bind_port(port: u16) -> Result<Self, AuthError> {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", port)).map_err(AuthError::Listener)?;
        listener
            .set_nonblocking(true)
            .map_err(AuthError::Listener)?;
        let port = listener.local_addr().map_err(AuthError::Listener)?.port();
        Ok(Self {
            listener,
            port,
            browser: Browser::System,
            timeout: Duration::from_secs(300),
            notice: Arc::new(print_notice),
        })
    }

    /// The redirect URI to register: `http://127.0.0.1:<port>/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// How the authorization URL is shown (default [`Browser::System`]).
    #[must_use]
    pub fn with_browser(mut self, browser: Browser) -> Self {
        self.browser = browser;
        self
    }

    /// How long the user has to sign in before the step fails with
    /// [`AuthError::SignInTimedOut`] (default 5 minutes).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// What tells the user where to sign in (default: a line on stderr with
    /// the URL). The URL carries no secret: `state` and the PKCE challenge
    /// are useless without the verifier this process keeps.
    #[must_use]
    pub fn with_notice(mut self, notice: impl Fn(&Url, bool) + Send + Sync + 'static) -> Self {
        self.notice = Arc::new(notice);
        self
    }

    async fn wait_for_redirect(
        &self,
        listener: &tokio::net::TcpListener,
        expected_state: Option<&str>,
    ) -> Result<AuthorizationResponse, AuthError> {
        loop {
            let (stream, _) = listener.accept().await.map_err(AuthError::Listener)?;
            // A connection that stalls is dropped, never waited on forever.
            let answer =
                tokio::time::timeout(CALLBACK_READ_TIMEOUT, self.callback(stream, expected_state))
                    .await;
            if let Ok(Some(answer)) = answer {
                return Ok(answer);
            }
        }
    }

    /// Reads one request on the listener: the redirect's parameters, or
    /// `None` for anything else (answered 400 or 404).
    async fn callback(
        &self,
        mut stream: tokio::net::TcpStream,
        expected_state: Option<&str>,
    ) -> Option<AuthorizationResponse> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let mut head = Vec::with_capacity(1024);
        let mut buffer = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let read = stream.read(&mut buffer).await.ok()?;
            if read == 0 || head.len() + read > MAX_CALLBACK_HEAD {
                return None;
            }
            head.extend_from_slice(&buffer[..read]);
        }
        let line = head.split(|&b| b == b'\r').next()?;
        let line = std::str::from_utf8(line).ok()?;
        let mut parts = line.split(' ');
        let (method, target) = (parts.next()?, parts.next()?);
        let redirect = Url::parse(&format!("http://127.0.0.1:{}{target}", self.port)).ok();
        let (status, page, answer) = match redirect {
            Some(url) if method == "GET" && url.path() == CALLBACK_PATH => {
                let answer = AuthorizationResponse::from_redirect(&url);
                if expected_state.is_some() && answer.state.as_deref() != expected_state {
                    (
                        "400 Bad Request",
                        "This sign-in link is not the one expected.",
                        None,
                    )
                } else if answer.error.is_some() {
                    (
                        "200 OK",
                        "Sign-in was refused. You can close this tab.",
                        Some(answer),
                    )
                } else {
                    ("200 OK", "Signed in. You can close this tab.", Some(answer))
                }
            }
            _ => ("404 Not Found", "Not found.", None),
        };
        let body = format!("<!doctype html><title>Sign-in</title><p>{page}</p>\n");
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
             cache-control: no-store\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
        answer
    }
}

impl AuthorizationStep for LoopbackRedirect {
    fn authorize(&self, url: Url) -> StepOutcome<'_> {
        Box::pin(async move {
            let listener = self
                .listener
                .try_clone()
                .and_then(tokio::net::TcpListener::from_std)
                .map_err(AuthError::Listener)?;
            let expected_state = url
                .query_pairs()
                .find(|(key, _)| key == "state")
                .map(|(_, value)| value.into_owned());
            let opened = open_browser(&self.browser, &url);
            (self.notice)(&url, opened);
            tokio::time::timeout(
                self.timeout,
                self.wait_for_redirect(&listener, expected_state.as_deref()),
            )
            .await
            .map_err(|_| AuthError::SignInTimedOut {
                seconds: self.timeout.as_secs(),
            })?
        })
    }
}

/// The default [`SignInNotice`]: the URL on stderr.
fn print_notice(url: &Url, opened: bool) {
    if opened {
        eprintln!("Opened a browser to sign in. If none appeared, open this URL:\n  {url}");
    } else {
        eprintln!("To sign in, open this URL in a browser:\n  {url}");
    }
}

/// Starts the browser for `url`; false when there is none to start. The
/// browser runs on its own: it is not waited for (it may outlive us).
fn open_browser(browser: &Browser, url: &Url) -> bool {
    let program = match browser {
        Browser::PrintOnly => return false,
        Browser::Command(program) => program.clone(),
        Browser::System => match std::env::var("BROWSER") {
            Ok(program) if !program.is_empty() => program,
            _ if cfg!(target_os = "macos") => "open".to_owned(),
            _ if cfg!(windows) => "explorer".to_owned(),
            _ => "xdg-open".to_owned(),
        },
    };
    std::process::Command::new(program)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// One GET to the listener: the status line of its answer.
    async fn get(port: u16, target: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connected");
        let request = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("sent");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        answer.lines().next().unwrap_or_default().to_owned()
    }

    #[tokio::test]
    async fn the_loopback_step_takes_only_the_redirect_with_its_state() {
        let (shown, mut shown_rx) = tokio::sync::mpsc::unbounded_channel();
        let step = LoopbackRedirect::bind()
            .expect("bound")
            .with_browser(Browser::PrintOnly)
            .with_notice(move |url, opened| {
                let _ = shown.send((url.to_string(), opened));
            });
        let port = step.port;
        assert_eq!(
            step.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let url =
            Url::parse("https://as.example/authorize?state=right&code_challenge=x").expect("url");
        let browser = async {
            let (url, opened) = shown_rx.recv().await.expect("the URL is shown");
            assert!(url.starts_with("https://as.example/authorize") && !opened);
            // Another path, then a forged state: refused, the step waits on.
            assert!(get(port, "/favicon.ico").await.contains("404"));
            assert!(
                get(port, "/callback?code=evil&state=wrong")
                    .await
                    .contains("400")
            );
            let ok = get(
                port,
                "/callback?code=good&state=right&iss=https%3A%2F%2Fas.example",
            )
            .await;
            assert!(ok.contains("200"), "{ok}");
        };
        let (answer, ()) = tokio::join!(step.authorize(url), browser);
        let answer = answer.expect("signed in");
        assert_eq!(answer.code.as_deref(), Some("good"));
        assert_eq!(answer.state.as_deref(), Some("right"));
        assert_eq!(answer.iss.as_deref(), Some("https://as.example"));
    }

    #[tokio::test]
    async fn the_loopback_step_gives_up_after_its_time_limit() {
        let step = LoopbackRedirect::bind()
            .expect("bound")
            .with_browser(Browser::PrintOnly)
            .with_notice(|_, _| {})
            .with_timeout(Duration::from_millis(50));
        let url = Url::parse("https://as.example/authorize?state=s").expect("url");
        let error = step.authorize(url).await.expect_err("nobody signed in");
        assert!(matches!(error, AuthError::SignInTimedOut { .. }), "{error}");
    }
}
