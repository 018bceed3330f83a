//! Session and key secrets: random, shown once, stored only as their SHA-256. The
//! parsers accept exactly the shapes bor hands out, so anything else is refused before
//! it is hashed or looked up.

use sha2::{Digest, Sha256};

/// Random bytes in a secret (256 bits).
const SECRET_BYTES: usize = 32;
/// Hex digits of a secret.
const SECRET_HEX: usize = SECRET_BYTES * 2;
/// What every API key starts with.
pub const KEY_PREFIX: &str = "bor_";
/// What an OAuth access token starts with (it is no API key: `/mcp` only).
pub const ACCESS_TOKEN_PREFIX: &str = "bor_oat_";
/// What an OAuth refresh token starts with.
pub const REFRESH_TOKEN_PREFIX: &str = "bor_ort_";
/// What an OAuth client's secret starts with.
pub const CLIENT_SECRET_PREFIX: &str = "bor_ocs_";
/// Characters of a key kept visible in lists (`bor_` and eight hex digits).
const VISIBLE_KEY_CHARS: usize = KEY_PREFIX.len() + 8;

/// A freshly made secret, to hand out once; [`Issued::sha256`] is what is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    /// The cookie value or the key, as the client keeps it.
    pub token: String,
    pub sha256: String,
}

#[derive(Debug, thiserror::Error)]
#[error("the operating system's random source failed: {0}")]
pub struct RandomError(String);

/// `bytes` random bytes from the operating system, as lowercase hex.
pub fn random_hex(bytes: usize) -> Result<String, RandomError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|error| RandomError(error.to_string()))?;
    Ok(hex(&buffer))
}

/// A new session secret: the `bor_session` cookie's value.
pub fn new_session_secret() -> Result<Issued, RandomError> {
    let token = random_hex(SECRET_BYTES)?;
    Ok(Issued {
        sha256: sha256_hex(&token),
        token,
    })
}

/// A new API key (`bor_` and 64 hex digits).
pub fn new_api_key() -> Result<Issued, RandomError> {
    new_prefixed(KEY_PREFIX)
}

/// A new secret: `prefix` and 64 hex digits (an OAuth token or client secret; an
/// authorization code with no prefix).
pub fn new_prefixed(prefix: &str) -> Result<Issued, RandomError> {
    let token = format!("{prefix}{}", random_hex(SECRET_BYTES)?);
    Ok(Issued {
        sha256: sha256_hex(&token),
        token,
    })
}

/// The part of a key shown in lists.
pub fn visible_prefix(key: &str) -> &str {
    key.get(..VISIBLE_KEY_CHARS).unwrap_or(key)
}

/// The SHA-256 of a `bor_session` cookie's value, when it has the shape bor hands out.
pub fn parse_session_cookie(value: &str) -> Option<String> {
    is_secret_hex(value).then(|| sha256_hex(value))
}

/// The SHA-256 of an API key, when it has the shape bor hands out.
pub fn parse_api_key(token: &str) -> Option<String> {
    parse_prefixed(KEY_PREFIX, token)
}

/// The SHA-256 of a secret made by [`new_prefixed`] with `prefix`, when it has that
/// shape.
pub fn parse_prefixed(prefix: &str, token: &str) -> Option<String> {
    token
        .strip_prefix(prefix)
        .filter(|rest| is_secret_hex(rest))
        .map(|_| sha256_hex(token))
}

fn is_secret_hex(text: &str) -> bool {
    text.len() == SECRET_HEX
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The SHA-256 of `text`, as lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn issued_secrets_parse_back_to_their_hash() {
        let session = new_session_secret().unwrap();
        assert_eq!(
            parse_session_cookie(&session.token),
            Some(session.sha256.clone())
        );
        let key = new_api_key().unwrap();
        assert!(key.token.starts_with(KEY_PREFIX));
        assert_eq!(parse_api_key(&key.token), Some(key.sha256.clone()));
        assert_eq!(visible_prefix(&key.token).len(), 12);
        assert_ne!(session.token, new_session_secret().unwrap().token);
    }

    #[test]
    fn other_shapes_are_refused() {
        let good = "a".repeat(64);
        assert!(parse_session_cookie(&good).is_some());
        assert!(parse_session_cookie(&"A".repeat(64)).is_none());
        assert!(parse_session_cookie(&"a".repeat(63)).is_none());
        assert!(parse_session_cookie(&format!("{good} ")).is_none());
        assert!(parse_api_key(&good).is_none(), "a key starts with bor_");
        assert!(parse_api_key(&format!("bor_{good}")).is_some());
        assert!(parse_api_key(&format!("BOR_{good}")).is_none());
        assert!(parse_api_key("bor_").is_none());
        let token = new_prefixed(ACCESS_TOKEN_PREFIX).unwrap();
        assert!(
            parse_api_key(&token.token).is_none(),
            "an access token is no key"
        );
        assert_eq!(
            parse_prefixed(ACCESS_TOKEN_PREFIX, &token.token),
            Some(token.sha256)
        );
        assert!(parse_prefixed(REFRESH_TOKEN_PREFIX, &token.token).is_none());
    }

    proptest! {
        #[test]
        fn any_cookie_value_is_a_hash_of_itself_or_refused(value in "(?s).{0,80}|[0-9a-f]{64}") {
            match parse_session_cookie(&value) {
                Some(hash) => {
                    prop_assert_eq!(value.len(), 64);
                    prop_assert_eq!(hash.len(), 64);
                    prop_assert_ne!(hash, value);
                }
                None => prop_assert!(!is_secret_hex(&value)),
            }
        }

        #[test]
        fn any_bearer_token_is_a_key_hash_or_refused(token in "(?s)(bor_)?.{0,80}|bor_[0-9a-f]{64}") {
            if let Some(hash) = parse_api_key(&token) {
                prop_assert!(token.starts_with(KEY_PREFIX));
                prop_assert_eq!(token.len(), KEY_PREFIX.len() + 64);
                prop_assert_eq!(hash.len(), 64);
            } else {
                prop_assert!(token.strip_prefix(KEY_PREFIX).is_none_or(|rest| !is_secret_hex(rest)));
            }
        }
    }
}
