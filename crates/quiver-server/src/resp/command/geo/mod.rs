//! Geospatial commands on sorted sets: GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH
//! GEOSEARCHSTORE GEORADIUS GEORADIUS_RO GEORADIUSBYMEMBER GEORADIUSBYMEMBER_RO.
//!
//! Redis checks a search's arguments in a fixed order interleaved with looking at the
//! key (its type first; a FROMMEMBER or BYMEMBER center when the key exists; a radius
//! only then for GEORADIUSBYMEMBER). The parsers here read everything that needs no key
//! and keep each error as a value; `exec.rs` replays Redis's order with the key in view.

pub(crate) mod exec;
mod specs;

use std::fmt;

use bytes::Bytes;
use quiver_core::cache::GeoSort;
use quiver_core::cache::ZAddCondition;
use quiver_core::cache::geo::{self, Shape};
use quiver_resp::error::CommandError;
use quiver_resp::num::{parse_f64, parse_i64};

use super::{Args, Command, is};

pub(crate) use specs::SPECS;

fn wrap(command: GeoCommand) -> Result<Command, CommandError> {
    Ok(Command::Geo(command))
}

/// An error of a geo command, with Redis's text.
#[derive(Clone, Debug, PartialEq)]
pub enum GeoError {
    /// A generic command error (syntax, not a float…).
    Command(CommandError),
    /// A coordinate outside the indexable range.
    InvalidPair(f64, f64),
    /// A fixed message (`ERR` included).
    Text(&'static str),
    /// GEOSEARCH without exactly one center (the command's name as sent).
    NoCenter(String),
    /// GEOSEARCH without exactly one shape.
    NoShape(String),
    /// STORE with WITHDIST, WITHHASH or WITHCOORD (`true`: GEOSEARCHSTORE).
    StoreWith(bool),
}

impl fmt::Display for GeoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeoError::Command(error) => write!(f, "{error}"),
            GeoError::InvalidPair(lon, lat) => {
                write!(f, "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")
            }
            GeoError::Text(text) => f.write_str(text),
            GeoError::NoCenter(name) => write!(
                f,
                "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
            ),
            GeoError::NoShape(name) => write!(
                f,
                "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
            ),
            GeoError::StoreWith(search) => write!(
                f,
                "ERR {} is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                if *search {
                    "GEOSEARCHSTORE"
                } else {
                    "STORE option in GEORADIUS"
                }
            ),
        }
    }
}

pub(crate) const MEMBER_NOT_FOUND: GeoError =
    GeoError::Text("ERR could not decode requested zset member");

/// A geo command.
#[derive(Clone, Debug, PartialEq)]
pub enum GeoCommand {
    /// `GEOADD key [NX|XX] [CH] longitude latitude member...`; the points' errors are
    /// answered before the key is looked at, as in Redis.
    Add {
        key: Bytes,
        condition: ZAddCondition,
        ch: bool,
        points: Result<Vec<(f64, Bytes)>, GeoError>,
    },
    /// `GEODIST key member1 member2 [unit]`.
    Dist {
        key: Bytes,
        members: (Bytes, Bytes),
        to_meters: Result<f64, GeoError>,
    },
    /// `GEOHASH key [member...]`.
    Hash { key: Bytes, members: Vec<Bytes> },
    /// `GEOPOS key [member...]`.
    Pos { key: Bytes, members: Vec<Bytes> },
    /// The searches.
    Search(Box<GeoSearch>),
}

/// Where a search is centered.
#[derive(Clone, Debug, PartialEq)]
pub enum Center {
    Position(f64, f64),
    Member(Bytes),
}

/// A search's radius or box and the meters in its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub shape: Shape,
    pub to_meters: f64,
}

/// The options of a search after its fixed arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOptions {
    pub center: Option<Center>,
    pub area: Option<Area>,
    pub sort: GeoSort,
    pub count: usize,
    pub any: bool,
    pub with_dist: bool,
    pub with_hash: bool,
    pub with_coord: bool,
    /// The destination and whether it gets distances.
    pub store: Option<(Bytes, bool)>,
}

