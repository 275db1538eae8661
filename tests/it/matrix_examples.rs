//! The worked examples of docs/matrix-generator.md §11 and the row checksums of
//! its Example 10 on the real configs.
use serde_json::{Value, json};
use sweepgate_core::matrix::{self, Inputs};
use sweepgate_core::recipe::{master, runners};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

const RUNNERS: &str = "labels:
  h100: [h100-a_00, h100-b_01, h100-a_02]
  cluster:gb-x: [gb-x_0, gb-x_1]
  cluster:b-x: [bx_0, bx_1]
hardware:
  cluster:gb-x: { available-cpu-dram-mib: 860_160, gpus-per-node: 4 }
  cluster:b-x:  { available-cpu-dram-mib: 3_095_781, gpus-per-node: 8 }
";

const SN: &str = r#"m1-fp8-h100-vllm:
  image: img:1
  model: org/m1
  model-prefix: m1
  runner: h100
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 2, conc-start: 4, conc-end: 100 }
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-start: 1, conc-end: 64 }
      - { tp: 8, ep: 8, dp-attn: true, conc-list: [256, 32, 32, 512], router: { name: r, version: "1.0" } }
"#;

const MN: &str = r#"m2-fp4-h100-dyn:
  image: img:2
  model: org/m2
  model-prefix: m2
  runner: h100
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-start: 1
        conc-end: 64
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode: { num-worker: 2, tp: 8, ep: 8, dp-attn: false }
      - spec-decoding: mtp
        conc-list: [8, 12]
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode: { num-worker: 2, tp: 8, ep: 8, dp-attn: false, pp: 2, additional-settings: ["X=1"] }
      - conc-list: [128, 32]
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode: { num-worker: 2, tp: 8, ep: 8, dp-attn: false }
"#;

const AG: &str = r#"a1-fp4-bx-sglang-agentic:
  image: img:3
  model: org/a1
  model-prefix: a1
  runner: cluster:b-x
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - { tp: 8, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 2] }
      - { tp: 4, kv-offloading: dram, kv-offload-backend: { name: hicache }, conc-start: 4, conc-end: 20 }
      - { tp: 2, pp: 2, ep: 4, dp-attn: true, kv-offloading: dram, kv-offload-backend: { name: lmcache, version: "0.5.3" }, conc-list: [20, 8], router: { name: rr, version: "0.1" } }
a2-fp4-gbx-dyn-agentic:
  image: img:4
  model: org/a2
  model-prefix: a2
  runner: cluster:gb-x
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  scenarios:
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - conc-list: [4, 32, 16]
        kv-offloading: dram
        kv-offload-backend: { name: mooncake, version: "0.3" }
        prefill: { num-worker: 2, tp: 2, ep: 2, dp-attn: true }
        decode: { num-worker: 1, tp: 8, ep: 8, dp-attn: false }
      - spec-decoding: mtp
        conc-start: 1
        conc-end: 8
        prefill: { num-worker: 1, tp: 4, ep: 1, dp-attn: false }
        decode: { num-worker: 1, tp: 4, ep: 1, dp-attn: false }
      - conc-list: [64]
        kv-offloading: dram
        kv-offload-backend: { name: mooncake, version: "0.3" }
        prefill: { num-worker: 2, tp: 2, ep: 2, dp-attn: true }
        decode: { num-worker: 1, tp: 8, ep: 8, dp-attn: false }
"#;

fn fixture(name: &str) -> &'static str {
    match name {
        "sn.yaml" => SN,
        "mn.yaml" => MN,
        "ag.yaml" => AG,
        _ => panic!("{name}"),
    }
}

/// Runs `argline`; `--config-files` names the fixtures above.
fn expand(argline: &str) -> Result<Vec<Value>, matrix::MatrixError> {
    let args: Vec<String> = argline.split_whitespace().map(String::from).collect();
    let parsed = matrix::parse_args(&args)?;
    let files: Vec<(&str, &[u8])> = parsed
        .shared
        .config_files
        .iter()
        .map(|f| (f.as_str(), fixture(f).as_bytes()))
        .collect();
    let inputs = Inputs {
        master: master::parse_many(files)?,
        runners: runners::parse("runners.yaml", RUNNERS.as_bytes())?,
    };
    Ok(matrix::generate(&parsed, &inputs)?
        .iter()
        .map(|r| r.to_value())
        .collect())
}

