//! HyperLogLog values in Redis's string format, byte for byte, so a value moves between
//! Quiver and Redis with GET/SET or DUMP/RESTORE and both count it alike.
//!
//! A value is a 16-byte header (`HYLL`, the encoding, three unused bytes, the cached
//! cardinality as 8 little-endian bytes whose top bit marks it stale) and 16,384
//! registers of 6 bits, either *dense* (packed, 12,288 bytes) or *sparse* (run-length
//! opcodes: `00xxxxxx` a run of up to 64 zero registers, `01xxxxxx yyyyyyyy` a run of up
//! to 16,384, `1vvvvvxx` up to 4 registers of value 1..=32). A sparse value turns dense
//! when a register passes 32 or the value would grow past `hll-sparse-max-bytes`.
//! Elements are hashed with MurmurHash64A (seed `0xadc83b19`); the count is Ertl's
//! improved estimator, as Redis 7.0 computes it.

/// Header length.
const HEADER: usize = 16;
/// Index bits: 2^14 registers.
const P: u32 = 14;
/// The number of registers.
pub const REGISTERS: usize = 1 << P;
/// Hash bits left after the index.
const Q: usize = 64 - P as usize;
/// Register width in the dense form.
const BITS: usize = 6;
const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// Length of a dense value.
pub const DENSE_LEN: usize = HEADER + (REGISTERS * BITS).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
/// `hll-sparse-max-bytes`'s default.
pub const DEFAULT_SPARSE_MAX_BYTES: usize = 3_000;
/// The top bit of the last cardinality byte: the cached count is stale.
const STALE: u8 = 0x80;

/// Why a string cannot be used as a HyperLogLog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HllError {
    /// Not a HyperLogLog at all (header, encoding or dense length).
    NotHll,
    /// A HyperLogLog header over registers that do not add up.
    Corrupt,
}

/// The two stored encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Dense,
    Sparse,
}

/// An empty HyperLogLog as Redis creates it: sparse, one run of zeros over every register.
pub fn empty() -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER + 2);
    value.extend_from_slice(b"HYLL");
    value.push(SPARSE);
    value.resize(HEADER, 0);
    value.extend_from_slice(&xzero(REGISTERS));
    value
}

/// The encoding of `value` if it is a HyperLogLog (Redis's checks: header, encoding and,
/// for a dense value, its exact length).
pub fn check(value: &[u8]) -> Result<Encoding, HllError> {
    if value.len() < HEADER || &value[..4] != b"HYLL" {
        return Err(HllError::NotHll);
    }
    match value[4] {
        DENSE if value.len() == DENSE_LEN => Ok(Encoding::Dense),
        SPARSE => Ok(Encoding::Sparse),
        _ => Err(HllError::NotHll),
    }
}

/// The cached cardinality, if it is not stale.
pub fn cached(value: &[u8]) -> Option<u64> {
    (value[15] & STALE == 0).then(|| {
        let bytes: [u8; 8] = value[8..16].try_into().expect("eight bytes");
        u64::from_le_bytes(bytes)
    })
}

/// Stores `count` as the cached cardinality.
pub fn store_cached(value: &mut [u8], count: u64) {
    value[8..16].copy_from_slice(&count.to_le_bytes());
}

/// Marks the cached cardinality stale.
pub fn invalidate(value: &mut [u8]) {
    value[15] |= STALE;
}

/// MurmurHash64A as Redis uses it (little-endian words).
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let mut k = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element updates and the value it offers: one more than the number of
/// trailing zeros of the hash bits above the index.
fn position(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// Register `i` of packed dense registers.
fn dense_get(registers: &[u8], i: usize) -> u8 {
    let (byte, shift) = (i * BITS / 8, i * BITS % 8);
    let low = u16::from(registers[byte]);
    let high = u16::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((low | high << 8) >> shift) as u8) & REGISTER_MAX
}

