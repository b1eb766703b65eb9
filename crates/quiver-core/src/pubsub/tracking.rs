//! Client-side caching (Redis's CLIENT TRACKING): which client read which key, and the
//! invalidation messages the cache's change feed turns into.
//!
//! Default mode remembers, per key, the clients that read it; the first change of the key
//! sends each of them one invalidation and forgets them (they read it again to be told
//! again). Broadcast mode (BCAST) remembers nothing: every change of a key under one of
//! the client's prefixes (all keys without one) is sent, the keys of one change batch
//! under one prefix together, in byte order and once each. A flush sends every tracking
//! client a null invalidation ("everything"), once per flush command. NOLOOP skips what
//! the client changed itself ([`Change::origin`]).
//! Invalidations go to the client's own mailbox, or to the client it redirects to; a
//! redirect target that is gone is reported to the client instead (once per message).
//!
//! The change feed is subscribed to only while some client tracks, so that writes pay
//! nothing otherwise. Locks: the feed slot, then the cache's delivery lock (subscribing),
//! then the tracking state, then a mailbox; the feed calls in with its delivery lock held
//! and takes only the state and mailboxes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;

use super::Counters;
use super::mailbox::{Entry, Inbox, Mailbox, Pushed, SharedLimits};
use crate::cache::{Cache, Change, ChangeKind, ChangeSubscription};
use crate::streams::lock;

/// Most (key, client) pairs remembered in default mode, as Redis's
/// `tracking-table-max-keys` default; beyond it the oldest keys are invalidated and
/// forgotten.
pub const MAX_TRACKED_KEYS: usize = 1_000_000;

/// How a client tracks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrackingMode {
    /// Broadcast mode: every change under `prefixes` (everything without one).
    pub bcast: bool,
    /// Key prefixes of broadcast mode.
    pub prefixes: Vec<Bytes>,
    /// Remember a read only after `CLIENT CACHING YES`.
    pub optin: bool,
    /// Remember every read but one after `CLIENT CACHING NO`.
    pub optout: bool,
    /// Do not send what the client changed itself.
    pub noloop: bool,
}

struct Tracked {
    own: Weak<Mailbox>,
    /// The client redirected to: its id and mailbox.
    redirect: Option<(u64, Weak<Mailbox>)>,
    mode: TrackingMode,
    broken: bool,
}

#[derive(Default)]
struct State {
    clients: HashMap<u64, Tracked>,
    /// Default mode: key -> the clients that read it since its last invalidation.
    keys: HashMap<Bytes, HashSet<u64>>,
    /// (key, client) pairs in `keys`.
    items: usize,
}

pub(crate) struct Tracking {
    cache: Arc<Cache>,
    limits: Arc<SharedLimits>,
    counters: Arc<Counters>,
    state: Mutex<State>,
    /// The change-feed subscription, while some client tracks.
    feed: Mutex<Option<ChangeSubscription>>,
}

/// What a change sends one client.
struct Outgoing {
    mailbox: Weak<Mailbox>,
    entry: Entry,
}

impl Tracking {
    pub(crate) fn new(
        cache: Arc<Cache>,
        limits: Arc<SharedLimits>,
        counters: Arc<Counters>,
    ) -> Tracking {
        Tracking {
            cache,
            limits,
            counters,
            state: Mutex::default(),
            feed: Mutex::new(None),
        }
    }

    /// Turns tracking on for `client` (or changes its mode: the caller checked that the
    /// change is allowed), with invalidations to `own` or to `redirect`.
    pub(crate) fn enable(
        self: &Arc<Self>,
        client: u64,
        own: Inbox,
        redirect: Option<(u64, Inbox)>,
        mut mode: TrackingMode,
    ) -> Result<(), String> {
        let mut feed = lock(&self.feed);
        {
            let mut state = lock(&self.state);
            let old = state.clients.get(&client);
            if mode.bcast {
                let existing = old.map_or(&[][..], |t| &t.mode.prefixes[..]);
                check_prefixes(existing, &mode.prefixes)?;
                // Re-enabling adds to the prefixes given before, as in Redis; broadcast
                // without a prefix is the empty prefix, every key.
                let mut prefixes = existing.to_vec();
                prefixes.extend(std::mem::take(&mut mode.prefixes));
                if prefixes.is_empty() {
                    prefixes.push(Bytes::new());
                }
                mode.prefixes = prefixes;
            }
            let tracked = Tracked {
                own: Arc::downgrade(&own.0),
                redirect: redirect.map(|(id, inbox)| (id, Arc::downgrade(&inbox.0))),
                mode,
                broken: false,
            };
            state.clients.insert(client, tracked);
        }
        if feed.is_none() {
            let tracking = Arc::downgrade(self);
            *feed = Some(self.cache.subscribe(move |changes| {
                if let Some(tracking) = tracking.upgrade() {
                    tracking.changed(changes);
                }
            }));
        }
        Ok(())
    }

