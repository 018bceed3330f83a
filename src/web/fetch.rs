//! Fetching one web page, bounded and safe: `http`/`https` only, at most
//! [`MAX_REDIRECTS`] redirects (each new address checked again, a loop named as one),
//! the body bounded by `BOR_MAX_UPLOAD_BYTES`, the whole fetch by a time bound, and
//! every address checked before it is connected to (`address.rs`). A page fetched
//! before is asked for with its validators (`If-None-Match`, `If-Modified-Since`), so an
//! unchanged page is not sent again.

use std::time::Duration;

use actix_tls::connect::{Connector, Resolver};
use awc::error::{ConnectError, SendRequestError};
use awc::http::{StatusCode, header};
use futures_util::StreamExt;
use url::{Host, Url};

use super::address::{AddressPolicy, CheckedResolver, Refused};
use crate::config::Config;
use crate::db::page_validators::PageValidators;

/// Redirects followed before a fetch is given up.
pub const MAX_REDIRECTS: usize = 5;
/// The time one fetch may take, redirects and body included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The name bor gives itself to web servers, and the agent `robots.txt` rules are read for.
pub const USER_AGENT: &str = concat!("bor/", env!("CARGO_PKG_VERSION"));

/// How pages are fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchSettings {
    /// `BOR_FETCH_ALLOW_PRIVATE`, and nothing else allowed in the service.
    pub addresses: AddressPolicy,
    /// The longest body read (`BOR_MAX_UPLOAD_BYTES`).
    pub max_bytes: usize,
    pub timeout: Duration,
    /// How a fetched PDF's scanned pages are read (`BOR_OCR…`).
    pub ocr: crate::knowledge::formats::Ocr,
}

impl FetchSettings {
    pub fn from_config(config: &Config) -> FetchSettings {
        FetchSettings {
            addresses: AddressPolicy {
                allow_private: config.fetch_allow_private,
                allowed: Vec::new(),
            },
            max_bytes: config.max_upload_bytes,
            timeout: FETCH_TIMEOUT,
            ocr: crate::knowledge::read_limits(config).ocr,
        }
    }
}

/// A page as its server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where it was found, after redirects.
    pub url: Url,
    /// The media type, lower case, without parameters.
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
    /// Whether the body was cut at the bound (only with [`Overflow::Cut`]).
    pub cut: bool,
    pub validators: PageValidators,
}

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The server says the version known is current (HTTP 304).
    NotModified,
    Page(Page),
}

/// What becomes of a body longer than the bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// The fetch fails (a page: it is not stored in part).
    Refuse,
    /// The body is kept up to the bound (a sitemap: its first entries are used).
    Cut,
}

/// Why a page was not fetched, as a person reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("not a web address (only http:// and https:// are fetched): {0}")]
    NotHttp(String),
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("unreachable ({0})")]
    Unreachable(String),
    #[error("the server answered HTTP {0}")]
    Status(u16),
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects,
    #[error("a redirect loop (back to {0})")]
    RedirectLoop(String),
    #[error("a redirect without a usable Location header")]
    BadRedirect,
    #[error("larger than the {0} bytes allowed (BOR_MAX_UPLOAD_BYTES)")]
    TooLarge(usize),
    #[error("no complete answer within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("the answer broke off ({0})")]
    Broken(String),
}

/// Fetches pages; holds an HTTP client, which is not `Send`: make one where it is used.
pub struct Fetcher {
    client: awc::Client,
    settings: FetchSettings,
}

impl Fetcher {
    pub fn new(settings: FetchSettings) -> Fetcher {
        bor_actors::llm::install_tls_provider();
        let resolver = Resolver::custom(CheckedResolver {
            policy: settings.addresses.clone(),
        });
        let connector = awc::Connector::new()
            .connector(Connector::new(resolver).service())
            .timeout(CONNECT_TIMEOUT);
        let client = awc::Client::builder()
            .connector(connector)
            .disable_redirects()
            .timeout(settings.timeout)
            .add_default_header((header::USER_AGENT, USER_AGENT))
            .finish();
        Fetcher { client, settings }
    }

    pub fn settings(&self) -> &FetchSettings {
        &self.settings
    }

    /// Fetches `url`, following redirects; with `known`, asks only for a newer version.
    pub async fn get(
        &self,
        url: &Url,
        known: Option<&PageValidators>,
        overflow: Overflow,
    ) -> Result<Fetched, FetchError> {
        let timeout = self.settings.timeout;
        tokio::time::timeout(timeout, self.follow(url, known, overflow))
            .await
            .unwrap_or(Err(FetchError::TimedOut(timeout)))
    }

