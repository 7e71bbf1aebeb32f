//! The hash maps of the hot path: aHash (fast on short string keys, and
//! keyed per process, so tool-call ids chosen to collide cannot slow a
//! render down) instead of the standard SipHash.

pub type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;
pub type HashSet<K> = std::collections::HashSet<K, ahash::RandomState>;