    /// Turns tracking off for `client` (it may have gone); the feed stops with the last.
    pub(crate) fn disable(&self, client: u64) {
        let mut feed = lock(&self.feed);
        let none_left = {
            let mut state = lock(&self.state);
            if state.clients.remove(&client).is_none() {
                return;
            }
            state.clients.is_empty()
        };
        if none_left {
            let mut state = lock(&self.state);
            state.keys.clear();
            state.items = 0;
            drop(state);
            // Dropped outside the state lock: it takes the cache's delivery lock.
            let subscription = feed.take();
            drop(feed);
            drop(subscription);
        }
    }

    /// The prefixes `client` tracks in broadcast mode (in byte order, as Redis lists
    /// them), and whether its redirect broke.
    pub(crate) fn info(&self, client: u64) -> Option<(Vec<Bytes>, bool)> {
        let state = lock(&self.state);
        let tracked = state.clients.get(&client)?;
        let mut prefixes = tracked.mode.prefixes.clone();
        prefixes.sort();
        Some((prefixes, tracked.broken))
    }

    /// Clients tracking, keys remembered, (key, client) pairs, and distinct prefixes of
    /// broadcast mode (the empty one when a client gave none), as INFO shows them.
    pub(crate) fn figures(&self) -> [usize; 4] {
        let state = lock(&self.state);
        let mut prefixes: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
        for tracked in state.clients.values().filter(|t| t.mode.bcast) {
            if tracked.mode.prefixes.is_empty() {
                prefixes.insert(b"");
            }
            prefixes.extend(tracked.mode.prefixes.iter().map(|p| &p[..]));
        }
        [
            state.clients.len(),
            state.keys.len(),
            state.items,
            prefixes.len(),
        ]
    }

    /// Remembers that `client` read `keys` (default mode).
    pub(crate) fn remember<'k>(&self, client: u64, keys: impl Iterator<Item = &'k [u8]>) {
        let mut state = lock(&self.state);
        if state.clients.get(&client).is_none_or(|t| t.mode.bcast) {
            return;
        }
        for key in keys {
            let readers = match state.keys.get_mut(key) {
                Some(readers) => readers,
                None => state.keys.entry(Bytes::copy_from_slice(key)).or_default(),
            };
            if readers.insert(client) {
                state.items += 1;
            }
        }
        let mut outgoing = Vec::new();
        while state.items > MAX_TRACKED_KEYS {
            let Some(key) = state.keys.keys().next().cloned() else {
                break;
            };
            invalidate_key(&mut state, &key, 0, &mut outgoing);
        }
        drop(state);
        self.send(outgoing);
    }

    /// The feed's batch: invalidations for every change.
    fn changed(&self, changes: &[Change]) {
        let mut outgoing = Vec::new();
        {
            let mut state = lock(&self.state);
            // Per client and prefix, the keys changed, in order and once each, as Redis
            // sends them (prefixes in byte order too).
            let mut broadcast: BTreeMap<(u64, Bytes), BTreeSet<Bytes>> = BTreeMap::new();
            for change in changes {
                match change.kind {
                    // One flush of several databases (FLUSHALL, SWAPDB) is told once.
                    ChangeKind::Flushed { first } => {
                        if first {
                            flushed(&mut state, &mut outgoing);
                        }
                        continue;
                    }
                    // Keyspace events name changes recorded beside them.
                    ChangeKind::Event(_) => continue,
                    _ => {}
                }
                let key = Bytes::copy_from_slice(&change.key);
                invalidate_key(&mut state, &key, change.origin, &mut outgoing);
                for (&client, tracked) in &state.clients {
                    if !tracked.mode.bcast || (tracked.mode.noloop && change.origin == client) {
                        continue;
                    }
                    let prefixes = &tracked.mode.prefixes;
                    if prefixes.is_empty() {
                        broadcast
                            .entry((client, Bytes::new()))
                            .or_default()
                            .insert(key.clone());
                    }
                    for prefix in prefixes.iter().filter(|prefix| key.starts_with(prefix)) {
                        let batch = broadcast.entry((client, prefix.clone())).or_default();
                        batch.insert(key.clone());
                    }
                }
            }
            for ((client, _), keys) in broadcast {
                message(
                    &mut state,
                    client,
                    Some(keys.into_iter().collect()),
                    &mut outgoing,
                );
            }
        }
        self.send(outgoing);
    }

    /// Delivers what the state decided, with no tracking lock held.
    fn send(&self, outgoing: Vec<Outgoing>) {
        if outgoing.is_empty() {
            return;
        }
        let limits = self.limits.get();
        for Outgoing { mailbox, entry } in outgoing {
            if let Some(mailbox) = mailbox.upgrade()
                && mailbox.push(entry, &limits) == Pushed::ClosedNow
            {
                self.counters.count_close(&mailbox);
            }
        }
    }
}