fn col<'a>(rows: &'a [Value], k: &str) -> Vec<&'a Value> {
    rows.iter().map(|r| &r[k]).collect()
}

#[test]
fn example1_sn_fixed_default_marking() {
    let rows = expand("full-sweep --config-files sn.yaml").unwrap();
    assert_eq!(rows.len(), 17);
    let concs: Vec<i64> = rows.iter().map(|r| r["conc"].as_i64().unwrap()).collect();
    assert_eq!(
        concs,
        vec![
            4, 8, 16, 32, 64, 100, 1, 2, 4, 8, 16, 32, 64, 256, 32, 32, 512
        ]
    );
    let evals: Vec<bool> = rows
        .iter()
        .map(|r| r["run-eval"].as_bool().unwrap())
        .collect();
    let want = [
        false, false, false, false, false, false, false, false, false, false, false, true, true,
        true, false, false, true,
    ];
    assert_eq!(evals, want);
    assert_eq!(rows[0]["max-model-len"], 2304);
    assert_eq!(
        rows[16],
        json!({"image":"img:1","model":"org/m1","model-prefix":"m1","precision":"fp8","framework":"vllm","runner":"h100","isl":8192,"osl":1024,"tp":8,"pp":1,"dcp-size":1,"pcp-size":1,"conc":512,"max-model-len":9472,"ep":8,"dp-attn":true,"spec-decoding":"none","exp-name":"m1_8k1k","disagg":false,"run-eval":true,"router":{"name":"r","version":"1.0"}})
    );
}

#[test]
fn example3_min_max_and_step() {
    let base = "full-sweep --config-files sn.yaml mn.yaml ag.yaml --no-evals";
    let pick = |opts: &str| {
        let rows = expand(&format!("{base} {opts}")).unwrap();
        let sn_range: Vec<Value> = rows
            .iter()
            .filter(|r| r["exp-name"] == "m1_8k1k" && r["tp"] == 4)
            .map(|r| r["conc"].clone())
            .collect();
        let mn_range: Vec<Value> = rows
            .iter()
            .filter(|r| r["model"] == "org/m2" && r["spec-decoding"] == "none")
            .map(|r| r["conc"].clone())
            .collect();
        let ag: Vec<Value> = rows
            .iter()
            .filter(|r| r["model"] == "org/a1" && r["tp"] == 4)
            .map(|r| r["conc"].clone())
            .collect();
        (sn_range, mn_range, ag)
    };
    let (s, m, a) = pick("--min-conc 10");
    assert_eq!(s, vec![json!(10), json!(20), json!(40), json!(64)]);
    assert_eq!(m, vec![json!([16, 32, 64]), json!([128, 32])]);
    assert_eq!(a, vec![json!(16), json!(20)]);
    let (s, m, a) = pick("--max-conc 10");
    assert_eq!(s, vec![json!(1), json!(2), json!(4), json!(8), json!(10)]);
    assert_eq!(m, vec![json!([1, 2, 4, 8]), json!([10])]);
    assert_eq!(a, vec![json!(4), json!(8)]);
    let (s, m, a) = pick("--step-size 3");
    assert_eq!(s, vec![json!(1), json!(3), json!(9), json!(27), json!(64)]);
    assert_eq!(m[0], json!([1, 3, 9, 27, 64]));
    assert_eq!(a, vec![json!(4), json!(12), json!(20)]);
    let rows = expand(&format!("{base} --min-conc 200 --max-conc 300")).unwrap();
    assert_eq!(col(&rows, "conc"), vec![&json!(256)]);
}