/// Which search command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchKind {
    /// GEORADIUS(_RO): a center position and a radius come first.
    Radius,
    /// GEORADIUSBYMEMBER(_RO): a member and a radius come first.
    ByMember,
    /// GEOSEARCH and GEOSEARCHSTORE: everything is an option.
    Search,
}

/// A search, parsed as far as it can be without the key.
#[derive(Clone, Debug, PartialEq)]
pub struct GeoSearch {
    pub kind: SearchKind,
    pub key: Bytes,
    /// GEORADIUS's position, or GEORADIUSBYMEMBER's member.
    pub center: Option<Result<Center, GeoError>>,
    /// GEORADIUS(BYMEMBER)'s radius.
    pub radius: Option<Result<Area, GeoError>>,
    /// The options; on an error, the FROMMEMBER member seen before it (whose lookup
    /// Redis does first).
    pub options: Result<SearchOptions, (GeoError, Option<Bytes>)>,
}

/// A float argument, or `error`.
fn float(arg: &[u8], error: GeoError) -> Result<f64, GeoError> {
    parse_f64(arg).ok_or(error)
}

fn not_float() -> GeoError {
    GeoError::Command(CommandError::NotFloat)
}

/// A longitude and latitude within the indexable range.
fn position(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), GeoError> {
    let (lon, lat) = (float(lon, not_float())?, float(lat, not_float())?);
    if !(geo::LONG_MIN..=geo::LONG_MAX).contains(&lon)
        || !(geo::LAT_MIN..=geo::LAT_MAX).contains(&lat)
    {
        return Err(GeoError::InvalidPair(lon, lat));
    }
    Ok((lon, lat))
}

/// Meters in a unit (any case).
fn unit(arg: &[u8]) -> Result<f64, GeoError> {
    if is(arg, "m") {
        Ok(1.0)
    } else if is(arg, "km") {
        Ok(1000.0)
    } else if is(arg, "ft") {
        Ok(0.3048)
    } else if is(arg, "mi") {
        Ok(1609.34)
    } else {
        Err(GeoError::Text(
            "ERR unsupported unit provided. please use M, KM, FT, MI",
        ))
    }
}

/// `radius unit`.
fn radius(value: &[u8], unit_arg: &[u8]) -> Result<Area, GeoError> {
    let radius = float(value, GeoError::Text("ERR need numeric radius"))?;
    if radius < 0.0 {
        return Err(GeoError::Text("ERR radius cannot be negative"));
    }
    Ok(Area {
        shape: Shape::Radius(radius),
        to_meters: unit(unit_arg)?,
    })
}

/// `width height unit`.
fn boxed(width: &[u8], height: &[u8], unit_arg: &[u8]) -> Result<Area, GeoError> {
    let width = float(width, GeoError::Text("ERR need numeric width"))?;
    let height = float(height, GeoError::Text("ERR need numeric height"))?;
    if height < 0.0 || width < 0.0 {
        return Err(GeoError::Text("ERR height or width cannot be negative"));
    }
    Ok(Area {
        shape: Shape::Box { width, height },
        to_meters: unit(unit_arg)?,
    })
}

fn parse_geoadd(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let rest = args.rest();
    let mut at = 0;
    let (mut nx, mut xx, mut ch) = (false, false, false);
    while let Some(word) = rest.get(at) {
        if is(word, "nx") {
            nx = true;
        } else if is(word, "xx") {
            xx = true;
        } else if is(word, "ch") {
            ch = true;
        } else {
            break;
        }
        at += 1;
    }
    let triples = &rest[at..];
    if !triples.len().is_multiple_of(3) || (nx && xx) {
        return Err(CommandError::Syntax);
    }
    let points = triples
        .chunks(3)
        .map(|t| {
            let (lon, lat) = position(&t[0], &t[1])?;
            let score = geo::score(lon, lat).ok_or(GeoError::InvalidPair(lon, lat))?;
            Ok((score, t[2].clone()))
        })
        .collect::<Result<Vec<_>, _>>();
    let condition = if nx {
        ZAddCondition::IfAbsent
    } else if xx {
        ZAddCondition::IfPresent
    } else {
        ZAddCondition::Always
    };
    wrap(GeoCommand::Add {
        key,
        condition,
        ch,
        points,
    })
}

