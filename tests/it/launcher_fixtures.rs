//! Launcher path resolution against the real master configs, runner map and
//! file tree of the reference repository (`tests/data/inferencex/`, commit
//! 843c6254), and the seed 004 naming mismatch.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use sweepgate_core::recipe::launcher::{
    LauncherTable, RecipeSpelling, Route, Scenario, ScriptQuery,
};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/inferencex")
}

/// Every path of the revision, from `TREE.tsv` (size, tab, path).
fn tree() -> BTreeSet<String> {
    let text = std::fs::read_to_string(fixtures().join("TREE.tsv")).unwrap();
    text.lines()
        .filter_map(|l| l.split_once('\t').map(|(_, p)| p.to_string()))
        .collect()
}

fn yaml(rel: &str) -> Value {
    let text = std::fs::read_to_string(fixtures().join(rel)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn masters() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for f in ["configs/nvidia-master.yaml", "configs/amd-master.yaml"] {
        if let Value::Object(m) = yaml(f) {
            out.extend(m);
        }
    }
    out
}

fn nodes(runners: &Value, label: &str) -> Option<Vec<String>> {
    runners["labels"][label].as_array().map(|a| {
        a.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    })
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("")
}

/// The spec-decoding values of one scenario's search space (default `none`).
fn specs(scenario: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for block in scenario.as_array().into_iter().flatten() {
        for entry in block["search-space"].as_array().into_iter().flatten() {
            out.insert(
                entry["spec-decoding"]
                    .as_str()
                    .unwrap_or("none")
                    .to_string(),
            );
        }
    }
    out
}

fn query<'a>(key: &'a str, cfg: &'a Value, scenario: Scenario, spec: &'a str) -> ScriptQuery<'a> {
    ScriptQuery {
        key,
        model_prefix: s(cfg, "model-prefix"),
        precision: s(cfg, "precision"),
        runner: s(cfg, "runner"),
        framework: s(cfg, "framework"),
        spec_decoding: spec,
        scenario,
        multinode: cfg["multinode"].as_bool().unwrap_or(false),
        config_files: &[],
    }
}

fn config<'a>(all: &'a [(String, Value)], key: &str) -> &'a Value {
    &all.iter().find(|(k, _)| k == key).unwrap().1
}

