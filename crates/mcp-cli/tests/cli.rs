//! The `mcp` binary, run as a child process against the project's demo
//! server (`mcp_examples::demo_builder`, with completions and list changes
//! added) over stdio and streamable HTTP in both eras, and against a
//! protected server after a scripted browser sign-in.
//!
//! This test binary has its own `main` (`harness = false`): run with
//! `--mcp-test-role=demo-stdio`, `watch-stdio` or `hostile-stdio` it *is* the stdio server
//! the CLI spawns; otherwise it runs every check below in order and fails
//! with the names of those that failed. `cargo test -p mcp-cli --test cli
//! -- <filter>` runs the checks whose names contain `<filter>`.

mod support;

use std::process::ExitCode;

use serde_json::Value;
use support::{Check, Era, Mcp, Served, checks};

const CHECKS: &[(&str, Check)] = checks![
    stdio_stateless_every_subcommand,
    stdio_handshake_every_subcommand,
    http_stateless_every_subcommand,
    http_handshake_every_subcommand,
    the_default_era_is_the_newest_both_speak,
    content_that_is_not_text_is_described,
    exit_codes_for_usage_and_connection_failures,
    elicitation_is_declined_without_a_terminal,
    sampling_is_declined_unless_a_reply_is_given,
    progress_and_log_messages_go_to_stderr,
    watch_prints_list_changes_in_the_stateless_era,
    watch_prints_resource_updates_in_the_handshake_era,
    watch_prints_list_changes_in_a_handshake_http_session,
    protected_server_after_a_browser_sign_in,
    gateway_in_front_of_a_protected_server_signs_in_once,
    gateway_serves_a_remote_server_over_stdio,
    gateway_serves_http_in_both_eras_until_sigterm,
    tool_results_and_listings_escape_server_text,
    server_errors_escape_their_message_and_data,
    log_and_progress_messages_escape_server_text,
    elicitation_messages_escape_server_text,
    json_output_keeps_server_text_exact_and_escaped,
];

fn main() -> ExitCode {
    support::main(CHECKS)
}

// ---------------------------------------------------------------------------
// Every subcommand, in each transport and era.

