//! Geospatial indexes as Redis keeps them: a position is the sorted-set score of its
//! member, the 52-bit interleaved geohash of its longitude (-180..180) and latitude
//! (-85.05112878..85.05112878, the Web Mercator range); searches look at the geohash box
//! of the center and its eight neighbours at a step chosen from the radius, and check
//! each candidate's distance on a sphere of Redis's radius. Every formula is Redis's, in
//! the same order of floating-point operations, so positions, distances and which
//! members a search finds are Redis's to the last printed digit.

/// Precision of a stored position: 26 bits per coordinate.
pub const STEP_MAX: u8 = 26;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
const EARTH_RADIUS_M: f64 = 6_372_797.560_856;
const MERCATOR_MAX: f64 = 20_037_726.37;
const D_R: f64 = std::f64::consts::PI / 180.0;

/// A geohash: `bits` holds `2 * step` bits, latitude in the even ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hash {
    pub bits: u64,
    pub step: u8,
}

impl Hash {
    fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash left-aligned to 52 bits: a score (Redis's `geohashAlign52Bits`).
    pub fn align52(self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }
}

/// A coordinate range.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    min: f64,
    max: f64,
}

const LONG_RANGE: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// The longitude and latitude ranges of a hash's box.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Area {
    longitude: Range,
    latitude: Range,
}

fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

