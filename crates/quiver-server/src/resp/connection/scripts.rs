//! A connection and the script thread: a script call's reply awaited in order, a wait
//! for the keyspace a script holds, and what a shutdown does to both while a script is
//! busy (such a script may never end: its clients stop waiting, as Redis exits without
//! finishing it).

use std::collections::VecDeque;
use std::time::Duration;

use bytes::BytesMut;
use quiver_resp::Request;
use quiver_resp::encode as write;

use super::{Connection, End, classify, is_script_call};
use crate::resp::RespShared;
use crate::resp::command::scripting::exec::Done;
use crate::resp::table::CommandSpec;
use crate::serve::shutdown::Shutdown;

impl Connection {
    /// While the script thread holds the keyspace, waits here rather than on a shard,
    /// without holding this thread: until it lets the keyspace go or its script is busy
    /// (then most commands are answered BUSY), and, for what is allowed while busy but
    /// takes shard locks ([`classify::needs_shards`]), until it lets it go.
    pub(super) async fn wait_for_script(
        &self,
        request: &Request,
        shutdown: &Shutdown,
    ) -> Result<(), End> {
        let scripts = &self.shared.scripts;
        let waited = async {
            if scripts.holding() && !is_script_call(request) {
                scripts.settled().await;
            }
            if scripts.holding() && classify::needs_shards(request) {
                self.shared.cache.hold().released().await;
            }
        };
        // A script that never ends does not hold the client past a shutdown.
        tokio::select! {
            () = waited => Ok(()),
            () = abandoned(&self.shared, shutdown) => Err(End::Closed),
        }
    }
}

/// A script call's reply to come, whether it is left out (`CLIENT REPLY`), and its
/// command.
pub(super) type ScriptReply = (
    tokio::sync::oneshot::Receiver<Done>,
    bool,
    Option<&'static CommandSpec>,
);

/// Writes the replies of this client's script calls, in order, once they come, and
/// counts the calls that failed (the engine counted their errors).
pub(super) async fn drain_scripts(
    scripts: &mut VecDeque<ScriptReply>,
    output: &mut BytesMut,
    shared: &RespShared,
    shutdown: &Shutdown,
) -> Result<(), End> {
    let stats = &shared.stats;
    while let Some((reply, silent, spec)) = scripts.pop_front() {
        let reply = tokio::select! {
            biased;
            reply = reply => reply,
            () = abandoned(shared, shutdown) => return Err(End::Closed),
        };
        let Ok(done) = reply else {
            let before = output.len();
            write::write_error(output, b"ERR the script engine failed to run this call");
            stats.error(&output[before..]);
            continue;
        };
        if let Some(spec) = spec
            && done.out.first() == Some(&b'-')
        {
            stats.failed(spec);
        }
        if !silent {
            output.extend_from_slice(&done.out);
        }
    }
    Ok(())
}

/// Resolves when the server shuts down (SHUTDOWN NOSAVE, a signal) while a script runs
/// past `busy-reply-threshold`: its caller stops waiting for a script that may never end,
/// as Redis exits without finishing it. What the script wrote is not journaled: its
/// changes are taken when it returns.
async fn abandoned(shared: &RespShared, shutdown: &Shutdown) {
    shutdown.wait().await;
    loop {
        shared.scripts.settled().await;
        if shared.scripts.busy() {
            return;
        }
        // No script is busy now (the one awaited may end, or start later): look again.
        tokio::time::sleep(ABANDON_POLL).await;
    }
}

/// How often a client waiting for a script looks again, once a shutdown has begun,
/// whether a script has become busy.
const ABANDON_POLL: Duration = Duration::from_millis(50);
