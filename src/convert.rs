//! The state and config texts of stateless calls, converted once per text.
//!
//! `prune` and `pruneMessages` receive the host's state and config as JSON
//! text in every call. Between two flushes the host passes the same state
//! again and again (5-30 renders per user request), so each thread keeps the
//! last state and the last config it converted, keyed by their exact text:
//! a call whose text equals the kept one reuses the conversion, any other
//! text is converted afresh and replaces it. The key is the whole text, not
//! a hash or the JS object's identity, so a state the host edited in place
//! is always seen: conversion is a pure function of the text, and equal
//! texts give equal results.
//!
//! Parsing the state and building its maps was the largest per-call
//! work and allocation left in `prune` (a 360 KB text on corpus medium).
//! Texts over `KEEP_MAX_BYTES` are converted per call and not kept, like the
//! parse buffers of `index::reuse`; a failed conversion is never kept.

use std::cell::RefCell;
use std::rc::Rc;

use crate::config::Config;
use crate::error::Result;
use crate::index::reuse::KEEP_MAX_BYTES;
use crate::state::State;

struct Kept<T> {
    text: String,
    value: Rc<T>,
}

thread_local! {
    static STATE: RefCell<Option<Kept<State>>> = const { RefCell::new(None) };
    static CONFIG: RefCell<Option<Kept<Config>>> = const { RefCell::new(None) };
}

type Slot<T> = std::thread::LocalKey<RefCell<Option<Kept<T>>>>;

fn convert<T: Default>(
    slot: &'static Slot<T>,
    text: Option<String>,
    from_json: fn(&[u8]) -> Result<T>,
) -> Result<Rc<T>> {
    let Some(text) = text else {
        return Ok(Rc::new(T::default()));
    };
    // Taken out of the slot, so the previous conversion is freed before a
    // new one is built (only one is alive at a time).
    let kept = slot.with(|s| s.borrow_mut().take());
    if let Some(kept) = kept {
        if kept.text == text {
            let value = Rc::clone(&kept.value);
            slot.with(|s| *s.borrow_mut() = Some(kept));
            return Ok(value);
        }
    }
    let value = Rc::new(from_json(text.as_bytes())?);
    if text.len() <= KEEP_MAX_BYTES {
        let kept = Kept {
            text,
            value: Rc::clone(&value),
        };
        slot.with(|s| *s.borrow_mut() = Some(kept));
    }
    Ok(value)
}

/// The state of `text` (the default state when absent): the thread's kept
/// conversion when `text` equals its text.
pub fn state(text: Option<String>) -> Result<Rc<State>> {
    convert(&STATE, text, State::from_json)
}

/// The config of `text` (the default config when absent), kept like
/// `state`'s.
pub fn config(text: Option<String>) -> Result<Rc<Config>> {
    convert(&CONFIG, text, Config::from_json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn equal_text_reuses_the_conversion() {
        let a = state(text(r#"{"records":{"t1":{"summarized":true}}}"#)).unwrap();
        let b = state(text(r#"{"records":{"t1":{"summarized":true}}}"#)).unwrap();
        assert!(Rc::ptr_eq(&a, &b));
        let c = config(text(r#"{"errorPurge":{"enabled":true}}"#)).unwrap();
        let d = config(text(r#"{"errorPurge":{"enabled":true}}"#)).unwrap();
        assert!(Rc::ptr_eq(&c, &d));
    }

    #[test]
    fn other_text_is_converted_afresh() {
        let a = state(text(r#"{"records":{}}"#)).unwrap();
        let b = state(text(r#"{"records":{"t1":{}}}"#)).unwrap();
        assert!(!Rc::ptr_eq(&a, &b));
        assert!(b.record("t1").is_some());
        assert!(a.record("t1").is_none());
        // The kept one is now b's.
        let c = state(text(r#"{"records":{"t1":{}}}"#)).unwrap();
        assert!(Rc::ptr_eq(&b, &c));
        // Whitespace makes another text: converted again, same meaning.
        let d = state(text(r#"{"records": {"t1":{}}}"#)).unwrap();
        assert!(!Rc::ptr_eq(&c, &d));
        assert!(d.record("t1").is_some());
    }

    #[test]
    fn failures_are_not_kept() {
        let good = text(r#"{"records":{"t2":{}}}"#);
        let a = state(good.clone()).unwrap();
        let err = state(text(r#"{"records":[]}"#)).err().unwrap();
        assert_eq!(err.code, "ERR_CONDENSE_INVALID_STATE");
        // The same bad text fails again rather than answering from a cache.
        let again = state(text(r#"{"records":[]}"#)).err().unwrap();
        assert_eq!(again, err);
        // The failed text replaced the kept conversion with nothing: the
        // good text is converted afresh, with the same meaning.
        let b = state(good).unwrap();
        assert!(!Rc::ptr_eq(&a, &b));
        assert!(b.record("t2").is_some());
    }

    #[test]
    fn absent_text_is_the_default_and_keeps_the_slot() {
        let kept = state(text(r#"{"records":{"t3":{}}}"#)).unwrap();
        let none = state(None).unwrap();
        assert!(none.record("t3").is_none());
        let again = state(text(r#"{"records":{"t3":{}}}"#)).unwrap();
        assert!(Rc::ptr_eq(&kept, &again));
    }

    #[test]
    fn texts_over_the_limit_are_not_kept() {
        let mut big = String::from(r#"{"records":{"t4":{"pad":""#);
        big.push_str(&"x".repeat(KEEP_MAX_BYTES));
        big.push_str(r#""}}}"#);
        let a = state(Some(big.clone())).unwrap();
        let b = state(Some(big)).unwrap();
        assert!(!Rc::ptr_eq(&a, &b));
        assert!(b.record("t4").is_some());
    }

    #[test]
    fn each_thread_keeps_its_own() {
        let t = r#"{"records":{"t5":{}}}"#;
        let here = state(text(t)).unwrap();
        let there = std::thread::spawn(move || {
            let s = state(text(t)).unwrap();
            s.record("t5").is_some()
        })
        .join()
        .unwrap();
        assert!(there);
        assert!(Rc::ptr_eq(&here, &state(text(t)).unwrap()));
    }
}
