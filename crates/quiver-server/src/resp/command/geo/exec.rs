//! Running geospatial commands.

use bytes::{BufMut, BytesMut};
use quiver_core::cache::geo::{self, Search};
use quiver_core::cache::{GeoFound, GeoQuery, GeoSort, GeoStore, GeoView, ZAddOptions, ZAddReply};
use quiver_resp::Protocol;
use quiver_resp::encode::{
    write_array_len, write_bulk, write_integer, write_null, write_null_array,
};

use crate::resp::command::exec::{DataCtx, error, refs, reply};
use crate::resp::command::geo::{
    Center, GeoCommand, GeoError, GeoSearch, MEMBER_NOT_FOUND, SearchKind, SearchOptions,
};

/// Runs a geo command and writes its reply.
pub(crate) fn execute(ctx: &mut DataCtx<'_, '_>, command: GeoCommand, out: &mut BytesMut) {
    let (now_ms, protocol) = (ctx.now_ms, ctx.protocol);
    match command {
        GeoCommand::Add {
            key,
            condition,
            ch,
            points,
        } => {
            let points = match points {
                Ok(points) => points,
                Err(e) => return error(out, &e),
            };
            let members: Vec<(f64, &[u8])> = points.iter().map(|(s, m)| (*s, &m[..])).collect();
            let options = ZAddOptions {
                condition,
                ch,
                ..ZAddOptions::default()
            };
            let result = ctx.db.zadd(&key, &members, options, now_ms);
            reply(out, result, |out, added| match added {
                ZAddReply::Count(n) => write_integer(out, i64::try_from(n).unwrap_or(i64::MAX)),
                ZAddReply::Score(_) => unreachable!("GEOADD never increments"),
            });
        }
        GeoCommand::Dist {
            key,
            members,
            to_meters,
        } => {
            let to_meters = match to_meters {
                Ok(to_meters) => to_meters,
                Err(e) => return error(out, &e),
            };
            let result = ctx.db.zmscore(&key, &[&members.0, &members.1], now_ms);
            reply(out, result, |out, scores| match scores[..] {
                [Some(a), Some(b)] => {
                    let ((lon1, lat1), (lon2, lat2)) = (geo::decode(a), geo::decode(b));
                    let meters = geo::distance(lon1, lat1, lon2, lat2);
                    write_bulk(out, format!("{:.4}", meters / to_meters).as_bytes());
                }
                _ => write_null(out, protocol),
            });
        }
        GeoCommand::Hash { key, members } => {
            let result = ctx.db.zmscore(&key, &refs(&members), now_ms);
            reply(out, result, |out, scores| {
                write_array_len(out, scores.len());
                for score in scores {
                    match score {
                        Some(score) => write_bulk(out, geo::geohash_string(score).as_bytes()),
                        None => write_null(out, protocol),
                    }
                }
            });
        }
        GeoCommand::Pos { key, members } => {
            let result = ctx.db.zmscore(&key, &refs(&members), now_ms);
            reply(out, result, |out, scores| {
                write_array_len(out, scores.len());
                for score in scores {
                    match score {
                        Some(score) => {
                            let (lon, lat) = geo::decode(score);
                            write_array_len(out, 2);
                            write_coordinate(out, protocol, lon);
                            write_coordinate(out, protocol, lat);
                        }
                        None => write_null_array(out, protocol),
                    }
                }
            });
        }
        GeoCommand::Search(search) => run_search(ctx, &search, out),
    }
}

/// A coordinate as Redis writes it: text of `%.17Lf` without trailing zeros, a bulk
/// string in RESP2 and a double in RESP3.
fn write_coordinate(out: &mut BytesMut, protocol: Protocol, value: f64) {
    let text = geo::human_coordinate(value);
    match protocol {
        Protocol::Resp2 => write_bulk(out, text.as_bytes()),
        Protocol::Resp3 => {
            out.put_u8(b',');
            out.put_slice(text.as_bytes());
            out.put_slice(b"\r\n");
        }
    }
}

