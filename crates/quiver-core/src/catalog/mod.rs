//! The catalog: what must survive a restart besides the messages themselves. Stream
//! definitions (name, settings, durability, retention) and consumer-group state (position,
//! pending messages and their delivery counts), one file each in the data directory's
//! `catalog/`, every write atomic (temp file, fsync, rename, directory fsync), every file
//! checked by a CRC32C when read. Formats: `docs/catalog-format.md`.
//!
//! Files are named after the stream with `/` written as `~` (which no name may contain):
//! `catalog/streams/acme~orders~created.stream`, and for a group
//! `catalog/groups/acme~orders~created@billing.group` (`@` is not a name byte either).

mod group_file;
mod stream_file;

use std::io;
use std::path::Path;
use std::sync::Arc;

use quiver_log::storage::{FileStorage, Storage, read_all, write_atomic};
use thiserror::Error;

use crate::streams::StreamName;

pub(crate) use group_file::GroupSnapshot;
pub(crate) use stream_file::StreamDef;

const STREAM_SUFFIX: &str = ".stream";
const GROUP_SUFFIX: &str = ".group";

/// A catalog file that could not be read or written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The file system refused.
    #[error("catalog file {file}: {source}")]
    Io { file: String, source: io::Error },
    /// A file is damaged; start-up stops rather than guess.
    #[error(
        "catalog file {file} is damaged: {fault}; restore it from a backup, or move it away to drop what it describes"
    )]
    Corrupt { file: String, fault: String },
}

/// The catalog directories of one data directory.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    streams: Arc<dyn Storage>,
    groups: Arc<dyn Storage>,
}

/// `acme/orders/created` -> `acme~orders~created`.
pub(crate) fn file_stem(name: &StreamName) -> String {
    name.as_str().replace('/', "~")
}

impl Catalog {
    /// Opens (creating) `catalog/streams` and `catalog/groups` under `data_dir`.
    pub(crate) fn open(data_dir: &Path) -> Result<Catalog, CatalogError> {
        let dir = data_dir.join("catalog");
        let open = |sub: &str| {
            FileStorage::new(&dir.join(sub), true)
                .map(|storage| Arc::new(storage) as Arc<dyn Storage>)
                .map_err(|source| CatalogError::Io {
                    file: dir.join(sub).display().to_string(),
                    source,
                })
        };
        Ok(Catalog {
            streams: open("streams")?,
            groups: open("groups")?,
        })
    }

    /// A catalog on any storage backends (tests).
    #[cfg(test)]
    pub(crate) fn with_storage(streams: Arc<dyn Storage>, groups: Arc<dyn Storage>) -> Catalog {
        Catalog { streams, groups }
    }

    /// Every stream definition, in file-name order.
    pub(crate) fn streams(&self) -> Result<Vec<StreamDef>, CatalogError> {
        load(
            &*self.streams,
            |name| name.ends_with(STREAM_SUFFIX),
            StreamDef::decode,
        )
    }

    /// Writes `def` atomically.
    pub(crate) fn put_stream(&self, def: &StreamDef) -> Result<(), CatalogError> {
        let file = format!("{}{STREAM_SUFFIX}", file_stem(&def.name));
        write(&*self.streams, &file, &def.encode())
    }

    /// Removes the definition of `name` (durably).
    pub(crate) fn remove_stream(&self, name: &StreamName) -> Result<(), CatalogError> {
        remove(
            &*self.streams,
            &format!("{}{STREAM_SUFFIX}", file_stem(name)),
        )
    }

    /// Every group snapshot of `stream`.
    pub(crate) fn groups(&self, stream: &StreamName) -> Result<Vec<GroupSnapshot>, CatalogError> {
        let prefix = format!("{}@", file_stem(stream));
        // Only this stream's files are read (start-up asks once per stream).
        let all = load(
            &*self.groups,
            |name| name.starts_with(&prefix) && name.ends_with(GROUP_SUFFIX),
            GroupSnapshot::decode,
        )?;
        Ok(all
            .into_iter()
            .filter(|snapshot| {
                group_file_name(&snapshot.stream, &snapshot.group).starts_with(&prefix)
            })
            .collect())
    }

