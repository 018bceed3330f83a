//! Which addresses bor may fetch pages from: the special-purpose ranges of IANA's
//! registries that are not globally reachable (loopback, private, shared, link-local,
//! unique-local, documentation, benchmarking, reserved, …, one table below) are refused
//! unless `BOR_FETCH_ALLOW_PRIVATE=true`, and so is an IPv4 address in those ranges
//! carried inside an IPv6 one (IPv4-mapped, IPv4-compatible, NAT64, 6to4). The check
//! runs on every address a name resolves to, in the resolver the HTTP client connects
//! through, so the address checked is the address connected to (a name resolving to
//! 127.0.0.1 is refused too).

use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use futures_util::future::LocalBoxFuture;
use ipnet::{Ipv4Net, Ipv6Net};

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
}

const fn v6(segments: [u16; 8], prefix: u8) -> Ipv6Net {
    let [a, b, c, d, e, f, g, h] = segments;
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), prefix)
}

/// The IPv4 ranges refused, with what they are: the blocks of IANA's IPv4
/// Special-Purpose Address Registry
/// (<https://www.iana.org/assignments/iana-ipv4-special-registry/>) that are not
/// globally reachable (192.0.0.0/24 whole: its two global /32s are anycast services,
/// no web server), and multicast (IANA's multicast registry, 224.0.0.0/4). The first
/// range that holds an address names it.
const FORBIDDEN_V4: &[(Ipv4Net, &str)] = &[
    (v4(0, 0, 0, 0, 8), "unspecified (this host)"),
    (v4(10, 0, 0, 0, 8), "private"),
    (v4(100, 64, 0, 0, 10), "private (shared, carrier-grade NAT)"),
    (v4(127, 0, 0, 0, 8), "loopback"),
    (v4(169, 254, 0, 0, 16), "link-local"),
    (v4(172, 16, 0, 0, 12), "private"),
    (v4(192, 0, 0, 0, 24), "IETF protocol assignment"),
    (v4(192, 0, 2, 0, 24), "documentation"),
    (v4(192, 88, 99, 0, 24), "6to4 relay anycast (deprecated)"),
    (v4(192, 168, 0, 0, 16), "private"),
    (v4(198, 18, 0, 0, 15), "benchmarking"),
    (v4(198, 51, 100, 0, 24), "documentation"),
    (v4(203, 0, 113, 0, 24), "documentation"),
    (v4(224, 0, 0, 0, 4), "broadcast or multicast"),
    (v4(255, 255, 255, 255, 32), "broadcast or multicast"),
    (v4(240, 0, 0, 0, 4), "reserved"),
];

/// The IPv6 ranges refused, with what they are: the blocks of IANA's IPv6
/// Special-Purpose Address Registry
/// (<https://www.iana.org/assignments/iana-ipv6-special-registry/>) that are not
/// globally reachable (2001::/23 whole: the global blocks inside are anycast, AS112 and
/// ORCHID identifiers, no web server), and multicast (ff00::/8). The forms that carry
/// an IPv4 address are judged by it first ([`embedded_v4`]).
const FORBIDDEN_V6: &[(Ipv6Net, &str)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified (this host)"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        "local-use IPv4/IPv6 translation",
    ),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard-only"),
    (v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64), "dummy prefix"),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
        "IETF protocol assignment",
    ),
    (v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), "documentation"),
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), "documentation"),
    (
        v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16),
        "segment routing (SRv6) identifier",
    ),
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "unique-local"),
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    (
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        "broadcast or multicast",
    ),
];

/// The IPv6 forms that carry an IPv4 address, which is what they reach.
const IPV4_MAPPED: Ipv6Net = v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96);
const IPV4_COMPATIBLE: Ipv6Net = v6([0, 0, 0, 0, 0, 0, 0, 0], 96);
const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);

/// Why an address is not fetched from: the range it lies in.
pub fn forbidden_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => forbidden_v4(ip),
        IpAddr::V6(ip) => match embedded_v4(ip) {
            Some(inner) => forbidden_v4(inner),
            None => forbidden_v6(ip),
        },
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    FORBIDDEN_V4
        .iter()
        .find(|(range, _)| range.contains(&ip))
        .map(|(_, what)| *what)
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    FORBIDDEN_V6
        .iter()
        .find(|(range, _)| range.contains(&ip))
        .map(|(_, what)| *what)
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`, but `::` and `::1`), NAT64 (`64:ff9b::a.b.c.d`) and
/// 6to4 (`2002:aabb:ccdd::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let octets = ip.octets();
    let last = Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15]);
    if IPV4_MAPPED.contains(&ip) || NAT64.contains(&ip) {
        Some(last)
    } else if IPV4_COMPATIBLE.contains(&ip) {
        (u32::from(last) > 1).then_some(last)
    } else if SIX_TO_FOUR.contains(&ip) {
        Some(Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]))
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
            "198.20.0.1",
            "223.255.255.255",
            "64:ff9b::5db8:d822",
            "::5db8:d822",
            "2002:5db8:d822::1",
            "2001:4860:4860::8888",
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(forbidden_range(ip), None, "{address}");
        }
    }

    #[test]
    fn the_special_purpose_ranges_are_refused() {
        for (address, range) in [
            ("100.64.0.1", "private (shared, carrier-grade NAT)"),
            ("100.127.255.254", "private (shared, carrier-grade NAT)"),
            ("192.0.0.8", "IETF protocol assignment"),
            ("192.0.2.1", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.254", "benchmarking"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.7", "documentation"),
            ("192.88.99.1", "6to4 relay anycast (deprecated)"),
            ("224.0.0.1", "broadcast or multicast"),
            ("240.0.0.1", "reserved"),
            ("254.1.2.3", "reserved"),
            ("255.255.255.255", "broadcast or multicast"),
            ("64:ff9b:1::1", "local-use IPv4/IPv6 translation"),
            ("100::1", "discard-only"),
            ("2001:db8::1", "documentation"),
            ("2001::1", "IETF protocol assignment"),
            ("3fff::1", "documentation"),
            ("5f00::1", "segment routing (SRv6) identifier"),
            ("ff02::1", "broadcast or multicast"),
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(forbidden_range(ip), Some(range), "{address}");
        }
    }

    #[test]
    fn ipv4_carried_in_ipv6_is_judged_by_the_ipv4_address() {
        for (address, range) in [
            // NAT64 (64:ff9b::/96)
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("64:ff9b::10.0.0.1", "private"),
            // IPv4-compatible (::a.b.c.d)
            ("::127.0.0.1", "loopback"),
            ("::a9fe:a9fe", "link-local"),
            ("::192.168.1.1", "private"),
            // 6to4 (2002:aabb:ccdd::/48)
            ("2002:7f00:1::1", "loopback"),
            ("2002:a9fe:a9fe::", "link-local"),
            ("2002:c0a8:101:1::1", "private"),
            ("2002:6440:1::1", "private (shared, carrier-grade NAT)"),
            // IPv4-mapped (::ffff:a.b.c.d)
            ("::ffff:198.18.0.1", "benchmarking"),
        ] {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(forbidden_range(ip), Some(range), "{address}");
        }
    }
}