    async fn follow(
        &self,
        url: &Url,
        known: Option<&PageValidators>,
        overflow: Overflow,
    ) -> Result<Fetched, FetchError> {
        let mut current = url.clone();
        let mut visited = vec![without_fragment(url)];
        for _ in 0..=MAX_REDIRECTS {
            self.check(&current)?;
            let mut request = self.client.get(current.as_str());
            if let Some(known) = known {
                if let Some(etag) = &known.etag {
                    request = request.insert_header((header::IF_NONE_MATCH, etag.as_str()));
                }
                if let Some(modified) = &known.last_modified {
                    request = request.insert_header((header::IF_MODIFIED_SINCE, modified.as_str()));
                }
            }
            let mut response = request
                .send()
                .await
                .map_err(|error| send_error(error, self.settings.timeout))?;
            let status = response.status();
            if status == StatusCode::NOT_MODIFIED && known.is_some() {
                return Ok(Fetched::NotModified);
            }
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let next = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|location| location.to_str().ok())
                    .and_then(|location| current.join(location).ok())
                    .ok_or(FetchError::BadRedirect)?;
                let key = without_fragment(&next);
                if visited.contains(&key) {
                    return Err(FetchError::RedirectLoop(key));
                }
                visited.push(key);
                current = next;
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status(status.as_u16()));
            }
            let header_text = |name: header::HeaderName| {
                response
                    .headers()
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned)
            };
            let content_type = header_text(header::CONTENT_TYPE).map(|value| {
                let media_type = value.split(';').next().unwrap_or_default();
                media_type.trim().to_ascii_lowercase()
            });
            let validators = PageValidators {
                etag: header_text(header::ETAG),
                last_modified: header_text(header::LAST_MODIFIED),
            };
            let (bytes, cut) = read_body(&mut response, self.settings.max_bytes, overflow).await?;
            return Ok(Fetched::Page(Page {
                url: current,
                content_type,
                bytes,
                cut,
                validators,
            }));
        }
        Err(FetchError::TooManyRedirects)
    }

    /// Refuses other schemes and a literal address in a forbidden range (names are
    /// checked by the resolver, on the addresses connected to).
    fn check(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::NotHttp(url.to_string()));
        }
        let literal: Option<std::net::IpAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => Some(ip.into()),
            Some(Host::Ipv6(ip)) => Some(ip.into()),
            Some(Host::Domain(_)) => None,
            None => return Err(FetchError::NotHttp(url.to_string())),
        };
        if let (Some(ip), Some(port)) = (literal, url.port_or_known_default()) {
            let host = url.host_str().unwrap_or_default();
            let address = std::net::SocketAddr::new(ip, port);
            self.settings.addresses.check(host, address)?;
        }
        Ok(())
    }
}

/// `url` as a string without its `#fragment` (the same page).
pub fn without_fragment(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.to_string()
}

async fn read_body<S>(
    response: &mut awc::ClientResponse<S>,
    max_bytes: usize,
    overflow: Overflow,
) -> Result<(Vec<u8>, bool), FetchError>
where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin,
{
    let mut body = Vec::new();
    while let Some(piece) = response.next().await {
        let piece = piece.map_err(|error| FetchError::Broken(error.to_string()))?;
        if body.len() + piece.len() > max_bytes {
            return match overflow {
                Overflow::Refuse => Err(FetchError::TooLarge(max_bytes)),
                Overflow::Cut => {
                    let room = max_bytes - body.len();
                    body.extend_from_slice(&piece[..room]);
                    Ok((body, true))
                }
            };
        }
        body.extend_from_slice(&piece);
    }
    Ok((body, false))
}

fn send_error(error: SendRequestError, timeout: Duration) -> FetchError {
    match error {
        SendRequestError::Connect(ConnectError::Resolver(error)) => {
            match error.downcast_ref::<Refused>() {
                Some(refused) => FetchError::Refused(refused.clone()),
                None => FetchError::Unreachable(format!("the name does not resolve: {error}")),
            }
        }
        SendRequestError::Connect(ConnectError::Timeout) => FetchError::Unreachable(format!(
            "no connection within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
        SendRequestError::Connect(error) => FetchError::Unreachable(error.to_string()),
        SendRequestError::Timeout => FetchError::TimedOut(timeout),
        other => FetchError::Broken(other.to_string()),
    }
}