    /// Writes one group's snapshot atomically.
    pub(crate) fn put_group(&self, snapshot: &GroupSnapshot) -> Result<(), CatalogError> {
        let file = group_file_name(&snapshot.stream, &snapshot.group);
        write(&*self.groups, &file, &snapshot.encode())
    }

    /// Removes one group's snapshot (durably).
    pub(crate) fn remove_group(
        &self,
        stream: &StreamName,
        group: &str,
    ) -> Result<(), CatalogError> {
        remove(&*self.groups, &group_file_name(stream, group))
    }
}

fn group_file_name(stream: &StreamName, group: &str) -> String {
    format!("{}@{group}{GROUP_SUFFIX}", file_stem(stream))
}

fn write(storage: &dyn Storage, file: &str, bytes: &[u8]) -> Result<(), CatalogError> {
    write_atomic(storage, file, bytes).map_err(|source| CatalogError::Io {
        file: format!("{}/{file}", storage.describe()),
        source,
    })
}

fn remove(storage: &dyn Storage, file: &str) -> Result<(), CatalogError> {
    let io = |source| CatalogError::Io {
        file: format!("{}/{file}", storage.describe()),
        source,
    };
    match storage.remove(file) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io(error)),
    }
    storage.sync_dir().map_err(io)
}

/// Reads and decodes every `*suffix` file; a leftover `.tmp` of an interrupted write is
/// ignored (the rename never happened, so the previous version is whole).
fn load<T>(
    storage: &dyn Storage,
    wanted: impl Fn(&str) -> bool,
    decode: fn(&[u8]) -> Result<T, String>,
) -> Result<Vec<T>, CatalogError> {
    let mut names = storage.list().map_err(|source| CatalogError::Io {
        file: storage.describe(),
        source,
    })?;
    names.retain(|name| wanted(name));
    names.sort();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let file = format!("{}/{name}", storage.describe());
        let bytes = storage
            .open(&name, false)
            .and_then(|handle| read_all(&*handle))
            .map_err(|source| CatalogError::Io {
                file: file.clone(),
                source,
            })?;
        out.push(decode(&bytes).map_err(|fault| CatalogError::Corrupt { file, fault })?);
    }
    Ok(out)
}

/// Appends the CRC32C of `bytes` (little-endian).
fn seal(mut bytes: Vec<u8>) -> Vec<u8> {
    let crc = crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// Checks and strips the trailing CRC32C.
fn unseal(bytes: &[u8]) -> Result<&[u8], String> {
    let Some(split) = bytes.len().checked_sub(4) else {
        return Err(format!(
            "{} bytes is too short to hold a checksum",
            bytes.len()
        ));
    };
    let (body, tail) = bytes.split_at(split);
    let stored = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    let computed = crc32c(body);
    if stored != computed {
        return Err(format!(
            "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
        ));
    }
    Ok(body)
}

fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

#[cfg(test)]
mod tests {
    use quiver_log::storage::MemoryStorage;

    use super::*;
    use crate::streams::StreamConfig;

    proptest::proptest! {
        #[test]
        fn any_bytes_decode_or_fail_without_panicking(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = StreamDef::decode(&bytes);
            let _ = GroupSnapshot::decode(&bytes);
            let mut text = b"quiver-stream 1\nname a/b/c\n".to_vec();
            text.extend_from_slice(&bytes);
            let _ = StreamDef::decode(&text);
        }
    }

    #[test]
    fn streams_round_trip_and_damage_is_named() {
        let streams: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
        let catalog = Catalog::with_storage(Arc::clone(&streams), Arc::new(MemoryStorage::new()));
        let def = StreamDef {
            name: StreamName::new("acme/orders/created").unwrap(),
            config: StreamConfig::default(),
            created_ms: 42,
        };
        catalog.put_stream(&def).unwrap();
        assert_eq!(catalog.streams().unwrap(), std::slice::from_ref(&def));
        let file = streams.open("acme~orders~created.stream", false).unwrap();
        let len = file.len().unwrap();
        file.write_at(len / 2, b"#").unwrap();
        let err = catalog.streams().unwrap_err();
        assert!(
            err.to_string().contains("acme~orders~created.stream"),
            "{err}"
        );
        catalog.remove_stream(&def.name).unwrap();
        assert!(catalog.streams().unwrap().is_empty());
        catalog.remove_stream(&def.name).unwrap();
    }
}
