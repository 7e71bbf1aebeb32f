//! The token counts pi records on an assistant message (and on a cache
//! warm): what the provider billed the request, read the way the replay
//! and pi's live gate both read it.

use crate::json::view::Value;
use crate::json::Json;

/// Token counts pi recorded on an assistant message or a warm.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    pub input: f64,
    /// The answer's tokens (pi counts them in the context's size).
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Usage {
    pub fn of(v: Option<Value<'_>>) -> Option<Usage> {
        let v = v?;
        Usage::read(|k| v.get(k).and_then(|x| x.number()))
    }

    /// From a usage object as a value (pi's live gate reads the answer's).
    pub fn from_json(v: &Json) -> Option<Usage> {
        Usage::read(|k| match v.get(k) {
            Some(Json::Num(n)) => Some(*n),
            _ => None,
        })
    }

    /// The fields as `number` reads them: `input` is required, the cache
    /// counts default to 0, and a number that is not finite is absent.
    fn read(number: impl Fn(&str) -> Option<f64>) -> Option<Usage> {
        let n = |k: &str| number(k).filter(|x| x.is_finite());
        Some(Usage {
            input: n("input")?,
            output: n("output").unwrap_or(0.0),
            cache_read: n("cacheRead").unwrap_or(0.0),
            cache_write: n("cacheWrite").unwrap_or(0.0),
        })
    }

    pub fn total(&self) -> f64 {
        self.input + self.cache_read + self.cache_write
    }
}
