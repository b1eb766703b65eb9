//! A lean RESP pub/sub client for `redis://` targets: a publisher that writes a pipeline
//! of PUBLISH commands in one write and reads their replies, and a subscriber that parses
//! `message` pushes straight out of its read buffer. The `redis` crate's pub/sub stream
//! costs the benchmark more CPU per message than the servers it measures spend, so on a
//! small machine it, not the server, set the pace; this client does the least a Redis
//! client can (every server under test gets the same client).

use anyhow::{Context, bail};
use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bytes asked of the kernel per read.
const READ_BYTES: usize = 256 * 1024;

/// `host:port` of a `redis://host:port` URL.
fn address(url: &str) -> anyhow::Result<&str> {
    let rest = url
        .strip_prefix("redis://")
        .with_context(|| format!("bad --target {url:?}: expected redis://host:port"))?;
    Ok(rest.trim_end_matches('/'))
}

async fn connect(url: &str) -> anyhow::Result<TcpStream> {
    let stream = TcpStream::connect(address(url)?)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// A connection that publishes pipelines to one channel.
pub struct RespPublisher {
    stream: TcpStream,
    channel: &'static [u8],
    out: Vec<u8>,
    input: BytesMut,
}

impl RespPublisher {
    pub async fn connect(url: &str, channel: &'static str) -> anyhow::Result<Self> {
        Ok(Self {
            stream: connect(url).await?,
            channel: channel.as_bytes(),
            out: Vec::new(),
            input: BytesMut::with_capacity(READ_BYTES),
        })
    }

    /// Sends one PUBLISH per payload in one write, then reads every reply.
    pub async fn publish(&mut self, payloads: &[Bytes]) -> anyhow::Result<()> {
        self.out.clear();
        for payload in payloads {
            command(&mut self.out, &[b"PUBLISH", self.channel, payload]);
        }
        self.stream.write_all(&self.out).await?;
        let mut left = payloads.len();
        while left > 0 {
            while let Some(end) = self.input.windows(2).position(|w| w == b"\r\n") {
                let line = self.input.split_to(end + 2);
                if line[0] != b':' {
                    bail!(
                        "PUBLISH answered {:?}",
                        String::from_utf8_lossy(&line[..end])
                    );
                }
                left -= 1;
                if left == 0 {
                    return Ok(());
                }
            }
            self.input.reserve(READ_BYTES);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                bail!("the server closed the publishing connection");
            }
        }
        Ok(())
    }
}

/// A connection subscribed to one channel.
pub struct RespSubscriber {
    stream: TcpStream,
    input: BytesMut,
}

/// A push parsed from the buffer: its payload, or `None` for another kind of push.
enum Parsed {
    Incomplete,
    Message(Bytes),
    Other,
}

impl RespSubscriber {
    /// Connects and subscribes; returns once the server confirmed the subscription.
    pub async fn connect(url: &str, channel: &str) -> anyhow::Result<Self> {
        let mut subscriber = Self {
            stream: connect(url).await?,
            input: BytesMut::with_capacity(READ_BYTES),
        };
        let mut out = Vec::new();
        command(&mut out, &[b"SUBSCRIBE", channel.as_bytes()]);
        subscriber.stream.write_all(&out).await?;
        match subscriber.next_push().await? {
            Parsed::Other => Ok(subscriber),
            _ => bail!("SUBSCRIBE was not confirmed"),
        }
    }

    /// The next message's payload.
    pub async fn next(&mut self) -> anyhow::Result<Bytes> {
        loop {
            if let Parsed::Message(payload) = self.next_push().await? {
                return Ok(payload);
            }
        }
    }

    async fn next_push(&mut self) -> anyhow::Result<Parsed> {
        loop {
            match parse(&mut self.input)? {
                Parsed::Incomplete => {}
                parsed => return Ok(parsed),
            }
            self.input.reserve(READ_BYTES);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                bail!("the server closed the subscription");
            }
        }
    }
}

/// Parses one `*3` array of bulk strings (`message`, channel, payload; or a subscribe
/// confirmation, whose third item is an integer) from the front of `input`.
fn parse(input: &mut BytesMut) -> anyhow::Result<Parsed> {
    let mut at = 0;
    let Some((header, next)) = line(input, at) else {
        return Ok(Parsed::Incomplete);
    };
    if header != b"*3" && header != b">3" {
        bail!(
            "unexpected reply {:?} on a subscribed connection",
            String::from_utf8_lossy(header)
        );
    }
    at = next;
    let mut items: [(usize, usize); 3] = [(0, 0); 3];
    for item in &mut items {
        let Some((head, next)) = line(input, at) else {
            return Ok(Parsed::Incomplete);
        };
        match head.first() {
            Some(b'$') => {
                let len: usize = std::str::from_utf8(&head[1..])?.parse()?;
                if input.len() < next + len + 2 {
                    return Ok(Parsed::Incomplete);
                }
                *item = (next, len);
                at = next + len + 2;
            }
            Some(b':') => at = next,
            _ => bail!("unexpected item {:?}", String::from_utf8_lossy(head)),
        }
    }
    let is_message = &input[items[0].0..items[0].0 + items[0].1] == b"message";
    let (start, len) = items[2];
    let mut taken = input.split_to(at);
    if !is_message {
        return Ok(Parsed::Other);
    }
    taken.advance(start);
    taken.truncate(len);
    Ok(Parsed::Message(taken.freeze()))
}

/// The line starting at `at` (without `\r\n`) and where the next begins.
fn line(input: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = memchr_crlf(&input[at..])?;
    Some((&input[at..at + end], at + end + 2))
}

fn memchr_crlf(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_messages_and_confirmations_in_pieces() {
        let wire: &[u8] = b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$5\r\nhello\r\n";
        let mut input = BytesMut::new();
        let mut seen = Vec::new();
        for &byte in wire {
            input.extend_from_slice(&[byte]);
            match parse(&mut input).unwrap() {
                Parsed::Incomplete => {}
                Parsed::Other => seen.push(None),
                Parsed::Message(payload) => seen.push(Some(payload)),
            }
        }
        assert_eq!(seen, vec![None, Some(Bytes::from_static(b"hello"))]);
        assert!(input.is_empty());
    }
}