/// The packed dense registers eight at a time (six bytes hold eight), as the bytes of a
/// little-endian word.
fn dense_groups(registers: &[u8]) -> impl Iterator<Item = u64> + '_ {
    registers.chunks_exact(6).map(|bytes| {
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(bytes);
        spread(u64::from_le_bytes(word))
    })
}

/// Eight packed 6-bit registers (the low 48 bits of `word`) moved to a byte each: the two
/// halves of 24 bits to 32-bit lanes, their halves of 12 bits to 16-bit lanes, theirs of 6
/// bits to bytes.
fn spread(word: u64) -> u64 {
    let word = (word & 0xff_ffff) | (word & 0xffff_ff00_0000) << 8;
    let word = (word & 0x0000_0fff_0000_0fff) | (word & 0x00ff_f000_00ff_f000) << 4;
    (word & 0x003f_003f_003f_003f) | (word & 0x0fc0_0fc0_0fc0_0fc0) << 2
}

/// The inverse of [`spread`]: the low six bits of each byte packed into the low 48 bits.
fn pack(word: u64) -> u64 {
    let word = (word & 0x003f_003f_003f_003f) | (word & 0x3f00_3f00_3f00_3f00) >> 2;
    let word = (word & 0x0000_0fff_0000_0fff) | (word & 0x0fff_0000_0fff_0000) >> 4;
    (word & 0xff_ffff) | (word & 0x00ff_ffff_0000_0000) >> 8
}

/// The byte-wise maximum of two words whose bytes are all below 128: per byte, the top
/// bit of `(a | 0x80) - b` is set where `a >= b`, and no borrow crosses a byte.
fn max_bytes(a: u64, b: u64) -> u64 {
    const TOP: u64 = 0x8080_8080_8080_8080;
    let a_wins = (((a | TOP) - b) & TOP) >> 7;
    let mask = a_wins * 0xff;
    (a & mask) | (b & !mask)
}

/// Register histograms kept eight ways, by register position modulo eight: a run of
/// equal registers then increments eight counters in turn rather than one, each waiting
/// for its last increment.
struct Histograms([[u32; 64]; 8]);

impl Histograms {
    fn new() -> Histograms {
        Histograms([[0; 64]; 8])
    }

    /// Counts the eight registers in the bytes of a little-endian word.
    fn add(&mut self, registers: u64) {
        for (histogram, register) in self.0.iter_mut().zip(registers.to_le_bytes()) {
            histogram[usize::from(register & REGISTER_MAX)] += 1;
        }
    }

    fn total(&self) -> [u32; 64] {
        std::array::from_fn(|value| self.0.iter().map(|histogram| histogram[value]).sum())
    }
}

/// Sets register `i` of packed dense registers.
fn dense_set(registers: &mut [u8], i: usize, value: u8) {
    let (byte, shift) = (i * BITS / 8, i * BITS % 8);
    let mask = u16::from(REGISTER_MAX) << shift;
    let bits = u16::from(value) << shift;
    registers[byte] = (registers[byte] & !(mask as u8)) | bits as u8;
    if let Some(next) = registers.get_mut(byte + 1) {
        *next = (*next & !((mask >> 8) as u8)) | (bits >> 8) as u8;
    }
}

/// One sparse opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// A run of zero registers (`xzero` when written in two bytes).
    Zero { len: usize, xzero: bool },
    /// A run of `len` registers of `value`.
    Val { value: u8, len: usize },
}

impl Op {
    /// The opcode at the start of `bytes` (a two-byte run cut short reads its second
    /// byte as zero, as Redis's reader does).
    fn read(bytes: &[u8]) -> Op {
        let b = bytes[0];
        match b & 0xc0 {
            0x00 => Op::Zero {
                len: usize::from(b & 0x3f) + 1,
                xzero: false,
            },
            0x40 => Op::Zero {
                len: (usize::from(b & 0x3f) << 8 | usize::from(bytes.get(1).copied().unwrap_or(0)))
                    + 1,
                xzero: true,
            },
            _ => Op::Val {
                value: (b >> 2 & 0x1f) + 1,
                len: usize::from(b & 0x3) + 1,
            },
        }
    }

