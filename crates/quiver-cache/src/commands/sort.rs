//! SORT and SORT_RO: the elements of a list, set or sorted set, sorted as numbers or as
//! text, by themselves or by other keys a pattern names (`weight_*`, `h_*->field`),
//! answered as themselves or as the values `GET` patterns name, or stored as a list.
//! Every shard is locked for the whole command, since the patterns may name any key.

use bytes::Bytes;

use super::{KeyCtx, out};
use crate::error::OpError;
use crate::keyspace::{Db, Event, EventClasses, ShardSet};
use crate::value::Value;
use crate::value::list::ListValue;
use crate::value::zset::ZSetValue;

/// SORT's options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// `BY pattern`; a pattern without `*` leaves the elements unsorted.
    pub by: Option<Bytes>,
    /// `LIMIT offset count` (a negative count: to the end).
    pub limit: Option<(i64, i64)>,
    /// `GET pattern`s (`#` is the element itself).
    pub get: Vec<Bytes>,
    /// `DESC`.
    pub desc: bool,
    /// `ALPHA`: as text rather than as numbers.
    pub alpha: bool,
    /// `STORE destination`.
    pub store: Option<Bytes>,
}

/// What SORT gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortOutput {
    /// The elements, or for each the values of the `GET` patterns (`None`: no such key
    /// or field).
    Items(Vec<Option<Bytes>>),
    /// With `STORE`: the length of the stored list.
    Stored(usize),
}

/// One element being sorted: itself, and what it is compared by.
struct Sortable {
    element: Bytes,
    score: f64,
    by: Option<Bytes>,
}

impl Db<'_> {
    /// SORT (SORT_RO is this without `store`).
    pub fn sort(
        &mut self,
        key: &[u8],
        options: &SortOptions,
        now_ms: u64,
    ) -> Result<SortOutput, OpError> {
        if options.store.is_some() {
            self.make_room(now_ms)?;
        }
        let (db, clock) = (self.db, self.clock(now_ms));
        let all: Vec<usize> = (0..self.ks.shard_count()).collect();
        let ks = self.ks;
        self.with_shards(&all, |set| {
            // What a pattern names: a string, or a hash's field.
            let lookup = |set: &mut ShardSet<'_>, name: &[u8], field: Option<&[u8]>| {
                let (shard, hash) = ks.route(name);
                let k = KeyCtx::read(set.get(shard), db, hash, name, clock);
                match (&k.entry()?.value, field) {
                    (Value::Hash(h), Some(field)) => h.get(field).map(out),
                    (_, Some(_)) => None,
                    (_, None) => k.entry()?.str().ok().map(|s| s.with(out)),
                }
            };
            let (shard, hash) = ks.route(key);
            // The elements in the value's own order (a set's is its layout's), and the
            // kind of value.
            let (elements, is_set): (Vec<Bytes>, bool) = {
                let k = KeyCtx::read(set.get(shard), db, hash, key, clock);
                // Redis converts a sorted set it sorts to its skiplist encoding, for good;
                // not a modification.
                if let Some(idx) = k
                    .idx
                    .filter(|_| k.view::<ZSetValue>().is_ok_and(|z| z.is_some()))
                {
                    k.s.update_if(db, idx, |e| {
                        if let Value::ZSet(z) = &mut e.value {
                            z.convert_to_skiplist();
                        }
                        ((), false)
                    });
                }
                match k.entry().map(|e| &e.value) {
                    None => (Vec::new(), false),
                    Some(Value::List(l)) => (l.items().iter().map(out).collect(), false),
                    Some(Value::Set(s)) => (s.members().map(|m| out(m)).collect(), true),
                    Some(Value::ZSet(z)) => {
                        (z.iter_from(0).map(|i| out(&i.member)).collect(), false)
                    }
                    Some(_) => return Err(OpError::WrongType),
                }
            };
            let mut dont_sort = options.by.as_ref().is_some_and(|by| !by.contains(&b'*'));
            let mut alpha = options.alpha;
            let mut by = options.by.as_deref().filter(|_| !dont_sort);
            // A set has no order of its own: stored, it is sorted as text, so that the
            // result does not depend on how the set is laid out.
            if dont_sort && is_set && options.store.is_some() {
                (dont_sort, alpha, by) = (false, true, None);
            }
            let len = elements.len() as i64;
            let (offset, count) = options.limit.unwrap_or((0, -1));
            let mut start = offset.max(0);
            let mut end = if count < 0 {
                len - 1
            } else {
                start + count - 1
            };
            if start >= len {
                (start, end) = (len - 1, len - 2);
            }
            end = end.min(len - 1);
            let vector: Vec<Sortable> = if dont_sort {
                // Lists and sorted sets keep their order (reversed by DESC).
                let mut ordered = elements;
                if options.desc && !is_set {
                    ordered.reverse();
                }
                ordered
                    .into_iter()
                    .map(|element| Sortable {
                        element,
                        score: 0.0,
                        by: None,
                    })
                    .collect()
            } else {
                let mut vector = Vec::with_capacity(elements.len());
                for element in elements {
                    let by_value = match by {
                        Some(pattern) => by_pattern(set, &lookup, pattern, &element),
                        None => Some(element.clone()),
                    };
                    let mut score = 0.0;
                    if !alpha && let Some(v) = &by_value {
                        score = parse_score(v).ok_or(OpError::SortNotNumber)?;
                    }
                    vector.push(Sortable {
                        element,
                        score,
                        by: by_value.filter(|_| alpha && by.is_some()),
                    });
                }
                vector.sort_by(|a, b| {
                    let order = if !alpha {
                        a.score
                            .partial_cmp(&b.score)
                            .unwrap_or(std::cmp::Ordering::Equal)
                            .then_with(|| a.element.cmp(&b.element))
                    } else if by.is_some() {
                        match (&a.by, &b.by) {
                            (Some(x), Some(y)) => text_order(x, y, options.store.is_some()),
                            (x, y) => x.is_some().cmp(&y.is_some()),
                        }
                    } else {
                        text_order(&a.element, &b.element, options.store.is_some())
                    };
                    if options.desc { order.reverse() } else { order }
                });
                vector
            };
            let selected: &[Sortable] = if end >= start {
                &vector[start as usize..=end as usize]
            } else {
                &[]
            };
            let mut items = Vec::new();
            for s in selected {
                if options.get.is_empty() {
                    items.push(Some(s.element.clone()));
                }
                for pattern in &options.get {
                    items.push(by_pattern(set, &lookup, pattern, &s.element));
                }
            }
            let Some(dst) = &options.store else {
                return Ok(SortOutput::Items(items));
            };
            let (shard, hash) = ks.route(dst);
            let mut d = KeyCtx::write(set.get(shard), db, hash, dst, clock);
            if items.is_empty() {
                d.delete();
                return Ok(SortOutput::Stored(0));
            }
            let mut list = ListValue::default();
            for item in &items {
                list.push_back(item.as_deref().unwrap_or_default());
            }
            d.on_change(Event::new(EventClasses::LIST, "sortstore"))
                .put_value(Value::List(Box::new(list)));
            d.set_expire(None);
            d.signal_ready();
            Ok(SortOutput::Stored(items.len()))
        })
    }
}

