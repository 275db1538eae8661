//! The GitHub-backed repository source gives the same answers as the local
//! git source for the same history: files at a revision, the tree, and the
//! comparison of two revisions.
use crate::common;

use common::transcript::{OWNER, REPO, app_key_pem};
use std::process::Command;
use sweepgate::config::server::Secret;
use sweepgate::github::{Credentials, GitHub, GitHubConfig, GitHubSource, RetryPolicy};
use sweepgate::repo::{FileStatus, GitRepo, RepoError, RepoSource};
use sweepgate_core::ids::{InstallationId, RepoName};
use sweepgate_sandbox::{Change, Sandbox};

const BASE_FILES: &[(&str, &str)] = &[
    (
        "configs/nvidia-master.yaml",
        "dsv4-fp8-h200-vllm:\n  image: vllm/vllm-openai:v0.25.1\n",
    ),
    ("perf-changelog.yaml", "- config-keys:\n    - a\n"),
    (
        "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh",
        "#!/bin/bash\nvllm serve x\n",
    ),
    ("docs/old.md", "old\n"),
];

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn github_and_local_git_sources_agree() {
    // The same history twice: in the sandbox and in a local repository.
    let (sandbox, base_url) = Sandbox::start().await.unwrap();
    sandbox.add_org(OWNER);
    sandbox
        .add_repo(
            OWNER,
            REPO,
            "main",
            BASE_FILES.iter().map(|(p, c)| (*p, c.as_bytes())),
        )
        .unwrap();
    sandbox.create_branch(OWNER, REPO, "pr", "main").unwrap();
    let head_changes = [
        Change::write(
            "configs/nvidia-master.yaml",
            "dsv4-fp8-h200-vllm:\n  image: vllm/vllm-openai:v0.26.0\n",
        ),
        Change::write(
            "perf-changelog.yaml",
            "- config-keys:\n    - a\n- config-keys:\n    - b\n",
        ),
        Change::delete("docs/old.md"),
        Change::write("docs/new.md", "new\n"),
    ];
    sandbox
        .commit(OWNER, REPO, "pr", &head_changes, "change")
        .unwrap();
    let inst = sandbox.install_app(OWNER);
    let gh = GitHub::new(GitHubConfig {
        api_url: base_url,
        credentials: Credentials::App {
            app_id: sandbox.app_id(),
            private_key_pem: Secret::new(app_key_pem()),
        },
        policy: RetryPolicy::default(),
    })
    .unwrap();
    let remote = GitHubSource::new(
        gh.installation(InstallationId(inst)).unwrap(),
        RepoName::new(OWNER, REPO),
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    for (p, c) in BASE_FILES {
        let f = d.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    git(d, &["checkout", "-qb", "pr"]);
    for c in &head_changes {
        match c {
            Change::Write { path, content } => std::fs::write(d.join(path), content).unwrap(),
            Change::Delete { path } => std::fs::remove_file(d.join(path)).unwrap(),
        }
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "change"]);
    let local = GitRepo::new(d);

    for rev in ["main", "pr"] {
        let r: Vec<_> = remote
            .list_tree(rev)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.path, e.size))
            .collect();
        let l: Vec<_> = local
            .list_tree(rev)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.path, e.size))
            .collect();
        assert_eq!(r, l, "tree at {rev}");
        for (path, _) in &r {
            assert_eq!(
                remote.read_file(rev, path).await.unwrap(),
                local.read_file(rev, path).await.unwrap(),
                "{path} at {rev}"
            );
        }
    }
    let rc = remote.compare("main", "pr").await.unwrap();
    let lc = local.compare("main", "pr").await.unwrap();
    let shape = |c: &sweepgate::repo::Comparison| {
        let mut v: Vec<_> = c
            .files
            .iter()
            .map(|f| (f.path.clone(), f.status.as_str(), f.additions, f.deletions))
            .collect();
        v.sort();
        v
    };
    assert_eq!(shape(&rc), shape(&lc));
    assert!(
        shape(&rc)
            .iter()
            .any(|f| f.0 == "docs/old.md" && f.1 == FileStatus::Removed.as_str())
    );
    assert_eq!(rc.head, remote.resolve("pr").await.unwrap());

    assert!(matches!(
        remote.read_file("main", "no/such.yaml").await,
        Err(RepoError::NoSuchFile { .. })
    ));
    assert!(matches!(
        remote.read_file("main", "configs").await,
        Err(RepoError::NotAFile { .. })
    ));
    assert!(matches!(
        remote.resolve("no-such-branch").await,
        Err(RepoError::NoSuchRevision { .. })
    ));
}

/// Reads over a cap are refused with the file's name and the cap, before
/// the content is fetched: a 7 MB script is never downloaded or decoded.
#[tokio::test]
async fn files_over_their_cap_are_refused_with_their_name_and_the_cap() {
    let (sandbox, _) = Sandbox::start().await.unwrap();
    sandbox.add_org(OWNER);
    let big_script = format!("#!/bin/bash\n{}", "echo x\n".repeat(1_050_000));
    let big_yaml = format!("a:\n{}", "  - 1\n".repeat(120_000));
    sandbox
        .add_repo(
            OWNER,
            REPO,
            "main",
            [
                ("benchmarks/huge.sh", big_script.as_bytes()),
                (
                    "benchmarks/small.sh",
                    b"#!/bin/bash\nvllm serve x\n".as_slice(),
                ),
                ("configs/big.yaml", big_yaml.as_bytes()),
                ("docs/notes.md", big_yaml.as_bytes()),
            ],
        )
        .unwrap();
    let inst = sandbox.install_app(OWNER);
    let limits = sweepgate::config::server::InputLimits {
        max_script_bytes: 1024 * 1024,
        max_yaml_bytes: 512 * 1024,
        max_blob_bytes: 8 * 1024 * 1024,
        ..Default::default()
    };
    let gh = common::transcript::github_for(&sandbox).with_limits(limits);
    let remote = GitHubSource::new(
        gh.installation(InstallationId(inst)).unwrap(),
        RepoName::new(OWNER, REPO),
    )
    .unwrap();
    let err = remote
        .read_file("main", "benchmarks/huge.sh")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "benchmarks/huge.sh at main is {} bytes, over the 1048576-byte cap (max-script-bytes)",
            big_script.len()
        )),
        "{err}"
    );
    let err = remote
        .read_file("main", "configs/big.yaml")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "configs/big.yaml at main is 720003 bytes, over the 524288-byte cap (max-yaml-bytes)"
        ),
        "{err}"
    );
    // The content of a refused file was never fetched.
    assert!(
        sandbox
            .requests_matching("GET", &format!("/repos/{OWNER}/{REPO}/git/blobs"))
            .is_empty()
    );
    // Under their caps, files read as before.
    assert_eq!(
        remote
            .read_file("main", "benchmarks/small.sh")
            .await
            .unwrap(),
        b"#!/bin/bash\nvllm serve x\n"
    );
    assert_eq!(
        remote.read_file("main", "docs/notes.md").await.unwrap(),
        big_yaml.as_bytes()
    );
}
