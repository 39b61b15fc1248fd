//! Sign-ins that outlive one run: the access token of each protected server
//! kept in the user's configuration directory (`logins.json`, mode 0600,
//! keyed by the server's URL), in front of the SDK's OAuth client.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mcp_client::auth::{AuthChallenge, AuthHeaders, AuthOutcome, Authorizer, OAuthClient};
use mcp_client::types::JsonObject;
use serde_json::Value;

/// Where the token of one server is kept.
pub(crate) struct TokenFile {
    /// `None` when no configuration directory can be found: nothing is
    /// kept, and the user is told when there is something to keep.
    path: Option<PathBuf>,
    server: String,
}

impl TokenFile {
    /// The entry of `server` in `logins.json` of the configuration
    /// directory: `$MCP_CLI_CONFIG_DIR`, else the platform's (`$XDG_CONFIG_HOME`
    /// or `~/.config` on Linux, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows) with `mcp-cli` under it.
    pub(crate) fn for_server(server: &str) -> Self {
        Self {
            path: config_dir().map(|dir| dir.join("logins.json")),
            server: server.to_owned(),
        }
    }

    fn read_all(&self) -> JsonObject {
        self.path
            .as_ref()
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice::<JsonObject>(&bytes).ok())
            .unwrap_or_default()
    }

    /// The kept access token, if any.
    fn load(&self) -> Option<String> {
        self.read_all()
            .get(&self.server)
            .and_then(|entry| entry["access_token"].as_str())
            .map(str::to_owned)
    }

    /// Keeps `token` for the server (`None` forgets it). Written to a
    /// temporary file created with mode 0600 and renamed over the old one,
    /// so the file is never readable by others, not even half-written.
    fn store(&self, token: Option<&str>) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Err(std::io::Error::other(
                "no configuration directory: set MCP_CLI_CONFIG_DIR, XDG_CONFIG_HOME or HOME",
            ));
        };
        // One store at a time in this process: two requests that see a new
        // token at once would otherwise share the temporary file and lose
        // each other's update.
        static STORING: Mutex<()> = Mutex::new(());
        let _storing = STORING.lock().unwrap_or_else(|p| p.into_inner());
        let mut all = self.read_all();
        match token {
            Some(token) => {
                let entry = BTreeMap::from([("access_token", token)]);
                all.insert(self.server.clone(), serde_json::to_value(entry)?);
            }
            None => {
                all.remove(&self.server);
            }
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let temporary = dir.join(format!("logins.json.{}", std::process::id()));
        let bytes = serde_json::to_vec_pretty(&Value::Object(all))?;
        write_private(&temporary, &bytes)?;
        std::fs::rename(&temporary, path)
    }
}

/// The SDK's OAuth client with the token kept between runs: a kept token
/// is sent until the server refuses it (then it is forgotten and the OAuth
/// client signs in again), and each new token is kept.
pub(crate) struct SavedLogin {
    oauth: Arc<OAuthClient>,
    file: TokenFile,
    saved: Mutex<Option<String>>,
}

impl fmt::Debug for SavedLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token never reaches a log.
        f.debug_struct("SavedLogin")
            .field("file", &self.file.path)
            .field("server", &self.file.server)
            .finish_non_exhaustive()
    }
}

impl SavedLogin {
    /// Starts from what `file` keeps.
    pub(crate) fn new(oauth: Arc<OAuthClient>, file: TokenFile) -> Self {
        let saved = Mutex::new(file.load());
        Self { oauth, file, saved }
    }

    fn saved(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.saved.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn keep(&self, token: Option<&str>) {
        if let Err(error) = self.file.store(token) {
            let place = self.file.path.as_ref().map(|p| p.display().to_string());
            eprintln!(
                "could not keep the sign-in in {}: {error}; you will be asked to sign in again",
                place.as_deref().unwrap_or("the configuration directory")
            );
        }
    }
}

impl Authorizer for SavedLogin {
    fn headers(&self, method: String, url: String) -> AuthHeaders<'_> {
        Box::pin(async move {
            let mut headers = self.oauth.headers(method, url).await;
            let authorization = headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                .map(|(_, value)| value.clone());
            match authorization {
                // Only bearer tokens are kept (a DPoP token is bound to a
                // key that lives as long as this process).
                Some(value) => {
                    let Some(token) = value.strip_prefix("Bearer ") else {
                        return headers;
                    };
                    let token = token.to_owned();
                    // Compared and replaced under one lock: a token is kept once.
                    let changed = {
                        let mut saved = self.saved();
                        let changed = saved.as_deref() != Some(token.as_str());
                        if changed {
                            *saved = Some(token.clone());
                        }
                        changed
                    };
                    if changed {
                        self.keep(Some(&token));
                    }
                }
                None => {
                    if let Some(token) = self.saved().clone() {
                        headers.push(("authorization".to_owned(), format!("Bearer {token}")));
                    }
                }
            }
            headers
        })
    }

    fn challenge(&self, challenge: AuthChallenge) -> AuthOutcome<'_> {
        Box::pin(async move {
            // A kept token the server no longer takes is forgotten first.
            if challenge.status == 401 && self.saved().take().is_some() {
                self.keep(None);
            }
            self.oauth.challenge(challenge).await
        })
    }
}

fn config_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("MCP_CLI_CONFIG_DIR") {
        return Some(dir);
    }
    let base = if cfg!(windows) {
        var("APPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|home| home.join("Library/Application Support"))
    } else {
        var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config")))
    };
    base.map(|base| base.join("mcp-cli"))
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // A file left by an earlier run keeps its mode on open: set it again.
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}