async fn every_subcommand(mcp: Mcp, era: Era) {
    // info: the negotiated revision says the era.
    let info = mcp.json(&["info"]).await;
    let revision = info["protocolVersion"].as_str().expect("a revision");
    match era {
        Era::Stateless => assert_eq!(revision, "2026-07-28", "{info}"),
        Era::Handshake => assert_eq!(revision, "2025-11-25", "{info}"),
    }
    assert_eq!(info["era"], era.name());
    assert_eq!(info["serverInfo"]["name"], "mcp-rust-demo");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");
    assert!(
        info["instructions"]
            .as_str()
            .is_some_and(|i| i.starts_with("A demo server")),
        "{info}"
    );
    let human = mcp.ok(&["info"]).await;
    assert!(
        human.contains("Protocol") && human.contains(revision),
        "{human}"
    );
    let version = info["serverInfo"]["version"].as_str().expect("a version");
    assert!(
        human.contains(&format!("mcp-rust-demo {version}")),
        "the text names the server: {human}"
    );
    assert!(
        human.contains("Capabilities") && human.contains("tools"),
        "{human}"
    );
    assert!(human.contains("A demo server"), "{human}");

    // tools list
    let tools = mcp.json(&["tools", "list"]).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "add", "echo", "sample", "ask_name", "progress", "log", "fail",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let table = mcp.ok(&["tools", "list"]).await;
    let header = table.lines().next().expect("a header");
    assert!(
        header.starts_with("NAME") && header.contains("DESCRIPTION"),
        "{table}"
    );
    // Aligned: every description starts in the same column.
    let column = header.find("DESCRIPTION").expect("column");
    let add = table
        .lines()
        .find(|l| l.starts_with("add "))
        .expect("add row");
    assert_eq!(add.find("Adds two integers"), Some(column), "{table}");

    // tools call with typed key=value pairs and with --args.
    let sum = mcp.json(&["tools", "call", "add", "a=2", "b=3"]).await;
    assert_eq!(sum["structuredContent"]["sum"], 5, "{sum}");
    let sum = mcp
        .json(&["tools", "call", "add", "--args", r#"{"a": 40, "b": 2}"#])
        .await;
    assert_eq!(sum["structuredContent"]["sum"], 42, "{sum}");
    let echoed = mcp.ok(&["tools", "call", "echo", "text=hello there"]).await;
    assert_eq!(echoed.trim(), "hello there");

    // A tool's own error: exit 1, the result still printed.
    let failed = mcp.run(&["--json", "tools", "call", "fail"]).await;
    assert_eq!(failed.code, 1, "{failed:?}");
    let result: Value = serde_json::from_str(&failed.stdout).expect("JSON result");
    assert_eq!(result["isError"], true);
    // A protocol error (unknown tool): exit 4.
    let unknown = mcp.run(&["tools", "call", "no_such_tool"]).await;
    assert_eq!(unknown.code, 4, "{unknown:?}");
    assert!(unknown.stderr.contains("no_such_tool"), "{unknown:?}");
    // A value the schema types as an integer: exit 2 before any call.
    let mistyped = mcp.run(&["tools", "call", "add", "a=two", "b=3"]).await;
    assert_eq!(mistyped.code, 2, "{mistyped:?}");
    assert!(
        mistyped.stderr.contains("must be an integer"),
        "{mistyped:?}"
    );

    // resources
    let resources = mcp.json(&["resources", "list"]).await;
    assert_eq!(resources["resources"][0]["uri"], "file:///readme");
    let templates = mcp.json(&["resources", "templates"]).await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "users://{id}/profile"
    );
    let read = mcp.json(&["resources", "read", "file:///readme"]).await;
    assert_eq!(read["contents"][0]["text"], "Read me.");
    let profile = mcp.ok(&["resources", "read", "users://ada/profile"]).await;
    assert_eq!(profile.trim(), "profile of ada");

    // prompts
    let prompts = mcp.json(&["prompts", "list"]).await;
    assert_eq!(prompts["prompts"][0]["name"], "review");
    let prompt = mcp
        .json(&["prompts", "get", "review", "code=x = 1", "language=python"])
        .await;
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Review this python: x = 1"
    );
    let human = mcp.ok(&["prompts", "get", "review", "code=y"]).await;
    assert_eq!(human.trim(), "user: Review this code: y");

    // complete
    let completed = mcp
        .json(&["complete", "--prompt", "review", "language", "ru"])
        .await;
    assert_eq!(
        completed["completion"]["values"],
        serde_json::json!(["ruby", "rust"])
    );
    let completed = mcp
        .ok(&["complete", "--template", "users://{id}/profile", "id", "a"])
        .await;
    assert_eq!(completed.lines().collect::<Vec<_>>(), ["ada", "alan"]);

    // ping
    let pong = mcp.json(&["ping"]).await;
    assert_eq!(pong["ok"], true);
}

async fn stdio_stateless_every_subcommand() {
    every_subcommand(Mcp::stdio(Era::Stateless), Era::Stateless).await;
}

async fn stdio_handshake_every_subcommand() {
    every_subcommand(Mcp::stdio(Era::Handshake), Era::Handshake).await;
}

async fn http_stateless_every_subcommand() {
    let served = Served::http().await;
    every_subcommand(served.mcp(Era::Stateless), Era::Stateless).await;
    served.stop().await;
}

async fn http_handshake_every_subcommand() {
    let served = Served::http().await;
    every_subcommand(served.mcp(Era::Handshake), Era::Handshake).await;
    served.stop().await;
}

async fn the_default_era_is_the_newest_both_speak() {
    let info = Mcp::stdio_auto("demo-stdio").json(&["info"]).await;
    assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
    assert_eq!(info["era"], "stateless");
}

