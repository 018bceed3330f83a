//! Which addresses bor may fetch pages from. Loopback, private, link-local and
//! unique-local addresses (and the unspecified one, which reaches the machine itself)
//! are refused unless `BOR_FETCH_ALLOW_PRIVATE=true`. The check runs on every address a
//! name resolves to, in the resolver the HTTP client connects through, so the address
//! checked is the address connected to (a name resolving to 127.0.0.1 is refused too).

use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use futures_util::future::LocalBoxFuture;

/// Why an address is not fetched from: the range it lies in.
pub fn forbidden_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => forbidden_v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(mapped) => forbidden_v4(mapped),
            None => forbidden_v6(ip),
        },
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [first, second, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if first == 0 {
        Some("unspecified (this host)")
    } else if first == 100 && (64..128).contains(&second) {
        Some("private (shared, carrier-grade NAT)")
    } else if ip.is_broadcast() || ip.is_multicast() {
        Some("broadcast or multicast")
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified (this host)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("unique-local")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("broadcast or multicast")
    } else {
        None
    }
}

/// An address refused, with the name that led to it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{host} is {address}, a {range} address: refused (set BOR_FETCH_ALLOW_PRIVATE=true to allow it)"
)]
pub struct Refused {
    pub host: String,
    pub address: IpAddr,
    pub range: &'static str,
}

/// Which addresses may be connected to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// `BOR_FETCH_ALLOW_PRIVATE`: every range may be.
    pub allow_private: bool,
    /// Addresses (with their ports) allowed whatever their range: none in the service;
    /// a test names its own local server here to show what is refused after it.
    pub allowed: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// Refuses `address` (reached through `host`) when it lies in a forbidden range.
    pub fn check(&self, host: &str, address: SocketAddr) -> Result<(), Refused> {
        if self.allow_private || self.allowed.contains(&address) {
            return Ok(());
        }
        match forbidden_range(address.ip()) {
            Some(range) => Err(Refused {
                host: host.to_owned(),
                address: address.ip(),
                range,
            }),
            None => Ok(()),
        }
    }
}

/// The resolver the fetching client connects through: the system's answer, refused
/// whole when any of its addresses is forbidden.
pub struct CheckedResolver {
    pub policy: AddressPolicy,
}

impl actix_tls::connect::Resolve for CheckedResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> LocalBoxFuture<'a, Result<Vec<SocketAddr>, Box<dyn StdError>>> {
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
            for address in &addresses {
                self.policy.check(host, *address)?;
            }
            Ok(addresses)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_of_the_machine_and_its_networks_are_refused() {
        for (address, range) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "unspecified (this host)"),
            ("100.64.0.1", "private (shared, carrier-grade NAT)"),
            ("::1", "loopback"),
            ("::", "unspecified (this host)"),
            ("fd00::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(forbidden_range(ip), Some(range), "{address}");
            let address = SocketAddr::new(ip, 80);
            assert!(AddressPolicy::default().check("h", address).is_err());
            let allowed = AddressPolicy {
                allow_private: true,
                allowed: Vec::new(),
            };
            assert!(
                allowed.check("h", address).is_ok(),
                "allowed when configured"
            );
        }
        for address in [
            "93.184.216.34",
            "172.32.0.1",
            "2606:4700::1111",
            "100.128.0.1",
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(forbidden_range(ip), None, "{address}");
        }
    }
}
