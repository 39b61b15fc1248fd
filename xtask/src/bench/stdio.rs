//! stdio rows: newline-delimited JSON-RPC over the child's pipes, with 1 or
//! 64 calls in flight. The writer and the reader run concurrently in one
//! task, so neither pipe can fill up and stall the other.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Notify, Semaphore};

use super::child::{self, Server};
use super::report::Row;
use super::{Budget, CallTemplate, Case, Kind, PEER_TIMEOUT, Programs, Sample, check_echo};

/// What the reader needs of an answer: its id, and whether it failed.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

struct Pipes {
    writer: BufWriter<ChildStdin>,
    reader: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Pipes {
    /// Sends one message and, when `answered`, reads the next line.
    async fn exchange(&mut self, message: &[u8], answered: bool) -> Result<Vec<u8>, String> {
        self.writer
            .write_all(message)
            .await
            .map_err(|e| format!("writing to the server: {e}"))?;
        self.writer
            .write_all(b"\n")
            .await
            .map_err(|e| format!("writing to the server: {e}"))?;
        self.writer
            .flush()
            .await
            .map_err(|e| format!("writing to the server: {e}"))?;
        if !answered {
            return Ok(Vec::new());
        }
        self.line.clear();
        let read =
            tokio::time::timeout(PEER_TIMEOUT, self.reader.read_until(b'\n', &mut self.line))
                .await
                .map_err(|_| "no answer from the server in 30 s".to_owned())?
                .map_err(|e| format!("reading from the server: {e}"))?;
        if read == 0 {
            return Err("the server closed its stdout".into());
        }
        Ok(std::mem::take(&mut self.line))
    }
}

pub(super) async fn measure(
    programs: &Programs,
    case: Case,
    budget: Budget,
) -> Result<Row, String> {
    let (program, args) = programs.server(case.kind)?;
    let mut server = Server::spawn(&program, args)?;
    let stdin = server.child.stdin.take().ok_or("stdin is not piped")?;
    let stdout = server.child.stdout.take().ok_or("stdout is not piped")?;
    let mut pipes = Pipes {
        writer: BufWriter::with_capacity(64 * 1024, stdin),
        reader: BufReader::with_capacity(64 * 1024, stdout),
        line: Vec::new(),
    };
    if case.kind != Kind::StdioRaw {
        let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"0"}}}"#;
        let answer = pipes.exchange(initialize, true).await?;
        if !String::from_utf8_lossy(&answer).contains(r#""result""#) {
            return Err(format!(
                "initialize failed: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        pipes.exchange(initialized, false).await?;
    }
    let template = CallTemplate::new(case.payload, None);
    let mut probe = Vec::new();
    template.write(1, &mut probe);
    let answer = pipes.exchange(&probe, true).await?;
    check_echo(&answer, &template.message)?;
    let mut next_id = 2;
    if !budget.warmup.is_zero() {
        load(
            &mut pipes,
            &template,
            case.parallel,
            &mut next_id,
            budget.warmup,
            budget.max_calls,
        )
        .await?;
    }
    let cpu_before = server.cpu_time()?;
    let own_cpu_before = child::cpu_time(std::process::id())?;
    let sample = load(
        &mut pipes,
        &template,
        case.parallel,
        &mut next_id,
        budget.measure,
        budget.max_calls,
    )
    .await?;
    let cpu = server.cpu_time()?.saturating_sub(cpu_before);
    let own_cpu = child::cpu_time(std::process::id())?.saturating_sub(own_cpu_before);
    let peak_rss_kib = server.peak_rss_kib()?;
    // Closing stdin ends the server.
    drop(pipes);
    server.stop().await?;
    Ok(Row::new(case, sample, cpu, own_cpu, peak_rss_kib))
}

/// Calls `echo` with `window` calls in flight for `duration` (or
/// `max_calls`), then waits for every answer.
async fn load(
    pipes: &mut Pipes,
    template: &CallTemplate,
    window: usize,
    next_id: &mut u64,
    duration: Duration,
    max_calls: usize,
) -> Result<Sample, String> {
    let Pipes {
        writer,
        reader,
        line,
    } = pipes;
    let first_id = *next_id;
    let permits = Semaphore::new(window);
    let sent = Cell::new(0usize);
    let received = Cell::new(0usize);
    let done = Cell::new(false);
    let wake_reader = Notify::new();
    let sent_at: RefCell<Vec<Instant>> = RefCell::new(Vec::new());
    let start = Instant::now();
    let deadline = start + duration;

    let write = async {
        let mut request = Vec::with_capacity(template.message.len() + 256);
        let io = |e: std::io::Error| format!("writing to the server: {e}");
        while sent.get() < max_calls && Instant::now() < deadline {
            match permits.try_acquire() {
                Ok(permit) => permit.forget(),
                Err(_) => {
                    // The window is full: send what is buffered, then wait.
                    writer.flush().await.map_err(io)?;
                    permits
                        .acquire()
                        .await
                        .map_err(|e| format!("window closed: {e}"))?
                        .forget();
                    if Instant::now() >= deadline {
                        break;
                    }
                }
            }
            request.clear();
            template.write(first_id + sent.get() as u64, &mut request);
            request.push(b'\n');
            sent_at.borrow_mut().push(Instant::now());
            writer.write_all(&request).await.map_err(io)?;
            sent.set(sent.get() + 1);
        }
        writer.flush().await.map_err(io)?;
        done.set(true);
        wake_reader.notify_one();
        Ok::<_, String>(())
    };

    let read = async {
        let mut sample = Sample::default();
        while !(done.get() && received.get() == sent.get()) {
            tokio::select! {
                // `read_until` keeps what it read in `line` when the other
                // branch wins, so the next round goes on from there.
                read = tokio::time::timeout(PEER_TIMEOUT, reader.read_until(b'\n', line)) => {
                    let read = read
                        .map_err(|_| "no answer from the server in 30 s".to_owned())?
                        .map_err(|e| format!("reading from the server: {e}"))?;
                    if read == 0 {
                        return Err("the server closed its stdout mid-run".to_owned());
                    }
                    let reply: Reply = serde_json::from_slice(line).map_err(|e| {
                        format!("the server wrote a line that is not JSON-RPC: {e}")
                    })?;
                    line.clear();
                    let Some(id) = reply.id else { continue };
                    if reply.error.is_some() {
                        return Err(format!("call {id} failed"));
                    }
                    let index = id
                        .checked_sub(first_id)
                        .and_then(|i| usize::try_from(i).ok())
                        .ok_or_else(|| format!("an answer to an unknown id {id}"))?;
                    let sent_time = sent_at
                        .borrow()
                        .get(index)
                        .copied()
                        .ok_or_else(|| format!("an answer to an unsent id {id}"))?;
                    sample.record(sent_time.elapsed());
                    received.set(received.get() + 1);
                    permits.add_permits(1);
                }
                () = wake_reader.notified() => {}
            }
        }
        Ok(sample.finish(start.elapsed()))
    };

    let ((), sample) = tokio::try_join!(write, read)?;
    *next_id = first_id + sent.get() as u64;
    Ok(sample)
}