#[test]
fn examples4_5_mn_fixed_marking_and_all_evals() {
    let rows = expand("full-sweep --config-files mn.yaml").unwrap();
    assert_eq!(
        col(&rows, "run-eval"),
        vec![&json!(false), &json!(false), &json!(true)]
    );
    assert_eq!(rows[2]["eval-conc"], 128);
    assert_eq!(rows[2]["conc"], json!([128, 32]));
    let only = expand("full-sweep --config-files mn.yaml --evals-only").unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["eval-only"], true);
    let all = expand("full-sweep --config-files mn.yaml --all-evals").unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["conc"], json!([1, 2, 4, 8, 16, 32, 64, 128]));
    assert_eq!(all[0]["eval-all-concs"], true);
    assert!(all[0].get("eval-conc").is_none());
    assert_eq!(
        all[1]["decode"],
        json!({"num-worker":2,"tp":8,"ep":8,"dp-attn":false,"pp":2,"additional-settings":["X=1"],"dcp-size":1,"pcp-size":1})
    );
}

#[test]
fn examples6_7_agentic() {
    let rows = expand("full-sweep --config-files ag.yaml --single-node --no-evals").unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["exp-name"], "a1_tp8_conc1_kvnone_spec-mtp");
    assert_eq!(rows[2]["total-cpu-dram-gb"], 1199);
    assert_eq!(
        rows[6],
        json!({"image":"img:3","model":"org/a1","model-prefix":"a1","precision":"fp4","framework":"sglang","runner":"cluster:b-x","tp":2,"pp":2,"dcp-size":1,"pcp-size":1,"ep":4,"dp-attn":true,"spec-decoding":"none","conc":20,"kv-offloading":"dram","total-cpu-dram-gb":1199,"duration":3600,"exp-name":"a1_tp2_conc20_kvdram-lmcache","scenario-type":"agentic-coding","kv-offload-backend":{"name":"lmcache","version":"0.5.3"},"router":{"name":"rr","version":"0.1"}})
    );
    let only = expand("full-sweep --config-files ag.yaml --single-node --evals-only").unwrap();
    assert_eq!(
        col(&only, "exp-name"),
        vec![&json!("a1_tp4_conc20_kvdram-hicache")]
    );

    let mn = expand("full-sweep --config-files ag.yaml --multi-node --no-evals").unwrap();
    let concs: Vec<&Value> = col(&mn, "conc");
    let want = [
        json!([4]),
        json!([32]),
        json!([16]),
        json!([1]),
        json!([2]),
        json!([4]),
        json!([8]),
        json!([64]),
    ];
    assert_eq!(concs, want.iter().collect::<Vec<_>>());
    assert_eq!(mn[0]["total-cpu-dram-gb"], 225);
    assert_eq!(
        mn[0]["exp-name"],
        "a2_p2x2ep2dpa_d1x8ep8_conc4_kvdram-mooncake"
    );
    assert_eq!(mn[3]["exp-name"], "a2_p1x4_d1x4_conc1");
    let only = expand("full-sweep --config-files ag.yaml --multi-node --evals-only").unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(
        (&only[0]["conc"], &only[0]["eval-conc"]),
        (&json!([64]), &json!(64))
    );
    let all = expand("full-sweep --config-files ag.yaml --multi-node --all-evals").unwrap();
    assert_eq!(
        col(&all, "conc"),
        vec![&json!([4, 16, 32, 64]), &json!([1, 2, 4, 8])]
    );
    assert_eq!(col(&all, "eval-conc"), vec![&json!(64), &json!(8)]);
    assert_eq!(
        all[0]["exp-name"],
        "a2_p2x2ep2dpa_d1x8ep8_conc4_kvdram-mooncake"
    );
}

