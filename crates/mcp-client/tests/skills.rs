//! Skills (SEP-2640) end to end, our client against our server, in memory
//! and over HTTP, in both eras: skills from code and from a directory tree
//! listed, loaded lazily and verified; a skill whose digest, size or
//! frontmatter does not match is refused.

mod common;

use std::time::Duration;

use mcp_client::skills::SkillMismatch;
use mcp_client::{Client, ClientConfig, Error, RequestOptions};
use mcp_server::extension::Extension;
use mcp_server::skills::{Skill, Skills};
use mcp_server::{Server, State};
use mcp_types::skills::{
    GetSkill, GetSkillResult, ListSkills, ListSkillsResult, ReadDirectory, SkillEntry, SkillFile,
    SkillResources, SkillUriParams,
};
use mcp_types::{ErrorCode, ErrorObject, JsonObject, Resource, Revision};
use serde_json::json;

const GREETING: &str = "---\nname: greeting\ndescription: Greets people warmly\nmetadata:\n  version: 2\n---\n# Greeting\n\nSay hello, then read references/TONE.md.\n";

/// A skill directory tree in a fresh temporary folder, removed on drop.
struct Tree(std::path::PathBuf);

impl Tree {
    fn new() -> Self {
        let root = std::env::temp_dir().join(format!(
            "mcp-skills-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        let skill = root.join("pdf-processing");
        std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nUse scripts/fill.py.\n",
        )
        .expect("write");
        std::fs::write(skill.join("scripts/fill.py"), "print('filled')\n").expect("write");
        std::fs::write(skill.join("logo.bin"), [0u8, 159, 146, 150, 255]).expect("write");
        std::fs::create_dir_all(root.join("not-a-skill")).expect("mkdir");
        Self(root)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn server(tree: &Tree) -> Server {
    let greeting = Skill::new(GREETING)
        .expect("skill")
        .file("references/TONE.md", "Be warm.\n")
        .expect("file");
    let skills = Skills::from_root(&tree.0)
        .expect("tree")
        .skill(greeting)
        .into_extension()
        .expect("extension");
    Server::builder("skills-test", "1")
        .extension(skills)
        .build()
        .expect("server")
}

fn config(revision: Revision) -> ClientConfig {
    ClientConfig::new("skills-client", "1")
        .protocol_version(revision)
        .request_timeout(Duration::from_secs(10))
}

/// Connects to `server` in memory (`http` false) or over HTTP.
async fn connect(
    server: Server,
    http: bool,
    revision: Revision,
) -> (Client, Option<tokio::sync::oneshot::Sender<()>>) {
    if http {
        let (url, stop) = common::serve_http(server).await;
        let client = Client::connect_http(&url, config(revision))
            .await
            .expect("connected");
        (client, Some(stop))
    } else {
        let client = Client::connect(server.in_memory(), config(revision))
            .await
            .expect("connected");
        (client, None)
    }
}

#[tokio::test]
async fn skills_are_listed_loaded_lazily_and_verified() {
    let tree = Tree::new();
    for http in [false, true] {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            let what = format!("http={http} at {revision}");
            let (client, _stop) = connect(server(&tree), http, revision).await;
            assert!(client.server_supports_extension(mcp_types::extension::SKILLS));
            let entries = client.list_all_skills().await.expect("listed");
            let names: Vec<_> = entries.iter().filter_map(SkillEntry::name).collect();
            assert_eq!(names, ["greeting", "pdf-processing"], "{what}");
            let greeting = &entries[0];
            assert_eq!(greeting.uri, "skill://greeting/SKILL.md");
            assert_eq!(greeting.frontmatter["metadata"], json!({"version": 2}));
            let SkillResources::Files(files) = &greeting.resources else {
                panic!("{what}: a manifest");
            };
            assert_eq!(
                files[0],
                SkillFile::of("skill://greeting/SKILL.md", GREETING.as_bytes())
            );
            assert_eq!(files.len(), 2);

            let loaded = client.load_skill(greeting).await.expect("verified");
            assert!(loaded.body().starts_with("# Greeting"), "{what}");
            assert_eq!(loaded.files(), ["skill://greeting/references/TONE.md"]);
            let tone = client
                .read_skill_file(greeting, "skill://greeting/references/TONE.md")
                .await
                .expect("verified");
            assert_eq!(tone, b"Be warm.\n");

            // From the directory tree: text and binary files.
            let pdf = &entries[1];
            client.load_skill(pdf).await.expect("verified");
            let logo = client
                .read_skill_file(pdf, "skill://pdf-processing/logo.bin")
                .await
                .expect("verified blob");
            assert_eq!(logo, [0u8, 159, 146, 150, 255]);

            // skills/get, and its -32602 for an unknown skill.
            let got = client.get_skill(&pdf.uri).await.expect("got");
            assert_eq!(&got, pdf);
            let error = client
                .get_skill("skill://nope/SKILL.md")
                .await
                .expect_err("unknown");
            assert_eq!(
                error.remote().map(|e| e.code),
                Some(ErrorCode::INVALID_PARAMS)
            );

            // The directory of a skill lists its direct children.
            let dir = client
                .request::<ReadDirectory>(
                    &SkillUriParams::new("skill://pdf-processing"),
                    RequestOptions::new(),
                )
                .await
                .expect("directory");
            let children: Vec<_> = dir
                .resources
                .iter()
                .map(|r| (r.uri.as_str(), r.mime_type.as_deref()))
                .collect();
            assert_eq!(
                children,
                [
                    ("skill://pdf-processing/SKILL.md", Some("text/markdown")),
                    (
                        "skill://pdf-processing/logo.bin",
                        Some("application/octet-stream")
                    ),
                    ("skill://pdf-processing/scripts", Some("inode/directory")),
                ],
                "{what}"
            );
            let error = client
                .request::<ReadDirectory>(
                    &SkillUriParams::new("skill://pdf-processing/SKILL.md"),
                    RequestOptions::new(),
                )
                .await
                .expect_err("a file is no directory");
            assert_eq!(
                error.remote().map(|e| e.code),
                Some(ErrorCode::INVALID_PARAMS)
            );

            // SKILL.md is a listed resource named and described by its frontmatter.
            let resources = client.list_all_resources().await.expect("resources");
            let skill_md = resources
                .iter()
                .find(|r| r.uri == "skill://greeting/SKILL.md")
                .expect("listed");
            assert_eq!(skill_md.name, "greeting");
            assert_eq!(
                skill_md.description.as_deref(),
                Some("Greets people warmly")
            );
            client.close().await.expect("closed");
        }
    }
}

fn mismatch(error: Error) -> SkillMismatch {
    match error {
        Error::SkillVerification { reason, .. } => reason,
        other => panic!("not a verification error: {other}"),
    }
}

#[tokio::test]
async fn a_skill_that_does_not_match_its_entry_is_refused() {
    let tree = Tree::new();
    let (client, _stop) = connect(server(&tree), true, Revision::V2026_07_28).await;
    let entries = client.list_all_skills().await.expect("listed");
    let entry = &entries[0];
    let tamper = |change: &dyn Fn(&mut SkillEntry)| {
        let mut tampered = entry.clone();
        change(&mut tampered);
        tampered
    };
    let files = |e: &mut SkillEntry| match &mut e.resources {
        SkillResources::Files(files) => files.clone(),
        SkillResources::Dynamic(_) => Vec::new(),
    };

    let wrong_digest = tamper(&|e| {
        let mut list = files(e);
        list[0].digest = mcp_types::skills::digest(b"something else");
        e.resources = SkillResources::Files(list);
    });
    let refused = client.load_skill(&wrong_digest).await.expect_err("refused");
    assert!(matches!(mismatch(refused), SkillMismatch::Digest { .. }));

    let wrong_size = tamper(&|e| {
        let mut list = files(e);
        list[0].size += 1;
        e.resources = SkillResources::Files(list);
    });
    let refused = client.load_skill(&wrong_size).await.expect_err("refused");
    assert!(matches!(mismatch(refused), SkillMismatch::Size { .. }));

    let wrong_frontmatter = tamper(&|e| {
        e.frontmatter
            .insert("description".into(), "Something else".into());
    });
    let refused = client
        .load_skill(&wrong_frontmatter)
        .await
        .expect_err("refused");
    assert_eq!(
        mismatch(refused),
        SkillMismatch::FrontmatterField {
            field: "description".into()
        }
    );

    let unlisted = client
        .read_skill_file(entry, "skill://greeting/secret.md")
        .await
        .expect_err("refused");
    assert_eq!(mismatch(unlisted), SkillMismatch::NotListed);
    client.close().await.expect("closed");
}

/// Lists the one skill the server holds.
async fn list_lying(State(entry): State<SkillEntry>) -> Result<ListSkillsResult, ErrorObject> {
    Ok(ListSkillsResult::new(vec![entry.as_ref().clone()]))
}

async fn get_nothing() -> Result<GetSkillResult, ErrorObject> {
    Err(ErrorObject::invalid_params("not served"))
}

/// A server whose listing promises one `SKILL.md` and whose read serves another.
fn lying_server() -> Server {
    let promised = "---\nname: pdf\ndescription: Fills PDFs\n---\nSkill body.\n";
    let served = "---\nname: pdf\ndescription: Fills PDFs\n---\nEvil body!!\n";
    let mut frontmatter = JsonObject::new();
    frontmatter.insert("name".into(), "pdf".into());
    frontmatter.insert("description".into(), "Fills PDFs".into());
    let entry = SkillEntry::new(
        "skill://pdf/SKILL.md",
        frontmatter,
        vec![SkillFile::of("skill://pdf/SKILL.md", promised.as_bytes())],
    );
    let lying = Extension::new(mcp_types::extension::SKILLS)
        .expect("identifier")
        .client_must_declare(false)
        .resource(
            Resource::new("skill://pdf/SKILL.md", "pdf"),
            move || async move { served },
        )
        .request::<ListSkills, _, _>(list_lying)
        .request::<GetSkill, _, _>(get_nothing);
    Server::builder("lying", "1")
        .with_state(entry)
        .extension(lying)
        .build()
        .expect("server")
}

#[tokio::test]
async fn a_skill_served_with_a_digest_that_does_not_match_is_refused() {
    for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
        let (client, _stop) = connect(lying_server(), false, revision).await;
        let entries = client.list_all_skills().await.expect("listed");
        let refused = client.load_skill(&entries[0]).await.expect_err("refused");
        assert!(
            matches!(mismatch(refused), SkillMismatch::Digest { .. }),
            "{revision}"
        );
        client.close().await.expect("closed");
    }
}

#[test]
fn skills_refuse_bad_registrations() {
    assert!(
        common::refusal(Skill::new("no frontmatter")).contains("`---`"),
        "no frontmatter"
    );
    assert!(
        common::refusal(Skill::new("---\nname: Bad_Name\ndescription: d\n---\n"))
            .contains("the name must be"),
        "a name breaking the naming rule"
    );
    let skill = Skill::new("---\nname: ok\ndescription: d\n---\n").expect("skill");
    for outside in ["../escape.md", "/abs.md"] {
        assert!(
            common::refusal(skill.clone().file(outside, "x")).contains("relative"),
            "{outside}"
        );
    }
    assert!(
        common::refusal(skill.clone().file("SKILL.md", "x")).contains("already has this file"),
        "a second SKILL.md"
    );
    let twice = Skills::new()
        .skill(skill.clone())
        .skill(skill)
        .into_extension();
    assert!(
        common::refusal(twice).contains("another skill has this name"),
        "two skills of one name"
    );
}
