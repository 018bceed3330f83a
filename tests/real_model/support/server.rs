//! A model server instance of a test's own (`scripts/llm-server.sh serve PORT`), with its
//! output in a log file, that the test may kill.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/llm-server.sh");

/// How long loading the model may take.
const START_TIMEOUT: Duration = Duration::from_secs(180);

pub struct ModelServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl ModelServer {
    /// Starts an instance on a free port and waits until it accepts connections (the
    /// server binds once the model is loaded).
    pub fn start() -> ModelServer {
        let port = free_port();
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("llm-server-{port}.log"));
        let output = File::create(&log).expect("the server log can be created");
        let child = Command::new(SCRIPT)
            .args(["serve", "smollm2", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("the log file handle is cloned"))
            .stderr(output)
            .spawn()
            .expect("scripts/llm-server.sh runs");
        let mut server = ModelServer { child, port, log };
        server.wait_until_listening();
        server
    }

    fn wait_until_listening(&mut self) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("the model server exited ({status}): {}", self.log());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "the model server did not listen within {START_TIMEOUT:?}: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Everything the server printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: the process dies at once, mid-response if it is answering.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}