/// Redis's rule: no two prefixes of one client may be prefixes of each other.
fn check_prefixes(existing: &[Bytes], new: &[Bytes]) -> Result<(), String> {
    let overlap = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (i, prefix) in new.iter().enumerate() {
        if let Some(old) = existing.iter().find(|old| overlap(prefix, old)) {
            return Err(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                text(prefix),
                text(old)
            ));
        }
        if let Some(other) = new[i + 1..].iter().find(|other| overlap(prefix, other)) {
            return Err(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                text(prefix),
                text(other)
            ));
        }
    }
    Ok(())
}

/// Sends one invalidation of `key` to every client that read it (but the one that made
/// the change, for NOLOOP), and forgets them.
fn invalidate_key(state: &mut State, key: &Bytes, origin: u64, outgoing: &mut Vec<Outgoing>) {
    let Some(readers) = state.keys.remove(key) else {
        return;
    };
    state.items -= readers.len();
    let mut readers: Vec<u64> = readers.into_iter().collect();
    readers.sort_unstable();
    for client in readers {
        let skip = state
            .clients
            .get(&client)
            .is_none_or(|t| t.mode.bcast || (t.mode.noloop && origin == client));
        if !skip {
            message(state, client, Some(vec![key.clone()]), outgoing);
        }
    }
}

/// A flush: every tracking client is told "everything", and nothing is remembered.
fn flushed(state: &mut State, outgoing: &mut Vec<Outgoing>) {
    state.keys.clear();
    state.items = 0;
    let mut clients: Vec<u64> = state.clients.keys().copied().collect();
    clients.sort_unstable();
    for client in clients {
        message(state, client, None, outgoing);
    }
}