    fn bytes(self) -> usize {
        match self {
            Op::Zero { xzero: true, .. } => 2,
            _ => 1,
        }
    }

    fn len(self) -> usize {
        match self {
            Op::Zero { len, .. } | Op::Val { len, .. } => len,
        }
    }
}

fn zero(len: usize) -> u8 {
    (len - 1) as u8
}

fn xzero(len: usize) -> [u8; 2] {
    let l = len - 1;
    [(l >> 8) as u8 | 0x40, (l & 0xff) as u8]
}

fn val(value: u8, len: usize) -> u8 {
    ((value - 1) << 2 | (len - 1) as u8) | 0x80
}

/// A zero run of `len` in the fewest bytes.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        seq.extend_from_slice(&xzero(len));
    } else {
        seq.push(zero(len));
    }
}

/// The sparse opcodes of `value` (after the header) as (offset, opcode) pairs.
fn ops(value: &[u8]) -> impl Iterator<Item = (usize, Op)> + '_ {
    let mut at = HEADER;
    std::iter::from_fn(move || {
        let op = Op::read(value.get(at..).filter(|rest| !rest.is_empty())?);
        let here = at;
        at += op.bytes();
        Some((here, op))
    })
}

/// Adds `element`; whether a register changed.
pub fn add(value: &mut Vec<u8>, element: &[u8], sparse_max: usize) -> Result<bool, HllError> {
    let (index, count) = position(element);
    set(value, index, count, sparse_max)
}

/// Raises register `index` to `count`; whether it changed.
fn set(value: &mut Vec<u8>, index: usize, count: u8, sparse_max: usize) -> Result<bool, HllError> {
    if value[4] == DENSE {
        let registers = &mut value[HEADER..];
        if count <= dense_get(registers, index) {
            return Ok(false);
        }
        dense_set(registers, index, count);
        return Ok(true);
    }
    sparse_set(value, index, count, sparse_max)
}

/// Raises register `index` of a sparse value to `count`, as Redis does: the run holding
/// it is split into at most three opcodes, adjacent equal values are merged, and the
/// value turns dense when `count` does not fit a sparse opcode or it would grow past
/// `sparse_max` bytes.
fn sparse_set(
    value: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: usize,
) -> Result<bool, HllError> {
    if count > VAL_MAX_VALUE {
        return promote(value, index, count);
    }
    // The opcode covering `index`, where it starts, and the one before it.
    let (mut first, mut prev) = (0, None);
    let mut found = None;
    for (at, op) in ops(value) {
        if index < first + op.len() {
            found = Some((at, op));
            break;
        }
        prev = Some(at);
        first += op.len();
    }
    // Past the last opcode, or in a two-byte one cut short: damaged.
    let Some((at, op)) = found.filter(|(at, op)| at + op.bytes() <= value.len()) else {
        return Err(HllError::Corrupt);
    };
    let changed_in_place = match op {
        Op::Val { value: old, .. } if old >= count => return Ok(false),
        Op::Val { len: 1, .. } | Op::Zero { len: 1, .. } => {
            value[at] = val(count, 1);
            true
        }
        _ => false,
    };
    if !changed_in_place {
        let last = first + op.len() - 1;
        let mut seq = Vec::with_capacity(5);
        match op {
            Op::Zero { .. } => {
                if index != first {
                    push_zeros(&mut seq, index - first);
                }
                seq.push(val(count, 1));
                if index != last {
                    push_zeros(&mut seq, last - index);
                }
            }
            Op::Val { value: current, .. } => {
                if index != first {
                    seq.push(val(current, index - first));
                }
                seq.push(val(count, 1));
                if index != last {
                    seq.push(val(current, last - index));
                }
            }
        }
        if seq.len() > op.bytes() && value.len() + seq.len() - op.bytes() > sparse_max {
            return promote(value, index, count);
        }
        value.splice(at..at + op.bytes(), seq);
    }
    merge_values(value, prev.unwrap_or(HEADER));
    invalidate(value);
    Ok(true)
}