fn squash(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

/// Encodes a position in the given ranges at `step`; `None` outside Redis's limits.
fn encode_in(long: Range, lat: Range, longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat.min || latitude > lat.max || longitude < long.min || longitude > long.max {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_offset = (latitude - lat.min) / (lat.max - lat.min) * scale;
    let long_offset = (longitude - long.min) / (long.max - long.min) * scale;
    Some(Hash {
        bits: spread(lat_offset as u32) | (spread(long_offset as u32) << 1),
        step,
    })
}

/// A position's hash at `step` (Redis's `geohashEncodeWGS84`).
pub fn encode(longitude: f64, latitude: f64, step: u8) -> Option<Hash> {
    encode_in(LONG_RANGE, LAT_RANGE, longitude, latitude, step)
}

/// The score Redis stores for a position.
pub fn score(longitude: f64, latitude: f64) -> Option<f64> {
    encode(longitude, latitude, STEP_MAX).map(|hash| hash.align52() as f64)
}

fn decode_area(long: Range, lat: Range, hash: Hash) -> Area {
    let lat_bits = squash(hash.bits);
    let long_bits = squash(hash.bits >> 1);
    let cells = (1u64 << hash.step) as f64;
    let (lat_scale, long_scale) = (lat.max - lat.min, long.max - long.min);
    Area {
        latitude: Range {
            min: lat.min + (f64::from(lat_bits) * 1.0 / cells) * lat_scale,
            max: lat.min + ((f64::from(lat_bits) + 1.0) * 1.0 / cells) * lat_scale,
        },
        longitude: Range {
            min: long.min + (f64::from(long_bits) * 1.0 / cells) * long_scale,
            max: long.min + ((f64::from(long_bits) + 1.0) * 1.0 / cells) * long_scale,
        },
    }
}

/// A double converted to an unsigned 64-bit integer as C does it on x86-64, which
/// is what Redis reads a score that is not a position as (a negative score wraps, one
/// past 2^64 reads as 0).
fn c_to_u64(x: f64) -> u64 {
    let half = 2f64.powi(63);
    if x < half {
        // Below i64's range C gives the smallest i64, as the saturating cast does.
        (x as i64) as u64
    } else if x - half < half {
        ((x - half) as i64 as u64) ^ (1 << 63)
    } else {
        0
    }
}

/// The position a score stands for: the center of its box, within the limits.
pub fn decode(score: f64) -> (f64, f64) {
    let hash = Hash {
        bits: c_to_u64(score),
        step: STEP_MAX,
    };
    let area = decode_area(LONG_RANGE, LAT_RANGE, hash);
    let longitude = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let latitude = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (longitude, latitude)
}

/// The standard 11-character geohash of a score (GEOHASH): its position re-encoded over
/// latitudes -90..90, the last character always `0` as in Redis.
pub fn geohash_string(score: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (longitude, latitude) = decode(score);
    let standard = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits =
        encode_in(LONG_RANGE, standard, longitude, latitude, STEP_MAX).map_or(0, |hash| hash.bits);
    (0..11)
        .map(|i| {
            let index = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            char::from(ALPHABET[index as usize])
        })
        .collect()
}

fn deg_rad(degrees: f64) -> f64 {
    degrees * D_R
}

fn rad_deg(radians: f64) -> f64 {
    radians / D_R
}

fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The great-circle distance in meters (Redis's haversine).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lon1r, lon2r) = (deg_rad(lon1), deg_rad(lon2));
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// What a search covers, in the unit its sizes are given in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Within `radius` of the center.
    Radius(f64),
    /// Within an axis-aligned box of `width` by `height` around the center.
    Box { width: f64, height: f64 },
}

/// A search: its center, shape, and the meters in one unit of its sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    pub longitude: f64,
    pub latitude: f64,
    pub shape: Shape,
    pub to_meters: f64,
}

impl Search {
    /// The distance of a position from the center, in meters, if it is inside.
    pub fn contains(&self, longitude: f64, latitude: f64) -> Option<f64> {
        match self.shape {
            Shape::Radius(radius) => {
                let d = distance(self.longitude, self.latitude, longitude, latitude);
                (d <= radius * self.to_meters).then_some(d)
            }
            Shape::Box { width, height } => {
                let (width, height) = (width * self.to_meters, height * self.to_meters);
                if lat_distance(latitude, self.latitude) > height / 2.0 {
                    return None;
                }
                if distance(longitude, latitude, self.longitude, latitude) > width / 2.0 {
                    return None;
                }
                Some(distance(self.longitude, self.latitude, longitude, latitude))
            }
        }
    }

    /// The score ranges `[min, max)` to scan, in Redis's order: the center's box, then
    /// north, south, east, west, north-east, north-west, south-east, south-west, the
    /// boxes that cannot hold a match left out and a box equal to the one before it
    /// scanned once.
    pub fn score_ranges(&self) -> Vec<(f64, f64)> {
        let (width, height) = match self.shape {
            Shape::Radius(radius) => (radius, radius),
            Shape::Box { width, height } => (width / 2.0, height / 2.0),
        };
        let (height_m, width_m) = (height * self.to_meters, width * self.to_meters);
        let (longitude, latitude) = (self.longitude, self.latitude);
        let lat_delta = rad_deg(height_m / EARTH_RADIUS_M);
        let long_delta_top =
            rad_deg(width_m / EARTH_RADIUS_M / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom =
            rad_deg(width_m / EARTH_RADIUS_M / deg_rad(latitude - lat_delta).cos());
        let long_delta = if latitude < 0.0 {
            long_delta_bottom
        } else {
            long_delta_top
        };
        let (min_lon, max_lon) = (longitude - long_delta, longitude + long_delta);
        let (min_lat, max_lat) = (latitude - lat_delta, latitude + lat_delta);

        let radius_m = match self.shape {
            Shape::Radius(radius) => radius,
            Shape::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        } * self.to_meters;
        let mut step = estimate_step(radius_m, latitude);
        let mut hash = encode(longitude, latitude, step).unwrap_or_default();
        let mut near = neighbours(hash);
        let mut area = decode_area(LONG_RANGE, LAT_RANGE, hash);
        let box_of = |h: Hash| decode_area(LONG_RANGE, LAT_RANGE, h);
        let too_coarse = box_of(near[0]).latitude.max < max_lat
            || box_of(near[1]).latitude.min > min_lat
            || box_of(near[2]).longitude.max < max_lon
            || box_of(near[3]).longitude.min > min_lon;
        if step > 1 && too_coarse {
            step -= 1;
            hash = encode(longitude, latitude, step).unwrap_or_default();
            near = neighbours(hash);
            area = decode_area(LONG_RANGE, LAT_RANGE, hash);
        }
        // near: north, south, east, west, north-east, north-west, south-east, south-west.
        if step >= 2 {
            let zero = Hash::default();
            if area.latitude.min < min_lat {
                for i in [1, 7, 6] {
                    near[i] = zero;
                }
            }
            if area.latitude.max > max_lat {
                for i in [0, 4, 5] {
                    near[i] = zero;
                }
            }
            if area.longitude.min < min_lon {
                for i in [3, 7, 5] {
                    near[i] = zero;
                }
            }
            if area.longitude.max > max_lon {
                for i in [2, 6, 4] {
                    near[i] = zero;
                }
            }
        }
        let boxes: Vec<Hash> = std::iter::once(hash).chain(near).collect();
        let mut ranges = Vec::with_capacity(9);
        let mut last = None;
        for (i, h) in boxes.iter().enumerate() {
            if h.is_zero() {
                continue;
            }
            if let Some(previous) = last
                && previous != 0
                && boxes[previous] == *h
            {
                continue;
            }
            let min = h.align52();
            let max = Hash {
                bits: h.bits + 1,
                step: h.step,
            }
            .align52();
            ranges.push((min as f64, max as f64));
            last = Some(i);
        }
        ranges
    }
}

/// The step whose boxes are about the size of `radius_m` at `latitude`.
fn estimate_step(mut radius_m: f64, latitude: f64) -> u8 {
    if radius_m == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while radius_m < MERCATOR_MAX {
        radius_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&latitude) {
        step -= 1;
        if !(-80.0..=80.0).contains(&latitude) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// The neighbouring box along one axis: `axis` is the mask of that coordinate's bits
/// (odd bits: longitude, east-west; even bits: latitude, north-south).
fn step_along(hash: Hash, axis: u64, forward: bool) -> Hash {
    let shift = 64 - u32::from(hash.step) * 2;
    let mut moved = hash.bits & axis;
    let kept = hash.bits & !axis;
    let others = !axis >> shift;
    if forward {
        moved = moved.wrapping_add(others + 1);
    } else {
        moved |= others;
        moved = moved.wrapping_sub(others + 1);
    }
    moved &= axis >> shift;
    Hash {
        bits: moved | kept,
        step: hash.step,
    }
}

const LONGITUDE_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
const LATITUDE_BITS: u64 = 0x5555_5555_5555_5555;

fn move_x(hash: Hash, forward: bool) -> Hash {
    step_along(hash, LONGITUDE_BITS, forward)
}

fn move_y(hash: Hash, forward: bool) -> Hash {
    step_along(hash, LATITUDE_BITS, forward)
}

/// The eight neighbours: north, south, east, west, north-east, north-west, south-east,
/// south-west.
fn neighbours(hash: Hash) -> [Hash; 8] {
    let east = move_x(hash, true);
    let west = move_x(hash, false);
    [
        move_y(hash, true),
        move_y(hash, false),
        east,
        west,
        move_y(east, true),
        move_y(west, true),
        move_y(east, false),
        move_y(west, false),
    ]
}

/// Redis's text of a coordinate (`%.17Lf` without trailing zeros).
pub fn human_coordinate(value: f64) -> String {
    let text = format!("{value:.17}");
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_as_in_redis() {
        // GEOADD Sicily 13.361389 38.115556 "Palermo"; GEOPOS and GEOHASH on redis-server.
        let palermo = score(13.361389, 38.115556).unwrap();
        assert_eq!(palermo, 3_479_099_956_230_698.0);
        let (lon, lat) = decode(palermo);
        assert_eq!(human_coordinate(lon), "13.36138933897018433");
        assert_eq!(human_coordinate(lat), "38.11555639549629859");
        assert_eq!(geohash_string(palermo), "sqc8b49rny0");
        assert_eq!(score(181.0, 0.0), None);
    }

    #[test]
    fn distances_as_in_redis() {
        let (a, b) = (
            decode(score(13.361389, 38.115556).unwrap()),
            decode(score(15.087269, 37.502669).unwrap()),
        );
        assert_eq!(
            format!("{:.4}", distance(a.0, a.1, b.0, b.1)),
            "166274.1516"
        );
    }
}
