//! The HTTP gateway through a real HTTP client (hyper) over HTTP/1.1 and HTTP/2.

mod admission;
mod events;
mod routes;
mod status_page;

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

/// Which HTTP version a client speaks (HTTP/2 over cleartext, with prior knowledge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    H1,
    H2,
}

enum Sender {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// One connection to the server's HTTP listener.
pub struct Http {
    sender: Sender,
    pub addr: SocketAddr,
}

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON error code of an error reply, checking its shape.
    pub fn error_code(&self) -> String {
        let body = self.json();
        assert!(
            body["message"].is_string(),
            "an error has a message: {body}"
        );
        body["error"]
            .as_str()
            .expect("an error has a code")
            .to_owned()
    }
}

impl Http {
    pub async fn connect(addr: SocketAddr, version: Version) -> Http {
        let stream = TcpStream::connect(addr).await.expect("connect");
        let io = TokioIo::new(stream);
        let sender = match version {
            Version::H1 => {
                let (sender, connection) = http1::handshake(io).await.expect("h1 handshake");
                tokio::spawn(connection);
                Sender::H1(sender)
            }
            Version::H2 => {
                let (sender, connection) = http2::handshake(TokioExecutor::new(), io)
                    .await
                    .expect("h2 handshake");
                tokio::spawn(connection);
                Sender::H2(sender)
            }
        };
        Http { sender, addr }
    }

    /// Sends a request; the response with its body unread.
    pub async fn start(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Response<Incoming> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(Full::new(body.into())).expect("request");
        match &mut self.sender {
            Sender::H1(sender) => {
                sender.ready().await.expect("h1 ready");
                sender.send_request(request).await.expect("h1 send")
            }
            Sender::H2(sender) => {
                sender.ready().await.expect("h2 ready");
                sender.send_request(request).await.expect("h2 send")
            }
        }
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Reply {
        let response = self.start(method, path, headers, body).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("read body")
            .to_bytes();
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&mut self, path: &str) -> Reply {
        self.send("GET", path, &[], Bytes::new()).await
    }

    pub async fn post_json(&mut self, path: &str, body: serde_json::Value) -> Reply {
        self.send(
            "POST",
            path,
            &[("content-type", "application/json")],
            body.to_string(),
        )
        .await
    }
}
