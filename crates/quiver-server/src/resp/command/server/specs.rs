//! The server commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{
    ADMIN, ALLOW_BUSY, FAST, LOADING, NO_ASYNC_LOADING, NO_MULTI, NOSCRIPT, READONLY, STALE,
};
use crate::resp::table::{CommandSpec, Group, Parser};

pub(super) const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Server,
        name,
        arity,
        flags,
        (0, 0, 0),
        since,
        summary,
        parser,
    )
}

const ADMIN_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "cluster",
        -2,
        0,
        "3.0.0",
        "A container for Redis Cluster commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(CLUSTER_SUBCOMMANDS),
    cluster_connection(
        "readonly",
        LOADING | STALE | FAST,
        "Enables read-only queries for a connection to a Redis Cluster replica node.",
    ),
    cluster_connection(
        "readwrite",
        LOADING | STALE | FAST,
        "Enables read-write queries for a connection to a Redis Cluster replica node.",
    ),
    cluster_connection(
        "asking",
        FAST,
        "Signals that a cluster client is following an -ASK redirect.",
    ),
    c(
        "slowlog",
        -2,
        0,
        "2.2.12",
        "A container for slow log commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(SLOWLOG_SUBCOMMANDS),
    c(
        "module",
        -2,
        0,
        "4.0.0",
        "A container for module commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(MODULE_SUBCOMMANDS),
    c(
        "debug",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "1.0.0",
        "A container for debugging commands.",
        parse_debug,
    )
    .with_syntax("subcommand [argument...]"),
    c(
        "acl",
        -2,
        0,
        "6.0.0",
        "A container for Access List Control commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(super::acl::ACL_SUBCOMMANDS),
    c(
        "monitor",
        1,
        ADMIN_FLAGS,
        "1.0.0",
        "Listens for all requests received by the server in real time.",
        |_| wrap(ServerCommand::Monitor),
    )
    .dangerous(),
    c(
        "save",
        1,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI,
        "1.0.0",
        "Synchronously saves the database(s) to disk.",
        |_| wrap(ServerCommand::Save),
    )
    .dangerous(),
    c(
        "bgsave",
        -1,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        "1.0.0",
        "Asynchronously saves the database(s) to disk.",
        parse_bgsave,
    )
    .with_syntax("[SCHEDULE]")
    .dangerous(),
    c(
        "bgrewriteaof",
        1,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        "1.0.0",
        "Asynchronously rewrites the append-only file to disk.",
        |_| wrap(ServerCommand::BgRewriteAof),
    )
    .dangerous(),
    c(
        "latency",
        -2,
        0,
        "2.8.13",
        "A container for latency diagnostics commands",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(LATENCY_SUBCOMMANDS),
    c(
        "lastsave",
        1,
        LOADING | STALE | FAST,
        "1.0.0",
        "Returns the Unix timestamp of the last successful save to disk.",
        |_| wrap(ServerCommand::LastSave),
    )
    .with_acl_category("@admin")
    .dangerous()
    .with_tips(&["nondeterministic_output"]),
    c(
        "lolwut",
        -1,
        READONLY | FAST,
        "5.0.0",
        "Displays computer art and the server version",
        parse_lolwut,
    )
    .with_syntax("[VERSION version]"),
    c(
        "info",
        -1,
        LOADING | STALE,
        "1.0.0",
        "Returns information and statistics about the server.",
        |a| wrap(ServerCommand::Info { sections: a.rest() }),
    )
    .with_syntax("[section...]")
    .dangerous()
    .with_tips(&[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ]),
    c(
        "config",
        -2,
        0,
        "2.0.0",
        "A container for server configuration commands.",
        |a| Err(a.arity_error()),
    )
    .with_subcommands(CONFIG_SUBCOMMANDS),
    c(
        "command",
        -1,
        LOADING | STALE,
        "2.8.13",
        "Returns detailed information about all commands.",
        |_| wrap(ServerCommand::Command(CommandCommand::All)),
    )
    .with_subcommands(COMMAND_SUBCOMMANDS)
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "time",
        1,
        LOADING | STALE | FAST,
        "2.6.0",
        "Returns the server time.",
        |_| wrap(ServerCommand::Time),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "shutdown",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
        "1.0.0",
        "Synchronously save the dataset to disk and then shut down the server",
        parse_shutdown,
    )
    .with_syntax("[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]"),
    c(
        "role",
        1,
        NOSCRIPT | LOADING | STALE | FAST,
        "2.8.12",
        "Returns the replication role.",
        |_| wrap(ServerCommand::Role),
    )
    .with_acl_category("@admin")
    .dangerous(),
    c(
        "replicaof",
        3,
        ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING,
        "5.0.0",
        "Configures a server as replica of another, or promotes it to a master.",
        replicaof,
    )
    .with_syntax("host port"),
    c(
        "slaveof",
        3,
        ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING,
        "1.0.0",
        "Sets a Redis server as a replica of another, or promotes it to being a master.",
        replicaof,
    )
    .with_syntax("host port"),
];

/// `REPLICAOF host port` / `REPLICAOF NO ONE`, with Redis's port check.
fn replicaof(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let host = args.next()?;
    let port = args.next()?;
    if is(&host, "no") && is(&port, "one") {
        return wrap(ServerCommand::ReplicaOf { primary: None });
    }
    let port = quiver_resp::num::parse_i64(&port)
        .and_then(|p| u16::try_from(p).ok())
        .ok_or(CommandError::Message("Invalid master port"))?;
    wrap(ServerCommand::ReplicaOf {
        primary: Some((host, port)),
    })
}

const CONFIG_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "config|get",
        -3,
        ADMIN_FLAGS,
        "2.0.0",
        "Returns the effective values of configuration parameters.",
        |a| config(ConfigCommand::Get { patterns: a.rest() }),
    )
    .with_syntax("parameter..."),
    c(
        "config|set",
        -4,
        ADMIN_FLAGS,
        "2.0.0",
        "Sets configuration parameters in-flight.",
        |a| {
            // Redis answers an odd name/value list with a syntax error.
            if !a.remaining().is_multiple_of(2) {
                return Err(CommandError::Syntax);
            }
            config(ConfigCommand::Set { pairs: a.pairs()? })
        },
    )
    .with_syntax("(parameter value)...")
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    c(
        "config|resetstat",
        2,
        ADMIN_FLAGS,
        "2.0.0",
        "Resets the server's statistics.",
        |_| config(ConfigCommand::ResetStat),
    ),
    c(
        "config|rewrite",
        2,
        ADMIN_FLAGS,
        "2.8.0",
        "Persists the effective configuration to file.",
        |_| config(ConfigCommand::Rewrite),
    ),
    c(
        "config|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| config(ConfigCommand::Help),
    ),
];

