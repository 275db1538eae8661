//! Knowledge that changes over time, as data: `lint-data/*.toml` in this
//! repository are the defaults; a target repository overrides any key in
//! `.github/sweepgate-lint.toml` (tables merge key by key, lists replace).

use std::collections::BTreeMap;

use serde::Deserialize;

/// Where a target repository overrides the lint data (default branch).
pub const LINT_OVERRIDE_PATH: &str = ".github/sweepgate-lint.toml";

const DEFAULT_POLICY: &str = include_str!("../../../../../lint-data/policy.toml");
const DEFAULT_ENGINES: &str = include_str!("../../../../../lint-data/engines.toml");

/// Known backends of one engine from a version on.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BackendSet {
    pub since: String,
    #[serde(default)]
    pub attention: Vec<String>,
    #[serde(default)]
    pub moe: Vec<String>,
    #[serde(default)]
    pub all_reduce: Vec<String>,
}

impl BackendSet {
    pub(crate) fn values(&self, kind: &str) -> &[String] {
        match kind {
            "attention" => &self.attention,
            "moe" => &self.moe,
            "all-reduce" => &self.all_reduce,
            _ => &[],
        }
    }
}

/// What the lint knows about one engine.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EngineData {
    #[serde(default)]
    pub canonical_flags: Vec<String>,
    #[serde(default)]
    pub backends: Vec<BackendSet>,
    /// Flag key (no dashes, dotted part kept) → backend kind.
    #[serde(default)]
    pub backend_flags: BTreeMap<String, String>,
    /// Environment variable → backend kind.
    #[serde(default)]
    pub backend_env: BTreeMap<String, String>,
}

/// A version `major.minor.patch` read from an image tag.
pub(crate) fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let t = text.trim().trim_start_matches('v');
    let mut parts = t.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor_text = parts.next()?;
    let minor = minor_text
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    let patch = parts
        .next()
        .and_then(|p| p.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    Some((major, minor, patch))
}

impl EngineData {
    /// The known values of a backend kind for an engine version; `None`
    /// when the engine has no data for that kind (nothing to check).
    pub(crate) fn known(
        &self,
        kind: &str,
        version: Option<(u64, u64, u64)>,
    ) -> Option<Vec<String>> {
        let mut sets: Vec<(&BackendSet, (u64, u64, u64))> = self
            .backends
            .iter()
            .filter_map(|b| parse_version(&b.since).map(|v| (b, v)))
            .collect();
        sets.sort_by_key(|(_, v)| *v);
        let chosen: Vec<&BackendSet> = match version {
            Some(v) => sets
                .iter()
                .rev()
                .find(|(_, since)| *since <= v)
                .map(|(b, _)| vec![*b])
                .unwrap_or_default(),
            None => sets.iter().map(|(b, _)| *b).collect(),
        };
        let values: Vec<String> = chosen
            .iter()
            .flat_map(|b| b.values(kind).iter().cloned())
            .collect();
        if values.is_empty() {
            None
        } else {
            Some(values)
        }
    }
}

/// All lint data, defaults merged with the target repository's overrides.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct LintData {
    pub repository: String,
    pub link_placeholders: Vec<String>,
    pub established_skus: Vec<String>,
    #[serde(default)]
    pub direct_labels: Vec<String>,
    pub watched_variables: Vec<String>,
    pub lib_read_variables: Vec<String>,
    pub serving_packages: Vec<String>,
    pub engine_wheels: Vec<String>,
    pub vllm_family: Vec<String>,
    pub sglang_family: Vec<String>,
    pub upstream_vllm_namespaces: Vec<String>,
    pub upstream_sglang_namespaces: Vec<String>,
    pub injector_frameworks: Vec<String>,
    #[serde(default)]
    pub synthetic_allow: Vec<String>,
    pub benchmark_serving_flags: Vec<String>,
    #[serde(default)]
    pub vllm: EngineData,
    #[serde(default)]
    pub sglang: EngineData,
    #[serde(default)]
    pub trtllm: EngineData,
    #[serde(default)]
    pub atom: EngineData,
}

