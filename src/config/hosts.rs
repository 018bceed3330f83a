//! The host names requests may name (docs/PROTOCOL.md, "Hosts"): IP addresses,
//! `localhost` and `*.localhost`, the host of `BOR_PUBLIC_URL` and the names of
//! `BOR_ALLOWED_HOSTS`; ports are not compared. The `Host` check of every request
//! (`http/host.rs`) asks [`AllowedHosts::allows`].

use std::net::{IpAddr, Ipv6Addr};

use actix_web::http::uri::Authority;

use super::Config;

/// The host names requests may name besides IP addresses and `localhost`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts {
    /// Lower case; `*.name` stands for every name under `name`.
    names: Vec<String>,
    /// `BOR_ALLOWED_HOSTS=*`: no check.
    any: bool,
}

impl AllowedHosts {
    /// The host of `BOR_PUBLIC_URL` and the names of `BOR_ALLOWED_HOSTS`.
    pub fn from_config(config: &Config) -> AllowedHosts {
        let public = config
            .public_url
            .as_ref()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        AllowedHosts {
            any: config.allowed_hosts.iter().any(|name| name == "*"),
            names: public
                .into_iter()
                .chain(config.allowed_hosts.iter().cloned())
                .collect(),
        }
    }

    /// Whether a request may name `host` (a `Host` header's value, port included).
    pub fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        // An authority with user-info is no host (`Host: a@b`).
        let Some(name) = host
            .parse::<Authority>()
            .ok()
            .filter(|authority| !authority.as_str().contains('@'))
            .map(|authority| authority.host().to_ascii_lowercase())
        else {
            return false;
        };
        let name = name.strip_suffix('.').unwrap_or(&name);
        is_ip_address(name)
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.names.iter().any(|allowed| matches(allowed, name))
    }

    /// Only IP addresses and `localhost` are accepted, whatever the bind address: a
    /// service reached by a name from elsewhere needs `BOR_PUBLIC_URL` or
    /// `BOR_ALLOWED_HOSTS`.
    pub fn names_nothing(&self) -> bool {
        !self.any && self.names.is_empty()
    }
}

/// `name` is `allowed`, or under it when `allowed` is `*.parent`.
fn matches(allowed: &str, name: &str) -> bool {
    match allowed.strip_prefix("*.") {
        Some(parent) => name
            .strip_suffix(parent)
            .is_some_and(|under| under.ends_with('.') && under.len() > 1),
        None => allowed == name,
    }
}

/// An IPv4 address in dotted-quad form or an IPv6 address in brackets.
fn is_ip_address(host: &str) -> bool {
    match host
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        Some(v6) => v6.parse::<Ipv6Addr>().is_ok(),
        None => host
            .parse::<IpAddr>()
            .is_ok_and(|address| address.is_ipv4()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether each of `hosts` is accepted, as `accepted` says.
    fn assert_each(allowed: &AllowedHosts, hosts: &[&str], accepted: bool) {
        for host in hosts {
            assert_eq!(allowed.allows(host), accepted, "{host}");
        }
    }

    fn allowed(public_url: Option<&str>, hosts: &str) -> AllowedHosts {
        let mut vars = vec![("BOR_ALLOWED_HOSTS".to_owned(), hosts.to_owned())];
        if let Some(url) = public_url {
            vars.push(("BOR_PUBLIC_URL".to_owned(), url.to_owned()));
        }
        AllowedHosts::from_config(&Config::from_vars(vars).unwrap())
    }

    #[test]
    fn ip_addresses_and_localhost_are_accepted_by_default() {
        let hosts = allowed(None, "");
        assert_each(
            &hosts,
            &[
                "127.0.0.1",
                "127.0.0.1:8000",
                "127.8.9.10:1",
                "10.1.2.3:8000",
                "[::1]",
                "[::1]:8000",
                "[fe80::1]:8000",
                "localhost",
                "LOCALHOST:8000",
                "localhost.",
                "bor.localhost:8000",
            ],
            true,
        );
        assert!(hosts.names_nothing());
    }

    #[test]
    fn other_names_are_refused() {
        let hosts = allowed(None, "");
        assert_each(
            &hosts,
            &[
                "attacker.example",
                "attacker.example:8000",
                "localhost.attacker.example",
                "127.0.0.1.nip.io",
                "127.1",
                "0x7f000001",
                "::1",
                "[::1",
                "user@127.0.0.1",
                "",
                "bad host",
            ],
            false,
        );
    }

    #[test]
    fn the_public_url_and_the_allowed_names_are_accepted() {
        let hosts = allowed(
            Some("https://Bor.Example.org/chat"),
            "host.docker.internal, *.corp.example",
        );
        assert!(!hosts.names_nothing());
        assert_each(
            &hosts,
            &[
                "bor.example.org",
                "bor.example.org:443",
                "host.docker.internal:8000",
                "a.corp.example",
                "a.b.corp.example:8000",
            ],
            true,
        );
        assert_each(
            &hosts,
            &[
                "example.org",
                "corp.example",
                "xcorp.example",
                "evil.example",
            ],
            false,
        );
    }

    #[test]
    fn a_star_accepts_any_host() {
        let hosts = allowed(None, "*");
        assert!(hosts.allows("attacker.example"));
        assert!(!hosts.names_nothing());
    }

    #[test]
    fn bad_host_lists_are_refused_at_start() {
        for bad in [
            "bor.example.org:8000",
            "http://bor.example.org",
            "a b",
            "*x",
        ] {
            let error =
                Config::from_vars([("BOR_ALLOWED_HOSTS".to_owned(), bad.to_owned())]).unwrap_err();
            assert!(error.to_string().contains("BOR_ALLOWED_HOSTS"), "{error}");
        }
    }
}