fn run_search(ctx: &mut DataCtx<'_, '_>, search: &GeoSearch, out: &mut BytesMut) {
    let protocol = ctx.protocol;
    let options = search.options.as_ref().ok();
    let store = options
        .and_then(|o| o.store.as_ref())
        .map(|(dest, distances)| GeoStore {
            dest,
            distances: *distances,
            event: if search.kind == SearchKind::Search {
                "geosearchstore"
            } else {
                "georadiusstore"
            },
        });
    let storing = store.is_some();
    let result = ctx
        .db
        .geo_search(&search.key, store, ctx.now_ms, |view| plan(search, view));
    let found = match result {
        Err(e) => return error(out, &e),
        Ok(Err(e)) => return error(out, &e),
        Ok(Ok(found)) => found,
    };
    if storing {
        return write_integer(out, i64::try_from(found.len()).unwrap_or(i64::MAX));
    }
    let options = options.expect("a search that ran had its options");
    let to_meters = plan_unit(search, options);
    write_found(out, protocol, &found, options, to_meters);
}

/// The meters in the unit the search's sizes were given in.
fn plan_unit(search: &GeoSearch, options: &SearchOptions) -> f64 {
    match (&search.radius, &options.area) {
        (Some(Ok(area)), _) | (None, Some(area)) => area.to_meters,
        _ => 1.0,
    }
}

fn write_found(
    out: &mut BytesMut,
    protocol: Protocol,
    found: &[GeoFound],
    options: &SearchOptions,
    to_meters: f64,
) {
    let extras = usize::from(options.with_dist)
        + usize::from(options.with_hash)
        + usize::from(options.with_coord);
    write_array_len(out, found.len());
    for point in found {
        if extras > 0 {
            write_array_len(out, extras + 1);
        }
        write_bulk(out, &point.member);
        if options.with_dist {
            write_bulk(
                out,
                format!("{:.4}", point.distance_m / to_meters).as_bytes(),
            );
        }
        if options.with_hash {
            write_integer(out, point.score as i64);
        }
        if options.with_coord {
            write_array_len(out, 2);
            write_coordinate(out, protocol, point.longitude);
            write_coordinate(out, protocol, point.latitude);
        }
    }
}

/// Settles a search with its key in view, checking in Redis's order: the fixed
/// arguments (a BYMEMBER center and radius only when the key exists), the options (a
/// FROMMEMBER center before any error after it), then nothing to find in a missing key.
fn plan(search: &GeoSearch, view: &GeoView<'_>) -> Result<Option<GeoQuery>, GeoError> {
    let exists = view.exists();
    let locate = |member: &[u8]| locate(view, member);
    let mut center = None;
    let mut area = None;
    match search.kind {
        SearchKind::Radius => {
            center = Some(settled_center(search.center.clone(), view)?);
            area = search.radius.clone().transpose()?;
        }
        SearchKind::ByMember if exists => {
            center = Some(settled_center(search.center.clone(), view)?);
            area = search.radius.clone().transpose()?;
        }
        SearchKind::ByMember | SearchKind::Search => {}
    }
    let options = match &search.options {
        Ok(options) => options,
        Err((error, member)) => {
            if exists && let Some(member) = member {
                locate(member)?;
            }
            return Err(error.clone());
        }
    };
    if search.kind == SearchKind::Search {
        center = Some(match &options.center {
            Some(Center::Member(member)) if exists => locate(member)?,
            Some(Center::Position(lon, lat)) => (*lon, *lat),
            _ => (0.0, 0.0),
        });
        area = options.area;
    }
    let (Some((longitude, latitude)), Some(area), true) = (center, area, exists) else {
        return Ok(None);
    };
    let sort = match options.sort {
        GeoSort::Unsorted if options.count != 0 && !options.any => GeoSort::Ascending,
        sort => sort,
    };
    Ok(Some(GeoQuery {
        search: Search {
            longitude,
            latitude,
            shape: area.shape,
            to_meters: area.to_meters,
        },
        sort,
        count: options.count,
        any: options.any,
    }))
}

/// A member's position, or Redis's error for one that is not there.
fn locate(view: &GeoView<'_>, member: &[u8]) -> Result<(f64, f64), GeoError> {
    view.position(member).ok_or(MEMBER_NOT_FOUND)
}

fn settled_center(
    center: Option<Result<Center, GeoError>>,
    view: &GeoView<'_>,
) -> Result<(f64, f64), GeoError> {
    match center {
        Some(Ok(Center::Position(lon, lat))) => Ok((lon, lat)),
        Some(Ok(Center::Member(member))) => locate(view, &member),
        Some(Err(e)) => Err(e),
        None => Ok((0.0, 0.0)),
    }
}
