//! Who asks and whether they may go on, decided once per request from what the request
//! presented ([`Presented`]: a bearer token, the `bor_session` cookie, a trusted proxy's
//! headers, the peer, the part of the service asked for). It reads the bearer token (an
//! OAuth access token `bor_oat_…` on `/mcp` only, a key `bor_…`, else the service token
//! on `/api/admin/*`), then the cookie, then a trusted proxy's header. With `accounts`,
//! a request without a caller is refused ([`Denial::NotSignedIn`]) but in the open
//! area; `/api/admin/*` needs an admin ([`Denial::Forbidden`]); a change authenticated
//! by the cookie or the proxy's header (which a browser sends by itself too) must come
//! from bor's own origin ([`Denial::ForbiddenOrigin`]). The caller it hands on carries
//! the collections they may read.
//!
//! Nothing here knows the web framework: the HTTP glue (`http/door.rs`) builds the
//! [`Presented`] from the request and answers a [`Denial`] in its area's shape.

use std::net::IpAddr;

use super::{Accounts, Caller, Via, secret};
use crate::config::AuthMode;
use crate::db::{DbError, DbPool};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "bor_session";

/// The part of the service a request asks for, for the rules above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// Open to everybody: health, sign-in, the login page, assets, metrics.
    Open,
    /// `/api/admin/*`.
    Admin,
    /// The rest of `/api/*`.
    Api,
    /// `/v1/*`, refused in the OpenAI error shape.
    OpenAi,
    /// `/mcp`: refused without a caller with the challenge that starts OAuth.
    Mcp,
    /// The OAuth endpoints a client calls (`/oauth/token`, `/oauth/register`,
    /// `/oauth/revoke`): the client proves itself in the request; no person's
    /// credential is read there.
    OAuthClient,
    /// A page: a browser that is not signed in goes to the login page.
    Page,
}

/// The request's headers, as far as the trusted proxy's sign-in reads them.
pub trait Headers {
    /// Every value of the header `name`, in the order they came.
    fn values(&self, name: &str) -> Vec<&[u8]>;
}

/// What a request presented, as the HTTP glue read it.
pub struct Presented<'a> {
    pub area: Area,
    /// The token of `Authorization: Bearer`.
    pub bearer: Option<&'a str>,
    /// The value of the `bor_session` cookie.
    pub session_cookie: Option<&'a str>,
    /// The TCP peer's address.
    pub peer: Option<IpAddr>,
    /// The headers, for a trusted proxy's sign-in.
    pub headers: &'a dyn Headers,
    /// On `/mcp`, the resource an OAuth access token must have been issued for
    /// (RFC 8707); `None` when bor's public address cannot be made.
    pub mcp_resource: Option<&'a str>,
    /// A change (not a read) that does not say it comes from bor's own origin.
    pub cross_site_change: bool,
    /// An `Origin` that is not bor's own (`null` included): a page of another site.
    pub from_other_origin: bool,
}

/// Why a request does not go on.
#[derive(Debug, thiserror::Error)]
pub enum Denial {
    /// No caller, or a credential that is none (`accounts`).
    #[error("not signed in")]
    NotSignedIn,
    /// A caller who is not an admin on an admin route.
    #[error("this needs an admin")]
    Forbidden,
    /// A change by cookie, or a request to `/mcp`, from a page of another site.
    #[error("from another origin")]
    ForbiddenOrigin,
    /// A trusted proxy names a user bor cannot make.
    #[error("{0}")]
    InvalidUsername(String),
    /// `off` mode: an admin route without the service token.
    #[error("the service token is required")]
    ServiceTokenRequired,
    /// `off` mode without `BOR_ADMIN_TOKEN`: no admin route answers.
    #[error("the admin API is disabled")]
    AdminDisabled,
    #[error(transparent)]
    Db(#[from] DbError),
}

/// Whether a request may use the admin routes, as the door found: what the `Admin`
/// guard of a handler reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminVerdict {
    Admin,
    /// A caller who is not an admin.
    NotAdmin,
    NotSignedIn,
    /// `off` mode: no service token, or another one.
    ServiceTokenRequired,
    /// `off` mode without `BOR_ADMIN_TOKEN`.
    AdminDisabled,
}

impl AdminVerdict {
    /// The verdict as a refusal, when it is one.
    pub fn check(self) -> Result<(), Denial> {
        match self {
            AdminVerdict::Admin => Ok(()),
            AdminVerdict::NotAdmin => Err(Denial::Forbidden),
            AdminVerdict::NotSignedIn => Err(Denial::NotSignedIn),
            AdminVerdict::ServiceTokenRequired => Err(Denial::ServiceTokenRequired),
            AdminVerdict::AdminDisabled => Err(Denial::AdminDisabled),
        }
    }
}

