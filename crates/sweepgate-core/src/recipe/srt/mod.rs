//! srt-slurm recipe YAML: per-role environment and engine arguments.
//!
//! Multi-node configs run a recipe named by `CONFIG_FILE=` (see
//! `launcher::RecipeRef`). The recipe, not a shell script, then holds the
//! launch: `model.container` (L05), the prefill / decode / aggregated
//! workers' environment (synthetic-acceptance knobs, L24's NEXTN override)
//! and engine arguments (K, abbreviated flags for L10), the benchmark block
//! (`use_chat_template`, L25) and `publish_events_and_metrics` (Check 17).
//!
//! Two layouts occur and both are read:
//! * schema 1: `backend: { type, prefill_environment, decode_environment,
//!   aggregated_environment, sglang_config | vllm_config | trtllm_config:
//!   { prefill, decode, aggregated } }`;
//! * schema 2: `engine: <name>` and `roles: { prefill | decode | agg: { env, args } }`.
//!
//! Every fact keeps its line (serde-saphyr `Spanned`), and the whole
//! document stays available as a [`YamlNode`] tree for anything else.

mod yaml;

pub use yaml::{Located, Yaml, YamlNode};

use super::{Loc, ParseError};

/// Which worker a setting belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Role {
    Prefill,
    Decode,
    /// Aggregated workers (`aggregated`, `agg`): serve prefill and decode.
    Aggregated,
}

impl Role {
    fn from_key(k: &str) -> Option<Self> {
        match k {
            "prefill" => Some(Self::Prefill),
            "decode" => Some(Self::Decode),
            "aggregated" | "agg" => Some(Self::Aggregated),
            _ => None,
        }
    }
}

/// One environment variable or engine argument.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Setting {
    /// Env name, or the argument key without dashes (`speculative-num-steps`);
    /// nested mappings are flattened with dots (`speculative_config.max_draft_len`).
    pub key: String,
    pub value: YamlNode,
    /// Line of the key.
    pub line: usize,
}

impl Setting {
    pub(crate) fn text(&self) -> String {
        self.value.text()
    }
}

/// The environment and arguments of one worker role.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RoleFacts {
    pub role: Role,
    pub env: Vec<Setting>,
    pub args: Vec<Setting>,
    /// Line of the environment block (`decode_environment:` / `env:`), if any.
    pub env_line: Option<usize>,
    /// Line of the arguments block, if any.
    pub args_line: Option<usize>,
}

impl RoleFacts {
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn env(&self, name: &str) -> Option<&Setting> {
        self.env.iter().find(|s| s.key == name)
    }

    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn arg(&self, key: &str) -> Option<&Setting> {
        self.args.iter().find(|s| s.key == key)
    }
}

/// The `benchmark:` block.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BenchmarkFacts {
    /// `sa-bench`, `custom`, …
    pub kind: Option<Located<String>>,
    pub use_chat_template: Option<Located<bool>>,
    /// `custom` benchmarks: the command (`bash …/agentic_srt.sh`).
    pub command: Option<Located<String>>,
    pub env: Vec<Setting>,
    pub line: Option<usize>,
}

/// Everything read from one recipe.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SrtRecipe {
    pub path: String,
    pub name: Option<Located<String>>,
    /// `model.container`, as written (`nvcr.io#nvidia/…` stays unnormalised).
    pub container: Option<Located<String>>,
    pub model_path: Option<Located<String>>,
    pub precision: Option<Located<String>>,
    /// `backend.type` (schema 1) or `engine` (schema 2): `sglang`, `vllm`, `trtllm`, …
    pub engine: Option<Located<String>>,
    pub roles: Vec<RoleFacts>,
    pub frontend_env: Vec<Setting>,
    pub frontend_args: Vec<Setting>,
    pub benchmark: BenchmarkFacts,
    /// `backend.publish_events_and_metrics` (Dynamo TRT-LLM, Check 17).
    pub publish_events_and_metrics: Option<Located<bool>>,
    pub setup_script: Option<Located<String>>,
    /// Top-level sweep variants (`override_*`, `zip_override_*`): their
    /// settings are in [`SrtRecipe::root`].
    pub overrides: Vec<Located<String>>,
    pub root: YamlNode,
}