async fn content_that_is_not_text_is_described() {
    for era in [Era::Stateless, Era::Handshake] {
        let shown = Mcp::stdio(era).ok(&["tools", "call", "picture"]).await;
        assert_eq!(
            shown.lines().collect::<Vec<_>>(),
            ["[image: image/png, 70 bytes]", "a note"],
            "{era:?}"
        );
        let raw = Mcp::stdio(era).json(&["tools", "call", "picture"]).await;
        assert_eq!(raw["content"][0]["type"], "image");
        assert_eq!(raw["content"][1]["resource"]["uri"], "file:///note");
    }
}

// ---------------------------------------------------------------------------
// Exit codes and the client's side of the conversation.

async fn exit_codes_for_usage_and_connection_failures() {
    let bare = Mcp::bare();
    // No server named: usage.
    let none = bare.run(&["tools", "list"]).await;
    assert_eq!(none.code, 2, "{none:?}");
    assert!(none.stderr.contains("--stdio"), "{none:?}");
    // An unknown flag (clap): usage.
    let flag = bare.run(&["--no-such-flag", "ping"]).await;
    assert_eq!(flag.code, 2, "{flag:?}");
    // --help is not a mistake.
    let help = bare.run(&["--help"]).await;
    assert_eq!(help.code, 0, "{help:?}");
    assert!(help.stdout.contains("Exit codes"), "{help:?}");
    assert!(
        help.stdout.contains("escaped") && help.stdout.contains("--json"),
        "the help says how server text is printed: {help:?}"
    );
    // A --args that is not an object: usage.
    let args = Mcp::stdio(Era::Stateless)
        .run(&["tools", "call", "add", "--args", "[1]"])
        .await;
    assert_eq!(args.code, 2, "{args:?}");
    // A program that does not exist: connection.
    let missing = bare
        .run(&["--stdio", "/nonexistent/mcp-server --flag", "ping"])
        .await;
    assert_eq!(missing.code, 3, "{missing:?}");
    // Nothing listening: connection.
    let port = support::closed_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let refused = bare.run(&["--url", &url, "ping"]).await;
    assert_eq!(refused.code, 3, "{refused:?}");
    // A method the server does not offer: protocol.
    let stdio = Mcp::stdio(Era::Handshake);
    let unsupported = stdio.run(&["complete", "--prompt", "nope", "x", "y"]).await;
    assert_eq!(unsupported.code, 4, "{unsupported:?}");
}

async fn elicitation_is_declined_without_a_terminal() {
    for era in [Era::Stateless, Era::Handshake] {
        // The child's stdin is not a terminal (a null device).
        let asked = Mcp::stdio(era).run(&["tools", "call", "ask_name"]).await;
        assert_eq!(asked.code, 0, "{asked:?}");
        assert_eq!(asked.stdout.trim(), "no name: decline", "{asked:?}");
        assert!(
            asked.stderr.contains("declined")
                && asked.stderr.contains("not a terminal")
                && asked.stderr.contains("What is your name?"),
            "{asked:?}"
        );
    }
}

async fn sampling_is_declined_unless_a_reply_is_given() {
    for era in [Era::Stateless, Era::Handshake] {
        let mcp = Mcp::stdio(era);
        let declined = mcp.run(&["tools", "call", "sample", "prompt=hi"]).await;
        assert!(
            declined.stderr.contains("--sampling-reply"),
            "{era:?}: {declined:?}"
        );
        assert_ne!(declined.code, 0, "{era:?}: {declined:?}");
        let answered = mcp
            .ok(&[
                "--sampling-reply",
                "a fine answer",
                "tools",
                "call",
                "sample",
                "prompt=hi",
            ])
            .await;
        assert_eq!(answered.trim(), "a fine answer");
    }
}

