//! OpenID Connect sign-in (docs/AUTH.md): the provider found by discovery from
//! `BOR_OIDC_ISSUER`, the authorization request (code flow with PKCE, `state` and
//! `nonce`), the code exchange and the ID token's checks (signature against the
//! provider's keys, issuer, audience, expiry, nonce). Every request to the provider
//! goes through awc.
//!
//! Discovery happens at the first sign-in and again after a failure, so bor starts
//! while the provider is down. The keys are fetched again when a token names a key
//! (`kid`) bor does not have, at most once per [`KEY_REFETCH_INTERVAL`].

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType,
    CoreGenderClaim, CoreJsonWebKey, CoreJsonWebKeySet, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm, CoreProviderMetadata, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClaimsVerificationError, Client, ClientId, ClientSecret,
    CsrfToken, EmptyExtraTokenFields, EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest,
    HttpResponse, IdTokenClaims, IdTokenFields, IssuerUrl, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, SignatureVerificationError, StandardErrorResponse,
    StandardTokenResponse, TokenResponse,
};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::config::{Config, Secret};

/// The least time between two fetches of the provider's keys prompted by an unknown
/// `kid`.
const KEY_REFETCH_INTERVAL: Duration = Duration::from_secs(30);
/// How long one request to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer bor reads from the provider, in bytes.
const MAX_PROVIDER_ANSWER_BYTES: usize = 1024 * 1024;

/// The ID token's claims beyond the standard ones (the groups claim is among them).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
struct OtherClaims(HashMap<String, serde_json::Value>);

impl AdditionalClaims for OtherClaims {}

type TokenAnswer = StandardTokenResponse<
    IdTokenFields<
        OtherClaims,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

/// The client as discovery makes it: an authorization endpoint, maybe a token one.
type ProviderClient = Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    TokenAnswer,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// Why a sign-in with the provider did not happen; the text is shown to the person.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error(
        "the identity provider cannot be reached right now; try again later, or sign in with a password"
    )]
    ProviderDown,
    #[error("the identity provider refused the sign-in ({0})")]
    ProviderRefused(String),
    #[error(
        "the identity provider did not accept the sign-in code (it was already used, or it expired)"
    )]
    CodeRefused,
    #[error("the identity provider sent no ID token")]
    NoIdToken,
    #[error("the ID token is not for bor (its audience is another application)")]
    WrongAudience,
    #[error("the ID token has expired")]
    Expired,
    #[error("the ID token comes from another issuer than the configured provider")]
    WrongIssuer,
    #[error("the ID token does not belong to this sign-in (its nonce differs)")]
    WrongNonce,
    #[error("the ID token's signature does not verify")]
    BadSignature,
    #[error("the ID token is signed with a key the provider does not publish")]
    UnknownKey,
    #[error("the ID token could not be checked ({0})")]
    Unverifiable(String),
    #[error("the ID token's {0} claim holds U+0000 (NUL), which bor does not take")]
    NulInClaim(&'static str),
}

/// What the authorization request hands back: where to send the browser, and what the
/// callback must find again.
pub struct Authorization {
    pub url: Url,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// Who the provider says signed in: its checked ID token's claims that bor uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub issuer: String,
    pub subject: String,
    /// The usernames a new person may get, by preference: `preferred_username`,
    /// `email`, the subject (the first that fits the username rule is taken).
    pub usernames: Vec<String>,
    /// `name`, else the first of the usernames.
    pub display_name: String,
    /// The groups claim; `None` when the token has none.
    pub groups: Option<Vec<String>>,
}

/// What discovery found, with when the keys were last fetched because of an unknown
/// `kid`.
#[derive(Clone)]
struct Discovered {
    metadata: CoreProviderMetadata,
    keys_refetched_at: Option<Instant>,
}

/// The configured provider (`BOR_OIDC_*`).
pub struct OidcProvider {
    issuer: String,
    client_id: String,
    client_secret: Option<Secret>,
    scopes: Vec<String>,
    groups_claim: String,
    /// `BOR_OIDC_ADMIN_GROUP`.
    pub admin_group: Option<String>,
    discovered: RwLock<Option<Discovered>>,
}

impl OidcProvider {
    /// The provider `config` names; `None` without `BOR_OIDC_ISSUER`.
    pub fn from_config(config: &Config) -> Option<OidcProvider> {
        let issuer = config.oidc_issuer.clone()?;
        let client_id = config.oidc_client_id.clone()?;
        Some(OidcProvider {
            issuer,
            client_id,
            client_secret: config.oidc_client_secret.clone(),
            scopes: config
                .oidc_scopes
                .split_whitespace()
                .filter(|scope| *scope != "openid")
                .map(str::to_owned)
                .collect(),
            groups_claim: config.oidc_groups_claim.clone(),
            admin_group: config.oidc_admin_group.clone(),
            discovered: RwLock::new(None),
        })
    }

