//! `GitRepo` against real temporary repositories: file reads, tree listings,
//! renames and patches, and the precise errors callers branch on.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use sweepgate::repo::{
    EntryKind, FileStatus, GitRepo, RepoError, RepoSource, read_optional, tree_paths,
};

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The benchmark script of seed 004, long enough for rename detection.
const SCRIPT: &str = "#!/usr/bin/env bash\n\
source \"$(dirname \"$0\")/../benchmark_lib.sh\"\n\
check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN RANDOM_RANGE_RATIO RESULT_FILENAME\n\
export VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0\n\
vllm serve \"$MODEL\" --tensor-parallel-size \"$TP\" --max-num-seqs 512 \\\n\
  --gpu-memory-utilization 0.95 --no-enable-flashinfer-autotune \\\n\
  --speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":1}' &\n\
wait_for_server_ready --port \"$PORT\" --server-log \"$SERVER_LOG\" --server-pid \"$SERVER_PID\"\n\
run_benchmark_serving --model \"$MODEL\" --port \"$PORT\" --backend vllm --dsv4\n";

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    base: String,
    head: String,
}

/// main: a script, a changelog and a binary file; pr: renames the script
/// (seed 004's fix), edits the changelog, deletes the binary, adds a file.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    write(
        &dir,
        "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh",
        SCRIPT,
    );
    write(
        &dir,
        "perf-changelog.yaml",
        "- config-keys:\n    - dsv4-fp8-h200-vllm\n  pr-link: https://github.com/o/r/pull/1\n",
    );
    std::fs::write(dir.join("logo.bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["checkout", "-q", "-b", "pr"]);
    git(
        &dir,
        &[
            "mv",
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh",
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh",
        ],
    );
    write(
        &dir,
        "perf-changelog.yaml",
        "- config-keys:\n    - dsv4-fp8-h200-vllm\n  pr-link: https://github.com/o/r/pull/1\n- config-keys:\n    - dsv4-fp8-h200-vllm-mtp\n  pr-link: https://github.com/o/r/pull/XXX\n",
    );
    git(&dir, &["rm", "-q", "logo.bin"]);
    write(&dir, "docs/new file.md", "ünïcode path\n");
    git(&dir, &["add", "-A"]);
    git(
        &dir,
        &["commit", "-q", "-m", "rename script, append changelog"],
    );
    let head = git(&dir, &["rev-parse", "HEAD"]);
    Fixture {
        _tmp: tmp,
        dir,
        base,
        head,
    }
}

#[tokio::test]
async fn reads_files_and_resolves_revisions() {
    let f = fixture();
    let repo = GitRepo::new(&f.dir);
    assert_eq!(repo.resolve("main").await.unwrap(), f.base);
    assert_eq!(repo.resolve("pr").await.unwrap(), f.head);
    assert_eq!(repo.resolve("pr~1").await.unwrap(), f.base);
    assert_eq!(repo.resolve(&f.head[..10]).await.unwrap(), f.head);

    let at_base = repo
        .read_file(
            "main",
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh",
        )
        .await
        .unwrap();
    assert_eq!(at_base, SCRIPT.as_bytes());
    let bin = repo.read_file(&f.base, "logo.bin").await.unwrap();
    assert_eq!(bin, vec![0u8, 1, 2, 3, 0, 255]);
    let unicode = repo.read_file("pr", "./docs/new file.md").await.unwrap();
    assert_eq!(String::from_utf8(unicode).unwrap(), "ünïcode path\n");

    // Precise errors.
    let e = repo.read_file("pr", "logo.bin").await.unwrap_err();
    assert_eq!(
        e,
        RepoError::NoSuchFile {
            rev: "pr".into(),
            path: "logo.bin".into()
        }
    );
    let e = repo
        .read_file("no-such-branch", "perf-changelog.yaml")
        .await
        .unwrap_err();
    assert_eq!(
        e,
        RepoError::NoSuchRevision {
            rev: "no-such-branch".into()
        }
    );
    let e = repo.read_file("pr", "benchmarks").await.unwrap_err();
    assert!(
        matches!(e, RepoError::NotAFile { ref kind, .. } if kind == "tree"),
        "{e:?}"
    );
    assert!(matches!(
        repo.read_file("--output=/tmp/x", "a").await.unwrap_err(),
        RepoError::InvalidArgument(_)
    ));
    assert_eq!(read_optional(&repo, "pr", "logo.bin").await.unwrap(), None);
    assert!(
        read_optional(&repo, "main", "logo.bin")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn lists_trees_with_sizes() {
    let f = fixture();
    let repo = GitRepo::new(&f.dir);
    let base = repo.list_tree("main").await.unwrap();
    let paths: Vec<&str> = base.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh",
            "logo.bin",
            "perf-changelog.yaml"
        ]
    );
    assert_eq!(base[1].size, Some(6));
    assert_eq!(base[0].size, Some(SCRIPT.len() as u64));
    assert_eq!(base[0].kind, EntryKind::File);
    assert_eq!(base[0].oid.len(), 40);
    let head = tree_paths(&repo, "pr").await.unwrap();
    assert!(head.contains("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh"));
    assert!(head.contains("docs/new file.md"));
    assert!(!head.contains("logo.bin"));
}

#[tokio::test]
async fn compares_with_renames_and_hunk_only_patches() {
    let f = fixture();
    // Shared from tokio tasks as a trait object.
    let repo: Arc<dyn RepoSource> = Arc::new(GitRepo::new(&f.dir));
    let task = {
        let repo = repo.clone();
        tokio::spawn(async move { repo.compare("main", "pr").await })
    };
    let cmp = task.await.unwrap().unwrap();
    assert_eq!(cmp.merge_base, f.base);
    assert_eq!(cmp.head, f.head);
    let by_path = |p: &str| cmp.files.iter().find(|c| c.path == p).unwrap();

    let renamed = by_path("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_mtp.sh");
    assert_eq!(renamed.status, FileStatus::Renamed);
    assert_eq!(
        renamed.previous_path.as_deref(),
        Some("benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200_vllm_mtp.sh")
    );
    assert_eq!((renamed.additions, renamed.deletions), (0, 0));
    assert_eq!(renamed.patch, None);

    let log = by_path("perf-changelog.yaml");
    assert_eq!(log.status, FileStatus::Modified);
    assert_eq!((log.additions, log.deletions), (3, 0));
    let patch = log.patch.as_deref().unwrap();
    assert!(patch.starts_with("@@ -1,3 +1,6 @@"), "{patch}");
    assert!(patch.contains("+  pr-link: https://github.com/o/r/pull/XXX\n"));
    assert!(!patch.contains("+++"));
    // unidiff accepts it once a synthetic header is prepended (deps A9).
    let mut p = unidiff::PatchSet::new();
    p.parse(format!("--- a/f\n+++ b/f\n{patch}")).unwrap();
    assert_eq!(p.added_files().len() + p.modified_files().len(), 1);

    let bin = by_path("logo.bin");
    assert_eq!(
        (bin.status, bin.binary, bin.patch.as_deref()),
        (FileStatus::Removed, true, None)
    );

    let added = by_path("docs/new file.md");
    assert_eq!(added.status, FileStatus::Added);
    assert_eq!(
        added.patch.as_deref(),
        Some("@@ -0,0 +1 @@\n+ünïcode path\n")
    );
    assert_eq!(cmp.files.len(), 4);
}

#[tokio::test]
async fn compare_uses_the_merge_base_and_reports_unrelated_histories() {
    let f = fixture();
    // main moves on after the PR branched: its change must not show up.
    git(&f.dir, &["checkout", "-q", "main"]);
    write(&f.dir, "MODELS.md", "models\n");
    git(&f.dir, &["add", "-A"]);
    git(&f.dir, &["commit", "-q", "-m", "main moves"]);
    let repo = GitRepo::new(&f.dir);
    let cmp = repo.compare("main", "pr").await.unwrap();
    assert_eq!(cmp.merge_base, f.base);
    assert!(cmp.files.iter().all(|c| c.path != "MODELS.md"));

    git(&f.dir, &["checkout", "-q", "--orphan", "lonely"]);
    git(&f.dir, &["rm", "-rq", "--cached", "."]);
    write(&f.dir, "x", "x\n");
    git(&f.dir, &["add", "x"]);
    git(&f.dir, &["commit", "-q", "-m", "orphan"]);
    let e = repo.compare("main", "lonely").await.unwrap_err();
    assert_eq!(
        e,
        RepoError::NoMergeBase {
            base: "main".into(),
            head: "lonely".into()
        }
    );
}

#[tokio::test]
async fn not_a_repository_and_missing_git_are_git_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = GitRepo::new(tmp.path());
    let e = repo.resolve("HEAD").await.unwrap_err();
    assert!(
        matches!(e, RepoError::Git { ref stderr, .. } if stderr.contains("not a git repository")),
        "{e:?}"
    );
    let repo = GitRepo::new(tmp.path()).with_git("/nonexistent/git");
    assert!(matches!(
        repo.resolve("HEAD").await.unwrap_err(),
        RepoError::Spawn(_)
    ));
}
