//! What refuses a request before it runs (the user's permissions, `maxmemory`, a failed
//! persistence), how a refusal is answered (a refused EXEC discards the transaction), and
//! MULTI's queue.

use std::sync::atomic::Ordering;

use bytes::BytesMut;
use quiver_core::pubsub::Space;
use quiver_resp::encode as write;
use quiver_resp::{CommandError, ErrorCode, Request};

use super::{Connection, Flow};
use crate::resp::acl::log::Refusal;
use crate::resp::session::{MAX_QUEUED_COMMANDS, Multi, Queued};
use crate::resp::table::{CommandSpec, flag};

impl Connection {
    /// Whether the client's user may run `request`; a refusal is logged (ACL LOG). The
    /// user is read again when the users changed.
    pub(super) fn authorize(
        &mut self,
        spec: &CommandSpec,
        request: &Request,
    ) -> Result<(), CommandError> {
        self.session.refresh_user(&self.shared.acl);
        let user = &self.session.user;
        let Err(denied) = user.check(spec, request) else {
            return Ok(());
        };
        let context = if self.session.multi.is_some() {
            "multi"
        } else {
            "toplevel"
        };
        // The client as it is now, refused command included.
        self.handle.update(&self.session);
        let client_info = self.handle.line();
        let refusal = Refusal::of(spec, request, denied, user, context, client_info);
        self.shared.log_refusal(refusal);
        Err(crate::resp::acl::no_permission(spec, denied))
    }

    /// Whether `maxmemory` refuses `spec` before it runs, as Redis's check before a
    /// command: a command that may grow memory (`denyoom`) is refused while eviction cannot
    /// bring memory under the limit, inside MULTI nothing but EXEC, DISCARD, QUIT and
    /// RESET is queued then, and EXEC is refused when a queued command may grow memory.
    /// (Each write of the keyspace checks memory again as it runs, for every transport.)
    pub(super) fn refused_for_memory(&self, spec: &CommandSpec) -> bool {
        let checked = match (&self.session.multi, spec.name) {
            (Some(multi), "exec") => multi.deny_oom,
            (Some(_), "discard" | "quit" | "reset") => false,
            (Some(_), _) => true,
            (None, _) => spec.has(flag::DENYOOM),
        };
        // A busy script holds the keyspace (Redis skips the check while one runs too).
        if !checked || self.shared.scripts.busy() {
            return false;
        }
        let cache = &self.shared.cache;
        let max = cache.max_memory_bytes();
        // Under the limit (the common case) nothing is evicted and nothing is to tell.
        if max == 0 || cache.used_memory() as u64 <= max {
            return false;
        }
        let refused = cache.make_room(self.now_ms).is_err();
        // What eviction changed is told now (invalidations, blocked clients).
        cache.after_command();
        refused
    }

    /// After a change to its user's rules: whether a subscription of this client is no
    /// longer allowed by them (the connection then closes, as Redis closes it).
    pub(super) fn channels_revoked(&self) -> bool {
        if !self.handle.recheck_channels.swap(false, Ordering::AcqRel) {
            return false;
        }
        let Some(subscriber) = &self.session.subscriber else {
            return false;
        };
        let Some(user) = self.shared.acl.user(&self.session.user.name) else {
            return true;
        };
        let denied = |space: Space, pattern: bool| {
            subscriber
                .names(space)
                .iter()
                .any(|name| !user.allows_channel(name, pattern))
        };
        let revoked = denied(Space::Channel, false)
            || denied(Space::Shard, false)
            || denied(Space::Pattern, true);
        if revoked {
            tracing::info!(
                client = self.session.id,
                peer = %self.session.peer,
                "closing client: its user may no longer use a channel it is subscribed to"
            );
        }
        revoked
    }

    /// Redis's `MISCONF` refusal of a write (and of PING) while the append-only file
    /// cannot be written or snapshots fail with `stop-writes-on-bgsave-error`.
    pub(super) fn refused_for_persistence(&self, spec: &CommandSpec) -> Option<CommandError> {
        if !spec.has(flag::WRITE) && spec.name != "ping" {
            return None;
        }
        let cache = &self.shared.cache;
        if cache.append_only().write_failed() {
            return Some(misconf(MISCONF_AOF));
        }
        cache
            .persistence()
            .writes_refused()
            .then(|| misconf(MISCONF_RDB))
    }

    /// Replies an error for a request that will not run; inside MULTI the
    /// transaction is marked to abort, and a refused EXEC discards it, as Redis does.
    pub(super) fn refuse(
        &mut self,
        spec: Option<&CommandSpec>,
        error: &CommandError,
        out: &mut BytesMut,
    ) -> Flow {
        if let Some(spec) = spec {
            self.shared.stats.reject(spec);
        }
        let before = out.len();
        self.refusal(spec, error, out);
        self.shared.stats.error(&out[before..]);
        Flow::Continue
    }

    /// Writes the refusal; inside MULTI the transaction is marked to abort, and a refused
    /// EXEC discards it.
    fn refusal(&mut self, spec: Option<&CommandSpec>, error: &CommandError, out: &mut BytesMut) {
        if spec.is_some_and(|spec| spec.name == "exec") || error.code() == ErrorCode::ExecAbort {
            // The transaction is discarded and every key unwatched, as in Redis (also
            // when EXEC came without MULTI).
            self.session.multi = None;
            crate::resp::command::transaction::exec::unwatch_all(self);
            let error = match error.code() {
                ErrorCode::ExecAbort => error.to_string(),
                _ => CommandError::exec_abort(error).to_string(),
            };
            write::write_error(out, error.as_bytes());
            return;
        }
        if let Some(multi) = &mut self.session.multi {
            multi.aborted = true;
        }
        write::write_error(out, error.to_string().as_bytes());
    }

    pub(super) fn queue(&mut self, command: Queued, out: &mut BytesMut) -> Flow {
        let multi = self.session.multi.get_or_insert_with(Multi::default);
        if multi.queued.len() >= MAX_QUEUED_COMMANDS {
            multi.aborted = true;
            let message = format!(
                "ERR MULTI may queue at most {MAX_QUEUED_COMMANDS} commands; the transaction will abort"
            );
            write::write_error(out, message.as_bytes());
            return Flow::Continue;
        }
        multi.queued.push(command);
        write::write_simple(out, b"QUEUED");
        Flow::Continue
    }
}

/// Redis's refusal of writes while snapshots fail (`stop-writes-on-bgsave-error`).
const MISCONF_RDB: &str = "Quiver is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the server log for details about the RDB error.";

/// Redis's refusal of writes while the append-only file cannot be written.
const MISCONF_AOF: &str = "Errors writing to the AOF file: a write or fsync of the append-only log failed (see the server log); writes resume after a successful BGREWRITEAOF";

fn misconf(message: &'static str) -> CommandError {
    CommandError::Other {
        code: ErrorCode::MisConf,
        message: message.into(),
    }
}
