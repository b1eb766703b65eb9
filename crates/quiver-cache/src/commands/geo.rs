//! Geospatial searches on sorted sets (GEOSEARCH, GEOSEARCHSTORE, GEORADIUS…): the
//! boxes of [`crate::geo::Search::score_ranges`] scanned in Redis's order, each
//! candidate checked against the shape, then sorted, cut and returned or stored.

use super::KeyCtx;
use super::zsets::{store as store_zset, zset_event};
use crate::error::OpError;
use crate::geo::{self, Search};
use crate::keyspace::Db;
use crate::value::zset::{ScoreBound, ZSetValue};

/// A member a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct GeoFound {
    pub member: Box<[u8]>,
    /// Its stored score (the 52-bit geohash).
    pub score: f64,
    pub longitude: f64,
    pub latitude: f64,
    /// From the search's center, in meters.
    pub distance_m: f64,
}

/// A search's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoSort {
    /// The order the boxes are scanned in.
    Unsorted,
    Ascending,
    Descending,
}

/// What to find: where, in which order, how many (`count` 0: all; `any`: stop scanning
/// once `count` are found).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeoQuery {
    pub search: Search,
    pub sort: GeoSort,
    pub count: usize,
    pub any: bool,
}

/// Where GEOSEARCHSTORE and GEORADIUS … STORE put what they found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeoStore<'a> {
    pub dest: &'a [u8],
    /// Store distances (in the query's unit) rather than positions.
    pub distances: bool,
    /// The keyspace event of the store.
    pub event: &'static str,
}

/// The sorted set a search reads, for the checks that need it before the query is
/// settled (a FROMMEMBER center, errors in Redis's order).
#[derive(Debug)]
pub struct GeoView<'a> {
    zset: Option<&'a ZSetValue>,
}

impl GeoView<'_> {
    /// Whether the key holds a sorted set.
    pub fn exists(&self) -> bool {
        self.zset.is_some()
    }

    /// A member's position.
    pub fn position(&self, member: &[u8]) -> Option<(f64, f64)> {
        self.zset?.score(member).map(geo::decode)
    }
}

/// The points of `z` inside `query`'s shape, in Redis's scan order.
fn scan(z: &ZSetValue, query: &GeoQuery) -> Vec<GeoFound> {
    let limit = if query.any { query.count } else { 0 };
    let mut found = Vec::new();
    for (min, max) in query.search.score_ranges() {
        if limit != 0 && found.len() >= limit {
            break;
        }
        let lower = ScoreBound {
            value: min,
            exclusive: false,
        };
        let upper = ScoreBound {
            value: max,
            exclusive: true,
        };
        let (start, end) = z.score_range(&lower, &upper);
        for item in z.iter_from(start).take(end.saturating_sub(start)) {
            let (longitude, latitude) = geo::decode(item.score);
            if let Some(distance_m) = query.search.contains(longitude, latitude) {
                found.push(GeoFound {
                    member: item.member.clone(),
                    score: item.score,
                    longitude,
                    latitude,
                    distance_m,
                });
            }
            if limit != 0 && found.len() >= limit {
                break;
            }
        }
    }
    match query.sort {
        GeoSort::Unsorted => {}
        GeoSort::Ascending => found.sort_by(|a, b| a.distance_m.total_cmp(&b.distance_m)),
        GeoSort::Descending => found.sort_by(|a, b| b.distance_m.total_cmp(&a.distance_m)),
    }
    if query.count != 0 {
        found.truncate(query.count);
    }
    found
}

impl Db<'_> {
    /// A geospatial search of the sorted set at `key`. `plan` sees the set and settles
    /// the query (its error, if any, is handed back as is; `Ok(None)` finds nothing).
    /// With `store`, what was found replaces `store.dest` (deleted when nothing was
    /// found) and the result is still returned, for its length.
    pub fn geo_search<E>(
        &mut self,
        key: &[u8],
        store: Option<GeoStore<'_>>,
        now_ms: u64,
        plan: impl FnOnce(&GeoView<'_>) -> Result<Option<GeoQuery>, E>,
    ) -> Result<Result<Vec<GeoFound>, E>, OpError> {
        let Some(target) = store else {
            return self.read_key(key, now_ms, |k| {
                let view = GeoView {
                    zset: k.view::<ZSetValue>()?,
                };
                Ok(plan(&view).map(|query| match (query, view.zset) {
                    (Some(query), Some(z)) => scan(z, &query),
                    _ => Vec::new(),
                }))
            });
        };
        self.make_room(now_ms)?;
        let (db, clock) = (self.db, self.clock(now_ms));
        self.multi(&[key, target.dest], |set, routes| {
            let (shard, hash) = routes[0];
            let (found, to_meters) = {
                let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                let zset = k.view::<ZSetValue>()?;
                match (plan(&GeoView { zset }), zset) {
                    (Err(error), _) => return Ok(Err(error)),
                    (Ok(Some(query)), Some(z)) => (scan(z, &query), query.search.to_meters),
                    (Ok(_), _) => (Vec::new(), 1.0),
                }
            };
            let items: Vec<(Box<[u8]>, f64)> = found
                .iter()
                .map(|f| {
                    let score = if target.distances {
                        f.distance_m / to_meters
                    } else {
                        f.score
                    };
                    (f.member.clone(), score)
                })
                .collect();
            let (shard, hash) = routes[1];
            let mut d = KeyCtx::write(set.get(shard), db, hash, target.dest, clock);
            store_zset(d.on_change(zset_event(target.event)), &items);
            Ok(Ok(found))
        })
    }
}
