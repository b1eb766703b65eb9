//! Pub/sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE
//! SUNSUBSCRIBE PUBLISH SPUBLISH PUBSUB.

pub(crate) mod exec;
mod specs;

use std::borrow::Cow;

use bytes::Bytes;
use quiver_core::pubsub::Space;
use quiver_resp::error::{CommandError, ErrorCode};

use super::{Args, Command};

pub(crate) use specs::SPECS;

fn wrap(command: PubSubCommand) -> Result<Command, CommandError> {
    Ok(Command::PubSub(command))
}

/// A pub/sub command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PubSubCommand {
    /// `SUBSCRIBE`, `PSUBSCRIBE`, `SSUBSCRIBE`: names to add.
    Subscribe { space: Space, names: Vec<Bytes> },
    /// `UNSUBSCRIBE`, `PUNSUBSCRIBE`, `SUNSUBSCRIBE`: names to drop (all when empty).
    Unsubscribe { space: Space, names: Vec<Bytes> },
    /// `PUBLISH channel message`.
    Publish { channel: Bytes, message: Bytes },
    /// `SPUBLISH shardchannel message`.
    SPublish { channel: Bytes, message: Bytes },
    /// `PUBSUB CHANNELS|SHARDCHANNELS [pattern]`.
    Channels {
        space: Space,
        pattern: Option<Bytes>,
    },
    /// `PUBSUB NUMSUB|SHARDNUMSUB [channel...]`.
    NumSub { space: Space, channels: Vec<Bytes> },
    /// `PUBSUB NUMPAT`.
    NumPat,
    /// `PUBSUB HELP`.
    Help,
}

/// `PUBSUB CHANNELS a b`: Redis's answer to a subcommand with too many arguments.
fn subcommand_syntax(args: &Args<'_>) -> CommandError {
    let sub = String::from_utf8_lossy(args.subcommand_as_sent());
    CommandError::Other {
        code: ErrorCode::Err,
        message: Cow::Owned(format!(
            "unknown subcommand or wrong number of arguments for '{sub}'. Try PUBSUB HELP."
        )),
    }
}

fn parse_channels(args: &mut Args<'_>, space: Space) -> Result<Command, CommandError> {
    if args.remaining() > 1 {
        return Err(subcommand_syntax(args));
    }
    let pattern = args.rest().pop();
    wrap(PubSubCommand::Channels { space, pattern })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn pubsub_commands() {
        assert_eq!(
            parse("SUBSCRIBE a b").unwrap(),
            Command::PubSub(PubSubCommand::Subscribe {
                space: Space::Channel,
                names: vec![b("a"), b("b")]
            })
        );
        assert_eq!(
            parse("punsubscribe").unwrap(),
            Command::PubSub(PubSubCommand::Unsubscribe {
                space: Space::Pattern,
                names: vec![]
            })
        );
        assert_eq!(
            parse("PUBSUB SHARDCHANNELS x*").unwrap(),
            Command::PubSub(PubSubCommand::Channels {
                space: Space::Shard,
                pattern: Some(b("x*"))
            })
        );
        assert_eq!(
            error("PUBSUB CHANNELS a b"),
            "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP."
        );
        assert_eq!(
            error("PUBLISH a"),
            "ERR wrong number of arguments for 'publish' command"
        );
        assert_eq!(
            error("PUBSUB NOPE"),
            "ERR unknown subcommand 'NOPE'. Try PUBSUB HELP."
        );
    }
}
