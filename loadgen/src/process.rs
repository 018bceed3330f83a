//! CPU time and resident memory of the measured server, from `/proc` (Linux). A server
//! with worker processes is measured with its descendants.

use std::collections::HashMap;
use std::fs;

/// Processes measured together: the given ones and every descendant.
pub struct ProcessSet {
    roots: Vec<u32>,
    ticks_per_second: f64,
}

impl ProcessSet {
    pub fn new(roots: Vec<u32>) -> ProcessSet {
        ProcessSet {
            roots,
            ticks_per_second: clock_ticks_per_second(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The roots and their descendants, as they are now.
    pub fn pids(&self) -> Vec<u32> {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        if let Ok(entries) = fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                    continue;
                };
                if let Some(parent) =
                    stat_fields(pid).and_then(|f| f.get(1).and_then(|p| p.parse().ok()))
                {
                    children.entry(parent).or_default().push(pid);
                }
            }
        }
        let mut all = self.roots.clone();
        let mut index = 0;
        while index < all.len() {
            if let Some(kids) = children.get(&all[index]) {
                all.extend(kids);
            }
            index += 1;
        }
        all
    }

    /// User plus system CPU seconds used so far by `pids`.
    pub fn cpu_seconds(&self, pids: &[u32]) -> f64 {
        let ticks: u64 = pids
            .iter()
            .filter_map(|&pid| stat_fields(pid))
            .map(|fields| {
                // After the command: state(0) ppid(1) … utime(11) stime(12).
                let tick = |i: usize| {
                    fields
                        .get(i)
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                tick(11) + tick(12)
            })
            .sum();
        ticks as f64 / self.ticks_per_second
    }

    /// Resident memory of `pids`, in KiB.
    pub fn rss_kib(pids: &[u32]) -> u64 {
        pids.iter()
            .filter_map(|pid| fs::read_to_string(format!("/proc/{pid}/status")).ok())
            .filter_map(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmRSS:"))
                    .and_then(|value| {
                        value
                            .trim()
                            .trim_end_matches("kB")
                            .trim()
                            .parse::<u64>()
                            .ok()
                    })
            })
            .sum()
    }
}

/// The fields of `/proc/PID/stat` after the command name.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_command = &stat[stat.rfind(')')? + 1..];
    Some(
        after_command
            .split_whitespace()
            .map(str::to_owned)
            .collect(),
    )
}

fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}
