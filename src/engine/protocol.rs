//! What the JS half of a kept engine (js/conversation.js) sends about a
//! host's indexer, as JSON text: the answers per tool result, the chain
//! registry with each entry's summary and `{bN}` lookup, and the methods
//! the indexer lacks. Read here, beside the engine they feed, so the
//! binding only passes the text through.

use super::Engine;
use crate::error::{PruneError, Result};
use crate::hash::HashMap;
use crate::indexer_methods::{AbsentMethods, IndexerMethod};
use crate::json::{parse_value, Json};
use crate::state::{Chains, Unanswered};

fn parse_json(text: &[u8], what: &str) -> Result<Json> {
    parse_value(text).map_err(|e| PruneError::bad_argument(format!("{what}: {e}")))
}

/// `{"v": value}`, `{"throws": true}` (a call that threw in the host) or
/// `{"absent": method}` (the host's indexer has no such method).
fn outcome(v: &Json) -> Result<std::result::Result<Json, Unanswered>> {
    if let Some(value) = v.get("v") {
        return Ok(Ok(value.clone()));
    }
    match v
        .get("absent")
        .map(|m| m.as_text().and_then(IndexerMethod::named))
    {
        Some(Some(method)) => Ok(Err(Unanswered::Absent(method))),
        Some(None) => Err(PruneError::bad_argument(
            "chains: an absent answer must name an indexer method",
        )),
        None => Ok(Err(Unanswered::Threw)),
    }
}

impl Engine {
    /// `{"getRecord": "it is number", ...}` (`{}`: none), see
    /// [`Engine::set_absent_methods`].
    pub fn set_absent_methods_json(&mut self, text: &[u8]) -> Result<()> {
        let absent = AbsentMethods::from_json(&parse_json(text, "absent methods")?)?;
        self.set_absent_methods(absent);
        Ok(())
    }

    /// An array of `{"k": key, "s": summarized, "r": record?, "f":
    /// shortRef?}` and `{"l": id, "v": hasLegacyBareRecord}`.
    pub fn set_answers_json(&mut self, text: &[u8]) -> Result<()> {
        let answers = parse_json(text, "answers")?;
        for a in answers.as_array().unwrap_or(&[]) {
            if let Some(id) = a.get("l").and_then(Json::as_text) {
                self.answer_legacy(id, a.get("v").is_some_and(Json::truthy));
                continue;
            }
            let Some(key) = a.get("k").and_then(Json::as_text) else {
                return Err(PruneError::bad_argument(
                    "answers: an answer without a string key",
                ));
            };
            self.answer(
                key,
                a.get("s").is_some_and(Json::truthy),
                a.get("r").filter(|r| !r.is_null()).cloned(),
                a.get("f").cloned(),
            );
        }
        Ok(())
    }

    /// `{"entries": [...], "summaries": [outcome...], "lookups": [[blockId,
    /// outcome]...]}`, an outcome as [`outcome`] reads it (a lookup may be
    /// `{"none": true}`). With `"from": k`, only the entries and summaries
    /// from position k on (those before are the kept ones), and every
    /// lookup.
    pub fn set_chains_json(&mut self, text: &[u8]) -> Result<()> {
        let c = parse_json(text, "chains")?;
        let from = match c.get("from") {
            None => None,
            Some(Json::Num(k)) if k.fract() == 0.0 && *k >= 0.0 => Some(*k as usize),
            Some(_) => {
                return Err(PruneError::bad_argument(
                    "chains: from must be a whole number of entries",
                ))
            }
        };
        let list = |key: &str| c.get(key).and_then(Json::as_array).unwrap_or(&[]);
        let summaries = list("summaries")
            .iter()
            .map(outcome)
            .collect::<Result<_>>()?;
        let mut lookups = HashMap::default();
        for l in list("lookups") {
            let pair = l.as_array().unwrap_or(&[]);
            if let (Some(id), Some(v)) = (pair.first().and_then(Json::as_text), pair.get(1)) {
                let value = match v.get("none") {
                    Some(_) => Ok(None),
                    None => outcome(v)?.map(Some),
                };
                lookups.insert(id.into(), value);
            }
        }
        let chains = Chains::Given {
            entries: list("entries").to_vec(),
            summaries,
            lookups,
        };
        match from {
            None => {
                self.set_chains(chains);
                Ok(())
            }
            Some(from) => self.update_chains(from, chains),
        }
    }
}
