//! The runner file (`configs/runners.yaml`): runner labels → runner names,
//! and per-key hardware metadata for agentic DRAM sizing (matrix spec §2.4,
//! workflows §5.1). Messages are the reference generator's.

use std::collections::HashMap;
use std::sync::Arc;

use super::ParseError;
use super::master::At;
use super::master::yaml::{self, Node, Pos, Value};

/// One label and its runner names, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub name: String,
    pub pos: Pos,
    pub runners: Vec<At<String>>,
}

/// Hardware metadata of one key (a label or not).
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    pub key: String,
    pub pos: Pos,
    pub available_cpu_dram_mib: At<i64>,
    pub gpus_per_node: At<i64>,
}

/// A validated runner file.
#[derive(Debug, Clone, Default)]
pub struct RunnerConfig {
    pub file: Arc<str>,
    pub labels: Vec<Label>,
    pub hardware: Vec<Hardware>,
    label_index: HashMap<String, usize>,
    hardware_index: HashMap<String, usize>,
}

impl RunnerConfig {
    pub fn label(&self, name: &str) -> Option<&Label> {
        self.label_index.get(name).map(|&i| &self.labels[i])
    }
    pub fn hardware(&self, key: &str) -> Option<&Hardware> {
        self.hardware_index.get(key).map(|&i| &self.hardware[i])
    }
    /// Label names sorted (code-point order, as Python's `sorted`).
    pub(crate) fn sorted_label_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.labels.iter().map(|l| l.name.as_str()).collect();
        v.sort_unstable();
        v
    }
    /// Hardware keys sorted.
    pub(crate) fn sorted_hardware_keys(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.hardware.iter().map(|h| h.key.as_str()).collect();
        v.sort_unstable();
        v
    }
    /// Distinct runner names over all labels, in first-seen order.
    pub fn distinct_runners(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for r in self.labels.iter().flat_map(|l| l.runners.iter()) {
            if seen.insert(r.value.as_str()) {
                out.push(r.value.as_str());
            }
        }
        out
    }
}

