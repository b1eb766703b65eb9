//! Stream administration over the native protocol: CreateStream, DescribeStream,
//! DeleteStream and ListStreams, translated to the broker's calls (those that touch disk
//! run on the blocking pool) and its answers to StreamInfo frames.

use std::time::Duration;

use quiver_core::streams::durable::{Durability, DurableConfig, Retention};
use quiver_core::streams::{
    self as core, Broker, CreateStreamError, DeleteStreamError, SlowPolicy, StreamConfig,
};
use quiver_wire::{
    CreateStream, DeleteStream, DescribeStream, ErrorCode, ErrorFrame, ListStreams, Policy,
    Storage, StreamDeleted, StreamInfo, StreamList, StreamSettings,
};

use super::NativeShared;
use super::writer::Outgoing;

/// Most bytes of StreamInfo entries one StreamList page holds: under the frame limit with
/// room for the page's own fields.
const MAX_PAGE_BYTES: usize = quiver_wire::limits::MAX_FRAME_LEN - 1024;

fn error(request_id: u32, code: ErrorCode, message: &str) -> Outgoing {
    Outgoing::encode(request_id, &ErrorFrame::new(code, message))
}

fn core_name(name: &quiver_wire::StreamName) -> core::StreamName {
    core::StreamName::new(name.as_str()).expect("the wire checks the same name grammar")
}

/// Handles CreateStream.
pub async fn create(shared: &NativeShared, request_id: u32, request: CreateStream) -> Outgoing {
    let name = core_name(&request.stream);
    let defaults = shared.broker.config().default_stream;
    let config = match stream_config(&request.settings, defaults) {
        Ok(config) => config,
        Err(message) => return error(request_id, ErrorCode::INVALID_ARGUMENT, &message),
    };
    let broker = shared.broker.clone();
    let created = tokio::task::spawn_blocking(move || {
        broker
            .create_stream(&name, config)
            .map(|handle| handle.info())
    })
    .await;
    match created {
        Ok(Ok(info)) => Outgoing::encode(request_id, &stream_info(&shared.broker, &info)),
        Ok(Err(failure)) => {
            let code = match &failure {
                CreateStreamError::Exists { .. } => ErrorCode::ALREADY_EXISTS,
                CreateStreamError::TooManyStreams { .. }
                | CreateStreamError::TooManyDurable { .. } => ErrorCode::LIMIT_EXCEEDED,
                CreateStreamError::NoStorage { .. } => ErrorCode::UNSUPPORTED,
                CreateStreamError::Config { .. } => ErrorCode::INVALID_ARGUMENT,
                _ => ErrorCode::STORAGE,
            };
            error(request_id, code, &failure.to_string())
        }
        Err(join) => error(request_id, ErrorCode::INTERNAL, &join.to_string()),
    }
}

/// Handles DescribeStream.
pub fn describe(shared: &NativeShared, request_id: u32, request: &DescribeStream) -> Outgoing {
    match shared.broker.describe(&core_name(&request.stream)) {
        Some(info) => Outgoing::encode(request_id, &stream_info(&shared.broker, &info)),
        None => error(
            request_id,
            ErrorCode::NOT_FOUND,
            &format!("stream {} does not exist", request.stream),
        ),
    }
}

/// Handles DeleteStream.
pub async fn delete(shared: &NativeShared, request_id: u32, request: DeleteStream) -> Outgoing {
    let broker = shared.broker.clone();
    let name = core_name(&request.stream);
    let deleted = tokio::task::spawn_blocking(move || broker.delete_stream(&name)).await;
    match deleted {
        Ok(Ok(())) => Outgoing::encode(request_id, &StreamDeleted),
        Ok(Err(failure)) => {
            let code = match failure {
                DeleteStreamError::NotFound { .. } => ErrorCode::NOT_FOUND,
                _ => ErrorCode::STORAGE,
            };
            error(request_id, code, &failure.to_string())
        }
        Err(join) => error(request_id, ErrorCode::INTERNAL, &join.to_string()),
    }
}

/// Handles ListStreams: a page of streams after `after`, cut short when the next entry
/// would not fit a frame.
pub fn list(shared: &NativeShared, request_id: u32, request: &ListStreams) -> Outgoing {
    let after = request.after.as_ref().map(|name| name.as_str().to_owned());
    let mut streams = Vec::new();
    let mut bytes = 0;
    let mut more = false;
    for info in shared.broker.list_streams() {
        if after
            .as_deref()
            .is_some_and(|after| info.name.as_str() <= after)
        {
            continue;
        }
        let entry = stream_info(&shared.broker, &info);
        let size = 128
            + entry.stream.as_str().len()
            + entry.groups.iter().map(|g| 1 + g.len()).sum::<usize>();
        if streams.len() >= usize::from(request.limit) || bytes + size > MAX_PAGE_BYTES {
            more = true;
            break;
        }
        bytes += size;
        streams.push(entry);
    }
    Outgoing::encode(request_id, &StreamList { streams, more })
}