async fn progress_and_log_messages_go_to_stderr() {
    let served = Served::http().await;
    for era in [Era::Stateless, Era::Handshake] {
        for mcp in [Mcp::stdio(era), served.mcp(era)] {
            let progress = mcp.run(&["tools", "call", "progress", "steps=3"]).await;
            assert_eq!(progress.code, 0, "{progress:?}");
            assert_eq!(progress.stdout.trim(), "done");
            for step in ["progress: 1/3", "progress: 2/3", "progress: 3/3"] {
                assert!(progress.stderr.contains(step), "{era:?}: {progress:?}");
            }
            let logged = mcp
                .run(&["--log-level", "info", "tools", "call", "log"])
                .await;
            assert_eq!(logged.stdout.trim(), "logged", "{logged:?}");
            assert!(
                logged.stderr.contains("[info] info message")
                    && logged.stderr.contains("[error] error message"),
                "{era:?}: {logged:?}"
            );
            let quiet = mcp
                .run(&["--log-level", "error", "tools", "call", "log"])
                .await;
            assert!(
                !quiet.stderr.contains("info message") && quiet.stderr.contains("error message"),
                "{era:?}: {quiet:?}"
            );
        }
    }
    served.stop().await;
}

// ---------------------------------------------------------------------------
// watch

async fn watch_prints_list_changes_in_the_stateless_era() {
    let served = Served::http().await;
    let mcp = served.mcp(Era::Stateless);
    let mut watch = mcp.spawn(&["--json", "watch", "--count", "2"]);
    watch.wait_for_stderr("watching for notifications").await;
    served.changes.tools_changed();
    served.changes.prompts_changed();
    let done = watch.finish().await;
    assert_eq!(done.code, 0, "{done:?}");
    let methods: Vec<String> = done
        .stdout
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("one JSON object per line");
            value["method"].as_str().expect("a method").to_owned()
        })
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed"
        ]
    );
    served.stop().await;
}

async fn watch_prints_resource_updates_in_the_handshake_era() {
    // The watch-stdio server announces an update of every resource the
    // client subscribes to, then a tool list change.
    let mcp = Mcp::stdio_role("watch-stdio", Era::Handshake);
    let done = mcp
        .run(&["watch", "--resource", "file:///readme", "--count", "2"])
        .await;
    assert_eq!(done.code, 0, "{done:?}");
    let lines: Vec<&str> = done.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{done:?}");
    assert!(
        lines[0].starts_with("notifications/resources/updated")
            && lines[0].contains("file:///readme"),
        "{done:?}"
    );
    assert_eq!(lines[1], "notifications/tools/list_changed", "{done:?}");
}

async fn watch_prints_list_changes_in_a_handshake_http_session() {
    // The server's `ListChanges` reaches handshake-era sessions too; the
    // subscription is sent after the session's GET stream is open, so once
    // the watch says it is watching, what the server announces has a stream.
    let served = Served::http().await;
    let mcp = served.mcp(Era::Handshake);
    let mut watch = mcp.spawn(&[
        "--json",
        "watch",
        "--resource",
        "file:///readme",
        "--count",
        "2",
    ]);
    watch.wait_for_stderr("watching for notifications").await;
    served.changes.tools_changed();
    served.changes.resource_updated("file:///logo");
    served.changes.resource_updated("file:///readme");
    let done = watch.finish().await;
    assert_eq!(done.code, 0, "{done:?}");
    let lines: Vec<Value> = done
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    let methods: Vec<&str> = lines
        .iter()
        .map(|l| l["method"].as_str().expect("a method"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        ],
        "{done:?}"
    );
    assert_eq!(
        lines[1]["params"]["uri"], "file:///readme",
        "only the subscribed resource: {done:?}"
    );
    served.stop().await;
}

// ---------------------------------------------------------------------------
// OAuth