/// Merges adjacent VAL opcodes of equal value in the five opcodes from `from`.
fn merge_values(value: &mut Vec<u8>, from: usize) {
    let mut p = from;
    let mut scan = 5;
    while p < value.len() && scan > 0 {
        scan -= 1;
        match Op::read(&value[p..]) {
            Op::Zero { xzero, .. } => p += if xzero { 2 } else { 1 },
            Op::Val { value: v1, len: l1 } => {
                if let Some(&next) = value.get(p + 1)
                    && next & 0x80 != 0
                    && let Op::Val { value: v2, len: l2 } = Op::read(&value[p + 1..])
                    && v1 == v2
                    && l1 + l2 <= VAL_MAX_LEN
                {
                    value[p + 1] = val(v1, l1 + l2);
                    value.remove(p);
                    // Try the merged run with the one after it.
                    continue;
                }
                p += 1;
            }
        }
    }
}

/// Turns a sparse value dense and raises register `index` to `count` in it.
fn promote(value: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, HllError> {
    to_dense(value)?;
    let registers = &mut value[HEADER..];
    if count > dense_get(registers, index) {
        dense_set(registers, index, count);
    }
    Ok(true)
}

/// Rewrites a sparse value dense, keeping its header; a dense one is left as it is.
pub fn to_dense(value: &mut Vec<u8>) -> Result<(), HllError> {
    if value[4] == DENSE {
        return Ok(());
    }
    let mut dense = vec![0; DENSE_LEN];
    dense[..HEADER].copy_from_slice(&value[..HEADER]);
    dense[4] = DENSE;
    let mut i = 0;
    for (_, op) in ops(value) {
        if let Op::Val { value: v, len } = op {
            if i + len > REGISTERS {
                return Err(HllError::Corrupt);
            }
            for r in i..i + len {
                dense_set(&mut dense[HEADER..], r, v);
            }
        }
        i += op.len();
    }
    if i != REGISTERS {
        return Err(HllError::Corrupt);
    }
    *value = dense;
    Ok(())
}

/// Raises each register of `max` (one byte per register) to the value's register.
pub fn merge_into(max: &mut [u8], value: &[u8]) -> Result<(), HllError> {
    if value[4] == DENSE {
        for (slots, registers) in max.chunks_exact_mut(8).zip(dense_groups(&value[HEADER..])) {
            let current = u64::from_le_bytes((&*slots).try_into().expect("eight registers"));
            slots.copy_from_slice(&max_bytes(current, registers).to_le_bytes());
        }
        return Ok(());
    }
    let mut i = 0;
    for (_, op) in ops(value) {
        if let Op::Val { value: v, len } = op {
            if i + len > REGISTERS {
                return Err(HllError::Corrupt);
            }
            for slot in &mut max[i..i + len] {
                *slot = (*slot).max(v);
            }
        }
        i += op.len();
    }
    if i != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(())
}

/// Writes registers given one byte each (from [`merge_into`], which took in the value's
/// own registers too) into a value, as PFMERGE does: a dense value takes them as they are,
/// eight at a time; a sparse one register by register, so that it may turn dense on the
/// way.
pub fn raise_all(value: &mut Vec<u8>, max: &[u8], sparse_max: usize) {
    if value[4] == DENSE {
        for (bytes, raised) in value[HEADER..].chunks_exact_mut(6).zip(max.chunks_exact(8)) {
            let raised = u64::from_le_bytes(raised.try_into().expect("eight registers"));
            bytes.copy_from_slice(&pack(raised).to_le_bytes()[..6]);
        }
        return;
    }
    for (i, &m) in max.iter().enumerate() {
        // A corrupt value was refused before: this cannot fail.
        if m != 0 {
            let _ = set(value, i, m, sparse_max);
        }
    }
}

/// The cardinality estimate of a valid value.
pub fn count(value: &[u8]) -> Result<u64, HllError> {
    if value[4] == DENSE {
        let mut histograms = Histograms::new();
        for registers in dense_groups(&value[HEADER..]) {
            histograms.add(registers);
        }
        return Ok(estimate(&histograms.total()));
    }
    let mut histogram = [0u32; 64];
    let mut i = 0;
    for (_, op) in ops(value) {
        let register = match op {
            Op::Zero { .. } => 0,
            Op::Val { value, .. } => usize::from(value),
        };
        histogram[register] += op.len() as u32;
        i += op.len();
    }
    if i != REGISTERS {
        return Err(HllError::Corrupt);
    }
    Ok(estimate(&histogram))
}

/// The estimate of registers given one byte each.
pub fn count_registers(max: &[u8]) -> u64 {
    let mut histograms = Histograms::new();
    for registers in max.chunks_exact(8) {
        histograms.add(u64::from_le_bytes(
            registers.try_into().expect("eight registers"),
        ));
    }
    estimate(&histograms.total())
}

/// Ertl's improved raw estimator ("New cardinality estimation algorithms for
/// HyperLogLog sketches", 2017) over the register histogram, as Redis 7.0 computes it.
fn estimate(histogram: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histogram[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histogram[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histogram[0]) / m);
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    let rounded = (ALPHA_INF * m * m / z).round();
    // Past the 64-bit range (registers all at their maximum) Redis's `llroundl` gives
    // the smallest signed value, which it then reads as unsigned.
    if rounded < 2f64.powi(63) {
        rounded as u64
    } else {
        1 << 63
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

/// The registers of a valid value, one byte each (PFDEBUG GETREG).
pub fn registers(value: &[u8]) -> Result<Vec<u8>, HllError> {
    let mut max = vec![0; REGISTERS];
    merge_into(&mut max, value)?;
    Ok(max)
}

/// The sparse opcodes as PFDEBUG DECODE writes them (`z:len`, `Z:len`, `v:value,len`).
pub fn decode(value: &[u8]) -> String {
    ops(value)
        .map(|(_, op)| match op {
            Op::Zero { len, xzero: false } => format!("z:{len}"),
            Op::Zero { len, xzero: true } => format!("Z:{len}"),
            Op::Val { value, len } => format!("v:{value},{len}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A self-test of the representations (PFSELFTEST): dense registers read back what was
/// written, and a value that starts sparse (and turns dense on its way) agrees with one
/// dense from the start register by register and counts within five standard errors. The first failure, described.
pub fn self_test() -> Result<(), String> {
    let mut packed = vec![0u8; DENSE_LEN - HEADER];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let expected: Vec<u8> = (0..REGISTERS).map(|_| (next() % 64) as u8).collect();
    for (i, &v) in expected.iter().enumerate() {
        dense_set(&mut packed, i, v);
    }
    for (i, &v) in expected.iter().enumerate() {
        let got = dense_get(&packed, i);
        if got != v {
            return Err(format!(
                "TESTFAILED Register error: register {i} read {got}, written {v}"
            ));
        }
    }
    if let Some(i) = dense_groups(&packed)
        .flat_map(u64::to_le_bytes)
        .zip(&expected)
        .position(|(got, &v)| got != v)
    {
        return Err(format!(
            "TESTFAILED Register error: register {i} read eight at a time differs"
        ));
    }
    let mut repacked = vec![0u8; DENSE_LEN];
    repacked[..4].copy_from_slice(b"HYLL");
    raise_all(&mut repacked, &expected, DEFAULT_SPARSE_MAX_BYTES);
    if repacked[HEADER..] != packed[..] {
        return Err("TESTFAILED Register error: registers written eight at a time differ".into());
    }
    let (mut sparse, mut dense) = (empty(), empty());
    to_dense(&mut dense).map_err(|_| "TESTFAILED an empty value did not turn dense".to_owned())?;
    let relative = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint = 10u64;
    for n in 1..=100_000u64 {
        let element = next().to_le_bytes();
        add(&mut sparse, &element, DEFAULT_SPARSE_MAX_BYTES)
            .map_err(|_| "TESTFAILED sparse add")?;
        add(&mut dense, &element, DEFAULT_SPARSE_MAX_BYTES).map_err(|_| "TESTFAILED dense add")?;
        if n != checkpoint {
            continue;
        }
        checkpoint *= 10;
        let (s, d) = (count(&sparse), count(&dense));
        if s != d || registers(&sparse) != registers(&dense) {
            return Err(format!(
                "TESTFAILED sparse and dense differ after {n} elements: {s:?} against {d:?}"
            ));
        }
        let estimate = d.unwrap_or(0) as f64;
        let error = (estimate - n as f64).abs() / n as f64;
        if error > 5.0 * relative && n >= 1_000 {
            return Err(format!(
                "TESTFAILED too big error. card:{n} abserr:{}",
                (estimate - n as f64).abs()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_wise_maximum_is_the_byte_wise_one() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..10_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Bytes below 128, with equal bytes and the extremes common.
            let a = rng & 0x7f7f_7f7f_7f7f_7f7f;
            let b = (rng.rotate_left(29) & 0x7f7f_7f7f_7f7f_7f7f) | (a & 0x00ff_00ff_0000_0000);
            let expected: Vec<u8> = a
                .to_le_bytes()
                .iter()
                .zip(b.to_le_bytes())
                .map(|(&x, y)| x.max(y))
                .collect();
            assert_eq!(
                max_bytes(a, b).to_le_bytes().to_vec(),
                expected,
                "{a:x} {b:x}"
            );
        }
        assert_eq!(max_bytes(0x7f00_7f00, 0x007f_007f), 0x7f7f_7f7f);
    }

    #[test]
    fn an_empty_value_is_one_long_zero_run() {
        let value = empty();
        assert_eq!(value.len(), 18);
        assert_eq!(&value[16..], &[0x7f, 0xff]);
        assert_eq!(check(&value), Ok(Encoding::Sparse));
        assert_eq!(count(&value), Ok(0));
        assert_eq!(decode(&value), "Z:16384");
    }

    #[test]
    fn sparse_runs_split_and_merge() {
        let mut value = empty();
        assert_eq!(sparse_set(&mut value, 100, 3, 3000), Ok(true));
        assert_eq!(decode(&value), "Z:100 v:3,1 Z:16283");
        assert_eq!(sparse_set(&mut value, 101, 3, 3000), Ok(true));
        assert_eq!(decode(&value), "Z:100 v:3,2 Z:16282");
        assert_eq!(sparse_set(&mut value, 101, 2, 3000), Ok(false));
        assert_eq!(registers(&value).unwrap()[100..103], [3, 3, 0]);
    }

    #[test]
    fn a_large_register_or_size_turns_the_value_dense() {
        let mut value = empty();
        assert_eq!(sparse_set(&mut value, 7, 40, 3000), Ok(true));
        assert_eq!(check(&value), Ok(Encoding::Dense));
        assert_eq!(registers(&value).unwrap()[7], 40);
        let mut small = empty();
        for i in 0..100 {
            set(&mut small, i * 3, 1, 40).unwrap();
        }
        assert_eq!(check(&small), Ok(Encoding::Dense));
    }

    #[test]
    fn elements_land_where_redis_puts_them() {
        // GET of `PFADD k a b c` on redis-server 7.0.
        let mut value = empty();
        for element in [b"a", b"b", b"c"] {
            assert_eq!(add(&mut value, element, 3000), Ok(true));
        }
        let mut expected = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
        expected.extend_from_slice(b"\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a");
        assert_eq!(value, expected);
        assert_eq!(
            decode(&value),
            "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
        );
        assert_eq!(count(&value), Ok(3));
    }

    #[test]
    fn the_self_test_passes() {
        assert_eq!(self_test(), Ok(()));
    }
}
