//! The JSON readers as they were before src/json/read.rs replaced them
//! (42cc795): `parse` (src/json/parse.rs: state, config, messages) and
//! `session` (src/sessionfile/json/parse.rs: session lines, with its tape
//! and WTF-8 strings), copied here as the oracle the differential targets
//! (`json_reader`, `scan_verdict`) hold the new reader against.

#![allow(dead_code)]

pub mod parse;
pub mod session;
pub mod tape;
pub mod text;
pub mod wtf8;
