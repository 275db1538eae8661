//! sweepgate's GitHub client is octocrab: the sandbox's responses must
//! deserialize into octocrab's models, and its App authentication must
//! work end to end (JWT signed with a real RSA key, token exchange).
use octocrab::Octocrab;
use octocrab::models::{AppId, InstallationId};
use octocrab::params::repos::Commitish;
use sweepgate_sandbox::{Change, PullRequestSpec, RunSpec, Sandbox};

const OWNER: &str = "SemiAnalysisAI";
const REPO: &str = "InferenceX";

/// A throwaway RSA key generated for this test only; it signs nothing real.
const TEST_KEY: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEogIBAAKCAQEAscgquOKC24SLoq3kpbp/ZLiKV/b6m50rhgxfkggBtLCVPi1G\n9aDb0BaECnmoWJlopQDvIKPpEAOAZipotlIGEqEhfhBiTSp8f5m1AA0ZmNLmvCxy\nr3xI+VU+BIL/pwB78oWjiCF1M8hW/adNZry8tqTeO14DXwl5bwMfr/iBvU3fwVth\na8RSRrs7fQKSOOeEaYxLzxivhtqhCWM76Ds1MeYB4PCuGcroU25yprw/rmRtb01s\nldVsn6Yeu6RjQOMQDwY3xuydXkfA+zac58XYoLHqH3CP9ZJsy+F148h+AiBD8FnW\nUfoVXe433EqrYkaYgEHNdDIYOkixf8bZXmIOFwIDAQABAoH/YVa3Ytiid+Pv5aJQ\nY8KOUxdh/R0SbyF0MxuTODbUuEShcj8Cxc934ExzqfNHuTrwO2fHhezjhAu8Ft7M\nIQcdTBXtFe435F2Jd6kw8QDl2Eb2Y7vyZHgoJwavw3NLhqSSjgxIUsCpldtFxfFU\nRRa8PJmzE847Ck37BE0xjFJZYXaCjUxWm5bHdoFAZZLKJ9h7zMNWaRatfzJRdXc8\n6yJh1PEp7LVZiEQszbypBv0kUbD3hG67tavqMBu6wl/v/mgcfwZliw2S8i3mrKju\nsiEBVKBOv+ei6Ac8vCW2cMC1MLR9Ett7BQRAI1BIaaYwzr08r9VTEt8zCaX29HPf\nRicpAoGBAOHowvumSkTb5vrjjlGaTV4t1GtmPwlCwUCW+2fkqdANto8D0nPIFMu3\naLDyRVrYMEVMXmU/hn33u4zVmd7fvW+zwewRjsJQH27TKrOm+P08whG71iEx3i/a\nUVyaI4IyBOHAZtuQ1nDWpc9RG73+y+UJ8T4q1nI8mSlSGuHs5UXJAoGBAMl2Ufov\nimRhe5W03Yndq4zaxe60K/sJlGM1AcydheM5go7OvYlT70O/zEqBqWttfZqDnLAE\n5zWIhVsLSrDB7R7cFU88nKcBNugwJ2qVAcKA61TPlNt5vRuWdDCQ7+ZN+7QrqiEH\ndfIsJnXUDxS8MAqnzaWtc4BpHM6cUeAzCiTfAoGBAKYxS0hAZIDV2c4Wm/uSbXps\ncsnz9UnFz0/KAvfCc964R+ZcZHWC6zGXIzCRes5DHvfMH+GSY0nGdzY7abBZnw5P\nCsm1fPWcZhNszAxQOPpruUW8juHqws8naBWc26SLUaYWmlTK78chUef7flI+4RcF\nQnF+qDZwOCj62wX79gtpAoGARZodRGR8WaXcPqKYD3OIO0eyLoAM2dQ7cfL0Ri79\n/Lz3wELo9LMM7Mks2WjmkXjodiOWVLG895/NAuFp0puNQqYirpdwP7qJr7pDQ+1r\nCDnmFA0LjrAGh6t5RPYuC9FRbrPPOU4Mj7h1KSw0caN6rZO/1seQKgMmsrMLDnxT\nut0CgYEA1dV1jSkOG9pDzGavqbXxXgWB0kr2ylNgobMdEHQ0FZJSWa34ImbbNz98\ngp3Hx5bjWaNkzPwsBLxexzzMU90xrvRxYupPWkYT1sS79CSA5zpNAilt+7gg8Fal\nHGOj7iYQSAA8jMI99zZu9fCMzbds0aDnAjFpRUC2NgS9ItwGshs=\n-----END RSA PRIVATE KEY-----";