/// Parses and validates a runner file.
pub fn parse(file: &str, bytes: &[u8]) -> Result<RunnerConfig, ParseError> {
    let root = yaml::parse(file, bytes)?;
    let err = |pos: Pos, msg: String| ParseError::new(pos.loc(file), msg);
    let pairs: &[(Node, Node)] = match &root.value {
        Value::Map(p) => p,
        _ => &[],
    };
    let get = |key: &str| {
        pairs
            .iter()
            .find(|(k, _)| k.value.as_str() == Some(key))
            .map(|(_, v)| v)
    };
    let Some(Node {
        value: Value::Map(label_pairs),
        ..
    }) = get("labels")
    else {
        let pos = get("labels").map_or(root.pos, |n| n.pos);
        return Err(err(
            pos,
            "Runner config must define a labels mapping".into(),
        ));
    };
    let mut cfg = RunnerConfig {
        file: Arc::from(file),
        ..RunnerConfig::default()
    };
    for (k, v) in label_pairs {
        let name = yaml::key_text(&k.value);
        let Value::Seq(items) = &v.value else {
            return Err(err(
                v.pos,
                format!(
                    "Runner config entry '{name}' must be a list, got {}",
                    v.value.py_type()
                ),
            ));
        };
        let mut runners = Vec::with_capacity(items.len());
        for it in items {
            match &it.value {
                Value::Str(s) => runners.push(At {
                    value: s.clone(),
                    pos: it.pos,
                }),
                other => {
                    return Err(err(
                        it.pos,
                        format!(
                            "Runner config entry '{name}' must contain only strings, got {}",
                            other.py_type()
                        ),
                    ));
                }
            }
        }
        if runners.is_empty() {
            return Err(err(
                v.pos,
                format!("Runner config entry '{name}' must not be empty"),
            ));
        }
        cfg.label_index.insert(name.clone(), cfg.labels.len());
        cfg.labels.push(Label {
            name,
            pos: k.pos,
            runners,
        });
    }
    // The schema part: only `labels` and `hardware` at the top level.
    let invalid =
        |pos: Pos, msg: String| err(pos, format!("Runner config failed validation: {msg}"));
    for (k, _) in pairs {
        match k.value.as_str() {
            Some("labels") | Some("hardware") => {}
            _ => {
                return Err(invalid(
                    k.pos,
                    format!(
                        "{}: Extra inputs are not permitted",
                        yaml::key_text(&k.value)
                    ),
                ));
            }
        }
    }
    match get("hardware") {
        None => {}
        Some(Node {
            value: Value::Map(hw),
            ..
        }) => {
            for (k, v) in hw {
                let key = yaml::key_text(&k.value);
                let Value::Map(fields) = &v.value else {
                    return Err(invalid(
                        v.pos,
                        format!("hardware.{key}: Input should be a valid dictionary"),
                    ));
                };
                let mut dram = None;
                let mut gpus = None;
                for (fk, fv) in fields {
                    let slot = match fk.value.as_str() {
                        Some("available-cpu-dram-mib") => &mut dram,
                        Some("gpus-per-node") => &mut gpus,
                        _ => {
                            return Err(invalid(
                                fk.pos,
                                format!(
                                    "hardware.{key}.{}: Extra inputs are not permitted",
                                    yaml::key_text(&fk.value)
                                ),
                            ));
                        }
                    };
                    let field = yaml::key_text(&fk.value);
                    match fv.value {
                        Value::Int(i) if i > 0 => {
                            *slot = Some(At {
                                value: i,
                                pos: fv.pos,
                            });
                        }
                        Value::Int(_) => {
                            return Err(invalid(
                                fv.pos,
                                format!("hardware.{key}.{field}: Input should be greater than 0"),
                            ));
                        }
                        _ => {
                            return Err(invalid(
                                fv.pos,
                                format!("hardware.{key}.{field}: Input should be a valid integer"),
                            ));
                        }
                    }
                }
                let (Some(dram), Some(gpus)) = (dram, gpus) else {
                    let missing = if fields
                        .iter()
                        .any(|(fk, _)| fk.value.as_str() == Some("available-cpu-dram-mib"))
                    {
                        "gpus-per-node"
                    } else {
                        "available-cpu-dram-mib"
                    };
                    return Err(invalid(
                        v.pos,
                        format!("hardware.{key}.{missing}: Field required"),
                    ));
                };
                cfg.hardware_index.insert(key.clone(), cfg.hardware.len());
                cfg.hardware.push(Hardware {
                    key,
                    pos: k.pos,
                    available_cpu_dram_mib: dram,
                    gpus_per_node: gpus,
                });
            }
        }
        // `hardware: null` means the default (empty).
        Some(Node {
            value: Value::Null, ..
        }) => {}
        Some(n) => {
            return Err(invalid(
                n.pos,
                "hardware: Input should be a valid dictionary".into(),
            ));
        }
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn underscored_integers_and_order() {
        let y = b"labels:\n  h100: [a_1, b_2, a_1]\nhardware:\n  h100: { available-cpu-dram-mib: 2_063_837, gpus-per-node: 8 }\n";
        let c = parse("r.yaml", y).unwrap();
        assert_eq!(c.label("h100").unwrap().runners.len(), 3);
        assert_eq!(
            c.hardware("h100").unwrap().available_cpu_dram_mib.value,
            2_063_837
        );
        assert_eq!(c.hardware("h100").unwrap().pos.line, 4);
        assert_eq!(c.distinct_runners(), vec!["a_1", "b_2"]);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse("r.yaml", b"hardware: {}\n").unwrap_err();
        assert_eq!(e.message, "Runner config must define a labels mapping");
        let e = parse("r.yaml", b"labels:\n  x: abc\n").unwrap_err();
        assert_eq!(e.message, "Runner config entry 'x' must be a list, got str");
        assert_eq!((e.loc.line, e.loc.column), (2, 6));
        let e = parse("r.yaml", b"labels:\n  x: [a]\nextra: 1\n").unwrap_err();
        assert!(
            e.message.starts_with("Runner config failed validation:"),
            "{}",
            e.message
        );
        let e = parse(
            "r.yaml",
            b"labels:\n  x: [a]\nhardware:\n  x: { gpus-per-node: 0, available-cpu-dram-mib: 1 }\n",
        )
        .unwrap_err();
        assert!(e.message.contains("greater than 0"), "{}", e.message);
        let e = parse("r.yaml", b"labels:\n  x: []\n").unwrap_err();
        assert!(e.message.contains("must not be empty"));
    }
}
