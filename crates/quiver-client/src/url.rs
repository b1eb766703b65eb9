//! `quiver://host:port` URLs.

use crate::error::ConnectError;

/// Port used when the URL names none (`native.addr`'s default).
pub const DEFAULT_PORT: u16 = 7070;

/// Parses `url` into a `host:port` address to connect to.
pub fn parse(url: &str) -> Result<String, ConnectError> {
    let invalid = |reason| ConnectError::InvalidUrl {
        url: url.to_owned(),
        reason,
    };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| invalid("no scheme"))?;
    match scheme {
        "quiver" => {}
        "quiver+quic" => {
            return Err(ConnectError::QuicNotSupported {
                url: url.to_owned(),
            });
        }
        other => {
            return Err(ConnectError::UnsupportedScheme {
                scheme: other.to_owned(),
                url: url.to_owned(),
            });
        }
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Err(invalid("no host"));
    }
    let has_port = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    };
    if !has_port {
        return Ok(format!("{authority}:{DEFAULT_PORT}"));
    }
    let port = authority.rsplit(':').next().unwrap_or_default();
    if port.parse::<u16>().is_err() {
        return Err(invalid("the port is not a number from 0 to 65535"));
    }
    Ok(authority.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tcp_urls_and_refuses_the_rest() {
        assert_eq!(
            parse("quiver://127.0.0.1:9000").ok(),
            Some("127.0.0.1:9000".into())
        );
        assert_eq!(
            parse("quiver://localhost").ok(),
            Some("localhost:7070".into())
        );
        assert_eq!(parse("quiver://[::1]:5/").ok(), Some("[::1]:5".into()));
        assert!(matches!(
            parse("quiver+quic://h:1"),
            Err(ConnectError::QuicNotSupported { .. })
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
