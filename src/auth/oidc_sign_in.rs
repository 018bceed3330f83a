//! The OpenID Connect sign-in as one operation (docs/AUTH.md): [`Accounts::begin_oidc`]
//! keeps a sign-in under way (its state, nonce and PKCE verifier, the hash of the
//! secret that binds it to the browser, where to go after) and says where to send the
//! browser; [`Accounts::complete_oidc`] checks what came back (a state bor made, not
//! expired, used once, by the same browser; the provider's refusal; a code), exchanges
//! the code, checks the ID token, finds or makes the person and starts their session.
//! The HTTP glue keeps the pages and the cookies; every refusal is an [`OidcRefusal`].

use chrono::{DateTime, TimeDelta, Utc};
use url::Url;

use super::external::{self, ExternalError, Identity};
use super::oidc::{OidcError, OidcProvider};
use super::people::PeopleError;
use super::{Accounts, secret};
use crate::db::identities::{self, OidcLoginRow};
use crate::db::users::UserRow;
use crate::db::{DbError, DbPool};

/// How long a person has between the start and the callback.
pub const LOGIN_WINDOW: TimeDelta = TimeDelta::minutes(10);
/// Random bytes of the secret that binds a sign-in to its browser.
const BROWSER_SECRET_BYTES: usize = 32;

/// A sign-in under way: where to send the browser, and the secret it must bring back.
pub struct Begun {
    pub url: Url,
    pub browser_secret: String,
}

/// What came back to the callback.
#[derive(Debug, Default)]
pub struct Returned<'a> {
    pub state: Option<&'a str>,
    pub code: Option<String>,
    /// The provider's refusal (`access_denied` …), with its description.
    pub error: Option<String>,
    pub error_description: Option<String>,
    /// The secret of the browser that came back, when it brought one.
    pub browser_secret: Option<&'a str>,
}

/// A person signed in: who, the secret of their new session, and where they go.
pub struct Completed {
    pub user: UserRow,
    pub session_secret: String,
    pub next_path: String,
}

