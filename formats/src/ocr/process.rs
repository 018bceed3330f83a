//! Running `pdftoppm` and `tesseract` within bounds: time (killed past it), address
//! space (`prlimit --as`), one thread each, and no more runs at once than cores.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::Ocr;

/// How often a running program is looked at.
const POLL: Duration = Duration::from_millis(10);
/// Most bytes of a program's error output kept for the reason.
const MAX_STDERR_BYTES: u64 = 4096;

/// A folder of its own for one document's images, removed with it.
pub(crate) struct Scratch(tempfile::TempDir);

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, String> {
        tempfile::Builder::new()
            .prefix("bor-ocr-")
            .tempdir()
            .map(Scratch)
            .map_err(|error| format!("no room for OCR's images ({error})"))
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    /// Writes `bytes` to a file named `name` in the folder; its path.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
        let path = self.path().join(name);
        std::fs::write(&path, bytes)
            .map_err(|error| format!("no room for OCR's images ({error})"))?;
        Ok(path)
    }
}

/// Runs of the outside programs going on now, at most [`max_runs`].
static RUNS: Mutex<usize> = Mutex::new(0);
static RUN_ENDED: Condvar = Condvar::new();

fn max_runs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// A place among the runs going on, given back when dropped.
struct RunSlot;

impl RunSlot {
    fn take() -> RunSlot {
        let mut runs = RUNS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        while *runs >= max_runs() {
            runs = RUN_ENDED
                .wait(runs)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *runs += 1;
        RunSlot
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let mut runs = RUNS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *runs = runs.saturating_sub(1);
        RUN_ENDED.notify_one();
    }
}

/// Runs `program` with `args` within `ocr`'s bounds, its output written to `stdout`
/// (else dropped); the reason a person reads when it fails or overruns.
pub(crate) fn run(
    program: &str,
    args: &[&OsStr],
    ocr: &Ocr,
    stdout: Option<&Path>,
) -> Result<(), String> {
    let stdout = match stdout {
        Some(path) => Stdio::from(
            File::create(path).map_err(|error| format!("no room for OCR's output ({error})"))?,
        ),
        None => Stdio::null(),
    };
    let stderr = tempfile::tempfile().map_err(|error| format!("no room for OCR ({error})"))?;
    let _slot = RunSlot::take();
    let mut child = Command::new("prlimit")
        .arg(format!("--as={}", ocr.max_memory_bytes))
        .arg("--")
        .arg(program)
        .args(args)
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::from(
            stderr
                .try_clone()
                .map_err(|error| format!("no room for OCR ({error})"))?,
        ))
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => {
                "OCR is not available: prlimit (util-linux) is not installed".to_owned()
            }
            _ => format!("{program} could not be started ({error})"),
        })?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < ocr.page_timeout => std::thread::sleep(POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} took longer than {} s",
                    ocr.page_timeout.as_secs_f64()
                ));
            }
            Err(error) => return Err(format!("{program} could not be waited for ({error})")),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut said = String::new();
    let mut stderr = stderr;
    let _ = stderr.seek(SeekFrom::Start(0));
    let _ = stderr.take(MAX_STDERR_BYTES).read_to_string(&mut said);
    if said.contains("failed to execute") {
        return Err(format!("OCR is not available: {program} is not installed"));
    }
    let out_of_memory = format!(
        "{program} needed more memory than the {} MiB allowed",
        ocr.max_memory_bytes >> 20
    );
    if said.contains("error while loading shared libraries")
        || said.contains("std::bad_alloc")
        || said.to_ascii_lowercase().contains("out of memory")
    {
        return Err(out_of_memory);
    }
    let said = last_line(&said);
    Err(match status.code() {
        Some(code) if said.is_empty() => format!("{program} failed (exit status {code})"),
        Some(_) => format!("{program} failed: {said}"),
        // Killed by a signal: past the address-space bound an allocation fails, and
        // some programs abort then.
        None => format!("{out_of_memory}, or stopped on a damaged image"),
    })
}

/// The last line a program wrote, trimmed, at most 200 characters.
fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default();
    line.trim().chars().take(200).collect()
}

/// The first line `program option` prints (its version), or why it cannot be run.
pub(super) fn program_version(program: &str, option: &str) -> Result<String, String> {
    let output = Command::new(program)
        .arg(option)
        .stdin(Stdio::null())
        .output()
        .map_err(|_| format!("{program} is not installed"))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let first = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(program);
    Ok(first.trim().to_owned())
}

/// The languages Tesseract has data for.
pub(super) fn tesseract_languages() -> Result<Vec<String>, String> {
    let output = Command::new("tesseract")
        .arg("--list-langs")
        .stdin(Stdio::null())
        .output()
        .map_err(|_| "tesseract is not installed".to_owned())?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .skip(1)
        .map(|line| line.trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect())
}
