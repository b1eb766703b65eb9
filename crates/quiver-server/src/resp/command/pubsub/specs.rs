//! The pub/sub commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{FAST, LOADING, NOSCRIPT, PUBSUB, STALE, SUBSCRIBED_OK};
use crate::resp::table::{CommandSpec, Group, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    keys: (i32, i32, i32),
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::PubSub,
        name,
        arity,
        flags,
        keys,
        since,
        summary,
        parser,
    )
}

const SUBSCRIBING: u32 = PUBSUB | NOSCRIPT | LOADING | STALE | SUBSCRIBED_OK;
const PUBLISHING: u32 = PUBSUB | LOADING | STALE | FAST;
const INSPECTING: u32 = PUBSUB | LOADING | STALE;

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "subscribe",
        -2,
        SUBSCRIBING,
        (0, 0, 0),
        "2.0.0",
        "Listens for messages published to channels.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Subscribe {
                space: Space::Channel,
                names,
            })
        },
    )
    .with_syntax("channel..."),
    c(
        "unsubscribe",
        -1,
        SUBSCRIBING,
        (0, 0, 0),
        "2.0.0",
        "Stops listening to messages posted to channels.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Unsubscribe {
                space: Space::Channel,
                names,
            })
        },
    )
    .with_syntax("[channel...]"),
    c(
        "psubscribe",
        -2,
        SUBSCRIBING,
        (0, 0, 0),
        "2.0.0",
        "Listens for messages published to channels that match one or more patterns.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Subscribe {
                space: Space::Pattern,
                names,
            })
        },
    )
    .with_syntax("pattern..."),
    c(
        "punsubscribe",
        -1,
        SUBSCRIBING,
        (0, 0, 0),
        "2.0.0",
        "Stops listening to messages published to channels that match one or more patterns.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Unsubscribe {
                space: Space::Pattern,
                names,
            })
        },
    )
    .with_syntax("[pattern...]"),
    c(
        "ssubscribe",
        -2,
        SUBSCRIBING,
        (1, -1, 1),
        "7.0.0",
        "Listens for messages published to shard channels.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Subscribe {
                space: Space::Shard,
                names,
            })
        },
    )
    .with_syntax("shardchannel...")
    .with_names_not_keys(),
    c(
        "sunsubscribe",
        -1,
        SUBSCRIBING,
        (1, -1, 1),
        "7.0.0",
        "Stops listening to messages posted to shard channels.",
        |a| {
            let names = a.rest();
            wrap(PubSubCommand::Unsubscribe {
                space: Space::Shard,
                names,
            })
        },
    )
    .with_syntax("[shardchannel...]")
    .with_names_not_keys(),
    c(
        "publish",
        3,
        PUBLISHING,
        (0, 0, 0),
        "2.0.0",
        "Posts a message to a channel.",
        |a| {
            let (channel, message) = (a.next()?, a.next()?);
            wrap(PubSubCommand::Publish { channel, message })
        },
    )
    .with_syntax("channel message"),
    c(
        "spublish",
        3,
        PUBLISHING,
        (1, 1, 1),
        "7.0.0",
        "Post a message to a shard channel",
        |a| {
            let (channel, message) = (a.next()?, a.next()?);
            wrap(PubSubCommand::SPublish { channel, message })
        },
    )
    .with_syntax("shardchannel message")
    .with_names_not_keys(),
    c(
        "pubsub",
        -2,
        0,
        (0, 0, 0),
        "2.8.0",
        "A container for Pub/Sub commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(PUBSUB_SUBCOMMANDS),
];

const PUBSUB_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "pubsub|help",
        2,
        LOADING | STALE,
        (0, 0, 0),
        "6.2.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(PubSubCommand::Help),
    ),
    c(
        "pubsub|channels",
        -2,
        INSPECTING,
        (0, 0, 0),
        "2.8.0",
        "Returns the active channels.",
        |a| parse_channels(a, Space::Channel),
    )
    .with_syntax("[pattern]"),
    c(
        "pubsub|shardchannels",
        -2,
        INSPECTING,
        (0, 0, 0),
        "7.0.0",
        "Returns the active shard channels.",
        |a| parse_channels(a, Space::Shard),
    )
    .with_syntax("[pattern]"),
    c(
        "pubsub|shardnumsub",
        -2,
        INSPECTING,
        (0, 0, 0),
        "7.0.0",
        "Returns the count of subscribers of shard channels.",
        |a| {
            let channels = a.rest();
            wrap(PubSubCommand::NumSub {
                space: Space::Shard,
                channels,
            })
        },
    )
    .with_syntax("[shardchannel...]"),
    c(
        "pubsub|numpat",
        2,
        INSPECTING,
        (0, 0, 0),
        "2.8.0",
        "Returns a count of unique pattern subscriptions.",
        |_| wrap(PubSubCommand::NumPat),
    ),
    c(
        "pubsub|numsub",
        -2,
        INSPECTING,
        (0, 0, 0),
        "2.8.0",
        "Returns a count of subscribers to channels.",
        |a| {
            let channels = a.rest();
            wrap(PubSubCommand::NumSub {
                space: Space::Channel,
                channels,
            })
        },
    )
    .with_syntax("[channel...]"),
];
