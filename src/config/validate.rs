//! Parsers for single variables and the collector of their problems.
//!
//! A parser takes the (trimmed, non-empty) value and returns the typed value or a
//! description of what is allowed, e.g. "an integer from 1 to 128".

use std::fmt::Display;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::str::FromStr;
use std::time::Duration;

use super::{AuthMode, ConfigError, LogFormat, OcrMode, Secret};

/// Collects one line per bad variable while the configuration is being built.
pub(super) struct Validator {
    problems: Vec<String>,
}

impl Validator {
    pub(super) fn new(problems: Vec<String>) -> Validator {
        Validator { problems }
    }

    /// The parsed value of `variable`, or `default` when it is unset. A bad value is
    /// recorded and replaced by `default`, so that checking can go on.
    pub(super) fn value<T>(
        &mut self,
        variable: &str,
        raw: Option<String>,
        default: T,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> T {
        let Some(raw) = raw else {
            return default;
        };
        match parse(&raw) {
            Ok(value) => value,
            // A URL that does not parse cannot be redacted reliably (a `/` in its
            // password, a missing `//`, a key in its query): it is not shown at all.
            Err(allowed) if variable.ends_with("_URL") => {
                self.problems
                    .push(format!("{variable} is invalid: expected {allowed}"));
                default
            }
            Err(allowed) => {
                self.problems
                    .push(format!("{variable}={raw:?} is invalid: expected {allowed}"));
                default
            }
        }
    }

    /// A problem that involves more than one variable.
    pub(super) fn problem(&mut self, line: String) {
        self.problems.push(line);
    }

    pub(super) fn finish(self) -> Result<(), ConfigError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError {
                problems: self.problems,
            })
        }
    }
}

/// An integer in `range`.
pub(super) fn integer<T>(range: RangeInclusive<T>) -> impl FnOnce(&str) -> Result<T, String>
where
    T: FromStr + PartialOrd + Display,
{
    move |raw| {
        raw.parse::<T>()
            .ok()
            .filter(|value| range.contains(value))
            .ok_or_else(|| format!("an integer from {} to {}", range.start(), range.end()))
    }
}

/// A decimal number in `range`.
pub(super) fn number(range: RangeInclusive<f32>) -> impl FnOnce(&str) -> Result<f32, String> {
    move |raw| {
        raw.parse::<f32>()
            .ok()
            .filter(|value| range.contains(value))
            .ok_or_else(|| format!("a number from {} to {}", range.start(), range.end()))
    }
}

/// A number of seconds in `range`; fractions allowed.
pub(super) fn seconds(range: RangeInclusive<f64>) -> impl FnOnce(&str) -> Result<Duration, String> {
    move |raw| {
        raw.parse::<f64>()
            .ok()
            .filter(|value| range.contains(value))
            .and_then(|value| Duration::try_from_secs_f64(value).ok())
            .ok_or_else(|| {
                format!(
                    "seconds from {} to {} (fractions allowed)",
                    range.start(),
                    range.end()
                )
            })
    }
}

pub(super) fn boolean(raw: &str) -> Result<bool, String> {
    match raw.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err("true or false".to_owned()),
    }
}

pub(super) fn socket_addr(raw: &str) -> Result<SocketAddr, String> {
    raw.parse()
        .map_err(|_| "an IP address and port such as 127.0.0.1:8000".to_owned())
}

/// A value never to be shown (an API key, a token); any non-empty text.
pub(super) fn secret(raw: &str) -> Result<Option<Secret>, String> {
    Ok(Some(Secret::new(raw)))
}

/// Any non-empty text (names of models).
pub(super) fn text(raw: &str) -> Result<String, String> {
    Ok(raw.to_owned())
}

/// An http(s) URL with a host and no query or fragment; trailing `/` removed so that
/// paths can be appended.
pub(super) fn http_url(raw: &str) -> Result<String, String> {
    let usable = url::Url::parse(raw).is_ok_and(|url| {
        matches!(url.scheme(), "http" | "https")
            && url.host().is_some()
            && url.query().is_none()
            && url.fragment().is_none()
    });
    if usable {
        Ok(raw.trim_end_matches('/').to_owned())
    } else {
        Err("an http:// or https:// URL such as http://127.0.0.1:18089/v1".to_owned())
    }
}

/// Comma-separated host names: `bor.example.org`, `*.example.org` (every name under
/// it), or `*` (any host); lower case, without ports.
pub(super) fn host_names(raw: &str) -> Result<Vec<String>, String> {
    let is_name = |name: &str| {
        !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_'))
    };
    raw.split(',')
        .map(|entry| entry.trim().to_ascii_lowercase())
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let usable = entry == "*" || is_name(entry.strip_prefix("*.").unwrap_or(&entry));
            usable.then_some(entry)
        })
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| {
            "comma-separated host names without ports, such as bor.example.org,*.internal (or * for any)"
                .to_owned()
        })
}