/// Why a sign-in did not happen.
#[derive(Debug, thiserror::Error)]
pub enum OidcRefusal {
    #[error("Signing in with an identity provider is not configured here.")]
    NotConfigured,
    #[error("bor cannot tell its own address: set BOR_PUBLIC_URL.")]
    NoOwnAddress,
    #[error("The sign-in came back without its state.")]
    NoState,
    #[error(
        "This sign-in is not one bor started, it was already used, or it took too long (a wrong or expired state)."
    )]
    UnknownState,
    #[error("This sign-in was started in another browser.")]
    OtherBrowser,
    #[error("The sign-in came back without a code.")]
    NoCode,
    /// The provider refused, could not be reached, or sent a token that fails a check.
    #[error("{0}")]
    Provider(OidcError),
    #[error("The identity provider gives no name bor can take: {0}. Ask an admin.")]
    UnfitName(String),
    #[error("This account is disabled in bor: ask an admin.")]
    Disabled,
    #[error("{doing} failed: {cause}")]
    Internal { doing: &'static str, cause: String },
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Accounts {
    /// Starts a sign-in that comes back to `redirect` and then goes to `next` (a path
    /// inside bor, else `/`).
    pub async fn begin_oidc(
        &self,
        pool: &DbPool,
        redirect: Option<Url>,
        next: Option<&str>,
    ) -> Result<Begun, OidcRefusal> {
        let provider = self.oidc_provider()?;
        let redirect = redirect.ok_or(OidcRefusal::NoOwnAddress)?;
        let authorization = provider
            .authorize(&redirect)
            .await
            .map_err(OidcRefusal::Provider)?;
        let browser_secret =
            secret::random_hex(BROWSER_SECRET_BYTES).map_err(|error| OidcRefusal::Internal {
                doing: "making a sign-in secret",
                cause: error.to_string(),
            })?;
        let login = OidcLoginRow {
            state: authorization.state,
            browser_sha256: secret::sha256_hex(&browser_secret),
            nonce: authorization.nonce,
            pkce_verifier: authorization.pkce_verifier,
            next_path: inside_path(next).to_owned(),
            expires_at: Utc::now() + LOGIN_WINDOW,
        };
        identities::start_login(&mut *pool.get().await?, &login).await?;
        Ok(Begun {
            url: authorization.url,
            browser_secret,
        })
    }

    /// Completes the sign-in `returned` continues, which came back to `redirect`.
    pub async fn complete_oidc(
        &self,
        pool: &DbPool,
        redirect: Option<Url>,
        returned: Returned<'_>,
    ) -> Result<Completed, OidcRefusal> {
        let provider = self.oidc_provider()?;
        let sent_state = returned.state.ok_or(OidcRefusal::NoState)?;
        let login = identities::take_login(&mut *pool.get().await?, sent_state).await?;
        let login = under_way(login, returned.browser_secret, Utc::now())?;
        if let Some(error) = returned.error {
            let detail = returned.error_description.unwrap_or(error);
            return Err(OidcRefusal::Provider(OidcError::ProviderRefused(detail)));
        }
        let code = returned.code.ok_or(OidcRefusal::NoCode)?;
        let redirect = redirect.ok_or(OidcRefusal::NoOwnAddress)?;
        let verified = provider
            .finish(&redirect, code, login.pkce_verifier, &login.nonce)
            .await
            .map_err(OidcRefusal::Provider)?;
        let admin = provider.admin_group.as_ref().and_then(|admin_group| {
            verified
                .groups
                .as_ref()
                .map(|groups| groups.contains(admin_group))
        });
        let usernames: Vec<&str> = verified.usernames.iter().map(String::as_str).collect();
        let identity = Identity {
            issuer: &verified.issuer,
            subject: &verified.subject,
            usernames: &usernames,
            display_name: &verified.display_name,
            groups: verified.groups.as_deref(),
            admin,
        };
        let user = match external::sign_in(pool, &self.cache, &identity).await {
            Ok(user) => user,
            Err(ExternalError::Disabled) => return Err(OidcRefusal::Disabled),
            Err(error @ ExternalError::UnfitName(_)) => {
                return Err(OidcRefusal::UnfitName(error.to_string()));
            }
            Err(ExternalError::Db(error)) => return Err(error.into()),
        };
        if identity.groups.is_some() {
            // The groups the provider sent decide what the person reads from their
            // first page.
            self.access.refresh().await?;
        }
        let started = self
            .start_session(pool, &user)
            .await
            .map_err(|error| match error {
                PeopleError::Db(error) => OidcRefusal::Db(error),
                other => OidcRefusal::Internal {
                    doing: "starting a session",
                    cause: other.to_string(),
                },
            })?;
        let Some((_, session_secret)) = started else {
            return Err(OidcRefusal::Disabled);
        };
        tracing::info!(username = %user.username, "signed in with the identity provider");
        Ok(Completed {
            user,
            session_secret,
            next_path: login.next_path,
        })
    }

    fn oidc_provider(&self) -> Result<&OidcProvider, OidcRefusal> {
        self.oidc.as_ref().ok_or(OidcRefusal::NotConfigured)
    }
}

/// The sign-in under way that `login` was, when bor made it (it was found: made here
/// and not used before), it has not expired at `now`, and the browser that came back
/// brought the secret it was bound to.
fn under_way(
    login: Option<OidcLoginRow>,
    browser_secret: Option<&str>,
    now: DateTime<Utc>,
) -> Result<OidcLoginRow, OidcRefusal> {
    let login = login
        .filter(|login| login.expires_at > now)
        .ok_or(OidcRefusal::UnknownState)?;
    let same_browser =
        browser_secret.is_some_and(|secret| secret::sha256_hex(secret) == login.browser_sha256);
    if same_browser {
        Ok(login)
    } else {
        Err(OidcRefusal::OtherBrowser)
    }
}

/// `next` when it is a path inside bor (one `/` first, no `\`, no control
/// characters), else `/`.
fn inside_path(next: Option<&str>) -> &str {
    next.filter(|next| {
        next.starts_with('/')
            && !next.starts_with("//")
            && !next.contains('\\')
            && !next.chars().any(char::is_control)
    })
    .unwrap_or("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(browser_secret: &str, expires_at: DateTime<Utc>) -> OidcLoginRow {
        OidcLoginRow {
            state: "state".to_owned(),
            browser_sha256: secret::sha256_hex(browser_secret),
            nonce: "nonce".to_owned(),
            pkce_verifier: "verifier".to_owned(),
            next_path: "/admin".to_owned(),
            expires_at,
        }
    }

    #[test]
    fn a_sign_in_continues_only_in_its_browser_within_its_window() {
        let now = Utc::now();
        let started = || Some(login("mine", now + LOGIN_WINDOW));
        let continued = under_way(started(), Some("mine"), now);
        assert!(continued.is_ok_and(|login| login.next_path == "/admin"));
        assert!(matches!(
            under_way(started(), Some("another"), now),
            Err(OidcRefusal::OtherBrowser)
        ));
        assert!(matches!(
            under_way(started(), None, now),
            Err(OidcRefusal::OtherBrowser)
        ));
        assert!(matches!(
            under_way(started(), Some("mine"), now + LOGIN_WINDOW),
            Err(OidcRefusal::UnknownState)
        ));
        // Not made here, or used already: taking it found nothing.
        assert!(matches!(
            under_way(None, Some("mine"), now),
            Err(OidcRefusal::UnknownState)
        ));
    }

    #[test]
    fn next_only_points_inside_bor() {
        assert_eq!(inside_path(Some("/?c=1#x")), "/?c=1#x");
        assert_eq!(inside_path(Some("/admin")), "/admin");
        assert_eq!(inside_path(Some("//evil.example/")), "/");
        assert_eq!(inside_path(Some("https://evil.example/")), "/");
        assert_eq!(inside_path(Some("/\\evil.example")), "/");
        assert_eq!(inside_path(Some("/a\nb")), "/");
        assert_eq!(inside_path(Some("evil")), "/");
        assert_eq!(inside_path(None), "/");
    }

    #[tokio::test]
    async fn without_a_provider_nothing_begins_or_completes() {
        let accounts = Accounts::for_tests(crate::config::AuthMode::Accounts, None);
        let pool =
            DbPool::new("postgres://127.0.0.1:9/none", 1).unwrap_or_else(|error| panic!("{error}"));
        let begun = accounts.begin_oidc(&pool, None, Some("/")).await;
        assert!(matches!(begun, Err(OidcRefusal::NotConfigured)));
        let completed = accounts
            .complete_oidc(&pool, None, Returned::default())
            .await;
        assert!(matches!(completed, Err(OidcRefusal::NotConfigured)));
    }
}
