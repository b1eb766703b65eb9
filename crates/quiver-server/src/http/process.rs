//! Process figures read from `/proc/self/status` (Linux). Elsewhere they are
//! absent rather than invented.

/// Resident and virtual memory of this process, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    pub resident_bytes: Option<u64>,
    pub virtual_bytes: Option<u64>,
}

/// Reads the current process memory, or `Default` when it cannot be read.
pub fn memory() -> ProcessMemory {
    std::fs::read_to_string("/proc/self/status")
        .map(|status| parse_status(&status))
        .unwrap_or_default()
}

/// The machine's memory (`MemTotal` of `/proc/meminfo`), in bytes.
pub fn total_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// CPU seconds this process and its waited-for children used, in user and system mode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: f64,
    pub system: f64,
    pub children_user: f64,
    pub children_system: f64,
}

/// Reads the process's CPU times from `/proc/self/stat`, or `None` when it cannot.
pub fn cpu_times() -> Option<CpuTimes> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// Clock ticks per second of `/proc`'s times (`USER_HZ`, fixed at 100 by the kernel's
/// interface to user space).
const USER_HZ: f64 = 100.0;

fn parse_stat(stat: &str) -> Option<CpuTimes> {
    // Fields after the command name (which may hold spaces, inside parentheses): the
    // state is field 3, utime, stime, cutime and cstime are fields 14 to 17.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |field: usize| -> Option<f64> {
        Some(fields.get(field - 3)?.parse::<u64>().ok()? as f64 / USER_HZ)
    };
    Some(CpuTimes {
        user: ticks(14)?,
        system: ticks(15)?,
        children_user: ticks(16)?,
        children_system: ticks(17)?,
    })
}

fn parse_status(status: &str) -> ProcessMemory {
    let kib = |field: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|number| number.trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    };
    ProcessMemory {
        resident_bytes: kib("VmRSS:"),
        virtual_bytes: kib("VmSize:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_status() {
        let status = "Name:\tquiver\nVmSize:\t  123456 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(
            parse_status(status),
            ProcessMemory {
                resident_bytes: Some(2048 * 1024),
                virtual_bytes: Some(123_456 * 1024)
            }
        );
        assert_eq!(parse_status("garbage"), ProcessMemory::default());
    }

    #[test]
    fn parses_proc_stat() {
        let stat = "4242 (quiver (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 3 1 20 0 9 0";
        let times = parse_stat(stat).unwrap();
        assert_eq!(
            times,
            CpuTimes {
                user: 2.5,
                system: 0.75,
                children_user: 0.03,
                children_system: 0.01,
            }
        );
        assert_eq!(parse_stat("garbage"), None);
        assert!(cpu_times().is_some());
    }

    #[test]
    fn reads_this_process() {
        assert!(memory().resident_bytes.is_some_and(|bytes| bytes > 0));
    }
}