impl SrtRecipe {
    pub(crate) fn role(&self, role: Role) -> Option<&RoleFacts> {
        self.roles.iter().find(|r| r.role == role)
    }

    /// The decode role, else the aggregated one: where K and the simulated
    /// acceptance count (docs/rules.md §1.3 step 4).
    pub(crate) fn serving_role(&self) -> Option<&RoleFacts> {
        self.role(Role::Decode)
            .or_else(|| self.role(Role::Aggregated))
    }

    #[cfg(any(test, feature = "fuzzing"))]
    /// Every role's setting of an env var, with the role.
    pub(crate) fn env_everywhere(&self, name: &str) -> Vec<(Role, &Setting)> {
        self.roles
            .iter()
            .filter_map(|r| r.env(name).map(|s| (r.role, s)))
            .collect()
    }

    #[cfg(feature = "fuzzing")]
    /// Every role's setting of an argument, with the role.
    pub(crate) fn arg_everywhere(&self, key: &str) -> Vec<(Role, &Setting)> {
        self.roles
            .iter()
            .filter_map(|r| r.arg(key).map(|s| (r.role, s)))
            .collect()
    }
}

/// Parse one recipe.
pub(crate) fn parse_recipe(path: &str, bytes: &[u8]) -> Result<SrtRecipe, ParseError> {
    let root = YamlNode::from_node(&crate::recipe::yaml::parse(path, bytes)?);
    if !matches!(root.value, Yaml::Map(_)) {
        return Err(ParseError::new(
            Loc::new(path, root.line.max(1), root.column.max(1)),
            "a recipe must be a mapping",
        ));
    }
    let s = |n: Option<&YamlNode>| -> Option<Located<String>> {
        n.and_then(|n| match &n.value {
            Yaml::Null | Yaml::Seq(_) | Yaml::Map(_) => None,
            _ => Some(n.located(n.text())),
        })
    };
    let b = |n: Option<&YamlNode>| n.and_then(|n| n.as_bool().map(|v| n.located(v)));

    let backend = root.get("backend");
    let engine = s(backend.and_then(|b| b.get("type"))).or_else(|| s(root.get("engine")));
    let mut roles: Vec<RoleFacts> = Vec::new();
    let role_mut = |role: Role, roles: &mut Vec<RoleFacts>| -> usize {
        if let Some(i) = roles.iter().position(|r| r.role == role) {
            return i;
        }
        roles.push(RoleFacts {
            role,
            env: Vec::new(),
            args: Vec::new(),
            env_line: None,
            args_line: None,
        });
        roles.len() - 1
    };

    // Schema 1.
    if let Some(backend) = backend {
        for (k, v) in backend.entries() {
            if let Some(role) = k
                .value
                .strip_suffix("_environment")
                .and_then(Role::from_key)
            {
                let i = role_mut(role, &mut roles);
                roles[i].env_line = Some(k.line);
                roles[i].env.extend(flat_settings(v));
            } else if k.value.ends_with("_config") && matches!(v.value, Yaml::Map(_)) {
                for (rk, rv) in v.entries() {
                    if let Some(role) = Role::from_key(&rk.value) {
                        let i = role_mut(role, &mut roles);
                        roles[i].args_line = Some(rk.line);
                        roles[i].args.extend(flat_settings(rv));
                    }
                }
            }
        }
    }
    // Schema 2.
    if let Some(rs) = root.get("roles") {
        for (rk, rv) in rs.entries() {
            let Some(role) = Role::from_key(&rk.value) else {
                continue;
            };
            let i = role_mut(role, &mut roles);
            if let Some((ek, ev)) = rv.entries().iter().find(|(k, _)| k.value == "env") {
                roles[i].env_line = Some(ek.line);
                roles[i].env.extend(flat_settings(ev));
            }
            if let Some((ak, av)) = rv.entries().iter().find(|(k, _)| k.value == "args") {
                roles[i].args_line = Some(ak.line);
                roles[i].args.extend(flat_settings(av));
            }
        }
    }

    let bench = root.get("benchmark");
    let benchmark = BenchmarkFacts {
        kind: s(bench.and_then(|b| b.get("type"))),
        use_chat_template: b(bench.and_then(|b| b.get("use_chat_template"))),
        command: s(bench.and_then(|b| b.get("command"))),
        env: bench
            .and_then(|b| b.get("env"))
            .map(flat_settings)
            .unwrap_or_default(),
        line: bench.map(|b| b.line),
    };
    let frontend = root.get("frontend");
    let overrides = root
        .entries()
        .iter()
        .filter(|(k, _)| k.value.starts_with("override") || k.value.starts_with("zip_override"))
        .map(|(k, _)| k.clone())
        .collect();
    Ok(SrtRecipe {
        path: path.to_string(),
        name: s(root.get("name")),
        container: s(root.at(&["model", "container"])),
        model_path: s(root.at(&["model", "path"])),
        precision: s(root.at(&["model", "precision"])),
        engine,
        roles,
        frontend_env: frontend
            .and_then(|f| f.get("env"))
            .map(flat_settings)
            .unwrap_or_default(),
        frontend_args: frontend
            .and_then(|f| f.get("args"))
            .map(flat_settings)
            .unwrap_or_default(),
        benchmark,
        publish_events_and_metrics: b(backend.and_then(|b| b.get("publish_events_and_metrics"))),
        setup_script: s(root.get("setup_script")),
        overrides,
        root,
    })
}

