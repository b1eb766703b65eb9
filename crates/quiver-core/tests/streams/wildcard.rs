//! Wildcard subscriptions: the registry's index against the pattern's own matcher and a
//! naive matcher.

use proptest::prelude::*;
use quiver_core::streams::{Delivery, Pattern, StreamName, SubscribeOptions};

use super::{broker, drain, publish, summary};

/// Matching written the obvious way, level by level.
fn naive(pattern: &str, name: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let n: Vec<&str> = name.split('/').collect();
    match p.last() {
        Some(&">") => n.len() >= p.len() && p[..p.len() - 1] == n[..p.len() - 1],
        Some(&"*") => n.len() == p.len() && p[..p.len() - 1] == n[..p.len() - 1],
        _ => p == n,
    }
}

fn level() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("ab".to_owned())
    ]
}

fn stream_name() -> impl Strategy<Value = String> {
    prop::collection::vec(level(), 3..=5).prop_map(|levels| levels.join("/"))
}

fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        stream_name(),
        prop::collection::vec(level(), 2..=4).prop_map(|levels| format!("{}/*", levels.join("/"))),
        prop::collection::vec(level(), 1..=4).prop_map(|levels| format!("{}/>", levels.join("/"))),
    ]
    .prop_filter("`*` needs two levels before it", |p| {
        !(p.ends_with("/*") && p.matches('/').count() < 2)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn pattern_matches_like_the_naive_matcher(pattern in pattern(), name in stream_name()) {
        let parsed = Pattern::new(&pattern).unwrap();
        prop_assert_eq!(parsed.matches(&StreamName::new(&name).unwrap()), naive(&pattern, &name));
    }

    #[test]
    fn the_registry_index_finds_exactly_the_matching_subscriptions(
        patterns in prop::collection::vec(pattern(), 1..12),
        names in prop::collection::vec(stream_name(), 1..6),
    ) {
        let broker = broker();
        let subs: Vec<_> = patterns
            .iter()
            .map(|p| broker.subscribe(Pattern::new(p).unwrap(), SubscribeOptions::default()).unwrap())
            .collect();
        for name in &names {
            let mut found = broker.matching(&StreamName::new(name).unwrap());
            found.sort();
            let expected: Vec<_> = subs.iter().zip(&patterns).filter(|(_, p)| naive(p, name)).map(|(s, _)| s.id()).collect();
            prop_assert_eq!(found, expected);
        }
    }
}

#[tokio::test]
async fn wildcards_receive_existing_and_future_streams() {
    let broker = broker();
    publish(&broker, "acme/orders/created", 0, 1).await; // exists before the subscriptions
    let mut one = broker
        .subscribe(
            Pattern::new("acme/orders/*").unwrap(),
            SubscribeOptions::default(),
        )
        .unwrap();
    let mut tree = broker
        .subscribe(
            Pattern::new("acme/orders/>").unwrap(),
            SubscribeOptions::default(),
        )
        .unwrap();
    let mut tenant = broker
        .subscribe(Pattern::new("acme/>").unwrap(), SubscribeOptions::default())
        .unwrap();
    publish(&broker, "acme/orders/created", 1, 1).await;
    publish(&broker, "acme/orders/eu/created", 2, 1).await; // created after
    publish(&broker, "acme/billing/paid", 3, 1).await;
    publish(&broker, "other/orders/created", 4, 1).await;
    assert_eq!(summary(&drain(&mut one)).0, [1]);
    assert_eq!(summary(&drain(&mut tree)).0, [1, 2]);
    let got = drain(&mut tenant);
    assert_eq!(summary(&got).0, [1, 2, 3]);
    let streams: Vec<_> = got
        .iter()
        .map(|d| match d {
            Delivery::Batch(b) => b.stream().as_str().to_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        streams,
        [
            "acme/orders/created",
            "acme/orders/eu/created",
            "acme/billing/paid"
        ]
    );
}
