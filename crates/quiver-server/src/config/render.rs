//! `quiver config` output: the effective configuration as TOML, every key with
//! a comment naming where its value came from. Feeding it back as the config
//! file yields the same effective configuration.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::Loaded;
use super::keys::{KEYS, Kind};

pub(super) fn to_toml(loaded: &Loaded) -> String {
    let mut sections: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut top = Vec::new();
    for (key, text, source) in &loaded.values {
        let (section, leaf) = key.name.split_once('.').unwrap_or(("", key.name));
        let bare = match key.kind {
            Kind::Integer { .. } | Kind::Bool => true,
            Kind::Threads { .. } => text.parse::<u64>().is_ok(),
            _ => false,
        };
        let rendered = if bare {
            text.clone()
        } else {
            toml::Value::String(text.clone()).to_string()
        };
        let line = format!("{leaf} = {rendered}  # {source}");
        if section.is_empty() {
            top.push(line);
        } else {
            sections.entry(section).or_default().push(line);
        }
    }
    let mut out = String::from(
        "# Effective Quiver configuration. Each comment says where the value came from.\n",
    );
    for line in top {
        let _ = writeln!(out, "{line}");
    }
    // Sections in registry order, so related keys stay together as documented.
    let mut seen = Vec::new();
    for key in KEYS {
        let Some((section, _)) = key.name.split_once('.') else {
            continue;
        };
        if seen.contains(&section) {
            continue;
        }
        seen.push(section);
        let _ = writeln!(out, "\n[{section}]");
        for line in sections.get(section).into_iter().flatten() {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