    /// The name the login page shows: the issuer's host.
    pub fn display_name(&self) -> String {
        Url::parse(&self.issuer)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| self.issuer.clone())
    }

    /// Where to send the browser to sign in, coming back to `redirect`.
    pub async fn authorize(&self, redirect: &Url) -> Result<Authorization, OidcError> {
        let discovered = self.discovered().await?;
        let client = self.client(&discovered.metadata, redirect)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in &self.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        Ok(Authorization {
            url,
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges `code` (with the PKCE verifier of its sign-in) and checks the ID token
    /// against `nonce`.
    pub async fn finish(
        &self,
        redirect: &Url,
        code: String,
        pkce_verifier: String,
        nonce: &str,
    ) -> Result<Verified, OidcError> {
        let discovered = self.discovered().await?;
        let client = self.client(&discovered.metadata, redirect)?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| OidcError::ProviderRefused(error.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier))
            .request_async(&provider_request)
            .await
            .map_err(|error| {
                tracing::warn!(error = %bor_actors::error_chain(&error), "the identity provider did not exchange a sign-in code");
                match error {
                    openidconnect::RequestTokenError::ServerResponse(_) => OidcError::CodeRefused,
                    openidconnect::RequestTokenError::Request(_) => OidcError::ProviderDown,
                    other => OidcError::Unverifiable(other.to_string()),
                }
            })?;
        let token = answer.id_token().ok_or(OidcError::NoIdToken)?;
        let nonce = Nonce::new(nonce.to_owned());
        let checked = match token.claims(&client.id_token_verifier(), &nonce) {
            Ok(claims) => Ok(claims.clone()),
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => match self.refetch_keys().await? {
                Some(metadata) => {
                    let client = self.client(&metadata, redirect)?;
                    token.claims(&client.id_token_verifier(), &nonce).cloned()
                }
                None => Err(ClaimsVerificationError::SignatureVerification(
                    SignatureVerificationError::NoMatchingKey,
                )),
            },
            Err(error) => Err(error),
        };
        let claims = checked.map_err(|error| {
            tracing::warn!(error = %error, "an ID token was refused");
            refusal_of(error)
        })?;
        let verified = self.verified(&claims);
        if let Some(claim) = verified.claim_with_nul() {
            tracing::warn!(claim, "an ID token was refused: a claim holds U+0000");
            return Err(OidcError::NulInClaim(claim));
        }
        Ok(verified)
    }

    fn verified(&self, claims: &IdTokenClaims<OtherClaims, CoreGenderClaim>) -> Verified {
        let subject = claims.subject().as_str().to_owned();
        let usernames: Vec<String> = [
            claims.preferred_username().map(|name| name.as_str()),
            claims.email().map(|email| email.as_str()),
            Some(subject.as_str()),
        ]
        .into_iter()
        .flatten()
        .filter(|name| !name.trim().is_empty())
        .map(str::to_owned)
        .collect();
        let display_name = claims
            .name()
            .and_then(|name| name.get(None))
            .map(|name| name.as_str().to_owned())
            .filter(|name| !name.trim().is_empty())
            .or_else(|| usernames.first().cloned())
            .unwrap_or_default();
        let groups = claims
            .additional_claims()
            .0
            .get(&self.groups_claim)
            .map(group_names);
        Verified {
            issuer: claims.issuer().as_str().to_owned(),
            subject,
            usernames,
            display_name,
            groups,
        }
    }

    fn client(
        &self,
        metadata: &CoreProviderMetadata,
        redirect: &Url,
    ) -> Result<ProviderClient, OidcError> {
        let redirect = RedirectUrl::from_url(redirect.clone());
        Ok(ProviderClient::from_provider_metadata(
            metadata.clone(),
            ClientId::new(self.client_id.clone()),
            self.client_secret
                .as_ref()
                .map(|secret| ClientSecret::new(secret.expose().to_owned())),
        )
        .set_redirect_uri(redirect))
    }

    /// The provider's metadata and keys, discovered now when not yet.
    async fn discovered(&self) -> Result<Discovered, OidcError> {
        if let Some(found) = self.read().clone() {
            return Ok(found);
        }
        let issuer = IssuerUrl::new(self.issuer.clone())
            .map_err(|error| OidcError::Unverifiable(error.to_string()))?;
        let metadata = CoreProviderMetadata::discover_async(issuer, &provider_request)
            .await
            .map_err(|error| {
                tracing::warn!(issuer = %self.issuer, error = %bor_actors::error_chain(&error), "OpenID Connect discovery failed");
                OidcError::ProviderDown
            })?;
        let found = Discovered {
            metadata,
            keys_refetched_at: None,
        };
        self.write(Some(found.clone()));
        Ok(found)
    }

    /// Fetches the keys again (an unknown `kid` came); `None` when they were fetched
    /// for that reason less than [`KEY_REFETCH_INTERVAL`] ago.
    async fn refetch_keys(&self) -> Result<Option<CoreProviderMetadata>, OidcError> {
        let Some(current) = self.read().clone() else {
            return Ok(None);
        };
        if current
            .keys_refetched_at
            .is_some_and(|at| at.elapsed() < KEY_REFETCH_INTERVAL)
        {
            return Ok(None);
        }
        let keys = CoreJsonWebKeySet::fetch_async(current.metadata.jwks_uri(), &provider_request)
            .await
            .map_err(|error| {
                tracing::warn!(error = %bor_actors::error_chain(&error), "the identity provider's keys could not be fetched");
                OidcError::ProviderDown
            })?;
        tracing::info!(issuer = %self.issuer, "the identity provider's keys were fetched again (a token named an unknown key)");
        let metadata = current.metadata.set_jwks(keys);
        self.write(Some(Discovered {
            metadata: metadata.clone(),
            keys_refetched_at: Some(Instant::now()),
        }));
        Ok(Some(metadata))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Option<Discovered>> {
        self.discovered
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self, value: Option<Discovered>) {
        *self
            .discovered
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = value;
    }
}

impl Verified {
    /// The first claim bor takes text from that holds U+0000, by name.
    fn claim_with_nul(&self) -> Option<&'static str> {
        let holds = |text: &str| text.contains('\0');
        if holds(&self.subject) {
            Some("sub")
        } else if self.usernames.iter().any(|name| holds(name)) {
            Some("preferred_username or email")
        } else if holds(&self.display_name) {
            Some("name")
        } else if self.groups.iter().flatten().any(|group| holds(group)) {
            Some("groups")
        } else {
            None
        }
    }
}

/// The group names a claim lists: an array of strings (anything else in it is
/// skipped), or one string. Names are kept exactly as sent (`"bor-admins "` is not
/// `bor-admins`); only empty ones are dropped.
fn group_names(claim: &serde_json::Value) -> Vec<String> {
    let names: Vec<&str> = match claim {
        serde_json::Value::Array(items) => items.iter().filter_map(|item| item.as_str()).collect(),
        serde_json::Value::String(name) => vec![name.as_str()],
        _ => Vec::new(),
    };
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

fn refusal_of(error: ClaimsVerificationError) -> OidcError {
    match error {
        ClaimsVerificationError::Expired(_) => OidcError::Expired,
        ClaimsVerificationError::InvalidAudience(_) => OidcError::WrongAudience,
        ClaimsVerificationError::InvalidIssuer(_) => OidcError::WrongIssuer,
        ClaimsVerificationError::InvalidNonce(_) => OidcError::WrongNonce,
        ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::NoMatchingKey,
        ) => OidcError::UnknownKey,
        ClaimsVerificationError::SignatureVerification(_) => OidcError::BadSignature,
        other => OidcError::Unverifiable(other.to_string()),
    }
}

/// Why a request to the provider failed.
#[derive(Debug, thiserror::Error)]
enum ProviderRequestError {
    #[error("the request could not be built: {0}")]
    Request(String),
    #[error("the provider could not be reached: {0}")]
    Send(String),
    #[error("the provider's answer could not be read: {0}")]
    Body(String),
}

/// One request to the provider, through awc (what `openidconnect` calls its HTTP
/// client); redirects are not followed.
async fn provider_request(request: HttpRequest) -> Result<HttpResponse, ProviderRequestError> {
    bor_actors::llm::install_tls_provider();
    let client = awc::Client::builder()
        .disable_redirects()
        .timeout(PROVIDER_TIMEOUT)
        .finish();
    let method = awc::http::Method::from_bytes(request.method().as_str().as_bytes())
        .map_err(|error| ProviderRequestError::Request(error.to_string()))?;
    let mut outgoing = client.request(method, request.uri().to_string());
    for (name, value) in request.headers() {
        outgoing = outgoing.insert_header((name.as_str(), value.as_bytes()));
    }
    let mut answer = outgoing
        .send_body(request.into_body())
        .await
        .map_err(|error| ProviderRequestError::Send(error.to_string()))?;
    let body = answer
        .body()
        .limit(MAX_PROVIDER_ANSWER_BYTES)
        .await
        .map_err(|error| ProviderRequestError::Body(error.to_string()))?;
    let mut response = HttpResponse::new(body.to_vec());
    *response.status_mut() = openidconnect::http::StatusCode::from_u16(answer.status().as_u16())
        .map_err(|error| ProviderRequestError::Body(error.to_string()))?;
    for (name, value) in answer.headers() {
        let name = openidconnect::http::HeaderName::from_bytes(name.as_str().as_bytes());
        let value = openidconnect::http::HeaderValue::from_bytes(value.as_bytes());
        if let (Ok(name), Ok(value)) = (name, value) {
            response.headers_mut().append(name, value);
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_claims_become_names() {
        let claim = serde_json::json!(["staff", "bor-admins ", 3, "", "staff"]);
        assert_eq!(group_names(&claim), vec!["bor-admins ", "staff"]);
        assert_eq!(group_names(&serde_json::json!("staff")), vec!["staff"]);
        assert!(group_names(&serde_json::json!({"a": 1})).is_empty());
    }
}