fn parse_geodist(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    let members = (args.next()?, args.next()?);
    let to_meters = match args.rest().as_slice() {
        [] => Ok(1.0),
        [u] => unit(u),
        _ => Err(GeoError::Command(CommandError::Syntax)),
    };
    wrap(GeoCommand::Dist {
        key,
        members,
        to_meters,
    })
}

fn parse_geohash(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    wrap(GeoCommand::Hash {
        key,
        members: args.rest(),
    })
}

fn parse_geopos(args: &mut Args<'_>) -> Result<Command, CommandError> {
    let key = args.next()?;
    wrap(GeoCommand::Pos {
        key,
        members: args.rest(),
    })
}

/// Which options a search command takes.
#[derive(Clone, Copy)]
struct Accepts {
    /// STORE and STOREDIST with a key (GEORADIUS, GEORADIUSBYMEMBER).
    store_key: bool,
    /// FROMMEMBER, FROMLONLAT, BYRADIUS, BYBOX (GEOSEARCH, GEOSEARCHSTORE).
    search: bool,
    /// STOREDIST alone (GEOSEARCHSTORE).
    store_dist: bool,
}

/// The options, in Redis's order of checks.
fn options(
    rest: &[Bytes],
    accepts: Accepts,
    name: &str,
    mut store: Option<(Bytes, bool)>,
) -> Result<SearchOptions, (GeoError, Option<Bytes>)> {
    let mut o = SearchOptions {
        center: None,
        area: None,
        sort: GeoSort::Unsorted,
        count: 0,
        any: false,
        with_dist: false,
        with_hash: false,
        with_coord: false,
        store: None,
    };
    let mut member_seen: Option<Bytes> = None;
    let mut i = 0;
    let left = |i: usize| rest.len() - i - 1;
    while i < rest.len() {
        let arg = &rest[i];
        let fail = |error: GeoError, member: &Option<Bytes>| (error, member.clone());
        if is(arg, "withdist") {
            o.with_dist = true;
        } else if is(arg, "withhash") {
            o.with_hash = true;
        } else if is(arg, "withcoord") {
            o.with_coord = true;
        } else if is(arg, "any") {
            o.any = true;
        } else if is(arg, "asc") {
            o.sort = GeoSort::Ascending;
        } else if is(arg, "desc") {
            o.sort = GeoSort::Descending;
        } else if is(arg, "count") && left(i) >= 1 {
            let count = parse_i64(&rest[i + 1])
                .ok_or_else(|| fail(GeoError::Command(CommandError::NotInteger), &member_seen))?;
            if count <= 0 {
                return Err(fail(GeoError::Text("ERR COUNT must be > 0"), &member_seen));
            }
            o.count = usize::try_from(count).unwrap_or(usize::MAX);
            i += 1;
        } else if (is(arg, "store") || is(arg, "storedist")) && left(i) >= 1 && accepts.store_key {
            store = Some((rest[i + 1].clone(), is(arg, "storedist")));
            i += 1;
        } else if is(arg, "storedist") && accepts.store_dist {
            if let Some((_, dist)) = store.as_mut() {
                *dist = true;
            }
        } else if is(arg, "frommember")
            && left(i) >= 1
            && accepts.search
            && !matches!(o.center, Some(Center::Position(..)))
        {
            o.center = Some(Center::Member(rest[i + 1].clone()));
            member_seen.get_or_insert_with(|| rest[i + 1].clone());
            i += 1;
        } else if is(arg, "fromlonlat")
            && left(i) >= 2
            && accepts.search
            && !matches!(o.center, Some(Center::Member(_)))
        {
            let (lon, lat) =
                position(&rest[i + 1], &rest[i + 2]).map_err(|e| fail(e, &member_seen))?;
            o.center = Some(Center::Position(lon, lat));
            i += 2;
        } else if is(arg, "byradius")
            && left(i) >= 2
            && accepts.search
            && !matches!(
                o.area,
                Some(Area {
                    shape: Shape::Box { .. },
                    ..
                })
            )
        {
            o.area = Some(radius(&rest[i + 1], &rest[i + 2]).map_err(|e| fail(e, &member_seen))?);
            i += 2;
        } else if is(arg, "bybox")
            && left(i) >= 3
            && accepts.search
            && !matches!(
                o.area,
                Some(Area {
                    shape: Shape::Radius(_),
                    ..
                })
            )
        {
            o.area = Some(
                boxed(&rest[i + 1], &rest[i + 2], &rest[i + 3])
                    .map_err(|e| fail(e, &member_seen))?,
            );
            i += 3;
        } else {
            return Err(fail(GeoError::Command(CommandError::Syntax), &member_seen));
        }
        i += 1;
    }
    let fail = |error: GeoError| (error, member_seen.clone());
    if store.is_some() && (o.with_dist || o.with_hash || o.with_coord) {
        return Err(fail(GeoError::StoreWith(accepts.store_dist)));
    }
    if accepts.search && o.center.is_none() {
        return Err(fail(GeoError::NoCenter(name.to_owned())));
    }
    if accepts.search && o.area.is_none() {
        return Err(fail(GeoError::NoShape(name.to_owned())));
    }
    if o.any && o.count == 0 {
        return Err(fail(GeoError::Text(
            "ERR the ANY argument requires COUNT argument",
        )));
    }
    o.store = store;
    Ok(o)
}

