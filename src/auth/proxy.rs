//! Sign-in by a trusted proxy's header (`BOR_AUTH_PROXY_*`, docs/AUTH.md): from a TCP
//! peer in `BOR_AUTH_PROXY_TRUSTED` the header names the user (made at first sight,
//! when the name fits the username rule) and the groups header, when configured,
//! replaces their groups; from any other address the headers are ignored, and that is
//! logged once per address. Either header sent more than once is refused: a proxy that
//! appends its copy to the client's would otherwise let the client choose.
//!
//! A name seen before with the same groups is answered from memory: the common path
//! needs no PostgreSQL round trip.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError, RwLock};

use ipnet::IpNet;
use uuid::Uuid;

use super::external::{self, ExternalError, Identity, PROXY_ISSUER};
use super::identify::{Denial, Headers};
use super::{Caller, CredentialCache, Via};
use crate::config::Config;
use crate::db::DbPool;

/// The longest name the header may carry, in bytes (longer: ignored).
const MAX_HEADER_NAME_BYTES: usize = 256;
/// Untrusted addresses remembered for "logged once" (past it, no more are logged).
const MAX_WARNED_ADDRESSES: usize = 10_000;

/// What a name was last signed in with.
#[derive(Debug, Clone, PartialEq)]
struct Known {
    user_id: Uuid,
    /// The groups header's value as it came (`None`: absent or not configured).
    groups: Option<String>,
}

/// The configured proxy sign-in.
pub struct TrustedProxy {
    header: String,
    groups_header: Option<String>,
    trusted: Vec<IpNet>,
    known: RwLock<HashMap<String, Known>>,
    warned: Mutex<HashSet<IpAddr>>,
}

impl TrustedProxy {
    /// The proxy sign-in `config` names; `None` without `BOR_AUTH_PROXY_HEADER`.
    pub fn from_config(config: &Config) -> Option<TrustedProxy> {
        Some(TrustedProxy {
            header: config.auth_proxy_header.clone()?,
            groups_header: config.auth_proxy_groups_header.clone(),
            trusted: config.auth_proxy_trusted.clone(),
            known: RwLock::new(HashMap::new()),
            warned: Mutex::new(HashSet::new()),
        })
    }

    /// The caller the proxy's header names, when the request carries it from a
    /// trusted peer; `None` otherwise (or when that user is disabled). Refused: either
    /// header sent twice ([`Denial::NotSignedIn`]), a new name that does not fit the
    /// username rule ([`Denial::InvalidUsername`]).
    pub async fn caller(
        &self,
        headers: &dyn Headers,
        peer: Option<IpAddr>,
        pool: &DbPool,
        cache: &CredentialCache,
    ) -> Result<Option<Caller>, Denial> {
        let names = headers.values(&self.header);
        let Some(raw_name) = names.first() else {
            return Ok(None);
        };
        let Some(peer) = peer else {
            return Ok(None);
        };
        if !self.trusts(peer) {
            self.warn_once(peer);
            return Ok(None);
        }
        let Some(name) = visible_text(raw_name) else {
            tracing::warn!(name = ?String::from_utf8_lossy(raw_name), "the trusted proxy's header names a user in bytes that are not visible ASCII; it does not fit the username rule and is refused");
            return Err(Denial::InvalidUsername(format!(
                "the trusted proxy's header names no user bor can make: a username has {}",
                crate::username::RULE
            )));
        };
        let groups_values = self
            .groups_header
            .as_deref()
            .map(|header| (header, headers.values(header)));
        let repeated = if names.len() > 1 {
            Some(self.header.as_str())
        } else {
            groups_values
                .as_ref()
                .filter(|(_, values)| values.len() > 1)
                .map(|(header, _)| *header)
        };
        if let Some(header) = repeated {
            tracing::warn!(%header, address = %peer, "a request carried the trusted proxy's header more than once and is refused (the proxy must replace the client's copy, not add to it)");
            return Err(Denial::NotSignedIn);
        }
        if name.is_empty() || name.len() > MAX_HEADER_NAME_BYTES {
            return Ok(None);
        }
        let groups = groups_values
            .and_then(|(_, values)| values.first().and_then(|value| visible_text(value)))
            .map(str::to_owned);
        let known = self.read().get(name).cloned();
        if let Some(known) = known.filter(|known| known.groups == groups)
            && cache.knows_user(known.user_id)
        {
            return Ok(cache.caller_of(known.user_id, Via::TrustedProxy));
        }
        let group_names = groups.as_deref().map(group_names);
        let identity = Identity {
            issuer: PROXY_ISSUER,
            subject: name,
            usernames: &[name],
            display_name: name,
            groups: group_names.as_deref(),
            admin: None,
        };
        let user = match external::sign_in(pool, cache, &identity).await {
            Ok(user) => user,
            Err(ExternalError::Disabled) => return Ok(None),
            Err(error @ ExternalError::UnfitName(_)) => {
                return Err(Denial::InvalidUsername(format!(
                    "the trusted proxy's header names no user bor can make: {error}"
                )));
            }
            Err(ExternalError::Db(error)) => return Err(error.into()),
        };
        self.write().insert(
            name.to_owned(),
            Known {
                user_id: user.id,
                groups,
            },
        );
        Ok(cache.caller_of(user.id, Via::TrustedProxy))
    }

