//! Blocking commands (BLPOP and the other blocking pops, XREAD/XREADGROUP BLOCK,
//! WAIT): the connection parks until a key gets data, its deadline, CLIENT UNBLOCK, a
//! kill, the client's disconnection or the shutdown. And MIGRATE's wait for its target.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use bytes::BytesMut;
use quiver_resp::encode as write;
use tokio::io::AsyncReadExt;
use tokio::net::tcp::ReadHalf;
use tokio::sync::Notify;

use super::{Connection, End, Flow, READ_CHUNK_BYTES, sleep_or_forever};
use crate::clock::unix_ms;
use crate::resp::clients::{UNBLOCK_ERROR, UNBLOCK_TIMEOUT};
use crate::resp::command::Command;
use crate::resp::command::keys::migrate::{self, PendingMigrate};
use crate::resp::table::CommandSpec;
use crate::serve::shutdown::Shutdown;

/// A blocking command waiting for data.
#[derive(Debug)]
pub(in crate::resp) struct Blocked {
    pub(super) spec: &'static CommandSpec,
    pub(super) command: Command,
    pub(super) keys: Vec<bytes::Bytes>,
    pub(super) deadline: Option<Instant>,
    /// The integer answered at the deadline (WAIT's 0); `None`: the null array.
    pub(super) timeout_reply: Option<i64>,
}

/// What a blocked connection keeps watching besides its keys.
pub(super) struct Parked<'r, 'a> {
    pub(super) reader: &'r mut ReadHalf<'a>,
    pub(super) input: &'r mut BytesMut,
    pub(super) shutdown: &'r Shutdown,
}

impl Connection {
    /// Parks the connection until a key gets data (then retries the
    /// command), the deadline passes or CLIENT UNBLOCK asks (then replies as
    /// on a timeout, or with the `UNBLOCKED` error), or the client is killed,
    /// disconnects or the server shuts down.
    pub(super) async fn block(
        &mut self,
        blocked: Blocked,
        parked: Parked<'_, '_>,
        output: &mut BytesMut,
    ) -> Result<(), End> {
        let Blocked {
            spec,
            command,
            keys,
            deadline,
            timeout_reply,
        } = blocked;
        let Parked {
            reader,
            input,
            shutdown,
        } = parked;
        let notify = Arc::new(Notify::new());
        let db = self.session.db;
        self.shared.cache.block(db, &keys, &notify);
        let result = loop {
            // Registered first, then retried: a push between the first attempt
            // and the registration is not missed.
            self.now_ms = unix_ms();
            self.session.wrote.store(true, Ordering::Relaxed);
            self.woken = true;
            let flow = self.execute(spec, command.clone(), output);
            self.woken = false;
            if let Flow::Continue = flow {
                break Ok(());
            }
            let timeout = deadline.map(|at| at.saturating_duration_since(Instant::now()));
            let unblocked = self.handle.unblock.swap(0, Ordering::AcqRel);
            if unblocked == UNBLOCK_ERROR {
                write::write_error(output, b"UNBLOCKED client unblocked via CLIENT UNBLOCK");
                break Ok(());
            }
            if unblocked == UNBLOCK_TIMEOUT || timeout.is_some_and(|left| left.is_zero()) {
                // Redis answers every timed-out blocking list command with the null array.
                match timeout_reply {
                    Some(n) => write::write_integer(output, n),
                    None => write::write_null_array(output, self.session.protocol),
                }
                break Ok(());
            }
            input.reserve(READ_CHUNK_BYTES);
            tokio::select! {
                () = notify.notified() => {}
                () = sleep_or_forever(timeout) => {}
                read = reader.read_buf(input) => match read {
                    Ok(0) | Err(_) => break Err(End::Closed),
                    Ok(read) => self.shared.stats.read(read),
                },
                () = self.handle.kill.notified() => if self.handle.killed.load(Ordering::Acquire) {
                    break Err(End::Closed);
                },
                () = shutdown.wait() => break Err(End::Closed),
            }
        };
        self.handle.blocked.store(false, Ordering::Release);
        self.shared.cache.unblock(db, &keys, &notify);
        result
    }
}

impl Connection {
    /// Awaits MIGRATE's transfer (until a kill or the shutdown), then finishes it.
    pub(super) async fn migrate(
        &mut self,
        mut pending: PendingMigrate,
        shutdown: &Shutdown,
        output: &mut BytesMut,
    ) -> Result<(), End> {
        let mut woken = false;
        let transfer = loop {
            tokio::select! {
                done = &mut pending.transfer => break done,
                () = shutdown.wait() => return Err(End::Closed),
                () = self.handle.kill.notified() => {
                    if self.handle.killed.load(Ordering::Acquire) {
                        return Err(End::Closed);
                    }
                    woken = true;
                }
            }
        };
        if woken {
            // Not a kill (an inbox or an ACL change): looked at after.
            self.handle.kill.notify_one();
        }
        migrate::finish(self, pending, transfer, output);
        Ok(())
    }
}
