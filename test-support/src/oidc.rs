//! OpenID Connect in tests: the providers of `tests/oidc/` run by Node.js (the real
//! `oidc-provider` and a stand-in issuer for the refusals it never produces), and a
//! browser-like walk through redirects that keeps each site's cookies.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use awc::http::Method;
use serde_json::Value;

use super::Reply;

/// The folder of the provider scripts.
const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/oidc");

/// A provider script running under Node.js, stopped on drop.
pub struct NodeProvider {
    child: Child,
    /// Its issuer URL, `http://127.0.0.1:<port>`.
    pub issuer: String,
}

impl NodeProvider {
    /// `tests/oidc/provider.mjs`: the real provider, with each login's groups.
    pub fn real(groups: &Value) -> NodeProvider {
        Self::start(
            "provider.mjs",
            &[("BOR_TEST_OIDC_GROUPS", groups.to_string())],
        )
    }

    /// `tests/oidc/fake-issuer.mjs`: the stand-in issuer.
    pub fn fake() -> NodeProvider {
        Self::start("fake-issuer.mjs", &[])
    }

    fn start(script: &str, env: &[(&str, String)]) -> NodeProvider {
        let mut command = Command::new("node");
        command
            .arg(format!("{SCRIPTS}/{script}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .spawn()
            .expect("node starts (scripts/ensure-node.sh installs Node.js and the npm packages)");
        let stdout = child.stdout.take().expect("the script's stdout");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the script prints its address");
        // What it prints later is read and dropped, so that it never writes to a
        // closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let started: Value = serde_json::from_str(&line).unwrap_or_else(|_| {
            panic!("{script} did not start (is `npm ci` done? scripts/ensure-node.sh): {line:?}")
        });
        NodeProvider {
            child,
            issuer: started["issuer"].as_str().expect("an issuer").to_owned(),
        }
    }
}

impl Drop for NodeProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A browser's cookies, per host and port, and its requests (redirects are answers to
/// look at, not followed).
#[derive(Debug, Default, Clone)]
pub struct CookieJar {
    /// host:port → name → value.
    cookies: HashMap<String, HashMap<String, String>>,
}

impl CookieJar {
    /// A request to `url` with this jar's cookies for its site (and `form`, sent as
    /// `application/x-www-form-urlencoded`); the cookies it sets are kept.
    pub async fn request(
        &mut self,
        method: Method,
        url: &str,
        form: Option<&[(&str, &str)]>,
    ) -> Reply {
        let site = site_of(url);
        let client = awc::Client::builder()
            .timeout(super::STREAM_TIMEOUT)
            .disable_redirects()
            .finish();
        let mut request = client.request(method, url);
        let cookies = self.header_for(&site);
        if !cookies.is_empty() {
            request = request.insert_header(("Cookie", cookies));
        }
        let response = match form {
            Some(form) => request.send_form(&form).await,
            None => request.send().await,
        }
        .expect("the request is sent");
        let reply = Reply::read(response).await;
        self.keep(&site, &reply);
        reply
    }

    pub async fn get(&mut self, url: &str) -> Reply {
        self.request(Method::GET, url, None).await
    }

    /// The value of cookie `name` for the site of `url`.
    pub fn cookie(&self, url: &str, name: &str) -> Option<String> {
        self.cookies.get(&site_of(url))?.get(name).cloned()
    }

    /// Sets cookie `name` for the site of `url` (as another browser would have it).
    pub fn set_cookie(&mut self, url: &str, name: &str, value: &str) {
        self.cookies
            .entry(site_of(url))
            .or_default()
            .insert(name.to_owned(), value.to_owned());
    }

    fn header_for(&self, site: &str) -> String {
        self.cookies
            .get(site)
            .map(|cookies| {
                cookies
                    .iter()
                    .map(|(name, value)| format!("{name}={value}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .unwrap_or_default()
    }

    fn keep(&mut self, site: &str, reply: &Reply) {
        for set in reply
            .headers
            .get_all("set-cookie")
            .filter_map(|value| value.to_str().ok())
        {
            let pair = set.split(';').next().unwrap_or_default();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let removed = value.is_empty() || set.to_ascii_lowercase().contains("max-age=0");
            let cookies = self.cookies.entry(site.to_owned()).or_default();
            if removed {
                cookies.remove(name.trim());
            } else {
                cookies.insert(name.trim().to_owned(), value.to_owned());
            }
        }
    }
}

/// `host:port` of `url`.
fn site_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or_default().to_owned()
}

/// The `Location` of a redirect, made absolute against `from`.
pub fn location(reply: &Reply, from: &str) -> String {
    let location = reply
        .headers
        .get("location")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_else(|| panic!("a redirect, got {}: {}", reply.status, reply.text()));
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    let scheme_and_site = from
        .split_once("://")
        .map(|(scheme, rest)| format!("{scheme}://{}", rest.split('/').next().unwrap_or_default()))
        .unwrap_or_default();
    format!("{scheme_and_site}{location}")
}
