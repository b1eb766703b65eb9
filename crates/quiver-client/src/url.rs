//! `quiver://host:port` (TCP) and `quiver+quic://host:port` (QUIC) URLs. A QUIC URL may
//! say how to trust the server: `?fingerprint=<SHA-256 hex>` or `?ca=<PEM file path>`.

use crate::error::ConnectError;
use crate::tls::ServerTrust;

/// Port used when a `quiver://` URL names none (`native.addr`'s default).
pub const DEFAULT_PORT: u16 = 7070;

/// Port used when a `quiver+quic://` URL names none (`quic.addr`'s default).
pub const DEFAULT_QUIC_PORT: u16 = 7071;

/// Which transport a URL asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Quic,
}

/// Where to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub transport: Transport,
    /// The host as written, without IPv6 brackets (the TLS server name for QUIC).
    pub host: String,
    /// `host:port` to resolve and connect to.
    pub addr: String,
    /// How to trust a QUIC server, when the URL says.
    pub trust: Option<ServerTrust>,
}

/// Parses `url` into a target.
pub fn parse(url: &str) -> Result<Target, ConnectError> {
    let invalid = |reason| ConnectError::InvalidUrl {
        url: url.to_owned(),
        reason,
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| invalid("no scheme"))?;
    let (transport, default_port) = match scheme {
        "quiver" => (Transport::Tcp, DEFAULT_PORT),
        "quiver+quic" => (Transport::Quic, DEFAULT_QUIC_PORT),
        other => {
            return Err(ConnectError::UnsupportedScheme {
                scheme: other.to_owned(),
                url: url.to_owned(),
            });
        }
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let trust = match (transport, query) {
        (_, "") => None,
        (Transport::Quic, query) => Some(trust(query).ok_or_else(|| {
            invalid("the query must be fingerprint=<SHA-256 hex> or ca=<PEM file path>")
        })?),
        (Transport::Tcp, _) => return Err(invalid("a quiver:// URL takes no query")),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(invalid("no host"));
    }
    let has_port = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    };
    let (host, addr) = if has_port {
        let (host, port) = authority.rsplit_once(':').unwrap_or_default();
        if port.parse::<u16>().is_err() {
            return Err(invalid("the port is not a number from 0 to 65535"));
        }
        (host, authority.to_owned())
    } else {
        (authority, format!("{authority}:{default_port}"))
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Ok(Target {
        transport,
        host,
        addr,
        trust,
    })
}

fn trust(query: &str) -> Option<ServerTrust> {
    match query.split_once('=')? {
        ("fingerprint", hex) if !hex.is_empty() => Some(ServerTrust::Fingerprint(hex.to_owned())),
        ("ca", path) if !path.is_empty() => Some(ServerTrust::CaFile(path.into())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(url: &str) -> Option<(Transport, String, String)> {
        parse(url).ok().map(|t| (t.transport, t.host, t.addr))
    }

    #[test]
    fn parses_tcp_and_quic_urls_and_refuses_the_rest() {
        let tcp = Transport::Tcp;
        assert_eq!(
            addr("quiver://127.0.0.1:9000"),
            Some((tcp, "127.0.0.1".into(), "127.0.0.1:9000".into()))
        );
        assert_eq!(
            addr("quiver://localhost"),
            Some((tcp, "localhost".into(), "localhost:7070".into()))
        );
        assert_eq!(
            addr("quiver://[::1]:5/"),
            Some((tcp, "::1".into(), "[::1]:5".into()))
        );
        assert_eq!(
            addr("quiver+quic://h"),
            Some((Transport::Quic, "h".into(), "h:7071".into()))
        );
        let pinned = parse("quiver+quic://h:1?fingerprint=ab").expect("pinned");
        assert_eq!(pinned.addr, "h:1");
        assert_eq!(pinned.trust, Some(ServerTrust::Fingerprint("ab".into())));
        let ca = parse("quiver+quic://h?ca=/etc/q.pem").expect("CA file");
        assert_eq!(ca.trust, Some(ServerTrust::CaFile("/etc/q.pem".into())));
        assert!(matches!(
            parse("quiver+quic://h?pin=x"),
            Err(ConnectError::InvalidUrl { .. })
        ));
        assert!(matches!(
            parse("quiver://h?fingerprint=ab"),
            Err(ConnectError::InvalidUrl { .. })
        ));
        assert!(matches!(
            parse("nats://h:1"),
            Err(ConnectError::UnsupportedScheme { .. })
        ));
        assert!(matches!(parse("h:1"), Err(ConnectError::InvalidUrl { .. })));
        assert!(matches!(
            parse("quiver://h:x"),
            Err(ConnectError::InvalidUrl { .. })
        ));
    }
}