#[test]
fn five_real_keys_resolve_per_launcher() {
    let tree = tree();
    let runners = yaml("configs/runners.yaml");
    let all = masters();
    let t = LauncherTable::default();

    // dsv4-fp8-h200-vllm (label h200): all three h200 launchers agree (L02 pass).
    let cfg = config(&all, "dsv4-fp8-h200-vllm");
    let q = query("dsv4-fp8-h200-vllm", cfg, Scenario::FixedSeqLen, "none");
    let n = nodes(&runners, q.runner);
    let r = t.resolve_label(&q, n.as_deref(), &tree);
    let launchers: Vec<&str> = r.per_launcher.iter().map(|x| x.launcher.as_str()).collect();
    assert_eq!(launchers, vec!["h200-cw", "h200-nb", "h200-dgxc-slurm"]);
    assert!(r.failures().is_empty());
    assert_eq!(
        r.distinct_scripts().into_iter().collect::<Vec<_>>(),
        vec!["benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh"]
    );
    assert!(r.per_launcher.iter().all(|x| x.launcher_exists));

    // dsv4-fp8-h200-vllm-mtp: the MTP script exists under the legacy name.
    let cfg = config(&all, "dsv4-fp8-h200-vllm-mtp");
    let q = query("dsv4-fp8-h200-vllm-mtp", cfg, Scenario::FixedSeqLen, "mtp");
    let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
    assert!(r.failures().is_empty());
    assert_eq!(r.distinct_scripts().len(), 1);

    // dsv4-fp4-b300-vllm on cluster:b300-nv: the framework-tagged name wins.
    let cfg = config(&all, "dsv4-fp4-b300-vllm");
    let q = query("dsv4-fp4-b300-vllm", cfg, Scenario::FixedSeqLen, "none");
    let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
    assert_eq!(r.per_launcher.len(), 1);
    assert_eq!(
        r.per_launcher[0].script(),
        Some("benchmarks/single_node/fixed_seq_len/dsv4_fp4_b300_vllm.sh")
    );

    // dsv4-fp8-h200-sglang: label h200-dgxc is missing from runners.yaml and
    // names the h200-dgxc-slurm fleet, whose tagged script exists.
    let cfg = config(&all, "dsv4-fp8-h200-sglang");
    let q = query("dsv4-fp8-h200-sglang", cfg, Scenario::FixedSeqLen, "none");
    assert!(nodes(&runners, q.runner).is_none());
    let r = t.resolve_label(&q, None, &tree);
    assert_eq!(r.per_launcher.len(), 1);
    assert_eq!(
        r.per_launcher[0].script(),
        Some("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_sglang.sh")
    );

    // qwen3.5-fp8-h100-sglang-agentic: the L01 trip at HEAD (script deleted by #2561).
    let cfg = config(&all, "qwen3.5-fp8-h100-sglang-agentic");
    let q = query(
        "qwen3.5-fp8-h100-sglang-agentic",
        cfg,
        Scenario::AgenticCoding,
        "none",
    );
    let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
    assert!(!r.failures().is_empty());
    assert_eq!(
        r.failures()[0].expected(),
        Some("benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh")
    );
    // …while its -mtp twin passes.
    let cfg = config(&all, "qwen3.5-fp8-h100-sglang-agentic-mtp");
    let q = query(
        "qwen3.5-fp8-h100-sglang-agentic-mtp",
        cfg,
        Scenario::AgenticCoding,
        "mtp",
    );
    let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
    assert!(r.failures().is_empty());
    assert_eq!(
        r.distinct_scripts().into_iter().collect::<Vec<_>>(),
        vec!["benchmarks/single_node/agentic/qwen3.5_fp8_h100_mtp.sh"]
    );

    // AMD: dsr1-fp4-mi355x-atom falls back to the `_atom` legacy name, and
    // dsr1-fp4-mi355x-sglang to the bare one.
    for (key, expect) in [
        (
            "dsr1-fp4-mi355x-atom",
            "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom.sh",
        ),
        (
            "dsr1-fp4-mi355x-sglang",
            "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh",
        ),
    ] {
        let cfg = config(&all, key);
        let q = query(key, cfg, Scenario::FixedSeqLen, "none");
        let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
        assert_eq!(
            r.distinct_scripts().into_iter().collect::<Vec<_>>(),
            vec![expect],
            "{key}"
        );
        assert!(r.failures().is_empty(), "{key}");
    }
}

/// Every single-node key, scenario and spec arm at HEAD, over every launcher
/// its label reaches: only `qwen3.5-fp8-h100-sglang-agentic` fails
/// (docs/reference-automation.md §3.4, "159 resolutions succeed, 1 fails").
#[test]
fn all_single_node_keys_resolve_except_the_known_one() {
    let tree = tree();
    let runners = yaml("configs/runners.yaml");
    let all = masters();
    let t = LauncherTable::default();
    let mut failing = BTreeSet::new();
    let mut resolved = 0;
    for (key, cfg) in &all {
        if cfg["multinode"].as_bool().unwrap_or(false) {
            continue;
        }
        for (name, scenario) in cfg["scenarios"].as_object().into_iter().flatten() {
            let Some(sc) = Scenario::from_config(name) else {
                continue;
            };
            for spec in specs(scenario) {
                let q = query(key, cfg, sc, &spec);
                let r = t.resolve_label(&q, nodes(&runners, q.runner).as_deref(), &tree);
                assert!(
                    r.unknown_launchers.is_empty(),
                    "{key}: {:?}",
                    r.unknown_launchers
                );
                assert!(!r.per_launcher.is_empty(), "{key}");
                resolved += r.per_launcher.iter().filter(|x| x.ok()).count();
                if !r.failures().is_empty() {
                    failing.insert(key.clone());
                }
                assert!(r.distinct_scripts().len() <= 1, "L02 at HEAD for {key}");
            }
        }
    }
    assert_eq!(
        failing.into_iter().collect::<Vec<_>>(),
        vec!["qwen3.5-fp8-h100-sglang-agentic".to_string()]
    );
    assert_eq!(resolved, 159);
}

