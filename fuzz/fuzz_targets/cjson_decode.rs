#![no_main]
//! Feeds arbitrary bytes to the scripts' `cjson.decode` (lua-cjson's tokenizer, its
//! `strtod` numbers and `\u` escapes, the nesting limit), and encodes what it decoded
//! back: each must answer or raise an error, never panic; what was encoded must decode
//! again.

use libfuzzer_sys::fuzz_target;
use quiver_server::resp::script::cjson::round_trip;

fuzz_target!(|data: &[u8]| {
    if let Ok(json) = round_trip(data) {
        // Infinities and NaN are refused by default: what comes out reads back.
        round_trip(&json).expect("cjson reads what it writes");
    }
});