/// Redis's `lookupKeyByPattern`: `#` is the element; otherwise the first `*` of
/// `pattern` becomes the element, and the key named is read as a string, or with
/// `->field` after the `*` as that field of a hash.
fn by_pattern(
    set: &mut ShardSet<'_>,
    lookup: &impl Fn(&mut ShardSet<'_>, &[u8], Option<&[u8]>) -> Option<Bytes>,
    pattern: &[u8],
    element: &[u8],
) -> Option<Bytes> {
    if pattern == b"#" {
        return Some(out(element));
    }
    let star = pattern.iter().position(|&b| b == b'*')?;
    let rest = &pattern[star + 1..];
    let arrow = rest.windows(2).position(|w| w == b"->");
    let (suffix, field) = match arrow {
        Some(at) if at + 2 < rest.len() => (&rest[..at], Some(&rest[at + 2..])),
        _ => (rest, None),
    };
    let mut name = Vec::with_capacity(pattern.len() + element.len());
    name.extend_from_slice(&pattern[..star]);
    name.extend_from_slice(element);
    name.extend_from_slice(suffix);
    lookup(set, &name, field)
}

/// What Redis's `strtod` accepts as a whole: leading blanks, then a number (an empty
/// string is 0); NaN and what overflows or underflows a double (to zero or below the
/// normal range) are refused.
fn parse_score(text: &[u8]) -> Option<f64> {
    if text.is_empty() {
        return Some(0.0);
    }
    // C's isspace: the vertical tab too.
    let blanks = text
        .iter()
        .take_while(|b| b.is_ascii_whitespace() || **b == 0x0b)
        .count();
    // strtod also flags a result too small to be a normal double (ERANGE), which SORT,
    // unlike other commands, refuses.
    quiver_resp::num::parse_f64(&text[blanks..])
        .filter(|score| *score == 0.0 || score.abs() >= f64::MIN_POSITIVE)
}

/// Text order: bytes with STORE (Redis's binary comparison); otherwise `strcoll` in the
/// C locale, which stops at a zero byte.
fn text_order(a: &[u8], b: &[u8], binary: bool) -> std::cmp::Ordering {
    if binary {
        return a.cmp(b);
    }
    let c_string = |s: &[u8]| -> Vec<u8> { s.iter().copied().take_while(|&b| b != 0).collect() };
    c_string(a).cmp(&c_string(b))
}
