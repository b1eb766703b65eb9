//! HyperLogLog commands on string values: PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST.

pub(crate) mod exec;
mod specs;

use bytes::Bytes;
use quiver_core::cache::HllDebug;
use quiver_resp::error::CommandError;

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: HyperLogLogCommand) -> Result<Command, CommandError> {
    Ok(Command::HyperLogLog(command))
}

/// A HyperLogLog command.
#[derive(Clone, Debug, PartialEq)]
pub enum HyperLogLogCommand {
    /// `PFADD key [element...]`.
    Add { key: Bytes, elements: Vec<Bytes> },
    /// `PFCOUNT key...`.
    Count { keys: Vec<Bytes> },
    /// `PFMERGE destkey [sourcekey...]`.
    Merge { dest: Bytes, sources: Vec<Bytes> },
    /// `PFDEBUG subcommand key`; an unknown subcommand is refused once the key is
    /// found to be a HyperLogLog, as Redis does.
    Debug {
        what: Result<HllDebug, Bytes>,
        key: Bytes,
    },
    /// `PFSELFTEST`.
    SelfTest,
}

fn parse_pfadd(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let elements = args.rest();
    wrap(HyperLogLogCommand::Add { key, elements })
}

fn parse_pfcount(args: &mut Args<'_>) -> Result<Command, CommandError> {
    wrap(HyperLogLogCommand::Count { keys: args.rest() })
}

fn parse_pfmerge(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let dest = args.next()?;
    let sources = args.rest();
    wrap(HyperLogLogCommand::Merge { dest, sources })
}

fn parse_pfdebug(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let name = args.next()?;
    let key = args.next()?;
    let what = if is(&name, "getreg") {
        Ok(HllDebug::GetReg)
    } else if is(&name, "decode") {
        Ok(HllDebug::Decode)
    } else if is(&name, "encoding") {
        Ok(HllDebug::Encoding)
    } else if is(&name, "todense") {
        Ok(HllDebug::ToDense)
    } else {
        Err(name)
    };
    wrap(HyperLogLogCommand::Debug { what, key })
}

fn parse_pfselftest(_args: &mut Args<'_>) -> Result<Command, CommandError> {
    wrap(HyperLogLogCommand::SelfTest)
}
