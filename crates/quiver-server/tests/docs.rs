//! The documentation lists exactly the keys the code knows, with the code's defaults
//! and profile values.

use std::collections::{BTreeMap, BTreeSet};

use quiver_server::config::Profile;
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

/// A value as a table cell shows it: without backticks and a trailing `(remark)`;
/// `empty` for the empty text.
fn cell_value(cell: &str) -> String {
    let cell = cell.trim();
    let cell = match cell.find(" (") {
        Some(remark) if cell.ends_with(')') => &cell[..remark],
        _ => cell,
    };
    let value = cell.trim_matches('`');
    if value == "empty" {
        String::new()
    } else {
        value.to_owned()
    }
}

/// The cells of the table rows of `text` whose first cell is a key, by key.
fn key_rows(text: &str, columns: usize) -> BTreeMap<String, Vec<String>> {
    text.lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            line.trim_matches('|')
                .split(" | ")
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|cells| cells.len() == columns)
        .map(|cells| (cell_value(&cells[0]), cells[1..].to_vec()))
        .collect()
}

#[test]
fn configuration_md_defaults_and_profiles_are_the_codes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let text = std::fs::read_to_string(path).expect("docs/configuration.md exists");
    let keys = key_rows(&text, 6);
    let profiles = key_rows(&text, 5);
    for key in KEYS {
        let row = keys
            .get(key.name)
            .unwrap_or_else(|| panic!("{} has no row", key.name));
        assert_eq!(
            cell_value(&row[1]),
            key.default,
            "the default of {} in docs/configuration.md",
            key.name
        );
        if key.profiles.is_empty() {
            assert!(
                !profiles.contains_key(key.name),
                "{} is in the profile table but no profile sets it",
                key.name
            );
            continue;
        }
        let row = profiles.get(key.name).unwrap_or_else(|| {
            panic!(
                "{} is set by profiles but not in the profile table",
                key.name
            )
        });
        for (profile, cell) in Profile::ALL.iter().zip(row) {
            let value = key.profile_value(*profile).unwrap_or(key.default);
            assert_eq!(
                cell_value(cell),
                value,
                "{} under profile {profile} in docs/configuration.md",
                key.name
            );
        }
    }
}