pub(super) fn postgres_url(raw: &str) -> Result<String, String> {
    let usable = url::Url::parse(raw)
        .is_ok_and(|url| matches!(url.scheme(), "postgres" | "postgresql") && url.has_host());
    if usable {
        Ok(raw.to_owned())
    } else {
        Err("a URL such as postgres://postgres@127.0.0.1:5432/bor".to_owned())
    }
}

/// A tracing filter directive, e.g. `info` or `bor=debug,info`.
pub(super) fn log_filter(raw: &str) -> Result<String, String> {
    tracing_subscriber::EnvFilter::try_new(raw)
        .map(|_| raw.to_owned())
        .map_err(|_| "a tracing filter such as info or bor=debug,warn".to_owned())
}

pub(super) fn log_format(raw: &str) -> Result<LogFormat, String> {
    match raw.to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err("text or json".to_owned()),
    }
}

pub(super) fn auth_mode(raw: &str) -> Result<AuthMode, String> {
    match raw.to_ascii_lowercase().as_str() {
        "accounts" => Ok(AuthMode::Accounts),
        "off" => Ok(AuthMode::Off),
        _ => Err("accounts or off".to_owned()),
    }
}

pub(super) fn ocr_mode(raw: &str) -> Result<OcrMode, String> {
    match raw.to_ascii_lowercase().as_str() {
        "tesseract" => Ok(OcrMode::Tesseract),
        "vision" => Ok(OcrMode::Vision),
        "off" => Ok(OcrMode::Off),
        _ => Err("tesseract, vision or off".to_owned()),
    }
}

/// Tesseract language codes (lower-case letters, digits and `_`) joined by `+`.
pub(super) fn ocr_languages(raw: &str) -> Result<String, String> {
    let code = |code: &str| {
        (1..=32).contains(&code.len())
            && code
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
    };
    if raw.split('+').all(code) {
        Ok(raw.to_owned())
    } else {
        Err("Tesseract language codes joined by +, such as eng or eng+deu".to_owned())
    }
}

/// The address people use: an http(s) URL with a host and nothing after its path.
pub(super) fn public_url(raw: &str) -> Result<url::Url, String> {
    url::Url::parse(raw)
        .ok()
        .filter(|url| {
            matches!(url.scheme(), "http" | "https")
                && url.host().is_some()
                && url.username().is_empty()
                && url.password().is_none()
                && url.query().is_none()
                && url.fragment().is_none()
        })
        .ok_or_else(|| "an http:// or https:// URL such as https://bor.example.com".to_owned())
}

/// An OpenID Connect issuer: an http(s) URL with a host, kept exactly as given (the
/// ID token's `iss` must equal it, trailing `/` included).
pub(super) fn issuer_url(raw: &str) -> Result<String, String> {
    public_url(raw).map(|_| raw.to_owned()).map_err(|_| {
        "the provider's issuer URL, such as https://keycloak.example.com/realms/main".to_owned()
    })
}

/// An HTTP header's name, lower case.
pub(super) fn header_name(raw: &str) -> Result<String, String> {
    actix_web::http::header::HeaderName::from_str(raw)
        .map(|name| name.as_str().to_owned())
        .map_err(|_| "an HTTP header name such as X-Forwarded-User".to_owned())
}

/// Comma-separated address ranges (`10.0.0.0/8`, `::1/128`; a bare address is itself
/// alone).
pub(super) fn address_ranges(raw: &str) -> Result<Vec<ipnet::IpNet>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .ok()
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            "comma-separated addresses or CIDR ranges, such as 127.0.0.1/32,10.0.0.0/8".to_owned()
        })
}

/// `url` with its user-info (user name and password, which may both be credentials)
/// replaced by `***`, for showing an LLM server's URL.
pub fn redact_url_credentials(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            // Cannot fail on a URL that already has user-info.
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("***");
            parsed.into()
        }
        Ok(_) => url.to_owned(),
        Err(_) => redact_url_password(url),
    }
}

/// `url` with any password replaced by `***`: the one in the user-info part and a
/// `password=` query parameter. Works on text that does not parse as a URL too.
pub fn redact_url_password(url: &str) -> String {
    const HIDDEN: &str = "***";
    let (before_query, query) = match url.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (url, None),
    };
    let mut redacted = match before_query.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            match authority.rsplit_once('@') {
                Some((user_info, host)) => match user_info.split_once(':') {
                    Some((user, _password)) => format!("{scheme}://{user}:{HIDDEN}@{host}{path}"),
                    None => before_query.to_owned(),
                },
                None => before_query.to_owned(),
            }
        }
        None => before_query.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                    format!("{key}={HIDDEN}")
                }
                _ => pair.to_owned(),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&pairs.join("&"));
    }
    redacted
}
