//! A decoded request: its arguments as zero-copy slices of one buffer.

use bytes::{BufMut, Bytes};

use crate::encode::write_bulk;

/// How many arguments a request keeps inline before spilling to the heap.
/// `SET key value EX 10 NX GET` has seven; `MSET`/`DEL` with many keys spill.
pub const INLINE_ARGS: usize = 8;

/// Argument positions: `u32` offsets inline for the common short request
/// (64 bytes, cheap to move), `usize` ranges on the heap for long requests or
/// buffers past 4 GiB.
#[derive(Clone, Debug)]
pub(crate) enum Spans {
    Inline {
        len: u8,
        items: [(u32, u32); INLINE_ARGS],
    },
    Heap(Vec<(usize, usize)>),
}

impl Spans {
    /// Empty spans with room for about `capacity` arguments.
    pub(crate) fn with_capacity(capacity: usize) -> Spans {
        if capacity <= INLINE_ARGS {
            Spans::Inline {
                len: 0,
                items: [(0, 0); INLINE_ARGS],
            }
        } else {
            Spans::Heap(Vec::with_capacity(capacity))
        }
    }

    /// Adds the argument at `start..end` of the request's buffer.
    pub(crate) fn push(&mut self, start: usize, end: usize) {
        debug_assert!(start <= end, "an argument span is ordered");
        match self {
            Spans::Inline { len, items } if usize::from(*len) < INLINE_ARGS => {
                if let (Ok(start32), Ok(end32)) = (u32::try_from(start), u32::try_from(end)) {
                    items[usize::from(*len)] = (start32, end32);
                    *len += 1;
                    return;
                }
                self.spill(start, end);
            }
            Spans::Inline { .. } => self.spill(start, end),
            Spans::Heap(heap) => heap.push((start, end)),
        }
    }

    /// Moves the inline spans to the heap and adds one more.
    fn spill(&mut self, start: usize, end: usize) {
        let mut heap = Vec::with_capacity(INLINE_ARGS * 2);
        heap.extend((0..self.len()).filter_map(|i| self.get(i)));
        heap.push((start, end));
        *self = Spans::Heap(heap);
    }

    /// Number of arguments.
    fn len(&self) -> usize {
        match self {
            Spans::Inline { len, .. } => usize::from(*len),
            Spans::Heap(heap) => heap.len(),
        }
    }

    /// The range of argument `index`.
    fn get(&self, index: usize) -> Option<(usize, usize)> {
        match self {
            Spans::Inline { len, items } if index < usize::from(*len) => {
                let (start, end) = items[index];
                Some((start as usize, end as usize))
            }
            Spans::Inline { .. } => None,
            Spans::Heap(heap) => heap.get(index).copied(),
        }
    }
}

/// One client request: a command name and its arguments, each a slice of
/// `data` (the received frame, or for quoted inline requests the unescaped
/// copy). An empty request (`*0\r\n`, an empty inline line) has no arguments
/// and is skipped by servers, as Redis does.
#[derive(Clone, Debug)]
pub struct Request {
    data: Bytes,
    spans: Spans,
}

impl Request {
    /// A request builder over `data` expecting about `capacity` arguments.
    pub(crate) fn builder(data: Bytes, capacity: usize) -> Request {
        Request {
            data,
            spans: Spans::with_capacity(capacity),
        }
    }

    /// Adds the argument at `data[start..end]`.
    pub(crate) fn push_span(&mut self, start: usize, end: usize) {
        debug_assert!(end <= self.data.len(), "argument span inside the frame");
        self.spans.push(start, end);
    }

    /// A request over `data` with argument `spans` inside it.
    pub(crate) fn from_spans(data: Bytes, spans: Spans) -> Request {
        debug_assert!(
            (0..spans.len()).all(|i| spans.get(i).is_some_and(|(_, end)| end <= data.len())),
            "spans inside the data"
        );
        Request { data, spans }
    }

    /// A request from owned arguments (clients, tests, tools): copies them once
    /// into one buffer.
    pub fn from_args<I, A>(args: I) -> Request
    where
        I: IntoIterator<Item = A>,
        A: AsRef<[u8]>,
    {
        let mut data = Vec::new();
        let mut bounds = Vec::new();
        for arg in args {
            let start = data.len();
            data.extend_from_slice(arg.as_ref());
            bounds.push((start, data.len()));
        }
        let mut request = Request::builder(Bytes::from(data), bounds.len());
        for (start, end) in bounds {
            request.push_span(start, end);
        }
        request
    }

    /// Number of arguments, the command name included.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True for an empty request, which is to be skipped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The command name (first argument), if any.
    pub fn name(&self) -> Option<&[u8]> {
        self.arg(0)
    }

    /// Argument `index` (0 is the command name) as a borrowed slice.
    pub fn arg(&self, index: usize) -> Option<&[u8]> {
        let (start, end) = self.spans.get(index)?;
        self.data.get(start..end)
    }

    /// Argument `index` as a zero-copy `Bytes` sharing the request's buffer.
    pub fn arg_bytes(&self, index: usize) -> Option<Bytes> {
        let (start, end) = self.spans.get(index)?;
        Some(self.data.slice(start..end))
    }

    /// All arguments, the command name first.
    pub fn args(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| {
            self.arg(i)
                .expect("every index below len() has an argument")
        })
    }

    /// The buffer every argument is a slice of.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// Encodes the request as a RESP multibulk frame (what clients send).
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        crate::encode::write_array_len(out, self.len());
        for arg in self.args() {
            write_bulk(out, arg);
        }
    }
}

impl PartialEq for Request {
    fn eq(&self, other: &Request) -> bool {
        self.len() == other.len() && self.args().zip(other.args()).all(|(a, b)| a == b)
    }
}

impl Eq for Request {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_past_inline_capacity() {
        let args: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
        let request = Request::from_args(&args);
        assert_eq!(request.len(), 20);
        for (i, arg) in args.iter().enumerate() {
            assert_eq!(request.arg(i), Some(arg.as_bytes()));
            assert_eq!(request.arg_bytes(i).unwrap(), arg.as_bytes());
        }
        assert_eq!(request.arg(20), None);
    }

    #[test]
    fn encodes_as_multibulk() {
        let mut out = Vec::new();
        Request::from_args(["SET", "k", ""]).encode(&mut out);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
        assert!(Request::from_args(Vec::<&str>::new()).is_empty());
    }
}
