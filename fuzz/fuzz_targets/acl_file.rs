#![no_main]
//! Feeds arbitrary text to the ACL file loader (`aclfile`, ACL LOAD). It must load or
//! refuse with an error naming a line, never panic; and what ACL SAVE writes of the
//! users it loaded loads back to the same users.

use libfuzzer_sys::fuzz_target;
use quiver_server::resp::acl::Acl;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Acl::parse_file(&text, false) {
        Ok(users) => {
            let saved: Vec<String> = users.iter().map(|user| user.describe()).collect();
            let again = Acl::parse_file(&saved.join("\n"), false).expect("a saved file loads");
            let reloaded: Vec<String> = again.iter().map(|user| user.describe()).collect();
            assert_eq!(reloaded, saved);
        }
        Err(error) => assert!(error.starts_with("line "), "{error}"),
    }
});
