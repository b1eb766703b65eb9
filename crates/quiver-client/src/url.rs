//! `quiver://host:port` (TCP) and `quiver+quic://host:port` (QUIC) URLs.

use crate::error::ConnectError;

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
    })
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
