//! Transaction commands: MULTI EXEC DISCARD WATCH UNWATCH.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_resp::error::CommandError;

use super::Command;

pub(crate) use specs::SPECS;

fn wrap(command: TransactionCommand) -> Result<Command, CommandError> {
    Ok(Command::Transaction(command))
}

/// A transaction command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransactionCommand {
    /// `MULTI`.
    Multi,
    /// `EXEC`.
    Exec,
    /// `DISCARD`.
    Discard,
    /// `WATCH key...`.
    Watch { keys: Vec<Bytes> },
    /// `UNWATCH`.
    Unwatch,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::command::test_support::{b, error, parse};

    #[test]
    fn transaction_commands() {
        assert_eq!(
            parse("multi").unwrap(),
            Command::Transaction(TransactionCommand::Multi)
        );
        assert_eq!(
            parse("WATCH a b").unwrap(),
            Command::Transaction(TransactionCommand::Watch {
                keys: vec![b("a"), b("b")]
            })
        );
        assert_eq!(
            error("EXEC now"),
            "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command"
        );
        assert_eq!(
            error("WATCH"),
            "ERR wrong number of arguments for 'watch' command"
        );
    }
}