/// A broker stream's information as a StreamInfo frame.
pub fn stream_info(broker: &Broker, info: &core::StreamInfo) -> StreamInfo {
    let stream =
        quiver_wire::StreamName::new(info.name.as_str()).expect("core names are wire names");
    let groups = match &info.durable {
        Some(_) => broker
            .groups(&info.name)
            .map(|groups| {
                groups
                    .into_iter()
                    .take(quiver_wire::limits::MAX_GROUPS_LISTED)
                    .map(|g| g.name)
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let (first_offset, next_offset, stored_bytes) = match &info.durable {
        Some(durable) => (
            durable.first_offset,
            durable.next_offset,
            durable.stored_bytes,
        ),
        None => (0, info.live.published, 0),
    };
    StreamInfo {
        stream,
        created_ms: info.created_ms,
        settings: wire_settings(&info.config),
        first_offset,
        next_offset,
        stored_bytes,
        subscribers: u32::try_from(info.live.subscribers).unwrap_or(u32::MAX),
        published: info.live.published,
        groups,
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A stream's settings as the wire says them.
pub fn wire_settings(config: &StreamConfig) -> StreamSettings {
    let policy = match config.policy {
        SlowPolicy::DropNew => Policy::DropNew,
        SlowPolicy::DropOld => Policy::DropOld,
        SlowPolicy::Block => Policy::Block,
        SlowPolicy::Disconnect => Policy::Disconnect,
    };
    let Some(durable) = &config.durable else {
        return StreamSettings {
            storage: Storage::Live,
            max_age_ms: 0,
            max_bytes: 0,
            max_messages: 0,
            keep_unacked: false,
            dedupe_window_ms: 0,
            policy,
        };
    };
    let storage = match durable.durability {
        Durability::Buffered => Storage::Buffered,
        Durability::Os => Storage::Os,
        Durability::Interval { interval_ms } => Storage::Interval {
            interval_ms: u32::try_from(interval_ms).unwrap_or(u32::MAX),
        },
        Durability::Sync => Storage::Sync,
    };
    let retention = &durable.retention;
    StreamSettings {
        storage,
        max_age_ms: retention.max_age.map_or(0, millis),
        max_bytes: retention.max_bytes.unwrap_or(0),
        max_messages: retention.max_messages.unwrap_or(0),
        keep_unacked: retention.keep_unacked,
        dedupe_window_ms: millis(durable.dedupe_window),
        policy,
    }
}

/// The stream settings a CreateStream asks for, over the server's default stream.
pub fn stream_config(
    settings: &StreamSettings,
    defaults: StreamConfig,
) -> Result<StreamConfig, String> {
    let policy = match settings.policy {
        Policy::Default => defaults.policy,
        Policy::DropNew => SlowPolicy::DropNew,
        Policy::DropOld => SlowPolicy::DropOld,
        Policy::Block => SlowPolicy::Block,
        Policy::Disconnect => SlowPolicy::Disconnect,
    };
    let durability = match settings.storage {
        Storage::Live => None,
        Storage::Buffered => Some(Durability::Buffered),
        Storage::Os => Some(Durability::Os),
        Storage::Interval { interval_ms } => Some(Durability::Interval {
            interval_ms: u64::from(interval_ms),
        }),
        Storage::Sync => Some(Durability::Sync),
    };
    let nonzero = |v: u64| (v > 0).then_some(v);
    let durable = match durability {
        None => {
            let stored = settings.max_age_ms
                | settings.max_bytes
                | settings.max_messages
                | settings.dedupe_window_ms;
            if stored != 0 || settings.keep_unacked {
                return Err(
                    "retention and de-duplication apply to durable streams, not to a live one; give a stored durability (buffered, os, interval:MS or sync)"
                        .to_owned(),
                );
            }
            None
        }
        Some(durability) => {
            let config = DurableConfig {
                durability,
                retention: Retention {
                    max_age: nonzero(settings.max_age_ms).map(Duration::from_millis),
                    max_bytes: nonzero(settings.max_bytes),
                    max_messages: nonzero(settings.max_messages),
                    keep_unacked: settings.keep_unacked,
                },
                dedupe_window: Duration::from_millis(settings.dedupe_window_ms),
            };
            config.validate().map_err(|e| e.to_string())?;
            Some(config)
        }
    };
    Ok(StreamConfig {
        policy,
        durable,
        ..defaults
    })
}
