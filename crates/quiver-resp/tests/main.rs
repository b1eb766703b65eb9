//! Integration tests of quiver-resp: properties of the codec as a whole.

mod roundtrip;
