//! The changelog job list on a synthetic `config-keys: ["*"]` entry, against
//! the size facts of docs/reference-automation.md §6.
use std::collections::HashSet;

use sweepgate_core::matrix::{self, jobs};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn inputs() -> matrix::Inputs {
    let shared = matrix::SharedOptions {
        config_files: vec![
            "configs/amd-master.yaml".into(),
            "configs/nvidia-master.yaml".into(),
        ],
        ..matrix::SharedOptions::default()
    };
    let root = std::path::PathBuf::from(format!("{DATA}/inferencex"));
    matrix::load(&shared, |f| std::fs::read(root.join(f)).ok()).unwrap()
}

#[test]
fn whole_repo_entry() {
    let inputs = inputs();
    let all = [jobs::EntryFlags {
        config_keys: vec!["*".into()],
        ..jobs::EntryFlags::default()
    }];
    let j = jobs::jobs_for_entries(&inputs, &all, jobs::LabelFlags::default()).unwrap();
    let len = |m: &std::collections::BTreeMap<String, Vec<serde_json::Value>>, k: &str| {
        m.get(k).map_or(0, Vec::len)
    };
    assert_eq!(j.throughput_len(), 1820);
    assert_eq!(len(&j.single_node, "8k1k"), 690);
    assert_eq!(len(&j.single_node, "agentic"), 482);
    assert_eq!(len(&j.multi_node, "8k1k"), 383);
    assert_eq!(len(&j.multi_node, "agentic"), 264);
    assert_eq!(len(&j.multi_node, "1k1k"), 1);
    let fps: HashSet<&str> = j
        .single_node
        .values()
        .chain(j.multi_node.values())
        .flatten()
        .map(|r| r["recipe-fingerprint"].as_str().unwrap())
        .collect();
    assert_eq!(fps.len(), 727);
    assert_eq!(
        (
            j.evals.len(),
            j.agentic_evals.len(),
            j.multinode_evals.len(),
            j.multinode_agentic_evals.len()
        ),
        (202, 33, 317, 93)
    );
    let labels = jobs::LabelFlags {
        all_evals: true,
        ..jobs::LabelFlags::default()
    };
    let j = jobs::jobs_for_entries(&inputs, &all, labels).unwrap();
    assert_eq!(
        (
            j.evals.len(),
            j.agentic_evals.len(),
            j.multinode_evals.len(),
            j.multinode_agentic_evals.len()
        ),
        (690, 482, 375, 116)
    );
    let labels = jobs::LabelFlags {
        trim_conc: true,
        ..jobs::LabelFlags::default()
    };
    let j = jobs::jobs_for_entries(&inputs, &all, labels).unwrap();
    assert_eq!(j.throughput_len(), 883);
    // Entry flags: evals-only suppresses throughput; a repeated pair is generated once.
    let two = [all[0].clone(), all[0].clone()];
    assert_eq!(
        jobs::jobs_for_entries(&inputs, &two, jobs::LabelFlags::default())
            .unwrap()
            .throughput_len(),
        1820
    );
    let eo = [jobs::EntryFlags {
        evals_only: true,
        ..all[0].clone()
    }];
    let j = jobs::jobs_for_entries(&inputs, &eo, jobs::LabelFlags::default()).unwrap();
    assert_eq!((j.throughput_len(), j.eval_len()), (0, 645));
    let missing = [jobs::EntryFlags {
        config_keys: vec!["nope?".into()],
        ..jobs::EntryFlags::default()
    }];
    assert!(jobs::jobs_for_entries(&inputs, &missing, jobs::LabelFlags::default()).is_err());
}