const COMMAND_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "command|count",
        2,
        LOADING | STALE,
        "2.8.13",
        "Returns a count of commands.",
        |_| command(CommandCommand::Count),
    )
    .with_acl_category("@connection"),
    c(
        "command|info",
        -2,
        LOADING | STALE,
        "2.8.13",
        "Returns information about one, multiple or all commands.",
        |a| command(CommandCommand::Info { names: a.rest() }),
    )
    .with_syntax("[command-name...]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|docs",
        -2,
        LOADING | STALE,
        "7.0.0",
        "Returns documentary information about one, multiple or all commands.",
        |a| command(CommandCommand::Docs { names: a.rest() }),
    )
    .with_syntax("[command-name...]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|getkeys",
        -4,
        LOADING | STALE,
        "2.8.13",
        "Extracts the key names from an arbitrary command.",
        |a| command(CommandCommand::GetKeys { args: a.rest() }),
    )
    .with_syntax("command [arg...]")
    .with_acl_category("@connection"),
    c(
        "command|getkeysandflags",
        -4,
        LOADING | STALE,
        "7.0.0",
        "Extracts the key names and access flags for an arbitrary command.",
        |a| command(CommandCommand::GetKeysAndFlags { args: a.rest() }),
    )
    .with_syntax("command [arg...]")
    .with_acl_category("@connection"),
    c(
        "command|list",
        -2,
        LOADING | STALE,
        "7.0.0",
        "Returns a list of command names.",
        parse_command_list,
    )
    .with_syntax("[FILTERBY (MODULE module-name|ACLCAT category|PATTERN pattern)]")
    .with_acl_category("@connection")
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "command|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| command(CommandCommand::Help),
    )
    .with_acl_category("@connection"),
];