impl Accounts {
    /// Who asks and whether they may go on: the caller to hand on (with the
    /// collections they may read), none (the open area, `OAuthClient`), or the refusal.
    pub async fn decide(
        &self,
        pool: &DbPool,
        presented: &Presented<'_>,
    ) -> Result<Option<Caller>, Denial> {
        if presented.area == Area::OAuthClient {
            return Ok(None);
        }
        match self.identify(pool, presented).await {
            Ok(caller) => Ok(self.admit(presented, caller)?.map(|mut caller| {
                caller.readable = self.access.readable(caller.user_row(), caller.role);
                caller
            })),
            // Health, sign-in and the assets answer whatever credential comes along.
            Err(_) if presented.area == Area::Open => Ok(None),
            Err(denial) => Err(denial),
        }
    }

    /// Whether the caller the door found may use the admin routes: with `accounts`
    /// an admin caller (the service token included); with `off` the service token.
    pub fn admin_verdict(&self, caller: Option<&Caller>, bearer: Option<&str>) -> AdminVerdict {
        match self.mode {
            AuthMode::Accounts => match caller {
                Some(caller) if caller.is_admin() => AdminVerdict::Admin,
                Some(_) => AdminVerdict::NotAdmin,
                None => AdminVerdict::NotSignedIn,
            },
            AuthMode::Off if self.service_token.is_none() => AdminVerdict::AdminDisabled,
            AuthMode::Off if bearer.is_some_and(|token| self.is_service_token(token)) => {
                AdminVerdict::Admin
            }
            AuthMode::Off => AdminVerdict::ServiceTokenRequired,
        }
    }

    /// Whether `token` is the service token (`BOR_ADMIN_TOKEN`), compared in constant
    /// time: the one place it is compared.
    fn is_service_token(&self, token: &str) -> bool {
        use subtle::ConstantTimeEq;
        self.service_token.as_ref().is_some_and(|expected| {
            bool::from(token.as_bytes().ct_eq(expected.expose().as_bytes()))
        })
    }

    /// Whether the caller (or nobody) may go on to the area: the caller to hand on,
    /// or the refusal.
    fn admit(
        &self,
        presented: &Presented<'_>,
        caller: Option<Caller>,
    ) -> Result<Option<Caller>, Denial> {
        let accounts = self.mode == AuthMode::Accounts;
        let area = presented.area;
        // A page of another origin reaches `/mcp` only with a key or token it holds
        // itself (CORS sends no cookie), or without one to be told how to get one (the
        // 401). In `off` mode every request is the admin: no page of another site gets
        // an answer.
        let by_bearer = |caller: &Caller| matches!(caller.via, Via::ApiKey(_) | Via::OAuthToken(_));
        if area == Area::Mcp
            && presented.from_other_origin
            && !(accounts && caller.as_ref().is_none_or(by_bearer))
        {
            return Err(Denial::ForbiddenOrigin);
        }
        match caller {
            Some(caller) => {
                let by_browser = matches!(caller.via, Via::Session(_) | Via::TrustedProxy);
                if by_browser && presented.cross_site_change {
                    return Err(Denial::ForbiddenOrigin);
                }
                if accounts && area == Area::Admin && !caller.is_admin() {
                    return Err(Denial::Forbidden);
                }
                Ok(Some(caller))
            }
            None if !accounts || area == Area::Open => Ok(None),
            None => Err(Denial::NotSignedIn),
        }
    }

    /// Who asks: a key, the service token (on `/api/admin/*`), the session cookie, a
    /// trusted proxy's header, or in `off` mode `local`. A bearer token that is none
    /// of them is refused; a cookie that is not a live session counts as no cookie.
    async fn identify(
        &self,
        pool: &DbPool,
        presented: &Presented<'_>,
    ) -> Result<Option<Caller>, Denial> {
        if self.mode == AuthMode::Off {
            return Ok(self.local.clone());
        }
        if let Some(token) = presented.bearer {
            if token.starts_with(secret::ACCESS_TOKEN_PREFIX) {
                return self.oauth_caller(presented, token).await;
            }
            if token.starts_with(secret::KEY_PREFIX) {
                let Some(hash) = secret::parse_api_key(token) else {
                    return Err(Denial::NotSignedIn);
                };
                return match self.cache.key_caller(&hash).await? {
                    Some(caller) => Ok(Some(caller)),
                    None => Err(Denial::NotSignedIn),
                };
            }
            let is_service_token = self.is_service_token(token);
            if is_service_token && presented.area == Area::Admin {
                return Ok(Some(Caller::service()));
            }
            // An admin page that still sends a token it kept signs in by its cookie.
            if !is_service_token {
                return Err(Denial::NotSignedIn);
            }
        }
        let session = presented
            .session_cookie
            .and_then(secret::parse_session_cookie);
        if let Some(hash) = session
            && let Some(caller) = self.cache.session_caller(&hash).await?
        {
            return Ok(Some(caller));
        }
        match &self.proxy {
            Some(proxy) => {
                proxy
                    .caller(presented.headers, presented.peer, pool, &self.cache)
                    .await
            }
            None => Ok(None),
        }
    }