    fn trusts(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            IpAddr::V4(_) => peer,
        };
        self.trusted.iter().any(|range| range.contains(&peer))
    }

    fn warn_once(&self, peer: IpAddr) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.len() < MAX_WARNED_ADDRESSES && warned.insert(peer) {
            tracing::warn!(address = %peer, header = %self.header, "a sign-in header came from an address not in BOR_AUTH_PROXY_TRUSTED and is ignored (logged once per address)");
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Known>> {
        self.known.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Known>> {
        self.known.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A header's value as trimmed text, when it is visible ASCII (as
/// `HeaderValue::to_str` reads it: tabs and visible characters).
fn visible_text(value: &[u8]) -> Option<&str> {
    let visible = value
        .iter()
        .all(|&byte| byte == b'\t' || (32..127).contains(&byte));
    visible
        .then(|| std::str::from_utf8(value).ok())
        .flatten()
        .map(str::trim)
}

/// The groups of a comma-separated header value, sorted, without blanks or repeats.
fn group_names(value: &str) -> Vec<String> {
    let mut names: Vec<String> = value
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::super::identify::GivenHeaders;
    use super::*;

    fn proxy(trusted: &str) -> TrustedProxy {
        let config = Config::from_vars([
            (
                "BOR_AUTH_PROXY_HEADER".to_owned(),
                "X-Forwarded-User".to_owned(),
            ),
            ("BOR_AUTH_PROXY_TRUSTED".to_owned(), trusted.to_owned()),
        ])
        .unwrap_or_else(|error| panic!("{error}"));
        TrustedProxy::from_config(&config).unwrap_or_else(|| panic!("no proxy"))
    }

    #[test]
    fn only_peers_in_the_ranges_are_trusted() {
        let proxy = proxy("10.0.0.0/8,::1");
        let address = |text: &str| {
            text.parse::<IpAddr>()
                .unwrap_or_else(|error| panic!("{error}"))
        };
        assert!(proxy.trusts(address("10.1.2.3")));
        assert!(proxy.trusts(address("::ffff:10.1.2.3")));
        assert!(proxy.trusts(address("::1")));
        assert!(!proxy.trusts(address("11.0.0.1")));
        assert!(!proxy.trusts(address("127.0.0.1")));
    }

    #[tokio::test]
    async fn the_header_counts_once_from_a_trusted_peer_only() {
        let proxy = proxy("10.0.0.0/8");
        let pool =
            DbPool::new("postgres://127.0.0.1:9/none", 1).unwrap_or_else(|error| panic!("{error}"));
        let cache = CredentialCache::empty(pool.clone());
        let trusted = "10.1.2.3".parse().ok();
        let ask =
            async |headers: GivenHeaders, peer| proxy.caller(&headers, peer, &pool, &cache).await;
        let once = || GivenHeaders(&[("x-forwarded-user", b"ann")]);
        let untrusted = ask(once(), "192.0.2.1".parse().ok()).await;
        assert!(matches!(untrusted, Ok(None)));
        assert!(matches!(ask(once(), None).await, Ok(None)));
        let twice = GivenHeaders(&[("X-Forwarded-User", b"ann"), ("x-forwarded-user", b"admin")]);
        assert!(matches!(
            ask(twice, trusted).await,
            Err(Denial::NotSignedIn)
        ));
        let unreadable = GivenHeaders(&[("x-forwarded-user", b"\xffann")]);
        let refused = ask(unreadable, trusted).await;
        assert!(matches!(refused, Err(Denial::InvalidUsername(_))));
        let blank = GivenHeaders(&[("x-forwarded-user", b"  ")]);
        assert!(matches!(ask(blank, trusted).await, Ok(None)));
    }

    #[test]
    fn the_groups_header_is_a_list_of_names() {
        assert_eq!(
            group_names(" staff, admins,,staff "),
            vec!["admins", "staff"]
        );
        assert!(group_names(" , ").is_empty());
    }
}
