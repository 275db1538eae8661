//! The master and runner parsers on the real fixtures.
use sweepgate::recipe::{master, runners};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared");

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(format!("{SHARED}/fixtures/inferencex/{rel}")).unwrap()
}

#[test]
fn real_master_files() {
    let nv = master::parse("configs/nvidia-master.yaml", &read("configs/nvidia-master.yaml")).unwrap();
    let amd = master::parse("configs/amd-master.yaml", &read("configs/amd-master.yaml")).unwrap();
    assert_eq!(nv.len(), 152);
    assert_eq!(amd.len(), 56);
    assert_eq!(nv.search_entry_count(), 635);
    assert_eq!(amd.search_entry_count(), 114);
    let pinned = nv.entries.iter().chain(amd.entries.iter()).filter(|e| e.image.value.contains("@sha256:")).count();
    assert_eq!(pinned, 6);
    // Positions: the first key is on line 1, its image on line 2.
    let first = &nv.entries[0];
    assert_eq!(first.key, "dsr1-fp4-b200-dynamo-trt");
    assert_eq!((first.pos.line, first.pos.column), (1, 1));
    assert_eq!(first.image.pos.line, 2);
    assert_eq!(first.loc(first.image.pos).file, "configs/nvidia-master.yaml");
}

#[test]
fn real_runner_file() {
    let r = runners::parse("configs/runners.yaml", &read("configs/runners.yaml")).unwrap();
    assert_eq!(r.labels.len(), 37);
    assert_eq!(r.distinct_runners().len(), 132);
    assert_eq!(r.hardware.len(), 16);
    assert_eq!(r.hardware("cluster:h100-dgxc").unwrap().available_cpu_dram_mib.value, 2_063_837);
}

#[test]
fn merge_rejects_duplicates_and_keeps_order() {
    let nv = read("configs/nvidia-master.yaml");
    let amd = read("configs/amd-master.yaml");
    let all = master::parse_many([("configs/nvidia-master.yaml", &nv[..]), ("configs/amd-master.yaml", &amd[..])]).unwrap();
    assert_eq!(all.len(), 208);
    assert_eq!(all.entries[152].file.as_ref(), "configs/amd-master.yaml");
    let e = master::parse_many([("a.yaml", &nv[..]), ("a.yaml", &nv[..])]).unwrap_err();
    assert!(e.message.starts_with("Duplicate configuration keys found in 'a.yaml': dsr1-"), "{}", e.message);
}