/// One invalidation for `client`, to its redirect target if it has one (or, when that
/// one is gone, a notice to the client itself).
fn message(state: &mut State, client: u64, keys: Option<Vec<Bytes>>, outgoing: &mut Vec<Outgoing>) {
    let Some(tracked) = state.clients.get_mut(&client) else {
        return;
    };
    let keys = keys.map(Arc::<[Bytes]>::from);
    match &tracked.redirect {
        None => outgoing.push(Outgoing {
            mailbox: tracked.own.clone(),
            entry: Entry::Invalidate {
                keys,
                redirected: false,
            },
        }),
        Some((_, mailbox)) if mailbox.strong_count() > 0 => outgoing.push(Outgoing {
            mailbox: mailbox.clone(),
            entry: Entry::Invalidate {
                keys,
                redirected: true,
            },
        }),
        Some((target, _)) => {
            tracked.broken = true;
            outgoing.push(Outgoing {
                mailbox: tracked.own.clone(),
                entry: Entry::RedirectBroken { client: *target },
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cache::{Cache, CacheConfig, ChangeOrigin, SetOptions};
    use crate::pubsub::{Entry, OutputLimits, PubSub, Subscriber, TrackingMode};
    use crate::streams::{Broker, BrokerConfig};
    use bytes::Bytes;
    use std::sync::Arc;

    fn setup() -> (Arc<Cache>, PubSub) {
        let cache = Arc::new(Cache::new(CacheConfig::default()).unwrap());
        let bus = PubSub::new(
            Broker::new(BrokerConfig::default()),
            Arc::clone(&cache),
            OutputLimits::default(),
        );
        (cache, bus)
    }

    /// Runs SET `key` as client `origin`.
    fn set(cache: &Cache, origin: u64, key: &str) {
        let _origin = ChangeOrigin::enter(origin);
        cache
            .db(0)
            .unwrap()
            .set(key.as_bytes(), b"v", SetOptions::default(), 0)
            .unwrap();
        cache.after_command();
    }

    /// The invalidated keys queued for `subscriber` (`None` for "everything").
    fn invalidations(subscriber: &Subscriber) -> Vec<Option<Vec<Bytes>>> {
        let mut entries = Vec::new();
        subscriber.drain(&mut entries).unwrap();
        entries
            .into_iter()
            .map(|entry| match entry {
                Entry::Invalidate { keys, .. } => keys.map(|keys| keys.to_vec()),
                other => panic!("not an invalidation: {other:?}"),
            })
            .collect()
    }

    fn keys(names: &[&'static str]) -> Option<Vec<Bytes>> {
        Some(
            names
                .iter()
                .map(|n| Bytes::from_static(n.as_bytes()))
                .collect(),
        )
    }

    #[test]
    fn default_mode_tells_each_reader_once_and_noloop_skips_its_own_writes() {
        let (cache, bus) = setup();
        let reader = bus.subscriber(1, bus.inbox());
        let quiet = bus.subscriber(2, bus.inbox());
        reader.track(TrackingMode::default(), None).unwrap();
        let noloop = TrackingMode {
            noloop: true,
            ..TrackingMode::default()
        };
        quiet.track(noloop, None).unwrap();
        reader.remember([&b"a"[..], b"b"].into_iter());
        quiet.remember([&b"a"[..]].into_iter());
        set(&cache, 2, "a");
        set(&cache, 3, "a");
        assert_eq!(invalidations(&reader), [keys(&["a"])]);
        assert!(
            invalidations(&quiet).is_empty(),
            "its own write, then forgotten"
        );
        set(&cache, 3, "b");
        assert_eq!(invalidations(&reader), [keys(&["b"])]);
        let _garbage = cache.db(0).unwrap().flushdb();
        cache.after_command();
        assert_eq!(invalidations(&reader), [None]);
        assert_eq!(invalidations(&quiet), [None]);
    }

    #[test]
    fn broadcast_mode_sends_keys_under_its_prefixes_and_refuses_overlaps() {
        let (cache, bus) = setup();
        let watcher = bus.subscriber(1, bus.inbox());
        let mode = |prefixes: &[&'static str]| TrackingMode {
            bcast: true,
            prefixes: prefixes
                .iter()
                .map(|p| Bytes::from_static(p.as_bytes()))
                .collect(),
            ..TrackingMode::default()
        };
        watcher.track(mode(&["user:"]), None).unwrap();
        let error = watcher.track(mode(&["us"]), None).unwrap_err();
        assert!(
            error.contains("overlaps with an existing prefix 'user:'"),
            "{error}"
        );
        set(&cache, 9, "user:1");
        set(&cache, 9, "other");
        assert_eq!(invalidations(&watcher), [keys(&["user:1"])]);
        assert_eq!(
            watcher.tracking_info().unwrap().0,
            [Bytes::from_static(b"user:")]
        );
    }

    #[test]
    fn a_redirect_target_that_is_gone_is_reported_to_the_client() {
        let (cache, bus) = setup();
        let client = bus.subscriber(1, bus.inbox());
        let target_inbox = bus.inbox();
        client
            .track(TrackingMode::default(), Some((5, target_inbox.clone())))
            .unwrap();
        client.remember([&b"k"[..]].into_iter());
        drop(target_inbox);
        set(&cache, 9, "k");
        let mut entries = Vec::new();
        client.drain(&mut entries).unwrap();
        assert!(
            matches!(entries[..], [Entry::RedirectBroken { client: 5 }]),
            "{entries:?}"
        );
        assert!(client.tracking_info().unwrap().1, "broken");
    }

    #[test]
    fn the_change_feed_runs_only_while_someone_tracks() {
        let (cache, bus) = setup();
        let client = bus.subscriber(1, bus.inbox());
        client.track(TrackingMode::default(), None).unwrap();
        client.untrack();
        client.remember([&b"k"[..]].into_iter());
        set(&cache, 9, "k");
        let mut entries = Vec::new();
        client.drain(&mut entries).unwrap();
        assert!(entries.is_empty());
    }
}