async fn protected_server_after_a_browser_sign_in() {
    let server = support::auth::start().await;
    let config = support::TempDir::new("mcp-cli-auth");
    for era in [Era::Stateless, Era::Handshake] {
        let mcp = Mcp::url(&server.url(), era).with_config_dir(config.path());
        // First run: no token kept; the CLI prints the sign-in URL and waits.
        let before = server.authorizations();
        let first = sign_in(mcp.spawn(&["--no-browser", "tools", "call", "whoami"])).await;
        assert_eq!(first.code, 0, "{era:?}: {first:?}");
        assert_eq!(first.stdout.trim(), "hello", "{first:?}");
        assert_eq!(
            server.authorizations(),
            before + 1,
            "the user signed in once"
        );

        // The token is kept for the next run: mode 0600, never printed.
        let file = config.path().join("logins.json");
        let token = kept_token(&file, &server.url());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&file)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "logins.json is private");
        }
        assert!(
            !first.stdout.contains(&token) && !first.stderr.contains(&token),
            "the token is never printed"
        );

        // Second run: the kept token is used, nobody signs in.
        let signed_in = server.authorizations();
        let second = mcp.run(&["--no-browser", "tools", "call", "whoami"]).await;
        assert_eq!(second.code, 0, "{second:?}");
        assert_eq!(second.stdout.trim(), "hello");
        assert_eq!(server.authorizations(), signed_in, "no new sign-in");
        assert!(!second.stderr.contains("http://"), "{second:?}");

        // A kept token the server no longer takes is replaced by signing in.
        server.revoke_all();
        let third = sign_in(mcp.spawn(&["--no-browser", "ping"])).await;
        assert_eq!(third.code, 0, "{third:?}");
        assert_eq!(server.authorizations(), signed_in + 1, "signed in again");
        let renewed = kept_token(&file, &server.url());
        assert_ne!(renewed, token, "the refused token was replaced");
        // Ready for the next era's first run: forget the sign-in.
        std::fs::remove_file(&file).expect("removed");
    }
    server.stop();
}

/// `mcp gateway --url` in front of a protected server: signs in through
/// the loopback redirect once, then serves its tools to clients of both
/// eras over HTTP, until SIGTERM.
async fn gateway_in_front_of_a_protected_server_signs_in_once() {
    let server = support::auth::start().await;
    let config = support::TempDir::new("mcp-cli-gateway-auth");
    let mcp = Mcp::url(&server.url(), Era::Handshake).with_config_dir(config.path());
    let before = server.authorizations();
    let mut run = mcp.spawn(&["--no-browser", "gateway", "--listen", "127.0.0.1:0"]);
    let line = run.wait_for_stderr("open this URL").await;
    let line = if line.contains("http://") {
        line
    } else {
        run.wait_for_stderr("http://").await
    };
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("a URL");
    support::auth::browse(url).await;
    let serving = run.wait_for_stderr("mcp gateway: serving ").await;
    let endpoint = serving
        .trim()
        .trim_start_matches("mcp gateway: serving ")
        .to_owned();
    for era in [
        mcp_client::Negotiation::Newest,
        mcp_client::Negotiation::HandshakeOnly,
    ] {
        let client = mcp_client::Client::connect_http(&endpoint, gateway_client(era))
            .await
            .expect("the gateway serves");
        let hello = client
            .call_tool("whoami", ())
            .await
            .expect("whoami through the gateway");
        assert_eq!(hello.content[0].as_text(), Some("hello"));
        client.close().await.expect("closed");
    }
    assert_eq!(server.authorizations(), before + 1, "signed in once");
    run.terminate();
    let ran = run.finish().await;
    assert_eq!(ran.code, 0, "{ran:?}");
    let token = kept_token(&config.path().join("logins.json"), &server.url());
    assert!(!ran.stderr.contains(&token), "the token is never printed");
    server.stop();
}

/// The config of a client of `mcp gateway`.
fn gateway_client(era: mcp_client::Negotiation) -> mcp_client::ClientConfig {
    mcp_client::ClientConfig::new("gateway-cli-test", "1")
        .negotiation(era)
        .request_timeout(std::time::Duration::from_secs(30))
}

/// What `echo` answers through the gateway.
async fn echo_through(client: &mcp_client::Client) -> String {
    let result = client
        .call_tool("echo", serde_json::json!({"text": "through the gateway"}))
        .await
        .expect("echo");
    result.content[0].as_text().unwrap_or_default().to_owned()
}

