//! The methods of a host's indexer that are not functions. pi-condense's
//! render calls each method only where the input leads it (SPEC 3: phase 1
//! asks about the tool results present, phase 3 about the chains), so an
//! indexer without one renders as long as the render never gets there. The
//! drop-ins hand the engine what the host's object lacks, and the phases
//! raise `ERR_CONDENSE_INVALID_ARGUMENT` at the call the release would make,
//! and nowhere else. The JS oracle's copy of the rule and its message is
//! `bindIndexer` / `missingMethodError` in js/pure/rules.js.

use crate::dialect::Dialect;
use crate::error::{PruneError, Result};
use crate::json::Json;

/// A method of pi-condense's `ToolCallIndexer` that a render calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexerMethod {
    IsSummarized,
    /// 2.9.1 only.
    HasLegacyBareRecord,
    GetRecord,
    GetShortRefForToolCallId,
    GetChainEntries,
    GetPerBatchSummaryTextForToolCallIds,
    FindChainEntryByBlockId,
}

impl IndexerMethod {
    const ALL: [IndexerMethod; 7] = [
        IndexerMethod::IsSummarized,
        IndexerMethod::HasLegacyBareRecord,
        IndexerMethod::GetRecord,
        IndexerMethod::GetShortRefForToolCallId,
        IndexerMethod::GetChainEntries,
        IndexerMethod::GetPerBatchSummaryTextForToolCallIds,
        IndexerMethod::FindChainEntryByBlockId,
    ];

    pub fn name(self) -> &'static str {
        match self {
            IndexerMethod::IsSummarized => "isSummarized",
            IndexerMethod::HasLegacyBareRecord => "hasLegacyBareRecord",
            IndexerMethod::GetRecord => "getRecord",
            IndexerMethod::GetShortRefForToolCallId => "getShortRefForToolCallId",
            IndexerMethod::GetChainEntries => "getChainEntries",
            IndexerMethod::GetPerBatchSummaryTextForToolCallIds => {
                "getPerBatchSummaryTextForToolCallIds"
            }
            IndexerMethod::FindChainEntryByBlockId => "findChainEntryByBlockId",
        }
    }

    pub fn named(name: &[u8]) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name().as_bytes() == name)
    }
}

/// The host indexer's methods that are not functions, each with what the
/// member is instead (`it has none`, `it is number`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct AbsentMethods(Vec<(IndexerMethod, Box<str>)>);

impl AbsentMethods {
    /// From `{"getRecord": "it is number", ...}`.
    pub fn from_json(v: &Json) -> Result<Self> {
        let bad = || {
            PruneError::bad_argument(
                "absent methods: an object from indexer method names to what the member is",
            )
        };
        let Json::Obj(members) = v else {
            return Err(bad());
        };
        let mut absent = Vec::with_capacity(members.len());
        for (name, found) in members.iter() {
            let method = IndexerMethod::named(name).ok_or_else(bad)?;
            let found = found.as_text().ok_or_else(bad)?;
            absent.push((method, String::from_utf8_lossy(found).into()));
        }
        Ok(AbsentMethods(absent))
    }

    /// Ok when the host's indexer has `method`; else the error the drop-in
    /// raises where the release would call it.
    pub fn require(&self, method: IndexerMethod, dialect: Dialect) -> Result<()> {
        match self.0.iter().find(|(m, _)| *m == method) {
            None => Ok(()),
            Some((_, found)) => Err(missing_method_error(method, dialect, found)),
        }
    }
}

/// `indexer.<method> must be a function`, naming the release that calls it
/// and what the member is; its field is `indexer.<method>`.
pub fn missing_method_error(method: IndexerMethod, dialect: Dialect, found: &str) -> PruneError {
    let name = method.name();
    let mut e = PruneError::bad_argument(format!(
        "pruneMessages: indexer.{name} must be a function (pi-condense {}'s render calls it for this input; {found})",
        dialect.release()
    ));
    e.field = Some(format!("indexer.{name}"));
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_value;

    #[test]
    fn a_method_is_required_only_when_absent() {
        let absent = AbsentMethods::from_json(
            &parse_value(
                br#"{"getRecord":"it is number","findChainEntryByBlockId":"it has none"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert!(absent
            .require(IndexerMethod::IsSummarized, Dialect::V2_4)
            .is_ok());
        let e = absent
            .require(IndexerMethod::GetRecord, Dialect::V2_9)
            .unwrap_err();
        assert_eq!(e.code.as_str(), "ERR_CONDENSE_INVALID_ARGUMENT");
        assert_eq!(
            e.message,
            "pruneMessages: indexer.getRecord must be a function (pi-condense 2.9.1's render calls it for this input; it is number)"
        );
        assert_eq!(e.field.as_deref(), Some("indexer.getRecord"));
    }

    #[test]
    fn unknown_names_are_refused() {
        for text in [
            &br#"{"getRecords":"it has none"}"#[..],
            b"[]",
            br#"{"getRecord":1}"#,
        ] {
            assert!(AbsentMethods::from_json(&parse_value(text).unwrap()).is_err());
        }
    }
}
