//! A Redis URL held so that no `Debug` can print its password: the one
//! secret the gateway's flags carry in plain text.

/// A Redis URL, which may hold a password: its `Debug` shows it with
/// the credentials replaced by `***`, so no derived `Debug` (the parsed
/// flags', a setting's) can print the password.
#[derive(Clone)]
pub(crate) struct RedisUrl(String);

impl RedisUrl {
    /// The URL as given, password included: to check and to connect
    /// with, never to show.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for RedisUrl {
    fn from(url: String) -> Self {
        Self(url)
    }
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redacted(&self.0))
    }
}

/// `url` with any password (and user) replaced by `***`.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(not a URL)".into();
    };
    // Credentials end at the last `@` (a password may hold `/` or `@`;
    // hosts and database numbers hold neither).
    match rest.rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_redis_password_is_never_shown() {
        assert_eq!(
            redacted("redis://:s3cret@127.0.0.1:6379/0"),
            "redis://***@127.0.0.1:6379/0"
        );
        assert_eq!(
            redacted("redis+sentinel://u:p@w@a:1,b:2/svc"),
            "redis+sentinel://***@a:1,b:2/svc"
        );
        assert_eq!(redacted("redis://:a/b@h:1/2"), "redis://***@h:1/2");
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert!(!redacted("s3cret").contains("s3cret"));
    }
}
