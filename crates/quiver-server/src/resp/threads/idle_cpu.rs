//! How much of the machine's CPU went unused, from the kernel's counters in
//! `/proc/stat`: the balancer adds a connection thread only when there is a
//! core for it to run on.

/// Reads the machine-wide CPU counters between calls.
#[derive(Debug)]
pub struct IdleCpu {
    /// Idle and total time at the last reading, in the kernel's ticks.
    last: Option<(u64, u64)>,
}

impl IdleCpu {
    /// A meter whose first [`IdleCpu::cores`] reading starts the count.
    pub fn new() -> IdleCpu {
        let mut meter = IdleCpu { last: None };
        let _ = meter.cores();
        meter
    }

    /// Cores' worth of CPU left idle since the last call; `None` where the
    /// counters cannot be read (not Linux) or nothing has passed.
    pub fn cores(&mut self) -> Option<f64> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let (idle, total, cpus) = parse(&text)?;
        let (last_idle, last_total) = self.last.replace((idle, total))?;
        let elapsed = total.checked_sub(last_total).filter(|&t| t > 0)?;
        let idle = idle.saturating_sub(last_idle);
        Some(idle as f64 / elapsed as f64 * cpus as f64)
    }
}

/// Idle time (idle plus I/O wait), total time and the number of CPUs from the
/// text of `/proc/stat`.
fn parse(text: &str) -> Option<(u64, u64, usize)> {
    let mut lines = text.lines();
    let fields: Vec<u64> = lines
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    let total = fields.iter().take(8).sum();
    let cpus = lines.take_while(|line| line.starts_with("cpu")).count();
    Some((idle, total, cpus.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_idle_and_total_time() {
        let text = "cpu  100 5 50 800 20 0 10 15 7 0\ncpu0 50 2 25 400 10 0 5 8 3 0\ncpu1 50 3 25 400 10 0 5 7 4 0\nintr 1 2\n";
        assert_eq!(parse(text), Some((820, 1000, 2)));
        assert_eq!(parse("intr 1 2\n"), None);
        assert_eq!(parse("cpu  a b c\n"), None);
    }

    #[test]
    fn the_meter_reports_after_its_first_reading() {
        let mut meter = IdleCpu::new();
        std::thread::sleep(std::time::Duration::from_millis(30));
        if let Some(cores) = meter.cores() {
            let cpus = std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|text| parse(&text))
                .map_or(0, |(_, _, cpus)| cpus);
            assert!((0.0..=cpus as f64 + 0.01).contains(&cores), "{cores}");
        }
    }
}
