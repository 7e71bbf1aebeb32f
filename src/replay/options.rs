//! The replay's options as the JS API passes them, one JSON object:
//! `{policies?, config?, renders?, charsPerToken?, inputPrice?,
//! cacheWriteMultiplier?, cacheReadMultiplier?, cacheTtlSeconds?}`.
//! Absent fields take the defaults of `ReplayOptions` and `CostModel`;
//! anything else is a typed error naming the field.

use crate::error::{PruneError, Result};
use crate::json::parse::parse_value;
use crate::json::Json;

use super::{CostModel, Policy, ReplayOptions, Settings};

fn number(root: &Json, name: &str, default: f64, positive: bool) -> Result<f64> {
    match root.get(name) {
        None | Some(Json::Null) => Ok(default),
        Some(Json::Num(n)) if n.is_finite() && (*n > 0.0 || (!positive && *n == 0.0)) => Ok(*n),
        Some(_) => Err(PruneError::bad_argument(format!(
            "{name} must be a finite number {}",
            if positive { "> 0" } else { ">= 0" }
        ))),
    }
}

impl ReplayOptions {
    pub fn from_json(text: &[u8]) -> Result<Self> {
        let root =
            parse_value(text).map_err(|e| PruneError::bad_argument(format!("options: {e}")))?;
        let root = match root {
            Json::Null => Json::Obj(Vec::new()),
            o @ Json::Obj(_) => o,
            _ => return Err(PruneError::bad_argument("options must be an object")),
        };
        let policies = match root.get("policies") {
            None | Some(Json::Null) => Policy::ALL.to_vec(),
            Some(Json::Arr(names)) if !names.is_empty() => {
                let mut out = Vec::new();
                for n in names {
                    let Some(name) = n.as_text() else {
                        return Err(PruneError::bad_argument(
                            "policies must be an array of policy names",
                        ));
                    };
                    let p = Policy::parse(&String::from_utf8_lossy(name))?;
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                out
            }
            Some(_) => {
                return Err(PruneError::bad_argument(
                    "policies must be a non-empty array of policy names",
                ))
            }
        };
        let d = CostModel::default();
        let cost = CostModel {
            chars_per_token: number(&root, "charsPerToken", d.chars_per_token, true)?,
            input_price: number(&root, "inputPrice", d.input_price, false)?,
            cache_write_multiplier: number(
                &root,
                "cacheWriteMultiplier",
                d.cache_write_multiplier,
                false,
            )?,
            cache_read_multiplier: number(
                &root,
                "cacheReadMultiplier",
                d.cache_read_multiplier,
                false,
            )?,
            cache_ttl_ms: number(&root, "cacheTtlSeconds", d.cache_ttl_ms / 1000.0, false)?
                * 1000.0,
        };
        let keep_renders = match root.get("renders") {
            None | Some(Json::Null) | Some(Json::Bool(false)) => false,
            Some(Json::Bool(true)) => true,
            Some(_) => return Err(PruneError::bad_argument("renders must be a boolean")),
        };
        Ok(ReplayOptions {
            policies,
            settings: Settings::new(root.get("config").cloned())?,
            cost,
            keep_renders,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_checks_fields() {
        let o = ReplayOptions::from_json(
            br#"{"policies":["config","none","config"],"charsPerToken":3,"cacheTtlSeconds":60,"renders":true}"#,
        )
        .unwrap();
        assert_eq!(o.policies, [Policy::Config, Policy::None]);
        assert_eq!(o.cost.chars_per_token, 3.0);
        assert_eq!(o.cost.cache_ttl_ms, 60_000.0);
        assert!(o.keep_renders);
        assert_eq!(ReplayOptions::from_json(b"null").unwrap().policies.len(), 5);
        for bad in [
            r#"{"policies":["nope"]}"#,
            r#"{"policies":[]}"#,
            r#"{"charsPerToken":0}"#,
            r#"{"inputPrice":-1}"#,
            r#"{"renders":1}"#,
            r#"{"config":[1]}"#,
            "[]",
        ] {
            let e = ReplayOptions::from_json(bad.as_bytes()).unwrap_err();
            assert!(e.code.as_str().starts_with("ERR_CONDENSE_"), "{bad}");
        }
    }
}
