//! A TCP proxy in front of PostgreSQL that a test can cut and restore, to see the
//! service through a database outage without stopping the shared server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct TcpProxy {
    address: SocketAddr,
    up: Arc<AtomicBool>,
    /// New connections are accepted and then left without an answer.
    hanging: Arc<AtomicBool>,
    /// Bumped on every cut: open connections close when they see it change.
    cuts: watch::Sender<u64>,
    _thread: std::thread::JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on 127.0.0.1:0 and forwards to `target`, on a thread of its own.
    pub fn start(target: SocketAddr) -> TcpProxy {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("the proxy binds");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let address = std_listener.local_addr().expect("an address");
        let up = Arc::new(AtomicBool::new(true));
        let hanging = Arc::new(AtomicBool::new(false));
        let (cuts, _) = watch::channel(0u64);
        let accepting_up = Arc::clone(&up);
        let accepting_hanging = Arc::clone(&hanging);
        let cut_signal = cuts.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("a listener");
                loop {
                    let Ok((mut client, _)) = listener.accept().await else {
                        continue;
                    };
                    if !accepting_up.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let mut cut = cut_signal.subscribe();
                    if accepting_hanging.load(Ordering::SeqCst) {
                        tokio::spawn(async move {
                            let _ = cut.changed().await;
                            drop(client);
                        });
                        continue;
                    }
                    tokio::spawn(async move {
                        let Ok(mut server) = TcpStream::connect(target).await else {
                            return;
                        };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            _ = cut.changed() => {}
                        }
                    });
                }
            });
        });
        TcpProxy {
            address,
            up,
            hanging,
            cuts,
            _thread: thread,
        }
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Cuts every open connection and refuses new ones.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }

    /// Cuts every open connection; new ones are accepted and never answered.
    pub fn hang(&self) {
        self.hanging.store(true, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }

    /// Forwards again (connections left hanging are closed).
    pub fn restore(&self) {
        self.hanging.store(false, Ordering::SeqCst);
        self.up.store(true, Ordering::SeqCst);
        self.cuts.send_modify(|n| *n += 1);
    }
}