async fn installation_client() -> (Sandbox, Octocrab) {
    let (sb, base) = Sandbox::start().await.unwrap();
    sb.add_org(OWNER);
    sb.add_repo(
        OWNER,
        REPO,
        "main",
        [
            ("configs/nvidia-master.yaml", "a: 1\n"),
            ("README.md", "r\n"),
        ],
    )
    .unwrap();
    let inst = sb.install_app(OWNER);
    let key = octocrab::jsonwebtoken::EncodingKey::from_rsa_pem(TEST_KEY.as_bytes()).unwrap();
    let app = Octocrab::builder()
        .base_uri(base.as_str())
        .unwrap()
        .app(AppId(sb.app_id()), key)
        .build()
        .unwrap();
    let me = app.current().app().await.unwrap();
    assert_eq!(me.id, AppId(sb.app_id()));
    let octo = app.installation(InstallationId(inst)).unwrap();
    (sb, octo)
}

#[tokio::test]
async fn octocrab_parses_sandbox_responses() {
    let (sb, octo) = installation_client().await;
    let head = sb
        .commit(
            OWNER,
            REPO,
            "feat",
            &[Change::write("configs/nvidia-master.yaml", "a: 2\n")],
            "bump",
        )
        .unwrap();
    let pr = sb
        .open_pr(
            PullRequestSpec::new(OWNER, REPO, "feat", "alice")
                .title("Bump")
                .body("body"),
        )
        .unwrap();
    pr.post_comment("bob", "MEMBER", "hello").unwrap();
    pr.add_label("full-sweep-fail-fast", "maintainer").unwrap();

    let got = octo.pulls(OWNER, REPO).get(pr.number).await.unwrap();
    assert_eq!(got.head.sha, head);
    assert_eq!(got.title.as_deref(), Some("Bump"));
    let files = octo.pulls(OWNER, REPO).list_files(pr.number).await.unwrap();
    assert_eq!(files.items[0].filename, "configs/nvidia-master.yaml");
    assert_eq!(
        files.items[0].patch.as_deref(),
        Some("@@ -1 +1 @@\n-a: 1\n+a: 2")
    );

    let comments = octo
        .issues(OWNER, REPO)
        .list_comments(pr.number)
        .send()
        .await
        .unwrap();
    assert_eq!(comments.items[0].body.as_deref(), Some("hello"));
    let mine = octo
        .issues(OWNER, REPO)
        .create_comment(pr.number, "verdict")
        .await
        .unwrap();
    assert_eq!(mine.user.login, "sweepgate[bot]");
    octo.issues(OWNER, REPO)
        .update_comment(mine.id, "verdict v2")
        .await
        .unwrap();
    assert_eq!(
        sb.bot_comments(OWNER, REPO, pr.number)[0].body,
        "verdict v2"
    );
    let labels = octo
        .issues(OWNER, REPO)
        .add_labels(pr.number, &["all-evals".to_string()])
        .await
        .unwrap();
    assert_eq!(labels.len(), 2);

    let repo = octo.repos(OWNER, REPO).get().await.unwrap();
    assert_eq!(repo.default_branch.as_deref(), Some("main"));
    let content = octo
        .repos(OWNER, REPO)
        .get_content()
        .path("configs/nvidia-master.yaml")
        .r#ref(&head)
        .send()
        .await
        .unwrap();
    assert_eq!(
        content.items[0].decoded_content().as_deref(),
        Some("a: 2\n")
    );
    // GitHub answers `permission: "read"` (legacy values admin/write/read/none),
    // which octocrab's `get_contributor_permission` enum rejects: read this
    // endpoint as plain JSON in sweepgate's client.
    let perm: serde_json::Value = octo
        .get(
            format!("/repos/{OWNER}/{REPO}/collaborators/alice/permission"),
            None::<&()>,
        )
        .await
        .unwrap();
    assert_eq!(perm["role_name"], "read");

    octo.checks(OWNER, REPO)
        .create_check_run("sweepgate / verdict", head.clone())
        .send()
        .await
        .unwrap();
    sb.add_check_run(OWNER, REPO, &head, "canary", Some("success"))
        .unwrap();
    let runs = octo
        .checks(OWNER, REPO)
        .list_check_runs_for_git_ref(Commitish(head.clone()))
        .send()
        .await
        .unwrap();
    assert_eq!(runs.total_count, 2);

    let run_id = sb
        .add_workflow_run(RunSpec::new(OWNER, REPO, "run-sweep.yml", &head).completed("success"))
        .unwrap();
    sb.add_job(run_id, "canary", Some("success")).unwrap();
    let run = octo
        .workflows(OWNER, REPO)
        .get(run_id.into())
        .await
        .unwrap();
    assert_eq!(run.conclusion.as_deref(), Some("success"));
    let listed = octo
        .workflows(OWNER, REPO)
        .list_all_runs()
        .send()
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    let jobs = octo
        .workflows(OWNER, REPO)
        .list_jobs(run_id.into())
        .send()
        .await
        .unwrap();
    assert_eq!(jobs.items[0].name, "canary");
    sb.add_artifact(run_id, "results", [("r.json", "{}")])
        .unwrap();
    let arts = octo
        .actions()
        .list_workflow_run_artifacts(OWNER, REPO, run_id.into())
        .send()
        .await
        .unwrap();
    let arts = arts.value.unwrap();
    assert_eq!(arts.items[0].name, "results");
}
