//! The geo commands' entries in the command table.

use super::*;
use crate::resp::table::flag::{DENYOOM, MOVABLE_KEYS, READONLY, WRITE};
use crate::resp::table::{CommandSpec, Group, Parser};

const fn c(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    parser: Parser,
) -> CommandSpec {
    CommandSpec::new(
        Group::Geo,
        name,
        arity,
        flags,
        (1, 1, 1),
        since,
        summary,
        parser,
    )
}

const READ: &[&[&str]] = &[&["RO", "access"]];
const RADIUS_STORE: &[&[&str]] = &[&["RO", "access"], &["OW", "update"], &["OW", "update"]];

pub(crate) const SPECS: &[CommandSpec] = &[
    c(
        "geoadd",
        -5,
        WRITE | DENYOOM,
        "3.2.0",
        "Add one or more geospatial items in the geospatial index represented using a sorted set",
        parse_geoadd,
    )
    .with_syntax("key [NX|XX] [CH] (longitude latitude member)...")
    .with_key_flags(&[&["RW", "update"]]),
    c(
        "geodist",
        -4,
        READONLY,
        "3.2.0",
        "Returns the distance between two members of a geospatial index",
        parse_geodist,
    )
    .with_syntax("key member1 member2 [M|KM|FT|MI]")
    .with_key_flags(READ),
    c(
        "geohash",
        -2,
        READONLY,
        "3.2.0",
        "Returns members of a geospatial index as standard geohash strings",
        parse_geohash,
    )
    .with_syntax("key [member...]")
    .with_key_flags(READ),
    c(
        "geopos",
        -2,
        READONLY,
        "3.2.0",
        "Returns longitude and latitude of members of a geospatial index",
        parse_geopos,
    )
    .with_syntax("key [member...]")
    .with_key_flags(READ),
    c(
        "georadius",
        -6,
        WRITE | DENYOOM | MOVABLE_KEYS,
        "3.2.0",
        "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
        parse_georadius,
    )
    .with_syntax("key longitude latitude radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]")
    .with_store_options(5, 6)
    .with_key_flags(RADIUS_STORE),
    c(
        "georadius_ro",
        -6,
        READONLY,
        "3.2.10",
        "A read-only variant for GEORADIUS",
        parse_georadius_ro,
    )
    .with_syntax("key longitude latitude radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]")
    .with_key_flags(READ),
    c(
        "georadiusbymember",
        -5,
        WRITE | DENYOOM | MOVABLE_KEYS,
        "3.2.0",
        "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
        parse_georadiusbymember,
    )
    .with_syntax("key member radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key]")
    .with_store_options(5, 5)
    .with_key_flags(RADIUS_STORE),
    c(
        "georadiusbymember_ro",
        -5,
        READONLY,
        "3.2.10",
        "A read-only variant for GEORADIUSBYMEMBER",
        parse_georadiusbymember_ro,
    )
    .with_syntax("key member radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]")
    .with_key_flags(READ),
    c(
        "geosearch",
        -7,
        READONLY,
        "6.2.0",
        "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
        parse_geosearch,
    )
    .with_syntax("key (FROMMEMBER member|FROMLONLAT longitude latitude) (BYRADIUS radius (M|KM|FT|MI)|BYBOX width height (M|KM|FT|MI)) [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]")
    .with_key_flags(READ),
    CommandSpec::new(
        Group::Geo,
        "geosearchstore",
        -8,
        WRITE | DENYOOM,
        (1, 2, 1),
        "6.2.0",
        "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
        parse_geosearchstore,
    )
    .with_first_key_apart()
    .with_syntax("destination source (FROMMEMBER member|FROMLONLAT longitude latitude) (BYRADIUS radius (M|KM|FT|MI)|BYBOX width height (M|KM|FT|MI)) [ASC|DESC] [COUNT count [ANY]] [STOREDIST]")
    .with_key_flags(&[&["OW", "update"], &["RO", "access"]]),
];