/// `mcp gateway --url URL --stdio-out`: the remote server as a stdio
/// server for a host (the `mcp-remote` use), its names kept; closing
/// stdin stops it cleanly.
async fn gateway_serves_a_remote_server_over_stdio() {
    let served = Served::http().await;
    for era in [
        mcp_client::Negotiation::Newest,
        mcp_client::Negotiation::HandshakeOnly,
    ] {
        let command = mcp_client::ServerCommand::new(support::MCP).args([
            "--url",
            served.url(),
            "gateway",
            "--stdio-out",
        ]);
        let client = mcp_client::Client::connect_stdio(command, gateway_client(era))
            .await
            .expect("the gateway serves over stdio");
        let tools = client.list_all_tools().await.expect("tools");
        assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
        assert_eq!(echo_through(&client).await, "through the gateway");
        client.close().await.expect("the gateway exited");
    }
    served.stop().await;
}

/// `mcp gateway --url URL --listen ADDR`: one endpoint for clients of
/// both eras, until SIGTERM stops it with exit code 0.
async fn gateway_serves_http_in_both_eras_until_sigterm() {
    let served = Served::http().await;
    let mut run = served
        .mcp(Era::Handshake)
        .spawn(&["gateway", "--listen", "127.0.0.1:0"]);
    let serving = run.wait_for_stderr("mcp gateway: serving ").await;
    let endpoint = serving.trim().trim_start_matches("mcp gateway: serving ");
    for era in [
        mcp_client::Negotiation::Newest,
        mcp_client::Negotiation::HandshakeOnly,
    ] {
        let client = mcp_client::Client::connect_http(endpoint, gateway_client(era))
            .await
            .expect("the gateway serves over HTTP");
        assert_eq!(echo_through(&client).await, "through the gateway");
        client.close().await.expect("closed");
    }
    run.terminate();
    let ran = run.finish().await;
    assert_eq!(ran.code, 0, "{ran:?}");
    served.stop().await;
}

/// The access token `logins.json` keeps for the server at `url`.
fn kept_token(file: &std::path::Path, url: &str) -> String {
    let kept: Value =
        serde_json::from_slice(&std::fs::read(file).expect("logins.json")).expect("JSON");
    kept[url]["access_token"]
        .as_str()
        .expect("a token kept for the server")
        .to_owned()
}

/// Plays the user of a CLI run waiting for a sign-in: takes the URL it
/// prints, and follows it in the "browser" (the authorization server's
/// redirect ends at the CLI's loopback listener). Returns the finished run.
async fn sign_in(mut run: support::Running) -> support::Ran {
    let line = run.wait_for_stderr("http://").await;
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("a URL");
    support::auth::browse(url).await;
    run.finish().await
}

// ---------------------------------------------------------------------------
// Text the server wrote, printed safely

/// Fails unless `ran` printed nothing a terminal would obey (controls but
/// newline and tab, bidi controls) on stdout and stderr.
fn assert_printable(what: &str, ran: &support::Ran) {
    for (stream, text) in [("stdout", &ran.stdout), ("stderr", &ran.stderr)] {
        let raw = support::hostile::raw_controls(text);
        assert!(raw.is_empty(), "{what}: raw {raw:?} on {stream}: {ran:?}");
    }
}

/// Fails unless `text` shows every escaped piece of the hostile text.
fn assert_escaped(what: &str, text: &str) {
    for piece in support::hostile::ESCAPED {
        assert!(
            text.contains(piece),
            "{what}: {piece} missing from {text:?}"
        );
    }
}

fn hostile() -> Mcp {
    Mcp::stdio_role("hostile-stdio", Era::Handshake)
}

/// Runs `args` against the hostile server; fails unless the run succeeded
/// and printed nothing raw.
async fn printed(args: &[&str]) -> support::Ran {
    let ran = hostile().run(args).await;
    assert_eq!(ran.code, 0, "{args:?}: {ran:?}");
    assert_printable(&format!("{args:?}"), &ran);
    ran
}