fn name_as_sent(args: &Args<'_>) -> String {
    String::from_utf8_lossy(args.name_as_sent()).into_owned()
}

/// GEORADIUS (a position first) and GEORADIUSBYMEMBER (a member first), with or without
/// their STORE options.
fn parse_radius(
    args: &mut Args<'_>,
    by_member: bool,
    store_key: bool,
) -> Result<Command, CommandError> {
    let name = name_as_sent(args);
    let key = args.next()?;
    let (kind, center) = if by_member {
        (SearchKind::ByMember, Ok(Center::Member(args.next()?)))
    } else {
        let (lon, lat) = (args.next()?, args.next()?);
        let center = position(&lon, &lat).map(|(lon, lat)| Center::Position(lon, lat));
        (SearchKind::Radius, center)
    };
    let (value, unit_arg) = (args.next()?, args.next()?);
    let accepts = Accepts {
        store_key,
        search: false,
        store_dist: false,
    };
    let options = options(&args.rest(), accepts, &name, None);
    wrap(GeoCommand::Search(Box::new(GeoSearch {
        kind,
        key,
        center: Some(center),
        radius: Some(radius(&value, &unit_arg)),
        options,
    })))
}

fn parse_georadius(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_radius(args, false, true)
}

fn parse_georadius_ro(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_radius(args, false, false)
}

fn parse_georadiusbymember(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_radius(args, true, true)
}

fn parse_georadiusbymember_ro(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_radius(args, true, false)
}

fn parse_search(args: &mut Args<'_>, store: bool) -> Result<Command, CommandError> {
    let name = name_as_sent(args);
    let dest = if store { Some(args.next()?) } else { None };
    let key = args.next()?;
    let accepts = Accepts {
        store_key: false,
        search: true,
        store_dist: store,
    };
    let options = options(&args.rest(), accepts, &name, dest.map(|d| (d, false)));
    wrap(GeoCommand::Search(Box::new(GeoSearch {
        kind: SearchKind::Search,
        key,
        center: None,
        radius: None,
        options,
    })))
}

fn parse_geosearch(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_search(args, false)
}

fn parse_geosearchstore(args: &mut Args<'_>) -> Result<Command, CommandError> {
    parse_search(args, true)
}

impl GeoSearch {
    /// The destination key when the search stores (known before the key is read).
    pub fn destination(&self) -> Option<&Bytes> {
        self.options
            .as_ref()
            .ok()?
            .store
            .as_ref()
            .map(|(dest, _)| dest)
    }
}
