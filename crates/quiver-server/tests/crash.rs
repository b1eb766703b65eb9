//! kill -9 of a `quiver serve` child while publishers write `committed` messages to a
//! `sync` durable stream, at a random moment, round after round: after each restart every
//! acknowledged message is there, in each publisher's order, exactly once, also after the
//! publishers retry what was in flight (with the same message ids).
//!
//! `CRASH_ROUNDS` sets the number of rounds (20 by default, as CI runs it; the
//! recorded long run is in docs/benchmarks.md) and `CRASH_SEED` the random seed.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use quiver_client::{
    AckMode, Client, ClientOptions, StartPosition, Storage, StreamOptions, SubscribeOptions,
    SubscriptionEvent,
};

use crate::support::Server;

const STREAM: &str = "acme/ledger/entries";
const PUBLISHERS: u64 = 4;
const MSG_ID: &str = "Quiver-Msg-Id";

/// A small deterministic generator (xorshift64*), so a failing round can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn connect(server: &Server) -> Client {
    let options = ClientOptions::default()
        .reconnect(false)
        .request_timeout(Duration::from_secs(10));
    Client::connect_with(&format!("quiver://{}", server.native), options)
        .await
        .expect("connect")
}

/// What one publisher knows: the ids it sent and the offsets acked for them.
#[derive(Default)]
struct Publisher {
    acked: BTreeMap<u64, u64>,
    /// Sent, not acknowledged when the server died.
    in_flight: Option<u64>,
}

/// Publishes `p`'s messages (ids `p:n` from `next`) one at a time, committed, until the
/// connection fails; returns what was acknowledged and what was in flight.
async fn publish_until_failure(client: Client, p: u64, mut next: u64) -> Publisher {
    let mut publisher = Publisher::default();
    loop {
        let id = format!("{p}:{next}");
        publisher.in_flight = Some(next);
        let sent = client
            .publish_with(
                STREAM,
                &[(MSG_ID, id.as_bytes())],
                id.clone(),
                AckMode::Committed,
            )
            .await;
        match sent {
            Ok(Some(ack)) => {
                publisher.acked.insert(next, ack.first_sequence);
                publisher.in_flight = None;
                next += 1;
            }
            _ => return publisher,
        }
    }
}

/// Reads the whole stream: (offset, id) in offset order.
async fn read_all(client: &Client) -> Vec<(u64, String)> {
    let end = client
        .describe_stream(STREAM)
        .await
        .expect("describe")
        .next_offset;
    let mut out = Vec::new();
    if end == 0 {
        return out;
    }
    let options = SubscribeOptions::default().start(StartPosition::Earliest);
    let mut sub = client.subscribe(STREAM, options).await.expect("subscribe");
    while (out.len() as u64) < end {
        match tokio::time::timeout(Duration::from_secs(20), sub.next())
            .await
            .expect("history within 20 s")
        {
            Some(SubscriptionEvent::Event(event)) => {
                let id = String::from_utf8(event.payload.to_vec()).expect("utf-8 ids");
                out.push((event.sequence, id));
            }
            other => panic!("unexpected {other:?} while reading back"),
        }
    }
    out
}

/// Checks the stream against everything acknowledged so far.
fn check(stored: &[(u64, String)], acked: &HashMap<u64, BTreeMap<u64, u64>>, round: u64) {
    let mut seen: HashMap<&str, u64> = HashMap::new();
    for (i, (offset, id)) in stored.iter().enumerate() {
        assert_eq!(*offset, i as u64, "round {round}: offsets are dense from 0");
        if let Some(first) = seen.insert(id, *offset) {
            panic!("round {round}: message {id} stored twice, at {first} and {offset}");
        }
    }
    for (p, messages) in acked {
        let mut previous = None;
        for (n, offset) in messages {
            let id = format!("{p}:{n}");
            let at = seen.get(id.as_str()).unwrap_or_else(|| {
                panic!("round {round}: acknowledged message {id} (offset {offset}) is missing")
            });
            assert_eq!(at, offset, "round {round}: {id} moved");
            assert!(
                previous.is_none_or(|prev| prev < *at),
                "round {round}: publisher {p} out of order"
            );
            previous = Some(*at);
        }
    }
}

#[test]
fn acknowledged_sync_messages_survive_kill_9_exactly_once() {
    let rounds = env_number("CRASH_ROUNDS", 20);
    let seed = env_number("CRASH_SEED", 0x5eed_1234_abcd_0001);
    eprintln!("crash test: {rounds} rounds, seed {seed:#x}");
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut acked: HashMap<u64, BTreeMap<u64, u64>> = HashMap::new();
    let mut next: HashMap<u64, u64> = HashMap::new();
    let mut retry: HashMap<u64, u64> = HashMap::new();
    for round in 0..rounds {
        let server = Server::start(dir.path(), &[]);
        runtime.block_on(async {
            let client = connect(&server).await;
            if round == 0 {
                client
                    .create_stream(STREAM, StreamOptions::durable(Storage::Sync))
                    .await
                    .expect("create");
            } else {
                check(&read_all(&client).await, &acked, round);
            }
            // A retrying publisher sends what was in flight again, with the same id: it
            // is stored once whether or not the first attempt made it.
            for (p, n) in retry.drain() {
                let id = format!("{p}:{n}");
                let ack = client
                    .publish_with(
                        STREAM,
                        &[(MSG_ID, id.as_bytes())],
                        id.clone(),
                        AckMode::Committed,
                    )
                    .await
                    .expect("retry")
                    .expect("committed ack");
                acked.entry(p).or_default().insert(n, ack.first_sequence);
                *next.entry(p).or_default() = n + 1;
            }
            let mut tasks = Vec::new();
            for p in 0..PUBLISHERS {
                let client = connect(&server).await;
                let from = *next.entry(p).or_default();
                tasks.push(tokio::spawn(publish_until_failure(client, p, from)));
            }
            tokio::time::sleep(Duration::from_millis(5 + rng.below(60))).await;
            let killed = std::process::Command::new("kill")
                .args(["-9", &server.pid().to_string()])
                .status()
                .expect("kill -9");
            assert!(killed.success());
            for (p, task) in (0..PUBLISHERS).zip(tasks) {
                let publisher = task.await.expect("publisher task");
                let last = publisher.acked.keys().next_back().copied();
                acked.entry(p).or_default().extend(publisher.acked);
                match publisher.in_flight {
                    Some(n) => {
                        retry.insert(p, n);
                    }
                    None => {
                        *next.entry(p).or_default() = last.map_or(0, |l| l + 1);
                    }
                }
            }
        });
        drop(server);
    }
    let server = Server::start(dir.path(), &[]);
    runtime.block_on(async {
        let client = connect(&server).await;
        let stored = read_all(&client).await;
        check(&stored, &acked, rounds);
        let total: usize = acked.values().map(BTreeMap::len).sum();
        eprintln!(
            "crash test: {total} acknowledged messages over {rounds} rounds, all present once"
        );
        assert!(total > 0);
    });
}