#[test]
fn example8_node_filter() {
    let rows =
        expand("full-sweep --config-files sn.yaml --no-evals --runner-node-filter a_0").unwrap();
    assert_eq!(rows.len(), 34);
    assert_eq!(
        col(&rows[..4], "runner"),
        vec![
            &json!("h100-a_00"),
            &json!("h100-a_02"),
            &json!("h100-a_00"),
            &json!("h100-a_02")
        ]
    );
    assert!(
        expand("full-sweep --config-files sn.yaml mn.yaml ag.yaml --runner-node-filter cluster")
            .unwrap()
            .is_empty()
    );
    let rows =
        expand("test-config --config-files ag.yaml --config-keys a* --runner-node-filter gb-x")
            .unwrap();
    let runners: Vec<&Value> = col(&rows, "runner");
    assert_eq!(runners.len(), 24, "{runners:?}");
    // Per search-space entry: every conc on the label, then on each node.
    assert!(runners[..3].iter().all(|r| **r == "cluster:gb-x"));
    assert!(runners[3..6].iter().all(|r| **r == "gb-x_0"));
    assert!(runners[6..9].iter().all(|r| **r == "gb-x_1"));
}

#[test]
fn example9_test_config_keys_and_errors() {
    let rows = expand("test-config --config-files ag.yaml sn.yaml mn.yaml --config-keys m2-fp4-h100-dyn a1* m1-fp8-h100-vllm a?-*").unwrap();
    let mut models: Vec<&str> = rows.iter().map(|r| r["model"].as_str().unwrap()).collect();
    models.dedup();
    assert_eq!(models, vec!["org/m2", "org/a1", "org/m1", "org/a2"]);
    let rows = expand("test-config --config-files ag.yaml sn.yaml mn.yaml --config-keys m1-fp8-h100-vllm --conc 32 100 7").unwrap();
    let got: Vec<(i64, i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["isl"].as_i64().unwrap(),
                r["tp"].as_i64().unwrap(),
                r["conc"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1024, 2, 32),
            (1024, 2, 100),
            (8192, 4, 32),
            (8192, 8, 32),
            (8192, 8, 32)
        ]
    );
    assert_eq!(expand("test-config --config-files ag.yaml sn.yaml mn.yaml --config-keys * --conc 8 --seq-lens 8k1k").unwrap().len(), 6);
    assert!(
        expand("test-config --config-files sn.yaml --config-keys m1-fp8-h100-vllm --conc 3")
            .unwrap()
            .is_empty()
    );
    let e = expand("test-config --config-files sn.yaml --config-keys nope").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Config key(s) not found: nope.\nAvailable keys: m1-fp8-h100-vllm")
    );
    let e = expand("test-config --config-files sn.yaml --config-keys x*").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Pattern 'x*' matched no config keys.")
    );
    assert_eq!(e.exit_code(), 1);
}

#[test]
fn loading_errors() {
    let e = expand("full-sweep --config-files sn.yaml sn.yaml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Duplicate configuration keys found in 'sn.yaml': m1-fp8-h100-vllm"
    );
    let bad = SN.replace("tp: 2,", "tp: 2, bogus: 1,");
    let e = master::parse("sn.yaml", bad.as_bytes()).unwrap_err();
    assert!(
        e.message
            .starts_with("Master config entry 'm1-fp8-h100-vllm' failed validation:"),
        "{}",
        e.message
    );
    assert!(e.message.contains("bogus"));
    assert_eq!(e.loc.line, 14);
    let e = master::parse("x.yaml", b"a*: {}\n").unwrap_err();
    assert_eq!(
        e.message,
        "Wildcard '*' is not allowed in master config keys: 'a*'"
    );
    let e = master::parse("x.yaml", b"").unwrap_err();
    assert_eq!(e.message, "Config file 'x.yaml' must contain a dictionary");
    let e = master::parse("x.yaml", b"a: [\n").unwrap_err();
    assert_eq!(e.loc.file, "x.yaml");
    assert!(e.loc.line >= 1);
    let disagg = MN.replace("  kv-p2p-transfer: nixl\n", "");
    let e = master::parse("mn.yaml", disagg.as_bytes()).unwrap_err();
    assert!(
        e.message.contains("disagg=true requires kv-p2p-transfer"),
        "{}",
        e.message
    );
}