/// Flatten a mapping into settings; nested mappings join keys with `.`.
fn flat_settings(n: &YamlNode) -> Vec<Setting> {
    let mut out = Vec::new();
    flatten_into(n, "", &mut out, 0);
    out
}

fn flatten_into(n: &YamlNode, prefix: &str, out: &mut Vec<Setting>, depth: usize) {
    for (k, v) in n.entries() {
        let key = if prefix.is_empty() {
            k.value.clone()
        } else {
            format!("{prefix}.{}", k.value)
        };
        if matches!(v.value, Yaml::Map(_)) && depth < 16 {
            flatten_into(v, &key, out, depth + 1);
        } else {
            out.push(Setting {
                key,
                value: v.clone(),
                line: k.line,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_nested_keys() {
        let r = parse_recipe(
            "r.yaml",
            b"model:\n  container: \"lmsysorg/sglang:v0.5.12\"\nbackend:\n  type: trtllm\n  trtllm_config:\n    decode:\n      speculative_config:\n        decoding_type: MTP\n        max_draft_len: 3\n",
        )
        .unwrap();
        let c = r.container.clone().unwrap();
        assert_eq!((c.value.as_str(), c.line), ("lmsysorg/sglang:v0.5.12", 2));
        let d = r.role(Role::Decode).unwrap();
        let k = d.arg("speculative_config.max_draft_len").unwrap();
        assert_eq!((k.text(), k.line), ("3".to_string(), 9));
        assert_eq!(d.args_line, Some(6));
    }

    /// Schema 1, SGLang disagg with decode-only EAGLE and the abbreviated
    /// `speculative-algo` (docs/rules.md L10 trip:
    /// `sglang/deepseek-v4/8k1k/disagg-b200-low-latency-1p1d-tp8-tp8-mtp.yaml`).
    const SGLANG_DISAGG: &str = r#"name: "disagg-b200-8k1k-low-latency-1p1d-tp8-tp8-mtp"

model:
  path: "deepseek-v4-pro"
  container: "lmsysorg/sglang:nightly-dev-cu13-20260710-cfc66e05"
  precision: "fp4"

resources:
  gpu_type: "b200"
  prefill_nodes: 1
  decode_nodes: 1

backend:
  type: sglang

  prefill_environment:
    PYTHONUNBUFFERED: "1"
    SGLANG_SIMULATE_ACC_LEN: "3.00"

  decode_environment:
    PYTHONUNBUFFERED: "1"
    SGLANG_SIMULATE_ACC_LEN: "3.00"
    SGLANG_SIMULATE_ACC_METHOD: match-expected
    SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token
    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'

  sglang_config:
    prefill:
      served-model-name: "deepseek-ai/DeepSeek-V4-Pro"
      tensor-parallel-size: 8
      disaggregation-mode: "prefill"
      speculative-num-steps: 1
    decode:
      served-model-name: "deepseek-ai/DeepSeek-V4-Pro"
      tensor-parallel-size: 8
      disaggregation-mode: "decode"
      speculative-algo: "EAGLE"
      speculative-num-steps: 3
      speculative-eagle-topk: 1
      speculative-num-draft-tokens: 4
      disable-radix-cache: true

benchmark:
  type: "sa-bench"
  isl: 8192
  osl: 1024
  concurrencies: "1"
  use_chat_template: true
"#;

    #[test]
    fn schema_1_roles_env_and_args() {
        let r = parse_recipe("sglang/deepseek-v4/8k1k/x.yaml", SGLANG_DISAGG.as_bytes()).unwrap();
        assert_eq!(
            r.name.as_ref().unwrap().value,
            "disagg-b200-8k1k-low-latency-1p1d-tp8-tp8-mtp"
        );
        assert_eq!(r.engine.as_ref().unwrap().value, "sglang");
        assert_eq!(r.container.as_ref().unwrap().line, 5);
        let p = r.role(Role::Prefill).unwrap();
        let d = r.role(Role::Decode).unwrap();
        assert_eq!(p.env_line, Some(16));
        assert_eq!(d.env_line, Some(20));
        // K from decode, not prefill (docs/rules.md §1.3 step 4).
        assert_eq!(r.serving_role().unwrap().role, Role::Decode);
        assert_eq!(d.arg("speculative-num-steps").unwrap().text(), "3");
        assert_eq!(p.arg("speculative-num-steps").unwrap().text(), "1");
        let algo = d.arg("speculative-algo").unwrap();
        assert_eq!((algo.text(), algo.line), ("EAGLE".to_string(), 37));
        // Quoted numbers stay text as written; the prefill role has LEN alone.
        assert_eq!(p.env("SGLANG_SIMULATE_ACC_LEN").unwrap().text(), "3.00");
        assert!(p.env("SGLANG_SIMULATE_ACC_METHOD").is_none());
        assert_eq!(
            d.env("SGLANG_SIMULATE_ACC_METHOD").unwrap().text(),
            "match-expected"
        );
        let nextn = r.env_everywhere("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE");
        assert_eq!(nextn.len(), 1);
        assert_eq!((nextn[0].0, nextn[0].1.line), (Role::Decode, 25));
        assert_eq!(
            d.arg("disable-radix-cache").unwrap().value.as_bool(),
            Some(true)
        );
        let uct = r.benchmark.use_chat_template.as_ref().unwrap();
        assert_eq!((uct.value, uct.line), (true, 48));
        assert_eq!(r.benchmark.kind.as_ref().unwrap().value, "sa-bench");
        assert_eq!(
            r.root.at(&["resources", "gpu_type"]).unwrap().text(),
            "b200"
        );
    }

    /// Schema 1, Dynamo TRT-LLM agentic recipe with thinking disabled and the
    /// force knob at 1.49 (docs/rules.md Check 11 REVIEW / L27 example
    /// `trtllm/deepseek-v4/agentx-gb300-20260811/…-1p4d-dep4-tep8-c4-b1-mtp.yaml`).
    const TRT_AGENTIC: &str = r#"name: dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp
model:
  path: deepseek-ai/DeepSeek-V4-Pro
  container: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24
  precision: fp4
backend:
  type: trtllm
  decode_environment:
    TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: '1.49'
    DYN_DEFAULT_THINKING_MODE: disabled
  trtllm_config:
    decode:
      kv_cache_config:
        dtype: fp8
        event_buffer_max_size: 0
      speculative_config:
        decoding_type: MTP
        max_draft_len: 3
      enable_iter_perf_stats: false
  publish_events_and_metrics: false
frontend:
  type: dynamo
  env:
    DYN_TOKENIZER: fastokens
  args:
    router-mode: kv
    no-kv-events: true
benchmark:
  type: custom
  use_chat_template: true
  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh
  env:
    MODEL_PREFIX: dsv4
    CONC: '4'
"#;

    #[test]
    fn trtllm_nested_config_and_metrics_knobs() {
        let r = parse_recipe("trtllm/x.yaml", TRT_AGENTIC.as_bytes()).unwrap();
        assert_eq!(
            r.container.as_ref().unwrap().value,
            "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24"
        );
        let d = r.serving_role().unwrap();
        assert_eq!(
            d.arg("speculative_config.max_draft_len").unwrap().text(),
            "3"
        );
        assert_eq!(
            d.arg("speculative_config.decoding_type").unwrap().text(),
            "MTP"
        );
        assert_eq!(
            d.arg("kv_cache_config.event_buffer_max_size").unwrap().line,
            15
        );
        assert_eq!(
            d.env("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS")
                .unwrap()
                .text(),
            "1.49"
        );
        assert_eq!(
            d.env("DYN_DEFAULT_THINKING_MODE").unwrap().text(),
            "disabled"
        );
        let pm = r.publish_events_and_metrics.as_ref().unwrap();
        assert_eq!((pm.value, pm.line), (false, 20));
        assert!(r.frontend_args.iter().any(|s| s.key == "no-kv-events"));
        assert_eq!(r.frontend_env[0].key, "DYN_TOKENIZER");
        assert!(
            r.benchmark
                .command
                .as_ref()
                .unwrap()
                .value
                .ends_with("agentic_srt.sh")
        );
        assert_eq!(
            r.benchmark
                .env
                .iter()
                .find(|s| s.key == "CONC")
                .unwrap()
                .text(),
            "4"
        );
    }

    /// Schema 2 (`roles:` with `env`/`args`, as in
    /// `dsr1/sglang/b200-fp4/8k1k/disagg-1p1d-p-tp4-d-tp8-b512-c32-mtp.yaml`),
    /// plus an aggregated worker and a vLLM JSON speculative config.
    const SCHEMA_2: &str = r#"schema: 2
name: "b200-fp4-mtp-low-latency"
model:
  path: "dsr1"
  container: "lmsysorg/sglang:v0.5.12.post1"
engine: sglang
roles:
  prefill:
    nodes: 1
    env:
      SGLANG_ENABLE_SPEC_V2: "1"
    args:
      tensor-parallel-size: 4
      speculative-algorithm: "EAGLE"
  agg:
    env:
      VLLM_ENGINE_READY_TIMEOUT_S: "3600"
    args:
      speculative-config: '{"method":"mtp","num_speculative_tokens":2,"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.27}'
override_mtp:
  roles:
    decode:
      args:
        speculative-num-steps: 2
benchmark:
  type: sa-bench
"#;

    #[test]
    fn schema_2_roles_and_overrides() {
        let r = parse_recipe("dsr1/x.yaml", SCHEMA_2.as_bytes()).unwrap();
        assert_eq!(r.engine.as_ref().unwrap().value, "sglang");
        let p = r.role(Role::Prefill).unwrap();
        assert_eq!((p.env_line, p.args_line), (Some(10), Some(12)));
        assert_eq!(p.arg("speculative-algorithm").unwrap().line, 14);
        let agg = r.role(Role::Aggregated).unwrap();
        assert_eq!(r.serving_role().unwrap().role, Role::Aggregated);
        assert!(
            agg.arg("speculative-config")
                .unwrap()
                .text()
                .contains("\"synthetic_acceptance_length\":2.27")
        );
        assert_eq!(r.overrides[0].value, "override_mtp");
        assert!(r.benchmark.use_chat_template.is_none());
        assert!(
            r.role(Role::Decode).is_none(),
            "override roles are not base roles"
        );
    }

    #[test]
    fn invalid_yaml_is_a_positioned_error() {
        let e = parse_recipe("bad.yaml", b"a: 1\nb: [1, 2\n").unwrap_err();
        assert_eq!(e.loc.file, "bad.yaml");
        assert!(e.message.starts_with("invalid YAML"));
        let e = parse_recipe("list.yaml", b"- a\n- b\n").unwrap_err();
        assert!(e.message.contains("mapping"));
    }
}