/// Seed 004: the PR adds `dsv4_fp8_h200_vllm_mtp.sh`; `h200-cw` and
/// `h200-nb` build `dsv4_fp8_h200_mtp.sh` (no framework-tagged form), so the
/// resolver names that path per launcher and as the name all accept.
#[test]
fn seed_004_h200_legacy_launchers_expect_the_untagged_name() {
    let mut tree = tree();
    tree.remove("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh");
    tree.insert("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh".into());
    let runners = yaml("configs/runners.yaml");
    let all = masters();
    let cfg = config(&all, "dsv4-fp8-h200-vllm-mtp");
    let q = query("dsv4-fp8-h200-vllm-mtp", cfg, Scenario::FixedSeqLen, "mtp");
    let t = LauncherTable::default();
    let r = t.resolve_label(&q, nodes(&runners, "h200").as_deref(), &tree);

    let failing: Vec<(&str, Option<&str>)> = r
        .failures()
        .iter()
        .map(|f| (f.launcher.as_str(), f.expected()))
        .collect();
    let expected = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh";
    assert_eq!(
        failing,
        vec![("h200-cw", Some(expected)), ("h200-nb", Some(expected))]
    );
    // The slurm launcher finds the tagged name, so only one script resolves
    // and L02 (existing paths only) stays silent.
    let dgxc = r
        .per_launcher
        .iter()
        .find(|x| x.launcher == "h200-dgxc-slurm")
        .unwrap();
    assert_eq!(
        dgxc.script(),
        Some("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh")
    );
    assert_eq!(r.distinct_scripts().len(), 1);
    assert_eq!(r.accepted_by_all(), vec![expected.to_string()]);
}

/// Multi-node: CONFIG_FILE recipes resolve through the local overlay (L04).
#[test]
fn multi_node_recipes_resolve_through_the_overlay() {
    let tree = tree();
    let t = LauncherTable::default();
    let all = masters();
    let cfg_files = |key: &str| -> Vec<String> {
        let cfg = config(&all, key);
        let mut out = Vec::new();
        for sc in cfg["scenarios"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, v)| v)
        {
            for block in sc.as_array().into_iter().flatten() {
                for e in block["search-space"].as_array().into_iter().flatten() {
                    for role in ["prefill", "decode"] {
                        for s in e[role]["additional-settings"]
                            .as_array()
                            .into_iter()
                            .flatten()
                        {
                            if let Some(v) = s.as_str().and_then(|s| s.strip_prefix("CONFIG_FILE="))
                            {
                                out.push(v.to_string());
                            }
                        }
                    }
                }
            }
        }
        out
    };
    // Passes at HEAD (docs/rules.md L04).
    let key = "kimik3-fp4-b200-dynamo-vllm-agentic-dspark";
    let files = cfg_files(key);
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    assert!(!refs.is_empty());
    let cfg = config(&all, key);
    let mut q = query(key, cfg, Scenario::AgenticCoding, "mtp");
    q.config_files = &refs;
    let launcher = sweepgate_core::recipe::launcher::launcher_of_runner("b200-dgxc_03");
    let r = t.resolve(launcher, &q, &tree).unwrap();
    let Route::Recipes(rs) = &r.route else {
        panic!("{:?}", r.route)
    };
    assert!(rs.iter().all(|x| x.spelling == RecipeSpelling::Upstream));
    assert!(r.ok(), "{rs:?}");

    // Trips at HEAD: recipes deleted by #2561 while the key was kept.
    let key = "dsv4-fp4-gb300-dynamo-vllm-agentic";
    let files = cfg_files(key);
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let cfg = config(&all, key);
    let mut q = query(key, cfg, Scenario::AgenticCoding, "none");
    q.config_files = &refs;
    let r = t.resolve("gb300-nv", &q, &tree).unwrap();
    let Route::Recipes(rs) = &r.route else {
        panic!("{:?}", r.route)
    };
    assert!(rs.iter().any(|x| !x.exists && x.may_live_upstream()));
    assert!(!r.ok());

    // tilert and llm-d wrapper routes.
    let cfg = config(&all, "glm5.1-fp8-b200-tilert");
    let q = query("glm5.1-fp8-b200-tilert", cfg, Scenario::FixedSeqLen, "none");
    let r = t.resolve("b200-dgxc", &q, &tree).unwrap();
    assert_eq!(
        r.script(),
        Some("benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg.sh")
    );
    let cfg = config(&all, "dsv4-fp4-gb200-llmd-vllm");
    let q = query(
        "dsv4-fp4-gb200-llmd-vllm",
        cfg,
        Scenario::FixedSeqLen,
        "none",
    );
    let r = t.resolve("gb200-nv", &q, &tree).unwrap();
    assert_eq!(
        r.script(),
        Some("benchmarks/multi_node/dsv4_fp4_gb200_llmd-vllm-disagg.sh")
    );
}
