//! The local git reader (`repo::GitRepo`) on the cases that used to be
//! guessed from git's English messages: a path added at the head read at
//! the base inside a work tree ("exists on disk, but not in"), a
//! directory, a submodule, an unknown revision, and the read cap.
use crate::repo_git::git;

use sweepgate::repo::{GitRepo, RepoError, RepoSource, read_optional};

/// A work tree: `base` has `a.txt`; `head` adds `new/b.sh`, a submodule
/// `vendor/lib` and a 3,000-byte file.
fn repo() -> (tempfile::TempDir, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("sub");
    let dir = tmp.path().join("repo");
    for d in [&sub, &dir] {
        std::fs::create_dir_all(d).unwrap();
        git(d, &["init", "-q", "-b", "main"]);
    }
    std::fs::write(sub.join("x"), "x\n").unwrap();
    git(&sub, &["add", "-A"]);
    git(&sub, &["commit", "-q", "-m", "sub"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "base"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    std::fs::create_dir_all(dir.join("new")).unwrap();
    std::fs::write(dir.join("new/b.sh"), "echo b\n").unwrap();
    std::fs::write(dir.join("big.yaml"), "x".repeat(3000)).unwrap();
    git(
        &dir,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &sub.to_string_lossy(),
            "vendor/lib",
        ],
    );
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "head (#42)"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    (tmp, base, head)
}

#[tokio::test]
async fn a_path_added_at_the_head_is_missing_at_the_base_in_a_work_tree() {
    let (tmp, base, head) = repo();
    let r = GitRepo::new(tmp.path().join("repo"));
    // The work tree has the file; the base does not: a typed "no such file".
    assert_eq!(
        r.read_file(&base, "new/b.sh").await.unwrap_err(),
        RepoError::NoSuchFile {
            rev: base.clone(),
            path: "new/b.sh".into()
        }
    );
    assert_eq!(read_optional(&r, &base, "new/b.sh").await.unwrap(), None);
    assert_eq!(r.read_file(&head, "new/b.sh").await.unwrap(), b"echo b\n");
}

#[tokio::test]
async fn directories_submodules_and_bad_revisions_are_typed() {
    let (tmp, _base, head) = repo();
    let r = GitRepo::new(tmp.path().join("repo"));
    let kind = |e: RepoError| match e {
        RepoError::NotAFile { kind, .. } => kind,
        other => panic!("{other:?}"),
    };
    assert_eq!(kind(r.read_file(&head, "new").await.unwrap_err()), "tree");
    assert_eq!(
        kind(r.read_file(&head, "vendor/lib").await.unwrap_err()),
        "submodule"
    );
    assert_eq!(
        r.read_file("no-such-branch", "a.txt").await.unwrap_err(),
        RepoError::NoSuchRevision {
            rev: "no-such-branch".into()
        }
    );
    // A name that exists but is no commit (a blob id) is no revision either.
    let blob = git(&tmp.path().join("repo"), &["rev-parse", "HEAD:a.txt"]);
    assert!(matches!(
        r.resolve(&blob).await.unwrap_err(),
        RepoError::NoSuchRevision { .. }
    ));
    let info = r.commit_info(&head).await.unwrap();
    assert_eq!(info.subject, "head (#42)");
    assert_eq!(sweepgate::repo::pr_from_subject(&info.subject), Some(42));
}

#[tokio::test]
async fn every_read_is_capped_and_the_cap_is_named() {
    let (tmp, _base, head) = repo();
    let r = GitRepo::new(tmp.path().join("repo")).with_max_blob(1000);
    let e = r.read_file(&head, "big.yaml").await.unwrap_err();
    assert_eq!(
        e,
        RepoError::TooLarge {
            rev: head.clone(),
            path: "big.yaml".into(),
            size: 3000,
            cap: 1000
        }
    );
    assert!(
        e.to_string().contains("over the read cap of 1000 bytes"),
        "{e}"
    );
    // The reader stays in step after a refusal.
    assert_eq!(r.read_file(&head, "a.txt").await.unwrap(), b"a\n");
}