    /// The person an OAuth access token acts for: on `/mcp` only, and only the `/mcp`
    /// it was issued for (RFC 8707); anywhere else the token is no credential.
    async fn oauth_caller(
        &self,
        presented: &Presented<'_>,
        token: &str,
    ) -> Result<Option<Caller>, Denial> {
        let hash = secret::parse_prefixed(secret::ACCESS_TOKEN_PREFIX, token);
        let (Some(hash), Some(resource), Area::Mcp) =
            (hash, presented.mcp_resource, presented.area)
        else {
            return Err(Denial::NotSignedIn);
        };
        match self.cache.token_caller(&hash, resource).await? {
            Some(caller) => Ok(Some(caller)),
            None => Err(Denial::NotSignedIn),
        }
    }
}

/// Headers as pairs of a name and a value, for the tests of what reads them.
#[cfg(test)]
pub(super) struct GivenHeaders(pub &'static [(&'static str, &'static [u8])]);

#[cfg(test)]
impl Headers for GivenHeaders {
    fn values(&self, name: &str) -> Vec<&[u8]> {
        self.0
            .iter()
            .filter(|(given, _)| given.eq_ignore_ascii_case(name))
            .map(|(_, value)| *value)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use uuid::Uuid;

    use super::*;
    use crate::db::sessions::SessionRow;
    use crate::db::users::{Role, UserRow};

    const SERVICE_TOKEN: &str = "a-service-token-of-some-length";

    const NO_HEADERS: &GivenHeaders = &GivenHeaders(&[]);

    fn presented(area: Area) -> Presented<'static> {
        Presented {
            area,
            bearer: None,
            session_cookie: None,
            peer: None,
            headers: NO_HEADERS,
            mcp_resource: None,
            cross_site_change: false,
            from_other_origin: false,
        }
    }

    /// Accounts with a signed-in user of `role`, and the cookie value of their session.
    fn signed_in(role: Role) -> (Accounts, String) {
        let accounts = Accounts::for_tests(AuthMode::Accounts, Some(SERVICE_TOKEN));
        let now = Utc::now();
        let user = UserRow {
            id: Uuid::from_u128(7),
            username: "ann".to_owned(),
            display_name: "Ann".to_owned(),
            password_hash: None,
            role: role.as_str().to_owned(),
            disabled: false,
            created_at: now,
            updated_at: now,
        };
        let issued = secret::new_session_secret().unwrap_or_else(|error| panic!("{error}"));
        let session = SessionRow {
            id: Uuid::from_u128(8),
            user_id: user.id,
            secret_sha256: issued.sha256,
            created_at: now,
            expires_at: now + super::super::SESSION_LIFETIME,
        };
        accounts.cache.remember_user(&user);
        accounts.cache.remember_session(&session);
        (accounts, issued.token)
    }

    fn pool() -> DbPool {
        DbPool::new("postgres://127.0.0.1:9/none", 1).unwrap_or_else(|error| panic!("{error}"))
    }

    #[tokio::test]
    async fn without_a_credential_only_the_open_area_answers() {
        let accounts = Accounts::for_tests(AuthMode::Accounts, None);
        for area in [Area::Api, Area::Admin, Area::OpenAi, Area::Mcp, Area::Page] {
            let decided = accounts.decide(&pool(), &presented(area)).await;
            assert!(matches!(decided, Err(Denial::NotSignedIn)), "{area:?}");
        }
        for area in [Area::Open, Area::OAuthClient] {
            let decided = accounts.decide(&pool(), &presented(area)).await;
            assert!(matches!(decided, Ok(None)), "{area:?}");
        }
    }

    #[tokio::test]
    async fn a_bearer_token_that_is_no_credential_is_refused_but_in_the_open() {
        let accounts = Accounts::for_tests(AuthMode::Accounts, Some(SERVICE_TOKEN));
        for token in ["bor_not-hex", "something-else", "bor_oat_0123"] {
            let asked = Presented {
                bearer: Some(token),
                ..presented(Area::Api)
            };
            let decided = accounts.decide(&pool(), &asked).await;
            assert!(matches!(decided, Err(Denial::NotSignedIn)), "{token}");
            let open = Presented {
                area: Area::Open,
                ..asked
            };
            assert!(matches!(accounts.decide(&pool(), &open).await, Ok(None)));
        }
    }

    #[tokio::test]
    async fn the_service_token_is_an_admin_on_admin_routes_only() {
        let accounts = Accounts::for_tests(AuthMode::Accounts, Some(SERVICE_TOKEN));
        let admin = Presented {
            bearer: Some(SERVICE_TOKEN),
            ..presented(Area::Admin)
        };
        let caller = accounts.decide(&pool(), &admin).await;
        let caller = caller.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            caller.as_ref().map(|caller| caller.via),
            Some(Via::ServiceToken)
        );
        assert_eq!(
            accounts.admin_verdict(caller.as_ref(), admin.bearer),
            AdminVerdict::Admin
        );
        let elsewhere = Presented {
            area: Area::Api,
            ..admin
        };
        let decided = accounts.decide(&pool(), &elsewhere).await;
        assert!(matches!(decided, Err(Denial::NotSignedIn)));
    }

    #[tokio::test]
    async fn a_session_signs_in_and_its_changes_must_come_from_bor_itself() {
        let (accounts, cookie) = signed_in(Role::Member);
        let asked = Presented {
            session_cookie: Some(&cookie),
            ..presented(Area::Api)
        };
        let caller = accounts.decide(&pool(), &asked).await;
        let caller = caller
            .unwrap_or_else(|error| panic!("{error}"))
            .unwrap_or_else(|| panic!("no caller"));
        assert_eq!(caller.username, "ann");
        assert_eq!(caller.via, Via::Session(Uuid::from_u128(8)));
        assert_eq!(
            caller.readable,
            accounts.access.readable(Some(caller.user_id), Role::Member)
        );
        let cross_site = Presented {
            cross_site_change: true,
            ..asked
        };
        let decided = accounts.decide(&pool(), &cross_site).await;
        assert!(matches!(decided, Err(Denial::ForbiddenOrigin)));
    }

    #[tokio::test]
    async fn a_member_is_refused_the_admin_routes() {
        let (accounts, cookie) = signed_in(Role::Member);
        let asked = Presented {
            session_cookie: Some(&cookie),
            ..presented(Area::Admin)
        };
        let decided = accounts.decide(&pool(), &asked).await;
        assert!(matches!(decided, Err(Denial::Forbidden)));
        let (accounts, cookie) = signed_in(Role::Admin);
        let asked = Presented {
            session_cookie: Some(&cookie),
            ..presented(Area::Admin)
        };
        let caller = accounts.decide(&pool(), &asked).await;
        let caller = caller.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(
            accounts.admin_verdict(caller.as_ref(), None),
            AdminVerdict::Admin
        );
    }

    #[tokio::test]
    async fn a_page_of_another_site_reaches_mcp_only_without_a_cookie() {
        let (accounts, cookie) = signed_in(Role::Member);
        let by_cookie = Presented {
            session_cookie: Some(&cookie),
            from_other_origin: true,
            ..presented(Area::Mcp)
        };
        let decided = accounts.decide(&pool(), &by_cookie).await;
        assert!(matches!(decided, Err(Denial::ForbiddenOrigin)));
        let without = Presented {
            session_cookie: None,
            ..by_cookie
        };
        let decided = accounts.decide(&pool(), &without).await;
        assert!(matches!(decided, Err(Denial::NotSignedIn)));
    }

    #[tokio::test]
    async fn an_access_token_is_no_credential_off_mcp() {
        let accounts = Accounts::for_tests(AuthMode::Accounts, None);
        let token = format!("{}{}", secret::ACCESS_TOKEN_PREFIX, "ab".repeat(32));
        let asked = Presented {
            bearer: Some(&token),
            mcp_resource: Some("http://bor.test/mcp"),
            ..presented(Area::Api)
        };
        let decided = accounts.decide(&pool(), &asked).await;
        assert!(matches!(decided, Err(Denial::NotSignedIn)));
    }

    #[tokio::test]
    async fn off_mode_is_local_and_its_admin_routes_need_the_service_token() {
        let accounts = Accounts::for_tests(AuthMode::Off, Some(SERVICE_TOKEN));
        let caller = accounts.decide(&pool(), &presented(Area::Admin)).await;
        let caller = caller.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(caller.as_ref().map(|caller| caller.via), Some(Via::Local));
        let verdict = |bearer| accounts.admin_verdict(caller.as_ref(), bearer);
        assert_eq!(verdict(None), AdminVerdict::ServiceTokenRequired);
        assert_eq!(verdict(Some("another")), AdminVerdict::ServiceTokenRequired);
        assert_eq!(verdict(Some(SERVICE_TOKEN)), AdminVerdict::Admin);
        let without = Accounts::for_tests(AuthMode::Off, None);
        assert_eq!(
            without.admin_verdict(caller.as_ref(), Some(SERVICE_TOKEN)),
            AdminVerdict::AdminDisabled
        );
    }
}