/// CLUSTER's subcommands: a standalone node answers each as Redis does with cluster
/// support disabled.
const CLUSTER_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "cluster|links",
        2,
        STALE,
        "3.0.0",
        "Returns a list of all TCP links to and from peer nodes.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|failover",
        -2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Forces a replica to perform a manual failover of its master.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("[FORCE|TAKEOVER]"),
    c(
        "cluster|meet",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Forces a node to handshake with another node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("ip port [cluster-bus-port]"),
    c(
        "cluster|delslots",
        -3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Sets hash slots as unbound for a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("slot..."),
    c(
        "cluster|addslotsrange",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Assigns new hash slot ranges to a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("(start-slot end-slot)..."),
    c(
        "cluster|help",
        2,
        LOADING | STALE,
        "3.0.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(ServerCommand::ClusterDisabled),
    ),
    c(
        "cluster|bumpepoch",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Advances the cluster config epoch.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|flushslots",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Deletes all slots information from a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    ),
    c(
        "cluster|reset",
        -2,
        ADMIN | NOSCRIPT | STALE,
        "3.0.0",
        "Resets a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("[HARD|SOFT]"),
    c(
        "cluster|keyslot",
        3,
        STALE,
        "3.0.0",
        "Returns the hash slot for a key.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("key"),
    c(
        "cluster|forget",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Removes a node from the nodes table.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("node-id"),
    c(
        "cluster|addslots",
        -3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Assigns new hash slots to a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("slot..."),
    c(
        "cluster|saveconfig",
        2,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Forces a node to save the cluster configuration to disk.",
        |_| wrap(ServerCommand::ClusterDisabled),
    ),
    c(
        "cluster|getkeysinslot",
        4,
        STALE,
        "3.0.0",
        "Returns the key names in a hash slot.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("slot count")
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|delslotsrange",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Sets hash slot ranges as unbound for a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("(start-slot end-slot)..."),
    c(
        "cluster|set-config-epoch",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Sets the configuration epoch for a new node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("config-epoch"),
    c(
        "cluster|nodes",
        2,
        STALE,
        "3.0.0",
        "Returns the cluster configuration for a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|replicas",
        3,
        ADMIN | STALE,
        "3.0.0",
        "Lists the replica nodes of a master node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("node-id")
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|setslot",
        -4,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Binds a hash slot to a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("slot (IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE)"),
    c(
        "cluster|countkeysinslot",
        3,
        STALE,
        "3.0.0",
        "Returns the number of keys in a hash slot.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("slot"),
    c(
        "cluster|slots",
        2,
        STALE,
        "3.0.0",
        "Returns the mapping of cluster slots to nodes.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|count-failure-reports",
        3,
        ADMIN | STALE,
        "3.0.0",
        "Returns the number of active failure reports active for a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("node-id")
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|slaves",
        3,
        ADMIN | STALE,
        "3.0.0",
        "Lists the replica nodes of a master node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("node-id")
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|myid",
        2,
        STALE,
        "3.0.0",
        "Returns the ID of a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    ),
    c(
        "cluster|info",
        2,
        STALE,
        "3.0.0",
        "Returns information about the state of a node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|shards",
        2,
        STALE,
        "3.0.0",
        "Returns the mapping of cluster slots to shards.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_tips(&["nondeterministic_output"]),
    c(
        "cluster|replicate",
        3,
        ADMIN | STALE | NO_ASYNC_LOADING,
        "3.0.0",
        "Configure a node as replica of a master node.",
        |_| wrap(ServerCommand::ClusterDisabled),
    )
    .with_syntax("node-id"),
];

/// READONLY, READWRITE and ASKING: cluster connection commands, answered as a
/// standalone Redis answers them.
const fn cluster_connection(name: &'static str, flags: u32, summary: &'static str) -> CommandSpec {
    CommandSpec::new(
        Group::Connection,
        name,
        1,
        flags,
        (0, 0, 0),
        "3.0.0",
        summary,
        |_| wrap(ServerCommand::ClusterDisabled),
    )
}

/// `MODULE LOAD|LOADEX path ...`: the path, for the log.
fn parse_module_load(a: &mut Args<'_>) -> Result<Command, CommandError> {
    let path = Bytes::copy_from_slice(a.next_slice()?);
    a.rest();
    wrap(ServerCommand::ModuleLoad { path: Some(path) })
}

const MODULE_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "module|list",
        2,
        ADMIN | NOSCRIPT,
        "4.0.0",
        "Returns all loaded modules.",
        |_| wrap(ServerCommand::ModuleList),
    )
    .with_tips(&["nondeterministic_output_order"]),
    c(
        "module|load",
        -3,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        "4.0.0",
        "Loads a module.",
        parse_module_load,
    )
    .with_syntax("path [arg...]"),
    c(
        "module|loadex",
        -3,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        "7.0.0",
        "Loads a module using extended parameters.",
        parse_module_load,
    )
    .with_syntax("path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]"),
    c(
        "module|unload",
        3,
        ADMIN | NOSCRIPT | NO_ASYNC_LOADING,
        "4.0.0",
        "Unloads a module.",
        |_| wrap(ServerCommand::ModuleLoad { path: None }),
    )
    .with_syntax("name"),
    c(
        "module|help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Returns helpful text about the different subcommands.",
        |_| wrap(ServerCommand::ModuleHelp),
    ),
];

const SLOWLOG_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "slowlog|get",
        -2,
        ADMIN | LOADING | STALE,
        "2.2.12",
        "Returns the slow log's entries.",
        parse_slowlog_get,
    )
    .with_syntax("[count]")
    .with_tips(&["request_policy:all_nodes", "nondeterministic_output"]),
    c(
        "slowlog|len",
        2,
        ADMIN | LOADING | STALE,
        "2.2.12",
        "Returns the number of entries in the slow log.",
        |_| wrap(ServerCommand::SlowLogLen),
    )
    .with_tips(&[
        "request_policy:all_nodes",
        "response_policy:agg_sum",
        "nondeterministic_output",
    ]),
    c(
        "slowlog|reset",
        2,
        ADMIN | LOADING | STALE,
        "2.2.12",
        "Clears all entries from the slow log.",
        |_| wrap(ServerCommand::SlowLogReset),
    )
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    c(
        "slowlog|help",
        2,
        LOADING | STALE,
        "6.2.0",
        "Show helpful text about the different subcommands",
        |_| wrap(ServerCommand::SlowLogHelp),
    ),
];

const LATENCY_TIPS: &[&str] = &[
    "nondeterministic_output",
    "request_policy:all_nodes",
    "response_policy:special",
];

const LATENCY_SUBCOMMANDS: &[CommandSpec] = &[
    c(
        "latency|doctor",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "2.8.13",
        "Return a human readable latency analysis report.",
        |_| wrap(ServerCommand::LatencyDoctor),
    )
    .with_tips(LATENCY_TIPS),
    c(
        "latency|graph",
        3,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "2.8.13",
        "Return a latency graph for the event.",
        |a| wrap(ServerCommand::LatencyGraph { event: a.next()? }),
    )
    .with_syntax("event")
    .with_tips(LATENCY_TIPS),
    c(
        "latency|history",
        3,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "2.8.13",
        "Return timestamp-latency samples for the event.",
        |a| wrap(ServerCommand::LatencyHistory { event: a.next()? }),
    )
    .with_syntax("event")
    .with_tips(LATENCY_TIPS),
    c(
        "latency|latest",
        2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "2.8.13",
        "Return the latest latency samples for all events.",
        |_| wrap(ServerCommand::LatencyLatest),
    )
    .with_tips(LATENCY_TIPS),
    c(
        "latency|reset",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "2.8.13",
        "Reset latency data for one or more events.",
        |a| wrap(ServerCommand::LatencyReset { events: a.rest() }),
    )
    .with_syntax("[event...]")
    .with_tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    c(
        "latency|histogram",
        -2,
        ADMIN | NOSCRIPT | LOADING | STALE,
        "7.0.0",
        "Return the cumulative distribution of latencies of a subset of commands or all.",
        |a| wrap(ServerCommand::LatencyHistogram { commands: a.rest() }),
    )
    .with_syntax("[command...]")
    .with_tips(LATENCY_TIPS),
    c(
        "latency|help",
        2,
        LOADING | STALE,
        "2.8.13",
        "Show helpful text about the different subcommands.",
        |_| wrap(ServerCommand::LatencyHelp),
    ),
];
