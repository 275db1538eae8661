//! The master and runner parsers on the real fixtures.
use sweepgate_core::recipe::{master, runners};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/inferencex/{rel}")).unwrap()
}

#[test]
fn real_master_files() {
    let nv = master::parse(
        "configs/nvidia-master.yaml",
        &read("configs/nvidia-master.yaml"),
    )
    .unwrap();
    let amd = master::parse("configs/amd-master.yaml", &read("configs/amd-master.yaml")).unwrap();
    assert_eq!(nv.key_count(), 152);
    assert_eq!(amd.key_count(), 56);
    assert_eq!(nv.search_entry_count(), 635);
    assert_eq!(amd.search_entry_count(), 114);
    let pinned = nv
        .entries
        .iter()
        .chain(amd.entries.iter())
        .filter(|e| e.image.value.contains("@sha256:"))
        .count();
    assert_eq!(pinned, 6);
    // Positions: the first key is on line 1, its image on line 2.
    let first = &nv.entries[0];
    assert_eq!(first.key, "dsr1-fp4-b200-dynamo-trt");
    assert_eq!((first.pos.line, first.pos.column), (1, 1));
    assert_eq!(first.image.pos.line, 2);
    assert_eq!(
        first.loc(first.image.pos).file,
        "configs/nvidia-master.yaml"
    );
}

#[test]
fn real_runner_file() {
    let r = runners::parse("configs/runners.yaml", &read("configs/runners.yaml")).unwrap();
    assert_eq!(r.labels.len(), 37);
    assert_eq!(r.distinct_runners().len(), 132);
    assert_eq!(r.hardware.len(), 16);
    assert_eq!(
        r.hardware("cluster:h100-dgxc")
            .unwrap()
            .available_cpu_dram_mib
            .value,
        2_063_837
    );
}

#[test]
fn merge_rejects_duplicates_and_keeps_order() {
    let nv = read("configs/nvidia-master.yaml");
    let amd = read("configs/amd-master.yaml");
    let all = master::parse_many([
        ("configs/nvidia-master.yaml", &nv[..]),
        ("configs/amd-master.yaml", &amd[..]),
    ])
    .unwrap();
    assert_eq!(all.key_count(), 208);
    assert_eq!(all.entries[152].file.as_ref(), "configs/amd-master.yaml");
    let e = master::parse_many([("a.yaml", &nv[..]), ("a.yaml", &nv[..])]).unwrap_err();
    assert!(
        e.message
            .starts_with("Duplicate configuration keys found in 'a.yaml': dsr1-"),
        "{}",
        e.message
    );
}

mod never_panics {
    use proptest::prelude::*;
    use sweepgate_core::recipe::{master, runners};

    const SEED: &str = "k-fp8-h100-vllm:\n  image: img:1\n  model: org/m\n  model-prefix: m\n  runner: cluster:h100\n  precision: fp8\n  framework: vllm\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 2, conc-start: 4, conc-end: 100 }\n    agentic-coding:\n    - dram-utilization: 0.5\n      search-space:\n      - { tp: 8, kv-offloading: dram, kv-offload-backend: { name: h }, conc-list: [1, 2] }\n";

    #[test]
    fn seed_is_valid() {
        let c = master::parse("x.yaml", SEED.as_bytes()).unwrap();
        assert_eq!(c.search_entry_count(), 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = master::parse("x.yaml", &bytes);
            let _ = runners::parse("r.yaml", &bytes);
        }

        #[test]
        fn yaml_like_text(s in "[a-z0-9:{}\\[\\], \\n\\-\\*&!|>'\"#.]{0,200}") {
            let _ = master::parse("x.yaml", s.as_bytes());
            let _ = runners::parse("r.yaml", s.as_bytes());
        }

        /// A valid entry with one byte replaced or a span cut out.
        #[test]
        fn mutated_entry(pos in 0usize..SEED.len(), byte in any::<u8>(), cut in 0usize..40) {
            let mut b = SEED.as_bytes().to_vec();
            b[pos] = byte;
            let _ = master::parse("x.yaml", &b);
            let end = (pos + cut).min(SEED.len());
            let mut c = SEED.as_bytes().to_vec();
            c.drain(pos..end);
            let _ = master::parse("x.yaml", &c);
        }
    }
}