/// The override file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct DataError {
    pub file: String,
    pub message: String,
}

fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn defaults_value() -> Result<toml::Value, DataError> {
    let mut v: toml::Value = toml::from_str(DEFAULT_POLICY).map_err(|e| DataError {
        file: "lint-data/policy.toml".into(),
        message: e.to_string(),
    })?;
    let engines: toml::Value = toml::from_str(DEFAULT_ENGINES).map_err(|e| DataError {
        file: "lint-data/engines.toml".into(),
        message: e.to_string(),
    })?;
    merge(&mut v, engines);
    Ok(v)
}

impl LintData {
    /// The built-in defaults (`lint-data/`).
    pub fn defaults() -> Result<Self, DataError> {
        defaults_value()?
            .try_into()
            .map_err(|e: toml::de::Error| DataError {
                file: "lint-data/".into(),
                message: e.to_string(),
            })
    }

    /// Defaults with a target repository's override file applied.
    pub fn with_override(file: &str, text: &str) -> Result<Self, DataError> {
        let mut v = defaults_value()?;
        let over: toml::Value = toml::from_str(text).map_err(|e| DataError {
            file: file.into(),
            message: e.to_string(),
        })?;
        merge(&mut v, over);
        v.try_into().map_err(|e: toml::de::Error| DataError {
            file: file.into(),
            message: e.to_string(),
        })
    }

    /// The data of the engine a framework or recipe engine name runs.
    pub(crate) fn engine(&self, name: &str) -> Option<&EngineData> {
        let n = name.to_ascii_lowercase();
        if n.contains("sglang") {
            Some(&self.sglang)
        } else if n.contains("vllm") {
            Some(&self.vllm)
        } else if n.contains("trt") {
            Some(&self.trtllm)
        } else if n.contains("atom") {
            Some(&self.atom)
        } else {
            None
        }
    }

    /// `REPLAY_CMD`, `EVAL_*`: read by `benchmark_lib.sh`.
    pub(crate) fn is_lib_read(&self, name: &str) -> bool {
        self.lib_read_variables
            .iter()
            .any(|p| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == p,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_load_and_override_merges() {
        let d = LintData::defaults().unwrap();
        assert!(d.established_skus.iter().any(|s| s == "b300"));
        assert!(d.vllm.known("attention", Some((0, 21, 0))).is_some());
        let o = LintData::with_override(
            "o.toml",
            "established-skus = [\"h100\"]\n[vllm]\ncanonical-flags = [\"port\"]\n",
        )
        .unwrap();
        assert_eq!(o.established_skus, vec!["h100".to_string()]);
        assert_eq!(o.vllm.canonical_flags, vec!["port".to_string()]);
        // Keys not overridden keep their defaults.
        assert!(!o.vllm.backends.is_empty());
        assert!(LintData::with_override("o.toml", "nope = [").is_err());
    }

    #[test]
    fn versions_pick_the_latest_applicable_set() {
        let e = EngineData {
            backends: vec![
                BackendSet {
                    since: "0.1.0".into(),
                    attention: vec!["A".into()],
                    moe: vec![],
                    all_reduce: vec![],
                },
                BackendSet {
                    since: "0.5.0".into(),
                    attention: vec!["B".into()],
                    moe: vec![],
                    all_reduce: vec![],
                },
            ],
            ..Default::default()
        };
        assert_eq!(
            e.known("attention", Some((0, 4, 9))),
            Some(vec!["A".to_string()])
        );
        assert_eq!(
            e.known("attention", Some((0, 5, 16))),
            Some(vec!["B".to_string()])
        );
        assert_eq!(e.known("attention", None).map(|v| v.len()), Some(2));
        assert_eq!(e.known("moe", None), None);
        assert_eq!(parse_version("v0.5.16-cu130"), Some((0, 5, 16)));
        assert_eq!(parse_version("deepseekv4-cu130"), None);
    }
}