/// The first line of `text` that starts with `prefix`.
fn line_of<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?}: {text:?}"))
}

async fn tool_results_and_listings_escape_server_text() {
    // A tool result: escaped, its newline and tab kept.
    let result = printed(&["tools", "call", "result"]).await;
    assert_escaped("tool result", &result.stdout);
    assert!(
        result.stdout.contains("\nsecond line\tafter a tab"),
        "{result:?}"
    );

    // Listings (a header and a line per row) and `info` (a line per
    // field): every name and description on its line.
    for (args, lines) in [
        (&["tools", "list"][..], 3),
        (&["resources", "list"][..], 2),
        (&["prompts", "list"][..], 2),
        (&["info"][..], 4),
    ] {
        let listed = printed(args).await;
        assert_escaped(&format!("{args:?}"), &listed.stdout);
        assert_eq!(listed.stdout.lines().count(), lines, "{args:?}: {listed:?}");
    }
}

async fn server_errors_escape_their_message_and_data() {
    // The server's JSON-RPC error: its message and its data.
    let error = hostile().run(&["tools", "call", "error"]).await;
    assert_eq!(error.code, 4, "{error:?}");
    assert_printable("error", &error);
    let (message, data) = error
        .stderr
        .split_once("data:")
        .unwrap_or_else(|| panic!("the error's data is shown: {error:?}"));
    assert_escaped("error message", message);
    // The data is JSON: its C0 controls in JSON's escapes.
    assert!(data.contains(r"\u001b]0;pwned title\u0007"), "{error:?}");
    assert!(data.contains(r"\u009b31mred\u202efdp.exe"), "{error:?}");
}

async fn log_and_progress_messages_escape_server_text() {
    // Log messages: a string with its logger, and structured data.
    let logged = printed(&["--log-level", "info", "tools", "call", "log"]).await;
    let line = line_of(&logged.stderr, "[error] hostile");
    let (logger, data) = line.split_once(": hostile").expect("logger: data");
    assert_escaped("logger", logger);
    assert_escaped("log data", data);
    let structured = line_of(&logged.stderr, "[error] {");
    assert!(
        structured.contains(r"\u009b31mred\u202efdp.exe"),
        "{logged:?}"
    );

    // A progress message (stderr is not a terminal: a line per report).
    let progress = printed(&["tools", "call", "progress"]).await;
    assert_escaped(
        "progress message",
        line_of(&progress.stderr, "progress: 1/2"),
    );
}

async fn elicitation_messages_escape_server_text() {
    // An elicitation's message, in the notice that it was declined (stdin
    // is not a terminal; the prompts of a form on a terminal are checked
    // in `ask.rs`).
    let asked = printed(&["tools", "call", "ask"]).await;
    assert_eq!(asked.stdout.trim(), "asked: decline", "{asked:?}");
    assert_escaped("elicitation message", &asked.stderr);
}

async fn json_output_keeps_server_text_exact_and_escaped() {
    let expected = format!("{}\nsecond line\tafter a tab", support::hostile::HOSTILE);
    // Exact JSON, with no control a terminal would obey: serde_json escapes
    // C0, the CLI escapes DEL, C1 and bidi controls the same way.
    let ran = printed(&["--json", "tools", "call", "result"]).await;
    let result: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(
        result["content"][0]["text"],
        expected.as_str(),
        "round trip"
    );
    assert!(
        ran.stdout.contains(r"\u001b]0;pwned title\u0007"),
        "{ran:?}"
    );
    assert!(
        ran.stdout.contains(r"\u009b31mred\u202efdp.exe\u007f"),
        "{ran:?}"
    );

    let listed = printed(&["--json", "tools", "list"]).await;
    let tools: Value = serde_json::from_str(&listed.stdout).expect("JSON");
    assert_eq!(tools["tools"][0]["name"], support::hostile::HOSTILE);
    assert_eq!(tools["tools"][0]["description"], support::hostile::HOSTILE);
}