/// Example 10's checksums: total rows, per shape, and rows with run-eval true.
#[test]
fn example10_checksums() {
    let repo = std::path::PathBuf::from(format!("{DATA}/inferencex"));
    let files = "--config-files configs/nvidia-master.yaml configs/amd-master.yaml";
    let args0: Vec<String> = format!("full-sweep {files}")
        .split_whitespace()
        .map(String::from)
        .collect();
    let parsed0 = matrix::parse_args(&args0).unwrap();
    let inputs = matrix::load(&parsed0.shared, |f| std::fs::read(repo.join(f)).ok()).unwrap();
    let cases: &[(&str, [usize; 6])] = &[
        ("", [1820, 690, 384, 482, 264, 519]),
        ("--evals-only", [645, 202, 317, 33, 93, 645]),
        ("--all-evals --evals-only", [1663, 690, 375, 482, 116, 1663]),
        ("--single-node", [1172, 690, 0, 482, 0, 202]),
        ("--seq-lens 8k1k", [1819, 690, 383, 482, 264, 519]),
        ("--seq-lens 1k1k", [747, 0, 1, 482, 264, 0]),
        (
            "--model-prefix dsr1 qwen3.5 --precision fp8",
            [528, 233, 142, 153, 0, 188],
        ),
        ("--min-conc 16 --max-conc 64", [937, 291, 325, 226, 95, 512]),
        ("--step-size 4", [1588, 458, 384, 482, 264, 494]),
        ("--max-tp 4", [1416, 286, 384, 482, 264, 404]),
        (
            "--runner-node-filter dgxc",
            [6125, 3006, 321, 2136, 662, 1158],
        ),
        ("--min-conc 0", [746, 0, 0, 482, 264, 0]),
        ("--max-conc -3", [0, 0, 0, 0, 0, 0]),
    ];
    for (opts, want) in cases {
        let args: Vec<String> = format!("full-sweep {files} {opts}")
            .split_whitespace()
            .map(String::from)
            .collect();
        let parsed = matrix::parse_args(&args).unwrap();
        let rows = matrix::generate(&parsed, &inputs).unwrap();
        let mut got = [rows.len(), 0, 0, 0, 0, 0];
        for r in &rows {
            let i = match r {
                matrix::Row::SnFixed(_) => 1,
                matrix::Row::MnFixed(_) => 2,
                matrix::Row::SnAgentic(_) => 3,
                matrix::Row::MnAgentic(_) => 4,
            };
            got[i] += 1;
            if r.eval().run_eval == Some(true) {
                got[5] += 1;
            }
        }
        assert_eq!(&got, want, "options {opts:?}");
    }
    let e = matrix::generate(
        &matrix::parse_args(
            &format!("full-sweep {files} --runner-type h200-dgxc")
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
        )
        .unwrap(),
        &inputs,
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("Invalid runner type(s): {'h200-dgxc'}. Valid runner types are: b200, b200-dsv4, b200-multinode,"));
    // test-config on real keys (Example 10, first two bullets).
    let run = |a: &str| {
        let args: Vec<String> = format!("test-config {files} {a}")
            .split_whitespace()
            .map(String::from)
            .collect();
        let rows = matrix::generate(&matrix::parse_args(&args).unwrap(), &inputs).unwrap();
        rows.iter().map(|r| r.to_value()).collect::<Vec<_>>()
    };
    let rows = run("--config-keys dsv4-fp4-b200-sglang-agentic-hicache-mtp --conc 3 32");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["total-cpu-dram-gb"], 2399);
    assert_eq!(
        rows[1]["exp-name"],
        "dsv4_tp8_conc32_kvdram-hicache_spec-mtp"
    );
    assert_eq!(rows[2]["exp-name"], rows[1]["exp-name"]);
    let rows = run("--config-keys glm5.1-fp8-b200-tilert --all-evals");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0]["conc"], &rows[0]["eval-all-concs"]),
        (&json!([1]), &json!(true))
    );
    let deprecated = std::fs::read(format!(
        "{DATA}/inferencex/configs/deprecated/nvidia-gptoss-master.yaml"
    ));
    if let Ok(bytes) = deprecated {
        let e = master::parse("configs/deprecated/nvidia-gptoss-master.yaml", &bytes).unwrap_err();
        assert!(
            e.message
                .contains("Master config entry 'gptoss-fp4-gb200-dynamo-trt' failed validation"),
            "{}",
            e.message
        );
    }
}
