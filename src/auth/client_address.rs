//! The client's address (docs/DEPLOY.md, "Headers and addresses behind a proxy"): the
//! TCP peer, unless the peer is one of `BOR_TRUSTED_PROXIES`; then `X-Forwarded-For`,
//! read from the right, past every address that is itself a trusted proxy. The HTTP glue
//! finds it once per request (`http/client_address.rs`) and keeps it in the request for
//! the sign-in limiter, the audit trail and the request log.
//!
//! A client writes whatever it likes into `X-Forwarded-For`, and a proxy appends the
//! address it saw to the right of it: only the rightmost addresses, those added by
//! proxies bor trusts, are facts. From any other peer the header is not read at all.
//! From a trusted peer, a request that carries the header more than once is refused
//! (400 `repeated_header`): which copy the proxy wrote would be a guess.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;

use super::Headers;

/// The header a proxy lists the addresses it forwarded for in.
pub const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address as the request's glue found it, kept in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// Whether `peer` is a trusted proxy that sent `X-Forwarded-For` more than once.
pub fn repeats_forwarded_for(peer: IpAddr, headers: &dyn Headers, trusted: &[IpNet]) -> bool {
    headers.values(FORWARDED_FOR).len() > 1 && is_trusted(peer, trusted)
}

/// The client behind `peer`: `peer` itself unless it is trusted; else the rightmost
/// address of `X-Forwarded-For` that is not trusted (the leftmost when all are). An
/// entry that is no address ends the walk at the hop that added it.
pub fn forwarded_client(peer: IpAddr, headers: &dyn Headers, trusted: &[IpNet]) -> IpAddr {
    let peer = canonical(peer);
    if !is_trusted(peer, trusted) {
        return peer;
    }
    let values = headers.values(FORWARDED_FOR);
    let [value] = values.as_slice() else {
        return peer;
    };
    let Ok(list) = std::str::from_utf8(value) else {
        return peer;
    };
    let mut client = peer;
    for hop in list.rsplit(',') {
        let Some(address) = hop_address(hop.trim()) else {
            break;
        };
        client = address;
        if !is_trusted(address, trusted) {
            break;
        }
    }
    client
}

/// An entry of `X-Forwarded-For`: an address, with or without a port (`[v6]:port`).
fn hop_address(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|socket| socket.ip()))
        .ok()
        .map(canonical)
}

fn is_trusted(address: IpAddr, trusted: &[IpNet]) -> bool {
    let address = canonical(address);
    trusted.iter().any(|range| range.contains(&address))
}

/// An IPv4 address in IPv6 clothes (`::ffff:10.0.0.1`) as IPv4.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `X-Forwarded-For` as sent, each value once.
    struct ForwardedFor<'a>(&'a [&'a str]);

    impl Headers for ForwardedFor<'_> {
        fn values(&self, name: &str) -> Vec<&[u8]> {
            if name == FORWARDED_FOR {
                self.0.iter().map(|value| value.as_bytes()).collect()
            } else {
                Vec::new()
            }
        }
    }

    fn address(text: &str) -> IpAddr {
        text.parse()
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    fn client(peer: &str, forwarded_for: &[&str], trusted: &str) -> IpAddr {
        let trusted: Vec<IpNet> = trusted
            .split(',')
            .filter(|range| !range.is_empty())
            .map(|range| range.parse().unwrap_or_else(|error| panic!("{error}")))
            .collect();
        forwarded_client(address(peer), &ForwardedFor(forwarded_for), &trusted)
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_writes() {
        assert_eq!(
            client("198.51.100.4", &["203.0.113.9"], ""),
            address("198.51.100.4")
        );
        assert_eq!(
            client("198.51.100.4", &["203.0.113.9"], "10.0.0.0/8"),
            address("198.51.100.4")
        );
    }

    #[test]
    fn the_rightmost_untrusted_hop_is_the_client() {
        let trusted = "10.0.0.0/8";
        // The client wrote 1.1.1.1 itself; the first proxy saw 203.0.113.9.
        assert_eq!(
            client("10.0.0.2", &["1.1.1.1, 203.0.113.9, 10.0.0.7"], trusted),
            address("203.0.113.9")
        );
        assert_eq!(
            client("::ffff:10.0.0.2", &["203.0.113.9"], trusted),
            address("203.0.113.9")
        );
        assert_eq!(
            client("10.0.0.2", &["[2001:db8::5]:4711"], trusted),
            address("2001:db8::5")
        );
        // Every hop a proxy: the farthest one.
        assert_eq!(
            client("10.0.0.2", &["10.0.0.9, 10.0.0.7"], trusted),
            address("10.0.0.9")
        );
        // Nothing forwarded: the proxy itself.
        assert_eq!(client("10.0.0.2", &[], trusted), address("10.0.0.2"));
    }

    #[test]
    fn an_entry_that_is_no_address_stops_at_the_hop_that_added_it() {
        let trusted = "10.0.0.0/8";
        assert_eq!(
            client("10.0.0.2", &["203.0.113.9, unknown, 10.0.0.7"], trusted),
            address("10.0.0.7")
        );
        assert_eq!(
            client("10.0.0.2", &["garbage"], trusted),
            address("10.0.0.2")
        );
    }

    #[test]
    fn a_repeated_header_names_no_client() {
        assert_eq!(
            client("10.0.0.2", &["203.0.113.9", "198.51.100.1"], "10.0.0.0/8"),
            address("10.0.0.2")
        );
    }
}
