//! The cross-site rule: a request that changes something and is authenticated by the
//! session cookie must come from bor's own origin — `BOR_PUBLIC_URL`'s, else `http://`
//! and the request's `Host` — as its `Origin` says, else its `Referer`.

use actix_web::HttpRequest;
use actix_web::http::{Method, header};
use url::Url;

/// Whether `method` may change something (everything but reads).
pub fn changes_something(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Whether `request` says it comes from bor's own origin.
pub fn from_own_origin(request: &HttpRequest, public_url: Option<&Url>) -> bool {
    let Some(own) = own_origin(request, public_url) else {
        return false;
    };
    let header_text = |name| {
        request
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
    };
    let claimed = header_text(header::ORIGIN)
        .filter(|origin| *origin != "null")
        .or_else(|| header_text(header::REFERER))
        .and_then(|text| Url::parse(text).ok());
    claimed.is_some_and(|url| url.origin() == own)
}

/// Whether `request` carries an `Origin` that is not bor's own (`null` included): a
/// page of another site. MCP's transport refuses those, whatever the credential, against
/// DNS rebinding; programs send no `Origin`.
pub fn from_other_origin(request: &HttpRequest, public_url: Option<&Url>) -> bool {
    let Some(origin) = request.headers().get(header::ORIGIN) else {
        return false;
    };
    let claimed = origin
        .to_str()
        .ok()
        .and_then(|text| Url::parse(text).ok())
        .map(|url| url.origin());
    claimed.is_none() || claimed != own_origin(request, public_url)
}

fn own_origin(request: &HttpRequest, public_url: Option<&Url>) -> Option<url::Origin> {
    public_base(request, public_url).map(|url| url.origin())
}

/// Where bor is reached: `BOR_PUBLIC_URL`, else `http://` and the request's `Host`
/// (which the host check has let in). The base of every address bor hands out.
pub fn public_base(request: &HttpRequest, public_url: Option<&Url>) -> Option<Url> {
    match public_url {
        Some(url) => Some(url.clone()),
        None => {
            let host = request.headers().get(header::HOST)?.to_str().ok()?;
            Url::parse(&format!("http://{host}")).ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn judged(headers: &[(&str, &str)], public_url: Option<&str>) -> bool {
        let mut request = TestRequest::post().insert_header(("Host", "127.0.0.1:8000"));
        for header in headers {
            request = request.insert_header(*header);
        }
        let public_url = public_url.map(|url| Url::parse(url).unwrap());
        from_own_origin(&request.to_http_request(), public_url.as_ref())
    }

    #[test]
    fn the_origin_decides_else_the_referer_else_no() {
        assert!(judged(&[("Origin", "http://127.0.0.1:8000")], None));
        assert!(!judged(&[("Origin", "http://evil.example")], None));
        assert!(!judged(&[("Origin", "https://127.0.0.1:8000")], None));
        assert!(judged(
            &[("Referer", "http://127.0.0.1:8000/admin?x=1")],
            None
        ));
        assert!(!judged(
            &[
                ("Origin", "http://evil.example"),
                ("Referer", "http://127.0.0.1:8000/")
            ],
            None
        ));
        assert!(!judged(&[], None));
        assert!(!judged(&[("Origin", "null")], None));
    }

    #[test]
    fn an_origin_of_another_site_is_told_and_no_origin_is_none() {
        let request = |origin: Option<&str>| {
            let request = TestRequest::post().insert_header(("Host", "127.0.0.1:8000"));
            match origin {
                Some(origin) => request.insert_header(("Origin", origin)),
                None => request,
            }
            .to_http_request()
        };
        assert!(!from_other_origin(&request(None), None));
        assert!(!from_other_origin(
            &request(Some("http://127.0.0.1:8000")),
            None
        ));
        for other in [
            "http://evil.example",
            "null",
            "not a url",
            "https://127.0.0.1:8000",
        ] {
            assert!(from_other_origin(&request(Some(other)), None), "{other}");
        }
    }

    #[test]
    fn the_public_url_wins_over_the_host() {
        let public = Some("https://bor.example.com/");
        assert!(judged(&[("Origin", "https://bor.example.com")], public));
        assert!(!judged(&[("Origin", "http://127.0.0.1:8000")], public));
    }
}
