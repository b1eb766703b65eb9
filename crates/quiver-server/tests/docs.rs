//! The documentation lists exactly the keys the code knows.

use std::collections::BTreeSet;

use quiver_server::config::keys::KEYS;

#[test]
fn configuration_md_lists_every_key_and_nothing_else() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let text = std::fs::read_to_string(path).expect("docs/configuration.md exists");
    // Keys are the first cell of table rows: "| `http.addr` | ..."
    let documented: BTreeSet<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(key, _)| key)
        .collect();
    let known: BTreeSet<&str> = KEYS.iter().map(|key| key.name).collect();
    let missing: Vec<_> = known.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&known).collect();
    assert!(
        missing.is_empty(),
        "keys missing from docs/configuration.md: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "docs/configuration.md lists keys the code does not know: {stale:?}"
    );
    for key in KEYS {
        assert!(
            text.contains(&key.env_var()),
            "{} env var not documented",
            key.name
        );
        assert!(
            text.contains(&format!("--{}", key.flag())),
            "{} flag not documented",
            key.name
        );
    }
}
