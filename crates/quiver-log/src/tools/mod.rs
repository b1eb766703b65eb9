//! Library side of `quiver log verify|inspect|dump DIR`: functions that do the work and
//! return typed reports with `Display` impls; the binary only prints them.

mod dump;
mod inspect;
mod verify;

pub use dump::{Dump, DumpRecord, dump};
pub use inspect::{Inspection, SegmentInfo, inspect};
pub use verify::{VerifyError, VerifyReport, verify, verify_storage};
