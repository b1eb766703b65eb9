#![no_main]
//! Feeds arbitrary bytes after a HyperLogLog header (sparse or dense, by the first byte)
//! to every operation on the format: validation, counting, merging, adding, turning dense
//! and decoding. A damaged value must be refused with an error, never panic, and what an
//! operation accepts must stay a valid value that counts the same whichever way it is read.

use libfuzzer_sys::fuzz_target;
use quiver_core::cache::hll;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut value = b"HYLL".to_vec();
    value.push(first & 1);
    value.extend_from_slice(&[0; 11]);
    value.extend_from_slice(rest);
    if hll::check(&value).is_err() {
        return;
    }
    let counted = hll::count(&value);
    let mut registers = vec![0u8; hll::REGISTERS];
    let merged = hll::merge_into(&mut registers, &value);
    let _ = hll::decode(&value);
    let mut dense = value.clone();
    if hll::to_dense(&mut dense).is_ok() {
        assert!(hll::check(&dense).is_ok());
        assert_eq!(
            hll::count(&dense).ok(),
            counted.ok().filter(|_| merged.is_ok())
        );
        assert_eq!(hll::registers(&dense).ok(), Some(registers.clone()));
    }
    let mut added = value.clone();
    for element in rest.chunks(3).take(64) {
        if hll::add(&mut added, element, 300).is_err() {
            return;
        }
        assert!(hll::check(&added).is_ok());
    }
    // A valid value stays valid (a damaged one may stay damaged, as in Redis).
    if counted.is_ok() {
        assert!(hll::count(&added).is_ok());
    }
    let mut raised = hll::empty();
    hll::raise_all(&mut raised, &registers, 300);
    assert!(hll::count(&raised).is_ok());
});
