//! Writes the pruned array and measures both arrays. An untouched message
//! whose bytes are already JSON.stringify's spelling is copied and measured
//! straight from the caller's buffer; everything else is serialized.

use crate::index::scan::Span;
use crate::jsjson::utf16_len;
use crate::value::{Raw, Val};

pub struct Sizes {
    pub before: usize,
    pub after: usize,
}

/// The caller's messages with what is known about their bytes.
pub struct Source<'i, 't> {
    input: &'i [u8],
    raws: &'i [Raw<'t>],
    /// One per raw when the scanner could align them; None otherwise.
    spans: Option<&'i [Span]>,
}

impl<'i, 't> Source<'i, 't> {
    pub fn new(input: &'i [u8], raws: &'i [Raw<'t>], spans: &'i [Span]) -> Self {
        let spans = (spans.len() == raws.len()).then_some(spans);
        Self { input, raws, spans }
    }

    /// The caller's exact bytes for message `i`, when they are canonical.
    fn canonical_bytes(&self, i: usize) -> Option<&'i [u8]> {
        let span = self.spans?.get(i)?;
        (span.canonical && self.raws[i].keys_in_js_order())
            .then(|| &self.input[span.start..span.end])
    }

    /// Which input message a raw output message is, found by tape position.
    fn index_of(&self, r: Raw<'_>) -> Option<usize> {
        self.raws.binary_search_by_key(&r.at(), |x| x.at()).ok()
    }

    /// Length in UTF-16 units of message `i` as JSON.stringify writes it,
    /// given its canonical bytes when it has them.
    fn input_len(&self, i: usize, canonical: Option<&[u8]>, scratch: &mut Vec<u8>) -> usize {
        match canonical {
            Some(bytes) => utf16_len(bytes),
            None => {
                scratch.clear();
                Val::Raw(self.raws[i]).view().write_json(scratch);
                utf16_len(scratch)
            }
        }
    }
}

/// `JSON.stringify(input).length`, `JSON.stringify(output).length`, and the
/// output bytes.
pub fn assemble(src: &Source<'_, '_>, msgs: &[Val<'_>]) -> (Vec<u8>, Sizes) {
    let canonical: Vec<Option<&[u8]>> = (0..src.raws.len())
        .map(|i| src.canonical_bytes(i))
        .collect();
    let mut scratch = Vec::new();
    let lens: Vec<usize> = (0..src.raws.len())
        .map(|i| src.input_len(i, canonical[i], &mut scratch))
        .collect();
    let before = 2 + src.raws.len().saturating_sub(1) + lens.iter().sum::<usize>();
    let mut out = Vec::with_capacity(src.input.len());
    out.push(b'[');
    let mut after = 2 + msgs.len().saturating_sub(1);
    for (n, m) in msgs.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let from = out.len();
        let known = match m {
            Val::Raw(r) => src.index_of(*r),
            _ => None,
        };
        match known {
            Some(i) => {
                match canonical[i] {
                    Some(bytes) => out.extend_from_slice(bytes),
                    None => m.view().write_json(&mut out),
                }
                debug_assert_eq!(utf16_len(&out[from..]), lens[i]);
                after += lens[i];
            }
            None => {
                m.view().write_json(&mut out);
                after += utf16_len(&out[from..]);
            }
        }
    }
    out.push(b']');
    (out, Sizes { before, after })
}

/// `JSON.stringify(JSON.parse(bytes)).length` for a whole array.
pub fn measure(src: &Source<'_, '_>) -> usize {
    let mut scratch = Vec::new();
    let body: usize = (0..src.raws.len())
        .map(|i| src.input_len(i, src.canonical_bytes(i), &mut scratch))
        .sum();
    2 + src.raws.len().saturating_sub(1) + body
}
